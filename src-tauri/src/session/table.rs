//! The sessions of one lease: create (within `--max-sessions`), find, list, close,
//! and close the idle ones.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::{Session, SessionDirs};
use crate::engine::identity::Identity;
use crate::engine::{EngineHandle, SessionSpec};
use crate::error::{Error, ErrorCode, Result};
use crate::events::{EventLog, SeqCounter};
use crate::network::conditions::NetworkConditions;
use crate::network::upstream_proxy::{Password, UpstreamProxyConfig, UpstreamProxyInput};
use crate::network::Capture;
use crate::proxy::{ProxyServices, Route, SessionProxy};
use crate::secret::{random_hex, Token};
use crate::state::downloads::Downloads;
use crate::state::{PopupPolicy, Tabs};

/// Smallest viewport side accepted, in CSS pixels.
const VIEWPORT_MIN: u32 = 100;
/// Largest viewport side accepted, in CSS pixels.
const VIEWPORT_MAX: u32 = 4096;
/// Viewport sides accepted.
const VIEWPORT_RANGE: std::ops::RangeInclusive<u32> = VIEWPORT_MIN..=VIEWPORT_MAX;

/// `POST /v1/sessions` body.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    /// A name for people and logs (default `session`).
    #[serde(default)]
    #[schemars(length(min = 1, max = 128))]
    pub name: Option<String>,
    /// Viewport width in CSS pixels (default 1280).
    #[serde(default)]
    #[schemars(range(min = VIEWPORT_MIN, max = VIEWPORT_MAX))]
    pub width: Option<u32>,
    /// Viewport height in CSS pixels (default 800).
    #[serde(default)]
    #[schemars(range(min = VIEWPORT_MIN, max = VIEWPORT_MAX))]
    pub height: Option<u32>,
    /// A named persistent login profile, shared by the sessions that name it. Its cookies
    /// and storage outlive the session and the daemon. Lowercase letters, digits, `.`, `_`,
    /// `-`; at most 64 characters. Omitted or null: an anonymous session.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[a-z0-9._-]+$"))]
    pub profile: Option<String>,
    /// What window.open and target=_blank do: `deny` (default) or `tab` (a new tab of the
    /// session); `set_popup_policy` changes it later.
    #[serde(default)]
    pub popups: Option<PopupPolicy>,
    /// The user agent of every tab (`navigator.userAgent` and the `User-Agent` header);
    /// default WebKit's own.
    #[serde(default)]
    #[schemars(length(min = 1, max = 512))]
    pub user_agent: Option<String>,
    /// A BCP 47 language tag (`de-DE`) for `Accept-Language`, `navigator.language` and
    /// `Intl`. The session's `Accept-Language`, and `navigator.language(s)` and `Intl`'s
    /// default, which WebKit keeps per daemon (see docs/API.md: `E_UNSUPPORTED` while
    /// another session uses another locale).
    #[serde(default)]
    pub locale: Option<String>,
    /// An IANA time zone (`Europe/Berlin`) that `Date` and `Intl` in pages follow.
    #[serde(default)]
    pub timezone: Option<String>,
    /// `prefers-color-scheme`: `light` or `dark` (kept per daemon, as `locale`).
    #[serde(default)]
    pub color_scheme: Option<crate::engine::identity::ColorScheme>,
    /// The position pages granted `geolocation` read.
    #[serde(default)]
    pub geolocation: Option<crate::engine::identity::Geolocation>,
    /// `devicePixelRatio`; only the screen's own is accepted. WebKitGTK has it per daemon
    /// only, so only the screen's own (1 on malo's own screen) is accepted.
    #[serde(default)]
    pub device_scale_factor: Option<f64>,
    /// Headers added to every request of the session's pages (names are case-insensitive).
    #[serde(default)]
    pub extra_http_headers: Option<std::collections::BTreeMap<String, String>>,
    /// Permissions granted: a name (`geolocation`, `notifications`, `clipboard-read`,
    /// `clipboard-write`) for every origin, or `{name, origins}`. Anything else a page asks
    /// for is denied (and is an event).
    #[serde(default)]
    pub permissions: Option<Vec<crate::engine::identity::PermissionGrant>>,
    /// An upstream proxy for all the session's traffic. Every request of the session goes
    /// through it, behind the session's own proxy: `{server: "http://…"|"https://…"|
    /// "socks5://…", username?, password? | credential?, bypass?}`. The password is never
    /// answered, logged or kept on disk.
    #[serde(default)]
    pub proxy: Option<UpstreamProxyInput>,
    /// Throttling of the session's traffic. `{offline?, latency_ms?, download_kbps?,
    /// upload_kbps?}`, applied to the session's traffic; `set_network_conditions` changes
    /// them later.
    #[serde(default)]
    pub network_conditions: Option<NetworkConditions>,
    /// Cookies and localStorage to start with, in Playwright's storageState format. They
    /// are given as `{cookies, origins}` (see `storage_state`); with `profile`, they are
    /// kept in the profile. Checked whole before the session opens (`E_BAD_REQUEST` naming the
    /// field, `storage_state.cookies[0].domain`).
    #[serde(default)]
    #[schemars(with = "Option<crate::engine::storage::StorageState>")]
    pub storage_state: Option<serde_json::Value>,
}

