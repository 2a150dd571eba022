//! The broker: hands out port leases to agents, one HTTP endpoint per lease, and
//! reclaims them. A lease owns a port from the pool, a token, its sessions and a
//! directory; releasing or expiring it closes all of them and returns the port.

pub mod instance;
#[cfg(test)]
pub(crate) mod testing;

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use tokio::sync::{oneshot, Notify};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::config::Settings;
use crate::engine::EngineHandle;
use crate::error::{Error, ErrorCode, Result};
use crate::events::SeqCounter;
use crate::proxy::ProxyServices;
use crate::secret::{random_hex, Token};
use crate::session::{Owner, SessionServices, SessionSummary, SessionTable};

/// How long after start the daemon probes its engine, unless an agent's session has
/// proved it by then (a cold start's first session has the machine to itself).
const PROBE_AFTER: Duration = Duration::from_secs(2);

/// Starts the HTTP server of a lease on its listener, serving until the future resolves.
/// The daemon (`app.rs`) provides it, so that the broker never knows HTTP.
pub type LeaseServerSpawner = Arc<
    dyn Fn(tokio::net::TcpListener, Arc<Lease>, std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>) -> JoinHandle<()>
        + Send
        + Sync,
>;

/// What a lease request answers (the token is shown to its owner only here).
#[derive(Debug, Clone, Serialize)]
pub struct LeaseGrant {
    /// `lease-<hex>`.
    pub lease_id: String,
    /// The agent that holds it.
    pub agent_id: String,
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// The lease token.
    pub token: String,
    /// When it expires unless renewed.
    pub expires_at: String,
}

/// A lease as listed (no token).
#[derive(Debug, Clone, Serialize)]
pub struct LeaseView {
    /// Lease id.
    pub lease_id: String,
    /// Agent id.
    pub agent_id: String,
    /// Endpoint.
    pub endpoint: String,
    /// Expiry.
    pub expires_at: String,
    /// Its sessions.
    pub sessions: Vec<SessionSummary>,
}

/// One lease.
#[derive(Debug)]
pub struct Lease {
    /// `lease-<hex>`.
    pub id: String,
    /// The agent that asked for it.
    pub agent_id: String,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its token.
    pub token: Token,
    /// Its sessions.
    pub sessions: Arc<SessionTable>,
    dir: PathBuf,
    // A std mutex: two timestamps. The instant is tokio's, so that tests can pause and
    // advance the clock; the system time is for people.
    expiry: Mutex<(Instant, SystemTime)>,
    server: Mutex<Option<LeaseServer>>,
}

#[derive(Debug)]
struct LeaseServer {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Lease {
    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn renew(&self, ttl: Duration) {
        *self.expiry.lock().expect("lease expiry poisoned") = (Instant::now() + ttl, SystemTime::now() + ttl);
    }

    /// Renews as if by a heartbeat at `at`, unless the lease already lives longer.
    fn renew_from(&self, at: Instant, ttl: Duration) {
        let mut expiry = self.expiry.lock().expect("lease expiry poisoned");
        let until = at + ttl;
        if until > expiry.0 {
            *expiry = (until, SystemTime::now() + until.saturating_duration_since(Instant::now()));
        }
    }

    fn expired(&self) -> bool {
        Instant::now() >= self.expiry.lock().expect("lease expiry poisoned").0
    }

    fn expires_at(&self) -> String {
        crate::clock::format(self.expiry.lock().expect("lease expiry poisoned").1)
    }

    fn grant(&self) -> LeaseGrant {
        LeaseGrant {
            lease_id: self.id.clone(),
            agent_id: self.agent_id.clone(),
            endpoint: self.endpoint(),
            token: self.token.expose().to_string(),
            expires_at: self.expires_at(),
        }
    }

    fn view(&self) -> LeaseView {
        LeaseView {
            lease_id: self.id.clone(),
            agent_id: self.agent_id.clone(),
            endpoint: self.endpoint(),
            expires_at: self.expires_at(),
            sessions: self.sessions.list().iter().map(|session| session.summary()).collect(),
        }
    }

