//! Sessions: what a lease owns. A session is a browsing context (its own cookies,
//! storage, cache, downloads, artifacts and event log) that owns tabs; the engine hosts
//! it, this module keeps its identity, token, directories and idle clock.

mod opening;
mod profiles;
mod table;

pub use profiles::{ProfileInfo, ProfileStore, MAX_PROFILES};

pub use crate::state::{PreviousSnapshot, RefTable};
pub use table::{remove_dir_eventually, CreateSession, Owner, SessionLimits, SessionServices, SessionTable};

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::time::Instant;

use crate::engine::{EngineHandle, TabAddress};
use crate::events::EventLog;
use crate::secret::Token;
use crate::state::{TabState, Tabs};

/// A session's directories under `<data-dir>/leases/<lease-id>/sessions/<session-id>/`.
#[derive(Debug, Clone, Serialize)]
pub struct SessionDirs {
    /// The session's root; removed when the session closes.
    #[serde(skip)]
    pub root: PathBuf,
    /// Downloads land here.
    pub downloads: PathBuf,
    /// Failure screenshots and run reports land here.
    pub artifacts: PathBuf,
    /// WebKit's data (cookies, storage, cache) for an anonymous session.
    #[serde(skip)]
    pub web_data: PathBuf,
}

impl SessionDirs {
    /// The layout for `session_id` under a lease directory.
    pub fn new(lease_dir: &std::path::Path, session_id: &str) -> SessionDirs {
        let root = lease_dir.join("sessions").join(session_id);
        SessionDirs { downloads: root.join("downloads"), artifacts: root.join("artifacts"), web_data: root.join("webdata"), root }
    }

    /// Creates the directories (0700).
    pub fn create(&self) -> std::io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true).mode(0o700);
        for dir in [&self.root, &self.downloads, &self.artifacts] {
            builder.create(dir)?;
        }
        Ok(())
    }
}

/// One live session.
#[derive(Debug)]
pub struct Session {
    /// `sess-<hex>`.
    pub id: String,
    /// The caller's name for it.
    pub name: String,
    /// The lease it belongs to.
    pub lease_id: String,
    /// The agent that holds the lease.
    pub agent_id: String,
    /// Required with the lease token on every session route.
    pub token: Token,
    /// The capability of the session's DevTools endpoint (in its URL, or as a Bearer
    /// token): whoever holds it drives the session like its agent.
    pub devtools_key: Token,
    /// Viewport width (CSS px).
    pub width: u32,
    /// Viewport height (CSS px).
    pub height: u32,
    /// The named profile it uses, if any (`null` = anonymous).
    pub profile: Option<String>,
    /// The person's policy for it (the rules of its profile, or of anonymous sessions).
    pub policy: crate::policy::SessionPolicy,
    /// Its directories.
    pub dirs: SessionDirs,
    /// Its event log.
    pub events: Arc<EventLog>,
    /// Its tabs (url, title, refs, call locks), kept by the engine.
    pub tabs: Arc<Tabs>,
    /// Its download policy and records.
    pub downloads: Arc<crate::state::downloads::Downloads>,
    /// Its response capture (`network_capture`, `responses`).
    pub capture: Arc<crate::network::Capture>,
    /// Its proxy, while open (`None` once closed, or when sessions run without one).
    pub proxy: Mutex<Option<crate::proxy::SessionProxy>>,
    /// When it was created.
    pub created_at: String,
    /// The engine that hosts it.
    pub engine: EngineHandle,
    // A std mutex: a short copy or replace. What it shows pages (creation, then the
    // identity tools).
    pub identity: Mutex<crate::engine::identity::Identity>,
    // A std mutex: what the session waits for a person to do, if anything (a short copy).
    waiting: Mutex<Option<String>>,
    /// The link of the live view a person may open now (`crate::live`), while one is valid:
    /// shown to the lease holder in the summary, never logged.
    pub live_url: Mutex<Option<String>>,
    /// Notified when the session starts or stops waiting for a person (the tray listens).
    changed: Arc<tokio::sync::Notify>,
    // A std mutex: a timestamp copy. Tokio's clock, so that tests can pause and advance it.
    last_used: Mutex<Instant>,
    /// Tool calls running now: a session is never idle while one runs.
    running: std::sync::atomic::AtomicUsize,
}

/// While alive, a tool call runs on the session: it is in use, whatever the call's length.
#[derive(Debug)]
pub struct InUse<'a> {
    session: &'a Session,
}

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        self.session.running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        self.session.touch();
    }
}

/// While alive, the session is marked as waiting for a person (the tray marks it and a
/// desktop notification announces it); dropping it clears the mark, however the wait ends.
#[derive(Debug)]
pub struct WaitingForPerson<'a> {
    session: &'a Session,
}

impl Drop for WaitingForPerson<'_> {
    fn drop(&mut self) {
        *self.session.waiting.lock().expect("waiting mark poisoned") = None;
        self.session.changed.notify_one();
    }
}

impl Session {
    /// Marks the session as used now (resets the idle clock).
    pub fn touch(&self) {
        *self.last_used.lock().expect("idle clock poisoned") = Instant::now();
    }

