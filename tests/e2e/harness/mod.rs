//! Shared helpers of the end-to-end tests: a private Xvfb display, the real `malo`
//! daemon in a fresh data directory, a fixture web server on port 0 that records what it
//! saw, a minimal HTTP/1.1 client (so tests control every header, including `Host`),
//! and process/port probes for the leak checks. One file a purpose; everything is
//! re-exported here, so tests `use crate::harness::*;`.

#![allow(dead_code, unreachable_pub)]

mod api;
mod clients;
mod daemon;
mod dbus;
mod desktop;
mod displays;
mod fixtures;
mod http;
mod mcp;
mod multipart;
mod paths;
mod processes;
mod procfs;
mod proxies;
mod tls;
mod websocket;
mod windows;

// The examples of tests/bench use only part of the harness.
#[allow(unused_imports)]
pub use {
    api::*, clients::*, daemon::*, dbus::*, desktop::*, displays::*, fixtures::*, http::*, mcp::*, multipart::*, paths::*, processes::*,
    procfs::*, proxies::*, tls::*, websocket::*, windows::*,
};