    /// Closes the sessions, stops the server (freeing the port) and removes the directory.
    async fn shut_down(&self, reason: &str) -> usize {
        let closed = self.sessions.close_all(reason).await;
        let server = self.server.lock().expect("lease server poisoned").take();
        if let Some(server) = server {
            let _ = server.stop.send(());
            // Graceful: in-flight requests finish; the listener is already closed.
            let abort = server.task.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), server.task).await.is_err() {
                abort.abort();
            }
        }
        crate::session::remove_dir_eventually(self.dir.clone());
        tracing::info!(lease = %self.id, agent = %self.agent_id, port = self.port, reason, closed, "lease released");
        closed
    }
}

/// The lease table and everything a lease needs to be created.
pub struct Broker {
    /// Daemon settings.
    pub settings: Settings,
    /// The broker token.
    pub token: Token,
    lease_servers: LeaseServerSpawner,
    /// What every session shares (engine, sequence, profiles, vault, proxy services).
    services: SessionServices,
    /// Notified when leases or sessions change (the tray listens).
    pub changes: Arc<Notify>,
    // A std mutex: map operations and a non-blocking bind, never held across an await.
    leases: Mutex<HashMap<String, Arc<Lease>>>,
    shutting_down: AtomicBool,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Broker").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Broker {
    /// A broker with no leases; `lease_servers` starts each lease's HTTP server; sessions
    /// run through proxies made by `proxy` (none: sessions without capture, for tests of
    /// the wire).
    pub fn new(
        settings: Settings,
        engine: EngineHandle,
        lease_servers: LeaseServerSpawner,
        seq: Arc<SeqCounter>,
        proxy: Option<Arc<ProxyServices>>,
    ) -> Broker {
        let changes = Arc::new(Notify::new());
        let services = SessionServices::new(engine, seq, changes.clone(), &settings.data_dir, proxy);
        Broker {
            settings,
            token: Token::generate(),
            lease_servers,
            services,
            changes,
            leases: Mutex::default(),
            shutting_down: AtomicBool::new(false),
        }
    }

    /// The daemon's named profiles.
    pub fn profiles(&self) -> &Arc<crate::session::ProfileStore> {
        &self.services.profiles
    }

    /// The daemon's credential vault.
    pub fn vault(&self) -> &Arc<crate::vault::Vault> {
        &self.services.vault
    }

    /// The way the person's policy asks a person (the desktop registers it).
    pub fn approvals(&self) -> &Arc<crate::policy::Approvals> {
        &self.services.approvals
    }

    /// Marks `port` as the daemon's own: no page may reach it.
    fn own_port(&self, port: u16, own: bool) {
        if let Some(proxy) = &self.services.proxy {
            if own {
                proxy.ports.add(port);
            } else {
                proxy.ports.remove(port);
            }
        }
    }
    /// The daemon's data directory.
    pub fn data_dir(&self) -> &std::path::Path {
        &self.settings.data_dir
    }

    /// The leases directory, `<data-dir>/leases`.
    pub fn leases_dir(&self) -> PathBuf {
        self.settings.data_dir.join("leases")
    }

