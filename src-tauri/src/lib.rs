//! malo-browser: a local browser for AI agents. A tray-only daemon hands port leases to
//! agents; under each lease an agent opens hidden, isolated browsing sessions and drives
//! them through a localhost tool API. See `docs/ARCHITECTURE.md` for the map.

pub mod app;
pub mod broker;
pub mod cdp;
pub mod cli;
pub mod client;
pub mod command_line;
pub mod config;
pub mod daemon_binary;
pub mod desktop;
pub mod display;
pub mod doctor;
pub mod engine;
pub mod http;
pub mod listen;
pub mod live;
pub mod logging;
pub mod mcp;
pub mod memory;
pub mod network;
pub mod policy;
pub mod proxy;
pub mod session;
pub mod state;
pub mod tools;
pub mod urls;
pub mod vault;

// The GTK-free core, a crate of its own (its tests build in about a second), under the
// paths the rest of the crate has always used.
pub use malo_core::{clock, error, events, imaging, secret};

#[cfg(test)]
mod layering;
#[cfg(test)]
mod testing;

use clap::{Parser, Subcommand};

/// Command line of the `malo` binary.
#[derive(Debug, Parser)]
#[command(
    name = "malo",
    version,
    about = "A local browser for AI agents",
    after_help = "The global flags --data-dir, --json and -s/--session go before or after the subcommand."
)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the daemon: broker, lease endpoints, hidden sessions, tray icon.
    Daemon(config::DaemonArgs),
    /// Serve MCP over stdio for one agent (starts the daemon when none runs).
    Mcp(mcp::McpArgs),
    /// Check what malo needs on this machine and say how to fix each miss.
    Doctor(doctor::DoctorArgs),
    /// Start the daemon when you log in (an XDG autostart entry), or stop doing so.
    Autostart {
        /// `on` or `off`.
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
}
