//! The `malo` binary: the CLI and the MCP server. It links no WebKit (see
//! `malo::daemon_binary`): `daemon` and `doctor` are handed over to `malo-daemon`, before
//! anything else is parsed. The MCP command is declared with clap's derive; the CLI's tool
//! subcommands are built at run time from the tool registry, so they always match the API.
//! Global flags written before the subcommand are moved after it first
//! (`malo::command_line`), so `malo --data-dir X daemon` hands over as `daemon --data-dir X`.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use malo::command_line::global_flags_after_subcommand;
use malo::tools::ToolRegistry;
use malo::{Cli, Command};

fn main() -> ExitCode {
    let mut words = std::env::args_os();
    let program = words.next().unwrap_or_else(|| OsString::from("malo"));
    let given: Vec<OsString> = words.collect();
    let args = global_flags_after_subcommand(&given, &Cli::command());
    if malo::daemon_binary::runs_in_daemon_binary(&args) {
        eprintln!("malo: {}", malo::daemon_binary::hand_over(&args));
        return ExitCode::FAILURE;
    }
    // A tool's command needs that tool's schema only (most of a CLI call's own time).
    let first = args.first().and_then(|word| word.to_str());
    let registry = first.and_then(ToolRegistry::for_command).unwrap_or_else(ToolRegistry::standard);
    let command = Cli::command().subcommands(malo::cli::commands_for(&registry, first));
    let args = global_flags_after_subcommand(&given, &command);
    let matches = command.clone().get_matches_from(std::iter::once(program).chain(args.iter().cloned()));
    if let Some((name, sub_matches)) = matches.subcommand() {
        if let Some(result) = malo::cli::run(name, sub_matches, &registry, &command) {
            return match result {
                Ok(output) => {
                    // A closed pipe (`| head`) is not an error worth a panic.
                    let _ = writeln!(std::io::stdout(), "{output}");
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("{error}");
                    ExitCode::FAILURE
                }
            };
        }
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let result = match cli.command {
        Command::Mcp(args) => malo::mcp::run(args).map_err(|error| error.to_string()),
        Command::Autostart { state } => malo::desktop::autostart::set(state == "on").map(|said| println!("{said}")),
        // Handed over above.
        Command::Daemon(_) | Command::Doctor(_) => Err(malo::daemon_binary::hand_over(&args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("malo: {error}");
            ExitCode::FAILURE
        }
    }
}