    /// Grants a lease to `agent_id`, or renews and returns the one it already holds.
    pub fn acquire(&self, agent_id: &str) -> Result<LeaseGrant> {
        check_agent_id(agent_id)?;
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err(Error::new(ErrorCode::ShuttingDown, "the daemon is shutting down"));
        }
        let mut leases = self.leases.lock().expect("lease table poisoned");
        if let Some(lease) = leases.values().find(|lease| lease.agent_id == agent_id && !lease.expired()) {
            lease.renew(self.settings.lease_ttl);
            return Ok(lease.grant());
        }
        let (port, listener) = self.bind_free_port(&leases)?;
        let id = format!("lease-{}", random_hex(8));
        let dir = self.leases_dir().join(&id);
        let sessions = Arc::new(SessionTable::new(
            Owner { lease_id: id.clone(), agent_id: agent_id.to_string(), lease_dir: dir.clone(), port },
            crate::session::SessionLimits {
                max_sessions: self.settings.max_sessions,
                max_download_bytes: self.settings.max_download_bytes,
            },
            self.services.clone(),
        ));
        self.own_port(port, true);
        let lease = Arc::new(Lease {
            id: id.clone(),
            agent_id: agent_id.to_string(),
            port,
            token: Token::generate(),
            sessions,
            dir,
            expiry: Mutex::new((Instant::now(), SystemTime::now())),
            server: Mutex::new(None),
        });
        lease.renew(self.settings.lease_ttl);
        let (stop, stopped) = oneshot::channel();
        let task = (self.lease_servers)(
            listener,
            lease.clone(),
            Box::pin(async {
                let _ = stopped.await;
            }),
        );
        *lease.server.lock().expect("lease server poisoned") = Some(LeaseServer { stop, task });
        leases.insert(id, lease.clone());
        drop(leases);
        tracing::info!(lease = %lease.id, agent = %agent_id, port, "lease granted");
        self.changes.notify_one();
        Ok(lease.grant())
    }

    /// The first pool port that is neither leased nor taken by another program (with a
    /// pool of 0-0, any free port).
    fn bind_free_port(&self, leases: &HashMap<String, Arc<Lease>>) -> Result<(u16, tokio::net::TcpListener)> {
        let listen = |port: u16| {
            let listener = std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
            listener.set_nonblocking(true)?;
            let listener = tokio::net::TcpListener::from_std(listener)?;
            let port = listener.local_addr()?.port();
            Ok::<_, std::io::Error>((port, listener))
        };
        if (self.settings.port_min, self.settings.port_max) == (0, 0) {
            return listen(0).map_err(|error| Error::internal(format!("cannot listen on a free port: {error}")));
        }
        for port in self.settings.port_min..=self.settings.port_max {
            if leases.values().any(|lease| lease.port == port) {
                continue;
            }
            if let Ok(bound) = listen(port) {
                return Ok(bound);
            }
        }
        Err(Error::new(
            ErrorCode::PoolExhausted,
            format!(
                "every port from {} to {} is leased or in use; release a lease or widen --port-min/--port-max",
                self.settings.port_min, self.settings.port_max
            ),
        ))
    }

    /// Renews a lease.
    pub fn heartbeat(&self, lease_id: &str) -> Result<LeaseView> {
        let lease = self.live_lease(lease_id)?;
        lease.renew(self.settings.lease_ttl);
        Ok(lease.view())
    }

    /// A lease that exists and has not expired.
    fn live_lease(&self, lease_id: &str) -> Result<Arc<Lease>> {
        let leases = self.leases.lock().expect("lease table poisoned");
        leases
            .get(lease_id)
            .filter(|lease| !lease.expired())
            .cloned()
            .ok_or_else(|| Error::new(ErrorCode::LeaseNotFound, format!("no live lease {lease_id}")))
    }

    /// Releases a lease: its sessions close and its port returns to the pool.
    pub async fn release(&self, lease_id: &str, reason: &str) -> Result<usize> {
        let lease = self
            .leases
            .lock()
            .expect("lease table poisoned")
            .remove(lease_id)
            .ok_or_else(|| Error::new(ErrorCode::LeaseNotFound, format!("no lease {lease_id}")))?;
        let closed = lease.shut_down(reason).await;
        self.own_port(lease.port, false);
        self.changes.notify_one();
        Ok(closed)
    }

    /// Every lease, for listing and the tray.
    pub fn list(&self) -> Vec<LeaseView> {
        let leases: Vec<Arc<Lease>> = self.leases.lock().expect("lease table poisoned").values().cloned().collect();
        let mut views: Vec<LeaseView> = leases.iter().map(|lease| lease.view()).collect();
        views.sort_by(|a, b| a.agent_id.cmp(&b.agent_id));
        views
    }

    /// Proof that the engine can host pages: a session that opened, or else, once the
    /// first agents have had the machine to themselves for a moment, a probe.
    pub async fn prove_engine(&self) -> Result<()> {
        tokio::time::sleep(PROBE_AFTER).await;
        if self.services.engine_proven.load(Ordering::Acquire) {
            return Ok(());
        }
        self.probe().await
    }

    /// Opens one session on about:blank and closes it: proof that the engine can host
    /// pages.
    async fn probe(&self) -> Result<()> {
        let dir = self.leases_dir().join("probe");
        let table = SessionTable::new(
            Owner { lease_id: "probe".into(), agent_id: "malo".into(), lease_dir: dir.clone(), port: 0 },
            crate::session::SessionLimits { max_sessions: 1, max_download_bytes: self.settings.max_download_bytes },
            self.services.clone(),
        );
        let request = serde_json::from_value(serde_json::json!({ "name": "probe", "width": 320, "height": 240 }))
            .map_err(|error| Error::internal(error.to_string()))?;
        let opened = table.create(request).await;
        table.close_all("probe").await;
        crate::session::remove_dir_eventually(dir);
        opened.map(|_| ())
    }

    /// The daemon's figures for `GET /v1/stats`: leases, sessions, the engine's main
    /// thread and the connections.
    pub fn stats(&self) -> serde_json::Value {
        let leases: Vec<Arc<Lease>> = self.leases.lock().expect("lease table poisoned").values().cloned().collect();
        let sessions: usize = leases.iter().map(|lease| lease.sessions.list().len()).sum();
        serde_json::json!({
            "leases": leases.len(),
            "sessions": sessions,
            "main_thread": self.services.engine.main_thread().report(),
            "connections": crate::listen::report(),
        })
    }

    /// The live (unexpired) lease `lease_id`.
    pub fn lease(&self, lease_id: &str) -> Result<Arc<Lease>> {
        self.live_lease(lease_id)
    }

    /// The live session `session_id`, under whichever lease owns it.
    pub fn find_session(&self, session_id: &str) -> Option<Arc<crate::session::Session>> {
        let leases: Vec<Arc<Lease>> = self.leases.lock().expect("lease table poisoned").values().cloned().collect();
        leases.iter().find_map(|lease| lease.sessions.get(session_id).ok())
    }

    /// One pass of the reaper: expired leases are released, idle sessions closed.
    pub async fn reap(&self) {
        let leases: Vec<Arc<Lease>> = self.leases.lock().expect("lease table poisoned").values().cloned().collect();
        for lease in leases {
            if let Some(idle) = lease.sessions.least_idle() {
                // The agent is still there: a call (or a session being opened) is as good
                // as a heartbeat, while it runs (a login a person is doing, say) and when
                // it ends.
                lease.renew_from(Instant::now() - idle, self.settings.lease_ttl);
            }
            if lease.expired() {
                let _ = self.release(&lease.id, "expired").await;
            } else {
                lease.sessions.close_idle(self.settings.session_idle).await;
            }
        }
    }

    /// Runs the reaper until `stop` resolves.
    pub async fn run_reaper(self: Arc<Self>, stop: impl std::future::Future<Output = ()>) {
        let shortest = self.settings.lease_ttl.min(self.settings.session_idle);
        let period = (shortest / 4).clamp(Duration::from_millis(100), Duration::from_secs(1));
        let mut ticker = tokio::time::interval(period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => return,
                _ = ticker.tick() => self.reap().await,
            }
        }
    }

    /// Whether the daemon is shutting down.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    /// Releases every lease and refuses new ones (daemon shutdown).
    pub async fn shut_down(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        // Wakes the desktop, which withdraws what it announced.
        self.changes.notify_one();
        let ids: Vec<String> = self.leases.lock().expect("lease table poisoned").keys().cloned().collect();
        for id in ids {
            let _ = self.release(&id, "daemon_shutdown").await;
        }
        self.services.engine.close_all().await;
    }
}

