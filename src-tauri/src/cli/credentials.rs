//! `malo credentials add|list|remove`: passwords into the OS keychain for
//! `login {"credential": name}`; no API returns them.

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{json, Value};

use crate::config::DEFAULT_DATA_DIR;
use crate::error::{Error, Result};

/// The `credentials` subcommand.
pub(crate) fn command() -> Command {
    Command::new("credentials")
        .about("Store passwords in the OS keychain for `login {\"credential\": name}`; no API returns them")
        .subcommand_required(true)
        .subcommand(
            Command::new("add")
                .about("Store a credential (asks for the password without echo)")
                .arg(Arg::new("name").required(true))
                .arg(Arg::new("origin").long("origin").required(true).help("e.g. https://example.com"))
                .arg(Arg::new("username").long("username").required(true))
                .arg(
                    Arg::new("password-stdin")
                        .long("password-stdin")
                        .action(ArgAction::SetTrue)
                        .help("Read the password from standard input"),
                )
                .arg(super::data_dir_arg()),
        )
        .subcommand(Command::new("list").about("Names, origins and usernames (never passwords)").arg(super::data_dir_arg()))
        .subcommand(Command::new("remove").about("Remove a credential").arg(Arg::new("name").required(true)).arg(super::data_dir_arg()))
}

/// Runs `credentials add|list|remove`.
pub(crate) fn run(matches: &ArgMatches) -> Result<String> {
    let (action, sub) = matches.subcommand().ok_or_else(|| Error::bad_request("use credentials add, list or remove"))?;
    let data_dir = crate::config::expand_home(sub.get_one::<String>("data-dir").map(String::as_str).unwrap_or(DEFAULT_DATA_DIR))?;
    std::fs::create_dir_all(&data_dir).map_err(|error| Error::internal(error.to_string()))?;
    let vault = crate::vault::Vault::new(&data_dir);
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    match action {
        "add" => {
            let name = sub.get_one::<String>("name").cloned().unwrap_or_default();
            let password = if sub.get_flag("password-stdin") {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).map_err(|error| Error::internal(error.to_string()))?;
                line.trim_end_matches(['\r', '\n']).to_string()
            } else {
                rpassword::prompt_password(format!("Password for {name}: ")).map_err(|error| Error::internal(error.to_string()))?
            };
            let info = vault.add(
                &name,
                sub.get_one::<String>("origin").map(String::as_str).unwrap_or(""),
                sub.get_one::<String>("username").map(String::as_str).unwrap_or(""),
                &password,
            )?;
            Ok(pretty(&json!(info)))
        }
        "list" => Ok(pretty(&json!({ "credentials": vault.list() }))),
        "remove" => {
            let name = sub.get_one::<String>("name").cloned().unwrap_or_default();
            vault.remove(&name)?;
            Ok(pretty(&json!({ "ok": true, "removed": name })))
        }
        _ => Err(Error::bad_request("use credentials add, list or remove")),
    }
}
