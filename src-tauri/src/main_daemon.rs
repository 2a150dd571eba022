//! The `malo-daemon` binary: `malo daemon` and `malo doctor`, the part of malo that links
//! GTK and WebKit. `malo` hands those commands over to it (see `malo::daemon_binary`);
//! it is installed beside `malo`. Global flags may come before the subcommand here too.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use malo::{Cli, Command};

fn main() -> ExitCode {
    let mut words = std::env::args_os();
    let program = words.next().unwrap_or_else(|| "malo".into());
    let args = malo::command_line::global_flags_after_subcommand(&words.collect::<Vec<_>>(), &Cli::command());
    let result = match Cli::parse_from(std::iter::once(program).chain(args)).command {
        Command::Daemon(args) => malo::app::run_daemon(args).map_err(|error| error.to_string()),
        Command::Doctor(args) => return malo::doctor::run(args),
        Command::Mcp(_) | Command::Autostart { .. } => Err("malo-daemon runs `daemon` and `doctor`; run the rest with `malo`".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("malo: {error}");
            ExitCode::FAILURE
        }
    }
}
