//! The `malo-daemon` binary: `malo daemon` and `malo doctor`, the part of malo that links
//! GTK and WebKit. `malo` hands those commands over to it (see `malo::daemon_binary`);
//! it is installed beside `malo`.

use std::process::ExitCode;

use clap::Parser;
use malo::{Cli, Command};

fn main() -> ExitCode {
    let result = match Cli::parse().command {
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