/// Agent ids: 1 to 128 characters of letters, digits and `. _ - : @ /`.
fn check_agent_id(agent_id: &str) -> Result<()> {
    let valid =
        !agent_id.is_empty() && agent_id.len() <= 128 && agent_id.chars().all(|c| c.is_ascii_alphanumeric() || "._-:@/".contains(c));
    if valid {
        Ok(())
    } else {
        Err(Error::bad_request("agent_id must be 1 to 128 characters of letters, digits and . _ - : @ /"))
    }
}

#[cfg(test)]
mod tests {
    use super::testing::test_broker;
    use super::*;
    use crate::session::CreateSession;

    /// The lease time of these tests.
    const TTL: Duration = Duration::from_secs(30);
    const SECOND: Duration = Duration::from_secs(1);

    #[tokio::test(start_paused = true)]
    async fn a_lease_expires_after_its_ttl_without_heartbeat() {
        let (broker, _data_dir) = test_broker(|settings| settings.lease_ttl = TTL);
        let lease_id = broker.acquire("agent-a").unwrap().lease_id;
        tokio::time::advance(TTL - SECOND).await;
        broker.reap().await;
        assert!(broker.lease(&lease_id).is_ok(), "a second short of its TTL, the lease lives");
        tokio::time::advance(SECOND).await;
        let expired = broker.heartbeat(&lease_id).unwrap_err();
        assert_eq!(expired.code, ErrorCode::LeaseNotFound, "at its TTL the lease is gone, even for a heartbeat");
        broker.reap().await;
        assert!(broker.list().is_empty(), "the reaper released it");
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeats_keep_a_lease_alive() {
        let (broker, _data_dir) = test_broker(|settings| settings.lease_ttl = TTL);
        let lease_id = broker.acquire("agent-a").unwrap().lease_id;
        for _ in 0..10 {
            tokio::time::advance(TTL - SECOND).await;
            broker.reap().await;
            broker.heartbeat(&lease_id).expect("each heartbeat finds the lease live");
        }
        assert!(broker.lease(&lease_id).is_ok(), "alive after nearly ten TTLs of heartbeats");
        tokio::time::advance(TTL).await;
        broker.reap().await;
        assert!(broker.list().is_empty(), "a TTL after the last heartbeat, the lease is released");
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_in_flight_keeps_its_lease_alive() {
        let (broker, _data_dir) = test_broker(|settings| {
            settings.lease_ttl = TTL;
            settings.session_idle = TTL * 10;
        });
        let lease_id = broker.acquire("agent-a").unwrap().lease_id;
        let session = broker.lease(&lease_id).unwrap().sessions.create(CreateSession::default()).await.unwrap();
        let call = session.in_use();
        for _ in 0..8 {
            tokio::time::advance(TTL / 2).await;
            broker.reap().await;
        }
        assert!(broker.lease(&lease_id).is_ok(), "a call running for four TTLs is as good as a heartbeat");
        // Its end counts as one too: the lease lives a TTL from it.
        drop(call);
        tokio::time::advance(TTL - SECOND).await;
        broker.reap().await;
        assert!(broker.lease(&lease_id).is_ok(), "a second short of a TTL after the call, the lease lives");
        tokio::time::advance(SECOND).await;
        broker.reap().await;
        assert!(broker.list().is_empty(), "a TTL after the call, the lease is released");
        assert!(broker.find_session(&session.id).is_none(), "and its session closed with it");
    }

    #[tokio::test(start_paused = true)]
    async fn the_reaper_releases_an_expired_lease_by_itself() {
        let (broker, _data_dir) = test_broker(|settings| settings.lease_ttl = TTL);
        let lease_id = broker.acquire("agent-a").unwrap().lease_id;
        let (stop, stopped) = oneshot::channel::<()>();
        let reaper = tokio::spawn(broker.clone().run_reaper(async {
            let _ = stopped.await;
        }));
        // With the clock paused, a sleep moves it from one timer to the next: the reaper's
        // ticks run in order, as they would in real time.
        tokio::time::sleep(TTL - SECOND).await;
        assert!(broker.lease(&lease_id).is_ok());
        tokio::time::sleep(SECOND * 2).await;
        assert!(broker.list().is_empty(), "the reaper's tick at the TTL released the lease");
        stop.send(()).unwrap();
        reaper.await.unwrap();
    }

    #[test]
    fn agent_ids() {
        for good in ["agent-a", "claude.code@host:1/x", "A_1"] {
            assert!(check_agent_id(good).is_ok(), "{good}");
        }
        for bad in ["", "with space", "semi;colon", &"x".repeat(129), "ünï"] {
            assert!(check_agent_id(bad).is_err(), "{bad}");
        }
    }
}
