//! The live view: a person watches a session's selected tab and takes it over from any
//! browser, through a link the agent passes on (`watch {mode: "live"}`, or `login {mode:
//! "watch"}` on a daemon without a display).
//!
//! The link is the key: `http://127.0.0.1:<port>/live/<capability>` on a listener of its
//! own (loopback, bound when the first link is issued), 256 random bits bound to one
//! session. It expires unused after 10 minutes; the first browser that opens it claims it
//! (a cookie scoped to the link), and any other browser is refused. It ends when the person
//! hands the session back (Done here or in the takeover window), when the agent's wait ends,
//! when the session closes or its lease goes. Everything it serves is the session's
//! picture and input: no tool, no other session, no file.
//!
//! `server.rs` serves the page and checks each request, `viewer.rs` runs one connected
//! viewer (frames out, input in), `encode.rs` turns a painted frame into a JPEG off the
//! main thread, `input.rs` reads a viewer's input, `pages.rs` holds what the browser shows.

mod capability;
mod encode;
mod input;
mod pages;
mod server;
mod viewer;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use self::capability::Capability;
use crate::error::Result;
use crate::session::{Session, SessionTable};

/// How long an unused link stays valid (`MALO_LIVE_EXPIRY_MS` changes it, for tests).
const EXPIRY: Duration = Duration::from_secs(600);
/// How long a viewer may be gone (its tab closed, its network lost) before the session is
/// handed back (`MALO_LIVE_GRACE_MS` changes it, for tests).
const GRACE: Duration = Duration::from_secs(30);
/// How long an ended link is remembered, so that its page says "ended" rather than "no
/// such link".
const REMEMBER: Duration = Duration::from_secs(3600);

/// A link handed to the agent.
#[derive(Debug, Clone)]
pub struct LiveLink {
    /// The link (the capability is in it: it goes to the person, not to a log).
    pub url: String,
    /// When it expires if nobody opens it (RFC 3339).
    pub expires_at: String,
}

/// Why a link was ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The person pressed Done (here or in the takeover window).
    Done,
    /// The agent's wait ended, or it hid the session (`watch {show: false}`).
    Agent,
    /// A newer link replaced it.
    Replaced,
    /// The session closed (or its lease went).
    SessionClosed,
}

impl Ended {
    fn says(self) -> &'static str {
        match self {
            Ended::Done => "The session was handed back to its agent.",
            Ended::Agent => "The agent no longer waits for you here.",
            Ended::Replaced => "A newer link to this session replaced this one.",
            Ended::SessionClosed => "The session was closed.",
        }
    }
}

/// What a link is in now.
#[derive(Debug, Default)]
struct LinkState {
    /// The claiming browser's cookie, once opened.
    viewer: Option<Capability>,
    /// The connected viewer's number (0: none connected).
    connection: u64,
    /// Why it ended, once it did.
    ended: Option<(Ended, Instant)>,
}

/// One issued link.
#[derive(Debug)]
pub(crate) struct Link {
    capability: Capability,
    session_id: String,
    /// The tab the takeover was asked for (Done hands it back).
    tab_id: String,
    session: Weak<Session>,
    sessions: Weak<SessionTable>,
    /// Whether the viewer may act (false: frames only).
    control: bool,
    /// When it expires unused.
    expires: Instant,
    /// The session's event seq when it was issued: a Done after it ends the link.
    issued_seq: u64,
    state: Mutex<LinkState>,
    /// Woken when the link ends or another viewer connection replaces the current one.
    changed: tokio::sync::Notify,
}