impl CreateSession {
    /// The identity asked for, checked (`E_BAD_REQUEST` naming the first wrong field).
    fn identity(&self) -> Result<Identity> {
        use crate::engine::identity as check;
        if let Some(user_agent) = &self.user_agent {
            check::check_user_agent(user_agent)?;
        }
        if let Some(locale) = &self.locale {
            check::check_locale(locale)?;
        }
        if let Some(timezone) = &self.timezone {
            check::check_timezone(timezone)?;
        }
        if let Some(position) = &self.geolocation {
            check::check_geolocation(position)?;
        }
        if let Some(factor) = self.device_scale_factor {
            check::check_device_scale_factor(factor)?;
        }
        Ok(Identity {
            user_agent: self.user_agent.clone(),
            locale: self.locale.clone(),
            timezone: self.timezone.clone(),
            color_scheme: self.color_scheme,
            geolocation: self.geolocation,
            device_scale_factor: self.device_scale_factor,
            extra_http_headers: self.extra_http_headers.as_ref().map(check::check_headers).transpose()?.unwrap_or_default(),
            permissions: self.permissions.as_deref().map(check::check_permissions).transpose()?.unwrap_or_default(),
            proxy: self.proxy.as_ref().map(UpstreamProxyInput::check).transpose()?.map(Box::new),
        })
    }
}

/// What one lease may use.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// Sessions open at once.
    pub max_sessions: usize,
    /// Bytes each session may download.
    pub max_download_bytes: u64,
}

/// Whose sessions a table holds.
#[derive(Debug, Clone)]
pub struct Owner {
    /// The lease.
    pub lease_id: String,
    /// The agent that holds the lease.
    pub agent_id: String,
    /// The lease's directory; each session lives under its `sessions/`.
    pub lease_dir: PathBuf,
    /// The lease's port on 127.0.0.1 (its sessions' DevTools endpoints live there).
    pub port: u16,
}

/// The sessions of one lease.
#[derive(Debug)]
pub struct SessionTable {
    lease_id: String,
    port: u16,
    agent_id: String,
    lease_dir: PathBuf,
    limits: SessionLimits,
    services: SessionServices,
    /// What a person allowed for the rest of this lease.
    grants: crate::policy::LeaseGrants,
    // A std mutex: lookups and inserts only, never held across an await.
    state: Mutex<TableState>,
}

/// What every lease's sessions share: daemon-wide services.
#[derive(Debug, Clone)]
pub struct SessionServices {
    /// The engine that hosts sessions.
    pub engine: EngineHandle,
    /// The daemon-wide sequence.
    pub seq: Arc<SeqCounter>,
    /// Notified when sessions, tabs or windows change (the tray listens).
    pub changed: Arc<Notify>,
    /// Named login profiles.
    pub profiles: Arc<super::ProfileStore>,
    /// The credential vault.
    pub vault: Arc<crate::vault::Vault>,
    /// What session proxies share; `None` runs sessions without a proxy (no capture,
    /// no interception: for tests of the wire only).
    pub proxy: Option<Arc<ProxyServices>>,
    /// Set once a session has opened: the engine can host pages.
    pub engine_proven: Arc<std::sync::atomic::AtomicBool>,
    /// The person's policy (`<data-dir>/policy.toml`).
    pub policy: Arc<crate::policy::PolicyStore>,
    /// The way to ask a person, once the desktop registers one.
    pub approvals: Arc<crate::policy::Approvals>,
}

