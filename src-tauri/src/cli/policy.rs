//! `malo policy check [path]`: reads a policy file (default `<data-dir>/policy.toml`) as
//! the daemon would and says what it means in plain words, or fails (exit 1) with the
//! line and column of the mistake. There is no command that writes a policy: the person
//! edits the file.

use std::path::PathBuf;

use clap::{Arg, ArgMatches, Command};

use crate::config::DEFAULT_DATA_DIR;
use crate::error::{Error, Result};
use crate::policy::POLICY_FILE;

/// The `policy` subcommand.
pub(crate) fn command() -> Command {
    Command::new("policy")
        .about("Check the policy you wrote in <data-dir>/policy.toml (agents cannot change it) and say what it means")
        .subcommand_required(true)
        .subcommand(
            Command::new("check")
                .about("Validate a policy file and print what it allows; exit 1 with the line and column of a mistake")
                .arg(Arg::new("path").help("The file (default: <data-dir>/policy.toml)"))
                .arg(super::data_dir_arg()),
        )
}

/// Runs `policy check`.
pub(crate) fn run(matches: &ArgMatches) -> Result<String> {
    let Some(("check", sub)) = matches.subcommand() else { return Err(Error::bad_request("use policy check [path]")) };
    let path = match sub.get_one::<String>("path") {
        Some(path) => PathBuf::from(path),
        None => {
            let data_dir = sub.get_one::<String>("data-dir").map(String::as_str).unwrap_or(DEFAULT_DATA_DIR);
            crate::config::expand_home(data_dir)?.join(POLICY_FILE)
        }
    };
    match crate::policy::read(&path) {
        Ok(Some(policy)) => Ok(format!("{} is valid.\n{}", path.display(), crate::policy::describe(&policy))),
        Ok(None) => Ok(format!(
            "There is no {}: agents may do everything (a person is never asked). docs/API.md shows an example policy.",
            path.display()
        )),
        Err(error) => Err(Error::bad_request(format!("policy error: {error}"))),
    }
}