impl Link {
    fn state(&self) -> std::sync::MutexGuard<'_, LinkState> {
        self.state.lock().expect("live link poisoned")
    }

    /// The session, while it is open and the link still holds.
    fn live_session(&self) -> std::result::Result<(Arc<Session>, Arc<SessionTable>), Ended> {
        if let Some((ended, _)) = self.state().ended {
            return Err(ended);
        }
        let found = (|| {
            let session = self.session.upgrade()?;
            let sessions = self.sessions.upgrade()?;
            let listed = sessions.get(&self.session_id).ok()?;
            Arc::ptr_eq(&listed, &session).then_some((session, sessions))
        })();
        let Some((session, sessions)) = found else {
            self.end(Ended::SessionClosed);
            return Err(Ended::SessionClosed);
        };
        if !session.events.after_matching(Some(self.issued_seq), 1, None, Some("watch_done")).events.is_empty() {
            self.end(Ended::Done);
            return Err(Ended::Done);
        }
        Ok((session, sessions))
    }

    fn end(&self, why: Ended) {
        {
            let mut state = self.state();
            if state.ended.is_some() {
                return;
            }
            state.ended = Some((why, Instant::now()));
        }
        if let Some(session) = self.session.upgrade() {
            let mut url = session.live_url.lock().expect("live link poisoned");
            // Only this link's own url (a newer link keeps its).
            if url.as_deref().is_some_and(|url| url.ends_with(&self.capability.expose())) {
                *url = None;
            }
        }
        self.changed.notify_waiters();
    }
}

/// Every link of this daemon, and its listener.
#[derive(Default)]
struct Registry {
    links: Mutex<Vec<Arc<Link>>>,
    address: tokio::sync::OnceCell<SocketAddr>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

/// A duration from the environment in ms (for tests), else `default`.
fn knob(name: &str, default: Duration) -> Duration {
    std::env::var(name).ok().and_then(|value| value.parse::<u64>().ok()).map_or(default, Duration::from_millis)
}

fn expiry() -> Duration {
    static VALUE: OnceLock<Duration> = OnceLock::new();
    *VALUE.get_or_init(|| knob("MALO_LIVE_EXPIRY_MS", EXPIRY))
}

fn grace() -> Duration {
    static VALUE: OnceLock<Duration> = OnceLock::new();
    *VALUE.get_or_init(|| knob("MALO_LIVE_GRACE_MS", GRACE))
}

/// Issues a new link to `session` (ending its earlier ones): the takeover of `tab_id`;
/// `control: false` shows frames only. Starts the listener on first use.
pub async fn issue(session: &Arc<Session>, sessions: &Arc<SessionTable>, tab_id: &str, control: bool) -> Result<LiveLink> {
    let address = *registry().address.get_or_try_init(server::start).await?;
    revoke_with(&session.id, Ended::Replaced);
    let capability = Capability::generate();
    let url = format!("http://{address}/live/{}", capability.expose());
    let link = Arc::new(Link {
        capability,
        session_id: session.id.clone(),
        tab_id: tab_id.to_string(),
        session: Arc::downgrade(session),
        sessions: Arc::downgrade(sessions),
        control,
        expires: Instant::now() + expiry(),
        issued_seq: session.events.newest_seq(),
        state: Mutex::default(),
        changed: tokio::sync::Notify::new(),
    });
    {
        let mut links = registry().links.lock().expect("live links poisoned");
        links.retain(|link| link.state().ended.is_none_or(|(_, when)| when.elapsed() < REMEMBER));
        links.push(link);
    }
    *session.live_url.lock().expect("live link poisoned") = Some(url.clone());
    tracing::info!(session = %session.id, control, "live view link issued");
    Ok(LiveLink { url, expires_at: crate::clock::after(expiry()) })
}

/// Ends every link of the session: the agent stopped waiting (its viewer is told so).
pub fn revoke(session_id: &str) {
    revoke_with(session_id, Ended::Agent);
}

fn revoke_with(session_id: &str, why: Ended) {
    let links: Vec<Arc<Link>> =
        registry().links.lock().expect("live links poisoned").iter().filter(|link| link.session_id == session_id).cloned().collect();
    for link in links {
        link.end(why);
    }
}

/// The link a written capability names, if any (compared in constant time with each).
fn find(capability: &Capability) -> Option<Arc<Link>> {
    let links = registry().links.lock().expect("live links poisoned");
    let mut found = None;
    for link in links.iter() {
        if link.capability.matches(capability) {
            found = Some(link.clone());
        }
    }
    found
}