impl SessionServices {
    /// The services of a daemon whose data directory is `data_dir` (its profiles and its
    /// vault's index live there); `changed` is notified when sessions, tabs or windows change.
    pub fn new(
        engine: EngineHandle,
        seq: Arc<SeqCounter>,
        changed: Arc<Notify>,
        data_dir: &Path,
        proxy: Option<Arc<ProxyServices>>,
    ) -> SessionServices {
        SessionServices {
            engine,
            seq,
            changed,
            profiles: Arc::new(super::ProfileStore::new(data_dir.join("profiles"))),
            engine_proven: Arc::default(),
            vault: Arc::new(crate::vault::Vault::new(data_dir)),
            proxy,
            policy: Arc::new(crate::policy::PolicyStore::new(data_dir)),
            approvals: Arc::default(),
        }
    }
}

#[derive(Debug, Default)]
struct TableState {
    sessions: HashMap<String, Arc<Session>>,
    /// Sessions being created, counted against the limit.
    opening: usize,
    closed: bool,
}

impl SessionTable {
    /// An empty table. `services.changed` is notified whenever the set of sessions changes.
    pub fn new(owner: Owner, limits: SessionLimits, services: SessionServices) -> SessionTable {
        let Owner { lease_id, agent_id, lease_dir, port } = owner;
        SessionTable { lease_id, port, agent_id, lease_dir, limits, services, grants: Default::default(), state: Mutex::default() }
    }

    /// The agent that holds the lease.
    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// The person's policy.
    pub fn policy(&self) -> &Arc<crate::policy::PolicyStore> {
        &self.services.policy
    }

    /// The way to ask a person.
    pub fn approvals(&self) -> &Arc<crate::policy::Approvals> {
        &self.services.approvals
    }

    /// What a person allowed for the rest of this lease.
    pub fn grants(&self) -> &crate::policy::LeaseGrants {
        &self.grants
    }

    /// The lease's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The daemon's credential vault.
    pub fn vault(&self) -> &Arc<crate::vault::Vault> {
        &self.services.vault
    }

    /// The daemon's profiles.
    pub fn profiles(&self) -> &Arc<super::ProfileStore> {
        &self.services.profiles
    }

    /// Opens a session. Over the limit: `E_TOO_MANY_SESSIONS` (429).
    pub async fn create(&self, request: CreateSession) -> Result<Arc<Session>> {
        let width = request.width.unwrap_or(1280);
        let height = request.height.unwrap_or(800);
        if !VIEWPORT_RANGE.contains(&width) || !VIEWPORT_RANGE.contains(&height) {
            return Err(Error::bad_request(format!(
                "width and height must be between {} and {} pixels",
                VIEWPORT_RANGE.start(),
                VIEWPORT_RANGE.end()
            )));
        }
        let identity = request.identity()?;
        let conditions = request.network_conditions.map(NetworkConditions::check).transpose()?.unwrap_or_default();
        let storage_state =
            request.storage_state.as_ref().map(|state| crate::engine::storage_check::state(state, "storage_state")).transpose()?;
        if self.services.proxy.is_none() && !conditions.is_off() {
            return Err(crate::engine::identity::unsupported(
                "network_conditions",
                "network_conditions needs the session proxy, which this daemon runs without",
            ));
        }
        let name = request.name.unwrap_or_else(|| "session".to_string());
        if name.is_empty() || name.chars().count() > 128 || name.chars().any(char::is_control) {
            return Err(Error::bad_request("name must be 1 to 128 printable characters"));
        }
        if let Some(profile) = &request.profile {
            super::ProfileStore::check_name(profile)?;
            super::opening::approve_profile(self, profile, &name).await?;
        }
        self.reserve_slot()?;
        let result =
            match (self.open(name, width, height, request.profile, request.popups.unwrap_or_default(), identity).await, storage_state) {
                (Ok(session), Some(state)) => match crate::engine::storage::import(&self.services.engine, &session.id, state).await {
                    Ok(()) => Ok(session),
                    Err(error) => {
                        self.dispose(&session).await;
                        Err(error)
                    }
                },
                (result, _) => result,
            };
        if let Ok(session) = &result {
            if let Some(proxy) = session.proxy.lock().expect("proxy poisoned").as_ref() {
                proxy.set_conditions(conditions);
            }
        }
        let lease_released = {
            let mut state = self.state.lock().expect("session table poisoned");
            state.opening -= 1;
            match &result {
                Ok(session) if !state.closed => {
                    state.sessions.insert(session.id.clone(), session.clone());
                    false
                }
                _ => state.closed,
            }
        };
        let session = result?;
        if lease_released {
            self.dispose(&session).await;
            return Err(Error::new(ErrorCode::LeaseNotFound, "the lease was released"));
        }
        self.services.changed.notify_one();
        Ok(session)
    }

