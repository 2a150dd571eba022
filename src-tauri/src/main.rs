//! The `malo` binary: parses the command line and hands over to the library. The daemon
//! and MCP commands are declared with clap's derive; the CLI's tool subcommands are built
//! at run time from the tool registry, so they always match the API.

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use malo::tools::ToolRegistry;
use malo::{Cli, Command};

fn main() -> ExitCode {
    let registry = ToolRegistry::standard();
    let command = Cli::command().subcommands(malo::cli::commands(&registry));
    let matches = command.clone().get_matches();
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
        Command::Daemon(args) => malo::app::run_daemon(args).map_err(|error| error.to_string()),
        Command::Mcp(args) => malo::mcp::run(args).map_err(|error| error.to_string()),
        Command::Doctor(args) => return malo::doctor::run(args),
        Command::Autostart { state } => malo::desktop::autostart::set(state == "on").map(|said| println!("{said}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("malo: {error}");
            ExitCode::FAILURE
        }
    }
}
