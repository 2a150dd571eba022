//! `malo doctor`: checks in one run what the product needs on this machine (WebKitGTK, a
//! screen, D-Bus, a keyring, a tray host, bubblewrap, free ports, the data directory, a
//! running daemon) and says how to fix each miss. Every check only looks: it reads files
//! and the environment, asks the session bus who owns a name, binds and drops loopback
//! ports, and asks a running daemon's `/v1/health`; it starts nothing.

mod bus;
mod machine;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use crate::error::Result;

/// `malo doctor` flags.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// The daemon's data directory (as `malo daemon --data-dir`).
    #[arg(long, default_value = crate::config::DEFAULT_DATA_DIR)]
    pub data_dir: String,
    /// The ports the daemon would take (as `malo daemon`'s).
    #[command(flatten)]
    pub ports: crate::config::PortArgs,
    /// Print the checks as one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// What the product needs is there.
    Ok,
    /// A part of the product will not work (the tray, the vault); the rest does.
    Warn,
    /// The daemon cannot work (or not here) until this is fixed.
    Fail,
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked (`display`, `keyring`, ...).
    pub name: &'static str,
    /// How it came out.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// How to fix a miss.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check { name, status: Status::Ok, detail: detail.into(), fix: None }
    }

    fn warn(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { name, status: Status::Warn, detail: detail.into(), fix: Some(fix.into()) }
    }

    fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { name, status: Status::Fail, detail: detail.into(), fix: Some(fix.into()) }
    }
}

/// Runs every check.
pub fn checks(args: &DoctorArgs) -> Result<Vec<Check>> {
    let data_dir: PathBuf = crate::config::expand_home(&args.data_dir)?;
    let has_display = machine::display_named();
    let daemon = machine::running_daemon(&data_dir);
    let mut checks = vec![machine::webkit(), machine::display(), machine::bubblewrap()];
    checks.extend(bus::checks(has_display));
    checks.push(machine::data_dir(&data_dir));
    checks.push(machine::daemon(&daemon));
    let default_dir = crate::config::expand_home(crate::config::DEFAULT_DATA_DIR).is_ok_and(|default| default == data_dir);
    checks.extend(machine::ports(args, &daemon, default_dir));
    Ok(checks)
}

/// `malo doctor`: prints a line per check (or JSON); exits 1 when a check failed.
pub fn run(args: DoctorArgs) -> ExitCode {
    let checks = match checks(&args) {
        Ok(checks) => checks,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let failed = checks.iter().any(|check| check.status == Status::Fail);
    if args.json {
        let report = serde_json::json!({ "ok": !failed, "checks": checks });
        println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    } else {
        let width = checks.iter().map(|check| check.name.len()).max().unwrap_or(0);
        for check in &checks {
            let status = match check.status {
                Status::Ok => "ok  ",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            println!("{status}  {:width$}  {}", check.name, check.detail);
            if let Some(fix) = &check.fix {
                println!("      {:width$}  fix: {fix}", "");
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
