//! Black-box end-to-end tests: the real `malo` binary, real WebKit under a private Xvfb,
//! fixture pages from a local server on port 0. Each test starts its own daemon in a
//! fresh data directory and asserts on what the API, the page and the server saw.

mod harness;

mod daemon;
mod leases;
mod leaks;
mod security;
mod sessions;
mod tools;
mod interfaces;
mod profiles;
mod login;
mod vault;
mod watch;
mod desktop;
mod files;
