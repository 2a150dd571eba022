//! Black-box end-to-end tests: the real `malo` binary, real WebKit under a private Xvfb,
//! fixture pages from a local server on port 0. Each test starts its own daemon in a
//! fresh data directory and asserts on what the API, the page and the server saw.

mod harness;

mod audits;
mod batch;
mod cli;
mod content;
mod daemon;
mod desktop;
mod devtools;
mod doctor;
mod emulation;
mod fidelity;
mod files;
mod headless;
mod hostile;
mod identity;
mod init_scripts;
mod interfaces;
mod leaks;
mod leases;
mod live;
mod locators;
mod login;
mod mcp_caps;
mod network;
mod pages;
mod pdf;
mod policy;
mod profiles;
mod sandbox;
mod scheduling;
mod screenshots;
mod security;
mod sessions;
mod snapshots;
mod state;
mod tabs;
mod tools;
mod upstream;
mod vault;
mod watch;
mod wayland;
mod wire;