    fn reserve_slot(&self) -> Result<()> {
        let mut state = self.state.lock().expect("session table poisoned");
        if state.closed {
            return Err(Error::new(ErrorCode::LeaseNotFound, "the lease was released"));
        }
        if state.sessions.len() + state.opening >= self.limits.max_sessions {
            return Err(Error::new(
                ErrorCode::TooManySessions,
                format!("this lease already has {} sessions (the limit); close one first", self.limits.max_sessions),
            )
            .with_details(serde_json::json!({ "max_sessions": self.limits.max_sessions })));
        }
        state.opening += 1;
        Ok(())
    }

    async fn open(
        &self,
        name: String,
        width: u32,
        height: u32,
        profile: Option<String>,
        popups: PopupPolicy,
        mut identity: Identity,
    ) -> Result<Arc<Session>> {
        let id = format!("sess-{}", random_hex(8));
        let mut dirs = SessionDirs::new(&self.lease_dir, &id);
        dirs.create().map_err(|error| Error::internal(format!("cannot create the session directories: {error}")))?;
        if let Some(profile) = &profile {
            match self.services.profiles.acquire(profile) {
                Ok(profile_dir) => {
                    identity = super::ProfileStore::remembered_identity(&profile_dir, identity);
                    dirs.web_data = profile_dir;
                }
                Err(error) => {
                    let _ = std::fs::remove_dir_all(&dirs.root);
                    return Err(error);
                }
            }
        }
        let services = &self.services;
        let route = match self.route_of(identity.proxy.as_deref().cloned()) {
            Ok(route) => route,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&dirs.root);
                if let Some(profile) = &profile {
                    self.services.profiles.release(profile);
                }
                return Err(error);
            }
        };
        let events = Arc::new(EventLog::new(services.seq.clone()));
        let capture = Arc::new(Capture::default());
        let policy = crate::policy::SessionPolicy { store: services.policy.clone(), profile: profile.clone() };
        // Every request of the session's pages goes through a proxy of its own.
        let proxy = match &services.proxy {
            Some(proxy_services) => match SessionProxy::start(proxy_services.clone(), capture.clone(), policy.clone()).await {
                Ok(proxy) => {
                    if let Some(route) = route {
                        proxy.set_route(route);
                    }
                    Some(proxy)
                }
                Err(error) => {
                    let _ = std::fs::remove_dir_all(&dirs.root);
                    if let Some(profile) = &profile {
                        self.services.profiles.release(profile);
                    }
                    return Err(Error::internal(format!("cannot start the session's proxy: {error}")));
                }
            },
            None => None,
        };
        let directory = services.proxy.as_ref().map(|proxy| proxy.directory.clone()).unwrap_or_default();
        let tabs = Arc::new(Tabs::new(services.changed.clone(), popups, events.clone(), directory, capture.clone(), (width, height)));
        tabs.set_request_headers(identity.request_headers());
        let downloads = Arc::new(Downloads::new(dirs.downloads.clone(), self.limits.max_download_bytes, events.clone()));
        super::opening::refuse_downloads_unless_allowed(&policy, &downloads);
        let spec = SessionSpec {
            session_id: id.clone(),
            width,
            height,
            web_data_dir: dirs.web_data.clone(),
            events: events.clone(),
            tabs: tabs.clone(),
            downloads: downloads.clone(),
            proxy: proxy.as_ref().map(SessionProxy::url),
            identity: identity.clone(),
        };
        if let Err(error) = self.services.engine.open(spec).await {
            let _ = std::fs::remove_dir_all(&dirs.root);
            if let Some(profile) = &profile {
                self.services.profiles.release(profile);
            }
            return Err(error);
        }
        self.services.engine_proven.store(true, std::sync::atomic::Ordering::Release);
        events.push(None, crate::events::EventKind::SessionCreated { name: name.clone(), width, height });
        tracing::info!(session = %id, lease = %self.lease_id, %name, profile = profile.as_deref().unwrap_or("-"), "session opened");
        Ok(Arc::new(Session {
            id,
            name,
            lease_id: self.lease_id.clone(),
            agent_id: self.agent_id.clone(),
            token: Token::generate(),
            devtools_key: Token::generate(),
            width,
            height,
            profile,
            policy,
            dirs,
            events,
            tabs,
            downloads,
            capture,
            proxy: Mutex::new(proxy),
            created_at: crate::clock::now(),
            engine: self.services.engine.clone(),
            identity: Mutex::new(identity),
            waiting: Mutex::default(),
            live_url: Mutex::default(),
            changed: self.services.changed.clone(),
            last_used: Mutex::new(Instant::now()),
            running: Default::default(),
        }))
    }

    /// The route through the session's upstream proxy, checked before anything opens (its
    /// password inline, or its vault credential's).
    fn route_of(&self, config: Option<UpstreamProxyConfig>) -> Result<Option<Route>> {
        let field = |name: &str, message: String| Error::bad_request(message).with_details(serde_json::json!({ "field": name }));
        let Some(mut config) = config else { return Ok(None) };
        if self.services.proxy.is_none() {
            return Err(crate::engine::identity::unsupported("proxy", "proxy needs the session proxy, which this daemon runs without"));
        }
        if config.lacks_password() {
            return Err(field(
                "proxy",
                format!(
                    "the profile remembers the proxy {} with username {:?}, but never its password: give proxy again with its password, or keep it in the vault and name it as proxy.credential",
                    config.server,
                    config.username.as_deref().unwrap_or_default()
                ),
            ));
        }
        let credentials = match (&config.credential, &config.username, &config.password) {
            (Some(name), _, _) => {
                let (info, password) = self.services.vault.secret_for(name, &config.credential_origin())?;
                config.username = Some(info.username.clone());
                Some((info.username, Password::new(password)))
            }
            (None, Some(username), Some(password)) => Some((username.clone(), password.clone())),
            _ => None,
        };
        Route::new(config, credentials).map(Some).map_err(|message| field("proxy.server", message))
    }

    /// The session with this id.
    pub fn get(&self, session_id: &str) -> Result<Arc<Session>> {
        let state = self.state.lock().expect("session table poisoned");
        state
            .sessions
            .get(session_id)
            .cloned()
            .ok_or_else(|| Error::new(ErrorCode::SessionNotFound, format!("no session {session_id} in this lease")))
    }

    /// How long since the agent last used any of these sessions (zero while a session is
    /// being opened, a call runs or a person has a window); `None` without sessions.
    pub fn least_idle(&self) -> Option<Duration> {
        let state = self.state.lock().expect("session table poisoned");
        if state.opening > 0 {
            return Some(Duration::ZERO);
        }
        state.sessions.values().map(|session| session.idle_for()).min()
    }

    /// All sessions, oldest first.
    pub fn list(&self) -> Vec<Arc<Session>> {
        let state = self.state.lock().expect("session table poisoned");
        let mut sessions: Vec<_> = state.sessions.values().cloned().collect();
        sessions.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        sessions
    }

    /// Closes one session: the engine drops its context and webviews, then its directory
    /// goes. `reason` is logged (`requested`, `idle`, `lease_released`, ...).
    pub async fn close(&self, session_id: &str, reason: &str) -> Result<()> {
        let session = {
            let mut state = self.state.lock().expect("session table poisoned");
            state
                .sessions
                .remove(session_id)
                .ok_or_else(|| Error::new(ErrorCode::SessionNotFound, format!("no session {session_id} in this lease")))?
        };
        tracing::info!(session = %session_id, lease = %self.lease_id, reason, "closing session");
        self.dispose(&session).await;
        self.services.changed.notify_one();
        Ok(())
    }

    async fn dispose(&self, session: &Session) {
        if let Err(error) = self.services.engine.close(&session.id).await {
            tracing::warn!(session = %session.id, %error, "engine close failed");
        }
        // Its proxy's port closes with it.
        drop(session.proxy.lock().expect("proxy poisoned").take());
        // The session's own directory goes; a profile's data stays for its next session.
        remove_dir_eventually(session.dirs.root.clone());
        if let Some(profile) = &session.profile {
            self.services.profiles.release(profile);
        }
        crate::memory::trim_soon();
    }

    /// Closes every session and refuses new ones (lease release or expiry).
    pub async fn close_all(&self, reason: &str) -> usize {
        let ids: Vec<String> = {
            let mut state = self.state.lock().expect("session table poisoned");
            state.closed = true;
            state.sessions.keys().cloned().collect()
        };
        let mut closed = 0;
        for id in ids {
            if self.close(&id, reason).await.is_ok() {
                closed += 1;
            }
        }
        closed
    }

    /// Closes sessions idle for longer than `limit`.
    pub async fn close_idle(&self, limit: Duration) {
        let idle: Vec<String> =
            self.list().into_iter().filter(|session| session.idle_for() >= limit).map(|session| session.id.clone()).collect();
        for id in idle {
            let _ = self.close(&id, "idle").await;
        }
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        self.state.lock().expect("session table poisoned").sessions.len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Removes a directory now, and once more a moment later: a WebKit network process that
/// is still exiting may write its last cookies after the first removal.
pub fn remove_dir_eventually(dir: PathBuf) {
    let _ = std::fs::remove_dir_all(&dir);
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let _ = tokio::fs::remove_dir_all(&dir).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempDir;

    /// The idle limit of these tests (the daemon's default).
    const IDLE: Duration = Duration::from_secs(300);
    const SECOND: Duration = Duration::from_secs(1);

    /// A lease's table of sessions over the fake engine, in a fresh data directory.
    fn table_over_fake_engine() -> (SessionTable, TempDir) {
        let data_dir = TempDir::new("malo-session-test");
        let services = SessionServices::new(crate::engine::fake::fake_engine(), Arc::default(), Arc::default(), data_dir.path(), None);
        let owner = Owner {
            lease_id: "lease-test".into(),
            agent_id: "agent".into(),
            lease_dir: data_dir.path().join("leases").join("lease-test"),
            port: 0,
        };
        (SessionTable::new(owner, SessionLimits { max_sessions: 2, max_download_bytes: 1 << 20 }, services), data_dir)
    }

    /// Checks that, counted from now, `session` outlasts `close_idle` a second short of the
    /// idle limit and is closed by it at the limit.
    async fn closes_at_the_idle_limit(table: &SessionTable, session: &Session) {
        tokio::time::advance(IDLE - SECOND).await;
        table.close_idle(IDLE).await;
        assert!(table.get(&session.id).is_ok(), "a second short of the limit, the session stays");
        tokio::time::advance(SECOND).await;
        table.close_idle(IDLE).await;
        assert!(table.is_empty(), "idle for the limit, the session closes");
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_session_closes_after_the_idle_limit() {
        let (table, _data_dir) = table_over_fake_engine();
        let session = table.create(CreateSession::default()).await.unwrap();
        closes_at_the_idle_limit(&table, &session).await;
    }

    /// A closed session's state (event log, tabs and their logs, capture) goes with it:
    /// nothing the table or its services keep holds on to it (a soak's memory came back
    /// only as far as this).
    #[tokio::test]
    async fn nothing_of_a_closed_session_stays_behind() {
        let (table, _data_dir) = table_over_fake_engine();
        let session = table.create(CreateSession::default()).await.unwrap();
        let tab = session.tabs.list().pop().expect("the session's first tab");
        let kept = (
            Arc::downgrade(&session),
            Arc::downgrade(&session.events),
            Arc::downgrade(&session.tabs),
            Arc::downgrade(&session.capture),
            Arc::downgrade(&session.downloads),
            Arc::downgrade(&tab),
        );
        let id = session.id.clone();
        drop((session, tab));
        table.close(&id, "requested").await.unwrap();
        assert!(kept.0.upgrade().is_none(), "the session is dropped");
        assert!(kept.1.upgrade().is_none(), "its event log is dropped");
        assert!(kept.2.upgrade().is_none(), "its tabs are dropped");
        assert!(kept.3.upgrade().is_none(), "its response capture is dropped");
        assert!(kept.4.upgrade().is_none(), "its downloads are dropped");
        assert!(kept.5.upgrade().is_none(), "its tab's state (traffic, console) is dropped");
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_is_not_idle_while_a_call_is_in_flight() {
        let (table, _data_dir) = table_over_fake_engine();
        let session = table.create(CreateSession::default()).await.unwrap();
        let call = session.in_use();
        tokio::time::advance(IDLE * 3).await;
        table.close_idle(IDLE).await;
        assert!(table.get(&session.id).is_ok(), "a call in flight for three idle limits keeps the session open");
        assert_eq!(session.idle_for(), Duration::ZERO);
        // The call's end is a use: the idle clock starts from it, not from the call's start.
        drop(call);
        closes_at_the_idle_limit(&table, &session).await;
    }
}
