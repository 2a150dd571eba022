//! The `malo` binary: parses the command line and hands over to the library.

use std::process::ExitCode;

use clap::Parser;
use malo::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Daemon(args) => malo::app::run_daemon(args).map_err(|error| error.to_string()),
        Command::Mcp(args) => malo::mcp::run(args).map_err(|error| error.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("malo: {error}");
            ExitCode::FAILURE
        }
    }
}
