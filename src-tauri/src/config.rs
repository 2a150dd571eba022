//! Daemon flags (exactly the seed's names and defaults) and the validated `Settings`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::error::{Error, Result};

/// Where all state lives unless `--data-dir` says otherwise (`~` is expanded).
pub const DEFAULT_DATA_DIR: &str = "~/.malo-browser";

/// The default download budget of a session: 1 GiB.
pub const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 1 << 30;

/// The daemon's ports: `malo daemon` takes them, `malo doctor` checks them.
#[derive(Debug, Clone, Copy, Args)]
pub struct PortArgs {
    /// Port of the broker on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 7410)]
    pub daemon_port: u16,
    /// First port of the lease pool (0, with --port-max 0: any free port the system gives).
    #[arg(long, default_value_t = 7411)]
    pub port_min: u16,
    /// Last port of the lease pool (inclusive).
    #[arg(long, default_value_t = 7499)]
    pub port_max: u16,
}

/// `malo daemon` flags. Every flag also accepts the `--flag=value` form.
#[derive(Debug, Clone, Args)]
pub struct DaemonArgs {
    /// The broker's port and the lease pool.
    #[command(flatten)]
    pub ports: PortArgs,
    /// A lease not renewed for this long is reclaimed with all its sessions.
    #[arg(long, default_value_t = 300)]
    pub lease_ttl_seconds: u64,
    /// A session not used for this long is closed.
    #[arg(long, default_value_t = 300)]
    pub session_idle_seconds: u64,
    /// Sessions one lease may hold at once; more get 429.
    #[arg(long, default_value_t = 4)]
    pub max_sessions: usize,
    /// Bytes one session may download in all; a download that goes over fails (`quota`).
    #[arg(long, default_value_t = DEFAULT_MAX_DOWNLOAD_BYTES)]
    pub max_download_bytes: u64,
    /// Where all state lives: broker.json, logs, leases, profiles. `~` is expanded.
    #[arg(long, default_value = DEFAULT_DATA_DIR)]
    pub data_dir: String,
    /// Refuse to start unless web processes can run sandboxed (bubblewrap); also
    /// `MALO_REQUIRE_SANDBOX=1`. Without it, a machine that cannot sandbox runs unsandboxed.
    #[arg(long)]
    pub require_sandbox: bool,
}

/// Validated daemon settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Broker port (0 = any free port).
    pub daemon_port: u16,
    /// Lease port pool, inclusive.
    pub port_min: u16,
    /// Lease port pool, inclusive.
    pub port_max: u16,
    /// Lease time to live.
    pub lease_ttl: Duration,
    /// Session idle limit.
    pub session_idle: Duration,
    /// Sessions per lease.
    pub max_sessions: usize,
    /// Download budget per session, in bytes.
    pub max_download_bytes: u64,
    /// Absolute data directory.
    pub data_dir: PathBuf,
}

impl Settings {
    /// Checks the flags and expands the data directory.
    pub fn from_args(args: &DaemonArgs) -> Result<Settings> {
        let PortArgs { daemon_port, port_min, port_max } = args.ports;
        let any_port = port_min == 0 && port_max == 0;
        if !any_port && (port_min == 0 || port_min > port_max) {
            return Err(Error::bad_request(format!(
                "--port-min ({}) must be at least 1 and not above --port-max ({}); 0 and 0 mean any free port",
                port_min, port_max
            )));
        }
        if daemon_port != 0 && !any_port && (port_min..=port_max).contains(&daemon_port) {
            return Err(Error::bad_request("--daemon-port must lie outside the lease port pool"));
        }
        if args.lease_ttl_seconds == 0 || args.session_idle_seconds == 0 {
            return Err(Error::bad_request("--lease-ttl-seconds and --session-idle-seconds must be at least 1"));
        }
        if args.max_sessions == 0 {
            return Err(Error::bad_request("--max-sessions must be at least 1"));
        }
        Ok(Settings {
            daemon_port,
            port_min,
            port_max,
            lease_ttl: Duration::from_secs(args.lease_ttl_seconds),
            session_idle: Duration::from_secs(args.session_idle_seconds),
            max_sessions: args.max_sessions,
            max_download_bytes: args.max_download_bytes,
            data_dir: expand_home(&args.data_dir)?,
        })
    }
}

/// `~` or `~/x` -> `$HOME/x`; relative paths are made absolute against the current directory.
pub fn expand_home(path: &str) -> Result<PathBuf> {
    let expanded = if path == "~" || path.starts_with("~/") {
        let home = std::env::var_os("HOME").ok_or_else(|| Error::bad_request("--data-dir uses ~ but HOME is not set"))?;
        PathBuf::from(home).join(path.trim_start_matches('~').trim_start_matches('/'))
    } else {
        PathBuf::from(path)
    };
    if expanded.is_absolute() {
        Ok(expanded)
    } else {
        let current = std::env::current_dir().map_err(|error| Error::internal(format!("cannot read the current directory: {error}")))?;
        Ok(current.join(expanded))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Harness {
        #[command(flatten)]
        args: DaemonArgs,
    }

    #[test]
    fn defaults_match_the_contract() {
        let harness = Harness::parse_from(["malo"]);
        let args = harness.args;
        assert_eq!((args.ports.daemon_port, args.ports.port_min, args.ports.port_max), (7410, 7411, 7499));
        assert_eq!((args.lease_ttl_seconds, args.session_idle_seconds, args.max_sessions), (300, 300, 4));
        assert_eq!(args.data_dir, DEFAULT_DATA_DIR);
        assert_eq!(DEFAULT_DATA_DIR, "~/.malo-browser");
    }

    #[test]
    fn equals_form_and_validation() {
        let harness = Harness::parse_from(["malo", "--port-min=9000", "--port-max=8000"]);
        assert!(Settings::from_args(&harness.args).is_err());
        let harness = Harness::parse_from(["malo", "--max-sessions=0"]);
        assert!(Settings::from_args(&harness.args).is_err());
        let harness = Harness::parse_from(["malo", "--data-dir=/tmp/x", "--daemon-port=0"]);
        let settings = Settings::from_args(&harness.args).unwrap();
        assert_eq!(settings.data_dir, PathBuf::from("/tmp/x"));
    }
}
