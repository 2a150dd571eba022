//! A broker for unit tests: over the fake engine (sessions open and close, no pages), in a
//! fresh data directory, with lease ports bound for real (any free port) but served by no
//! server: tests call the routers or the broker directly.

use std::sync::Arc;
use std::time::Duration;

use super::{Broker, LeaseServerSpawner};
use crate::config::Settings;
use crate::engine::fake::fake_engine;
use crate::testing::TempDir;

/// A broker with these settings, as `adjust` leaves them: broker port 7410, any free port
/// for a lease, leases of 60 s, sessions idle for 60 s closed, 2 sessions a lease, 1 MiB of
/// downloads. The broker lives in the returned directory; keep it for the test's length.
pub(crate) fn test_broker(adjust: impl FnOnce(&mut Settings)) -> (Arc<Broker>, TempDir) {
    let data_dir = TempDir::new("malo-broker-test");
    let mut settings = Settings {
        daemon_port: 7410,
        port_min: 0,
        port_max: 0,
        lease_ttl: Duration::from_secs(60),
        session_idle: Duration::from_secs(60),
        max_sessions: 2,
        max_download_bytes: 1 << 20,
        data_dir: data_dir.path().to_path_buf(),
    };
    adjust(&mut settings);
    let no_server: LeaseServerSpawner = Arc::new(|listener, _lease, shutdown| {
        tokio::spawn(async move {
            shutdown.await;
            drop(listener);
        })
    });
    (Arc::new(Broker::new(settings, fake_engine(), no_server, Arc::default(), None)), data_dir)
}