    /// Marks a tool call as running until the returned guard is dropped.
    pub fn in_use(&self) -> InUse<'_> {
        self.running.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.touch();
        InUse { session: self }
    }

    /// Whether a tool call runs on the session now.
    pub fn is_running(&self) -> bool {
        self.running.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// How long since the last use. Never idle while a tool call runs (a login waiting
    /// minutes for a person) or while a person has the session on screen.
    pub fn idle_for(&self) -> Duration {
        if self.is_running() || self.window_shown() {
            return Duration::ZERO;
        }
        self.last_used.lock().expect("idle clock poisoned").elapsed()
    }

    /// Marks the session as waiting for a person to `what` (e.g. "log in") until the
    /// returned guard is dropped.
    pub fn wait_for_person(&self, what: &str) -> WaitingForPerson<'_> {
        *self.waiting.lock().expect("waiting mark poisoned") = Some(what.to_string());
        self.changed.notify_one();
        WaitingForPerson { session: self }
    }

    /// What the session waits for a person to do, if anything: what a running tool marked
    /// (e.g. "log in"), or "take over" while the agent's `watch` window waits for Done.
    pub fn waiting_for(&self) -> Option<String> {
        let marked = self.waiting.lock().expect("waiting mark poisoned").clone();
        marked.or_else(|| self.tabs.list().iter().any(|tab| tab.status.awaits_takeover()).then(|| "take over".to_string()))
    }

    /// Whether a person has one of the session's tabs on screen.
    pub fn window_shown(&self) -> bool {
        self.tabs.list().iter().any(|tab| tab.status.is_shown())
    }

    /// The selected tab's url and title (about:blank and no title when no tab is open).
    pub fn current_page(&self) -> (String, String) {
        self.tabs.get(None).map(|tab| tab.status.get()).unwrap_or_else(|_| ("about:blank".into(), String::new()))
    }

    /// How the engine addresses `tab` of this session.
    pub fn address(&self, tab: &TabState) -> TabAddress {
        TabAddress { session_id: self.id.clone(), tab: tab.id.clone() }
    }

    /// The title of the session's takeover window: whose session it is.
    pub fn window_title(&self) -> String {
        format!("malo-browser: {} \u{2014} {}", self.agent_id, self.name)
    }

    /// The public description of the session (never the token).
    pub fn summary(&self) -> SessionSummary {
        let (url, title) = self.current_page();
        let (proxy, network_conditions) = {
            let proxy = self.proxy.lock().expect("proxy poisoned");
            match proxy.as_ref() {
                Some(proxy) => (proxy.upstream().cloned(), Some(proxy.conditions()).filter(|conditions| !conditions.is_off())),
                None => (None, None),
            }
        };
        SessionSummary {
            session_id: self.id.clone(),
            name: self.name.clone(),
            lease_id: self.lease_id.clone(),
            width: self.width,
            height: self.height,
            profile: self.profile.clone(),
            url,
            title,
            created_at: self.created_at.clone(),
            idle_ms: self.idle_for().as_millis() as u64,
            downloads_dir: self.dirs.downloads.display().to_string(),
            artifacts_dir: self.dirs.artifacts.display().to_string(),
            window_shown: self.window_shown(),
            tab: self.tabs.selected_id(),
            tab_count: self.tabs.list().len(),
            waiting_for_person: self.waiting_for(),
            proxy,
            network_conditions,
            policy: self.policy.rules().summary(),
            live_url: self.live_url.lock().expect("live link poisoned").clone(),
        }
    }
}

/// What the API says about a session.
#[derive(Debug, Clone, Serialize)]
pub struct SessionSummary {
    /// Session id.
    pub session_id: String,
    /// Caller's name.
    pub name: String,
    /// Owning lease.
    pub lease_id: String,
    /// Viewport width.
    pub width: u32,
    /// Viewport height.
    pub height: u32,
    /// Profile name, or null when anonymous.
    pub profile: Option<String>,
    /// Current URL.
    pub url: String,
    /// Current title.
    pub title: String,
    /// Creation time.
    pub created_at: String,
    /// Milliseconds since last use.
    pub idle_ms: u64,
    /// Downloads directory.
    pub downloads_dir: String,
    /// Artifacts directory.
    pub artifacts_dir: String,
    /// Whether the takeover window shows the session to a person right now.
    pub window_shown: bool,
    /// What the session waits for a person to do (e.g. "log in"), or null.
    pub waiting_for_person: Option<String>,
    /// The selected tab (the default of page tools), or null when no tab is open.
    pub tab: Option<String>,
    /// How many tabs are open.
    pub tab_count: usize,
    /// The upstream proxy the session goes through (never its password), or null.
    pub proxy: Option<crate::network::upstream_proxy::UpstreamProxyConfig>,
    /// The session's network conditions, or null when none apply.
    pub network_conditions: Option<crate::network::conditions::NetworkConditions>,
    /// What the person's policy lets this session's agent do (sites, gated tools,
    /// credentials); the agent cannot change it.
    pub policy: crate::policy::PolicySummary,
    /// The live view's link while one is valid (`watch {mode: "live"}`, `login {mode:
    /// "watch"}` without a display).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_url: Option<String>,
}
