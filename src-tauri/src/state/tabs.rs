//! A session's tabs, as both sides see them. The engine opens and closes tabs (the agent's
//! `tab_new`, a page's popup or `window.close()`) and keeps each tab's url and title
//! current; tools read the list, address a tab by its short id, and take its call lock.
//!
//! Invariants (seed 002): a tab's id is short (the last 4 or more hex characters of an
//! internal id, grown on collision) and unique among the session's open tabs; an unknown
//! id is `E_TAB_NOT_FOUND`, never a silent fallback; closing a tab frees its id and drops
//! what it holds (refs, buffers, rules).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::Notify;

use crate::error::{Error, ErrorCode, Result};
use crate::events::{SeqCounter, SeqRing};
use crate::network::{Capture, TabDirectory, TabTraffic};
use crate::state::console::{ConsoleEntry, PageError, CONSOLE_ENTRIES, ERROR_ENTRIES};

/// What to do with JavaScript dialogs (alert, confirm, prompt, beforeunload).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DialogPolicy {
    /// `Some(true)` accept, `Some(false)` dismiss, `None` the default for the dialog type
    /// (alert and beforeunload accepted, confirm and prompt dismissed).
    pub accept: Option<bool>,
    /// Text a prompt answers with when accepted (default: its default text).
    pub prompt_text: Option<String>,
    /// Keep the policy for every later dialog, not only the next one.
    pub persist: bool,
}

/// Shortest tab id.
const SHORT_ID_CHARS: usize = 4;

/// What a page may do with `window.open` and `target=_blank`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PopupPolicy {
    /// Refuse popups (the page gets `null`; event `popup_blocked`).
    #[default]
    Deny,
    /// Open each popup as a new tab of the session, keeping the opener relation.
    Tab,
}

/// The page's current url and title, and whether a person has it on screen, kept current
/// by the engine so that listings (and the tray) never need a round trip to the main
/// thread. A change of the window notifies `changed` (the tray's wake-up).
#[derive(Debug)]
pub struct TabStatus {
    // A std mutex: held only to copy two short strings.
    inner: Mutex<(String, String)>,
    shown: AtomicBool,
    /// The agent showed the window for a person to take over (until Done or hidden).
    takeover_requested: AtomicBool,
    changed: Arc<Notify>,
}

impl TabStatus {
    /// A blank page; `changed` is notified when the window is shown or hidden.
    pub fn new(changed: Arc<Notify>) -> TabStatus {
        TabStatus {
            inner: Mutex::new(("about:blank".into(), String::new())),
            shown: AtomicBool::new(false),
            takeover_requested: AtomicBool::new(false),
            changed,
        }
    }

    /// Records the current url.
    pub fn set_url(&self, url: &str) {
        self.inner.lock().expect("page state poisoned").0 = url.to_string();
    }

    /// Records the current title.
    pub fn set_title(&self, title: &str) {
        self.inner.lock().expect("page state poisoned").1 = title.to_string();
    }

    /// `(url, title)`.
    pub fn get(&self) -> (String, String) {
        self.inner.lock().expect("page state poisoned").clone()
    }

    /// Records whether the takeover window is on screen.
    pub fn set_shown(&self, shown: bool) {
        if self.shown.swap(shown, Ordering::Relaxed) != shown {
            self.changed.notify_one();
        }
    }

    /// Whether the takeover window is on screen.
    pub fn is_shown(&self) -> bool {
        self.shown.load(Ordering::Relaxed)
    }

    /// Records that the agent asks a person to take over (true), or that the person handed
    /// the session back or the window went away (false).
    pub fn set_takeover_requested(&self, requested: bool) {
        if self.takeover_requested.swap(requested, Ordering::Relaxed) != requested {
            self.changed.notify_one();
        }
    }

    /// Whether the window is up because the agent asked a person to take over, and the
    /// person has not handed the session back yet.
    pub fn awaits_takeover(&self) -> bool {
        self.takeover_requested.load(Ordering::Relaxed) && self.is_shown()
    }
}

/// Refs of a tab's elements. Ref numbers are unique across the session (every agent call
/// passes the session's next free ref as the base and reports the next free one back), so
/// a ref of one tab or document never names an element of another.
#[derive(Debug, Default)]
pub struct RefTable {
    /// Frame path of each ref seen in a snapshot (absent = main frame).
    pub frame_of: HashMap<u64, Vec<u32>>,
    /// The previous snapshot's lines by ref, and its url, title and text, for `changes`.
    pub previous: Option<PreviousSnapshot>,
    /// The last `screenshot` of the tab, for `diff screenshot`.
    pub screenshot: Option<LastScreenshot>,
}

/// The last picture `screenshot` took of a tab.
#[derive(Debug, Clone, Default)]
pub struct LastScreenshot {
    /// The picture as encoded (PNG, JPEG or WebP).
    pub picture: Vec<u8>,
    /// The `screenshot` input that took it (without `path`): the same picture again.
    pub input: serde_json::Value,
}

/// What the previous snapshot showed.
#[derive(Debug, Clone, Default)]
pub struct PreviousSnapshot {
    /// URL.
    pub url: String,
    /// Title.
    pub title: String,
    /// Visible text.
    pub text: String,
    /// One rendered line per ref, in order.
    pub lines: Vec<(u64, String)>,
    /// Every line of the page as the text form shows it, in order (for `diff`).
    pub page: Vec<String>,
}

/// Where a tab's current page began: the last main-frame load's start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageStart {
    /// The session's last seq when the load began: the page's entries come after it.
    pub seq: u64,
    /// When it began.
    pub at: Option<std::time::Instant>,
    /// The URL the load asked for.
    pub url: String,
    /// Where the page before it began (0: none).
    pub previous: u64,
}

/// One open tab, shared by the engine (which owns its webview) and the tools.
#[derive(Debug)]
pub struct TabState {
    /// The short id agents use.
    pub id: String,
    /// The tab that opened it (a popup's opener), if any.
    pub opener: Option<String>,
    /// Url, title, window state.
    pub status: TabStatus,
    /// Held by each page tool while it runs, so that calls on one tab never interleave
    /// (a snapshot never sees half a fill). Calls that only wait do not take it.
    pub lock: tokio::sync::Mutex<()>,
    /// Element refs and the previous snapshot.
    pub refs: Mutex<RefTable>,
    /// How the next JavaScript dialog is answered.
    pub dialog_policy: Mutex<DialogPolicy>,
    /// Its requests and interception rules.
    pub traffic: Arc<TabTraffic>,
    /// Its console lines.
    pub console: SeqRing<ConsoleEntry>,
    /// Its uncaught errors.
    pub errors: SeqRing<PageError>,
    /// What its page does, as it happens (for the DevTools endpoint).
    pub signals: tokio::sync::broadcast::Sender<super::TabSignal>,
    /// Where its current page began in the session's sequence (lists of the page).
    page_start: Mutex<PageStart>,
    /// Its viewport (CSS px): the session's size until a client resizes it.
    viewport: Mutex<(u32, u32)>,
    closed: AtomicBool,
}

impl TabState {
    /// Tells whoever follows the tab live what its page did (nobody listening is fine).
    pub fn signal(&self, signal: super::TabSignal) {
        let _ = self.signals.send(signal);
    }

    /// The main frame began loading `url` (a navigation, a reload, a history step) when the
    /// session's sequence stood at `seq`: what comes after is the new page's.
    pub fn page_began(&self, seq: u64, url: &str) {
        let mut start = self.page_start.lock().expect("page start poisoned");
        let previous = start.seq;
        *start = PageStart { seq, at: Some(std::time::Instant::now()), url: url.to_string(), previous };
    }

    /// Where the current page began (all zero before the tab's first load).
    pub fn page_start(&self) -> PageStart {
        self.page_start.lock().expect("page start poisoned").clone()
    }

    /// The viewport's size (CSS px).
    pub fn viewport(&self) -> (u32, u32) {
        *self.viewport.lock().expect("viewport poisoned")
    }

    /// Records a new viewport size.
    pub fn set_viewport(&self, width: u32, height: u32) {
        *self.viewport.lock().expect("viewport poisoned") = (width, height);
    }

    /// Whether the tab was closed (its webview is gone).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// What `tab_list` says about a tab.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TabSummary {
    /// Short id.
    pub tab: String,
    /// Current URL.
    pub url: String,
    /// Current title.
    pub title: String,
    /// Whether it is the selected tab (the default of page tools).
    pub selected: bool,
    /// The tab that opened it, for popups.
    pub opener: Option<String>,
}

/// A session's open tabs and which one is selected.
#[derive(Debug)]
pub struct Tabs {
    // A std mutex: list operations only, never held across an await.
    state: Mutex<TabsState>,
    /// Notified when the session's tabs or windows change (the tray listens).
    changed: Arc<Notify>,
    /// Ref numbers, unique across the session's tabs.
    next_ref: Mutex<u64>,
    seq: Arc<SeqCounter>,
    directory: Arc<TabDirectory>,
    capture: Arc<Capture>,
    events: Arc<crate::events::EventLog>,
    /// Tabs opening and closing, as it happens (for the DevTools endpoint).
    pub changes: tokio::sync::broadcast::Sender<super::TabsChange>,
    /// The viewport new tabs get (the session's size).
    viewport: (u32, u32),
    /// Headers every request of the session's tabs carries.
    request_headers: crate::network::SessionHeaders,
    /// Scripts every new document of the session's tabs runs first (`init_script`).
    init_scripts: super::init_scripts::InitScripts,
}

#[derive(Debug, Default)]
struct TabsState {
    tabs: Vec<Arc<TabState>>,
    selected: Option<String>,
    popups: PopupPolicy,
}

impl Tabs {
    /// No tab yet. Each tab's traffic is registered in `directory` (for the proxy) once
    /// its view exists (`attach_page`), with the session's `capture`; the session's
    /// `events` counter numbers its records and log entries.
    pub fn new(
        changed: Arc<Notify>,
        popups: PopupPolicy,
        events: Arc<crate::events::EventLog>,
        directory: Arc<TabDirectory>,
        capture: Arc<Capture>,
        viewport: (u32, u32),
    ) -> Tabs {
        let seq = events.counter();
        Tabs {
            state: Mutex::new(TabsState { popups, ..TabsState::default() }),
            changed,
            next_ref: Mutex::new(1),
            seq,
            directory,
            capture,
            events,
            changes: super::signals::channel(),
            viewport,
            request_headers: Default::default(),
            init_scripts: Default::default(),
        }
    }

    /// The session's init scripts (`init_script`).
    pub fn init_scripts(&self) -> &super::init_scripts::InitScripts {
        &self.init_scripts
    }

    /// The session's response capture.
    pub fn capture(&self) -> &Arc<Capture> {
        &self.capture
    }

    fn state(&self) -> std::sync::MutexGuard<'_, TabsState> {
        self.state.lock().expect("tabs poisoned")
    }

    /// Registers a new tab with a fresh short id; `select` makes it the selected tab (the
    /// first tab of a session always is).
    pub fn open(&self, opener: Option<&str>, select: bool) -> Arc<TabState> {
        let internal = crate::secret::random_hex(8);
        let mut state = self.state();
        let mut length = SHORT_ID_CHARS;
        let id = loop {
            let candidate = &internal[internal.len() - length..];
            if !state.tabs.iter().any(|tab| tab.id == candidate) || length == internal.len() {
                break candidate.to_string();
            }
            length += 1;
        };
        let traffic = Arc::new(TabTraffic::new(&id, self.events.clone()).with_session_headers(self.request_headers.clone()));
        let tab = Arc::new(TabState {
            id: id.clone(),
            opener: opener.map(str::to_string),
            status: TabStatus::new(self.changed.clone()),
            lock: tokio::sync::Mutex::new(()),
            refs: Mutex::default(),
            dialog_policy: Mutex::default(),
            traffic,
            console: SeqRing::new(self.seq.clone(), CONSOLE_ENTRIES),
            errors: SeqRing::new(self.seq.clone(), ERROR_ENTRIES),
            signals: super::signals::channel(),
            page_start: Mutex::default(),
            viewport: Mutex::new(self.viewport),
            closed: AtomicBool::new(false),
        });
        state.tabs.push(tab.clone());
        if select || state.selected.is_none() {
            state.selected = Some(id.clone());
        }
        drop(state);
        self.changed.notify_one();
        let _ = self.changes.send(super::TabsChange::Opened { tab: id, opener: opener.map(str::to_string) });
        tab
    }

    /// Sets the headers every request of the session's tabs carries (lower-case names).
    pub fn set_request_headers(&self, headers: Vec<(String, String)>) {
        self.request_headers.set(headers);
    }

    /// Names `tab`'s requests to the session proxy: they carry its view's WebKit page id
    /// and its context's secret (see `network::TAB_MARKER`).
    pub fn attach_page(&self, tab: &TabState, page_id: u64, secret: &crate::secret::Token) {
        self.directory.register(page_id, secret, &tab.traffic, &self.capture);
    }

    /// Removes a tab (its id is free again). When it was selected, the selection moves to
    /// its opener if open, else to the last tab, else to none.
    pub fn remove(&self, id: &str) -> Option<Arc<TabState>> {
        let mut state = self.state();
        let index = state.tabs.iter().position(|tab| tab.id == id)?;
        let tab = state.tabs.remove(index);
        tab.closed.store(true, Ordering::SeqCst);
        tab.signal(super::TabSignal::Closed);
        if let Some(page_id) = tab.traffic.page_id() {
            self.directory.unregister(page_id);
        }
        if state.selected.as_deref() == Some(id) {
            let opener = tab.opener.as_deref().filter(|opener| state.tabs.iter().any(|tab| &tab.id == opener));
            state.selected = opener.map(str::to_string).or_else(|| state.tabs.last().map(|tab| tab.id.clone()));
        }
        drop(state);
        self.changed.notify_one();
        let _ = self.changes.send(super::TabsChange::Closed { tab: id.to_string() });
        Some(tab)
    }

    /// The tab `id`, or the selected tab when `id` is `None`.
    pub fn get(&self, id: Option<&str>) -> Result<Arc<TabState>> {
        let state = self.state();
        match id {
            Some(id) => state.tabs.iter().find(|tab| tab.id == id).cloned().ok_or_else(|| {
                let open: Vec<&str> = state.tabs.iter().map(|tab| tab.id.as_str()).collect();
                Error::new(ErrorCode::TabNotFound, format!("no tab {id:?} in this session; tab_list shows the open tabs"))
                    .with_details(serde_json::json!({ "tab": id, "open_tabs": open }))
            }),
            None => {
                let selected = state.selected.as_deref();
                state
                    .tabs
                    .iter()
                    .find(|tab| Some(tab.id.as_str()) == selected)
                    .cloned()
                    .ok_or_else(|| Error::new(ErrorCode::TabNotFound, "the session has no open tab; open one with tab_new"))
            }
        }
    }

    /// The selected tab's id, if any.
    pub fn selected_id(&self) -> Option<String> {
        self.state().selected.clone()
    }

    /// Makes `id` the selected tab.
    pub fn select(&self, id: &str) -> Result<Arc<TabState>> {
        let tab = self.get(Some(id))?;
        self.state().selected = Some(tab.id.clone());
        self.changed.notify_one();
        Ok(tab)
    }

    /// Every open tab, oldest first.
    pub fn list(&self) -> Vec<Arc<TabState>> {
        self.state().tabs.clone()
    }

    /// The tabs as `tab_list` shows them.
    pub fn summaries(&self) -> Vec<TabSummary> {
        let state = self.state();
        state
            .tabs
            .iter()
            .map(|tab| {
                let (url, title) = tab.status.get();
                TabSummary {
                    tab: tab.id.clone(),
                    url,
                    title,
                    selected: state.selected.as_deref() == Some(tab.id.as_str()),
                    opener: tab.opener.clone(),
                }
            })
            .collect()
    }

    /// What popups do.
    pub fn popup_policy(&self) -> PopupPolicy {
        self.state().popups
    }

    /// Sets what popups do.
    pub fn set_popup_policy(&self, policy: PopupPolicy) {
        self.state().popups = policy;
    }

    /// The next free ref number (a base for the page agent).
    pub fn next_ref(&self) -> u64 {
        *self.next_ref.lock().expect("refs poisoned")
    }

    /// Records that refs below `next` are taken.
    pub fn refs_taken_below(&self, next: u64) {
        let mut current = self.next_ref.lock().expect("refs poisoned");
        *current = (*current).max(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tabs() -> Tabs {
        let events = Arc::new(crate::events::EventLog::new(Arc::default()));
        Tabs::new(Arc::new(Notify::new()), PopupPolicy::Deny, events, Arc::default(), Arc::default(), (1024, 768))
    }

    #[test]
    fn ids_are_short_unique_and_freed_on_close() {
        let tabs = tabs();
        let first = tabs.open(None, true);
        assert_eq!(first.id.len(), SHORT_ID_CHARS);
        let many: Vec<_> = (0..300).map(|_| tabs.open(Some(&first.id), false)).collect();
        let mut ids: Vec<&str> = many.iter().map(|tab| tab.id.as_str()).collect();
        ids.push(&first.id);
        let count = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), count, "ids are unique among open tabs");
        assert_eq!(tabs.selected_id().as_deref(), Some(first.id.as_str()), "popups do not take the selection");
        let popup = many[0].id.clone();
        tabs.select(&popup).unwrap();
        tabs.remove(&popup).unwrap();
        assert_eq!(tabs.selected_id().as_deref(), Some(first.id.as_str()), "back to the opener");
        assert_eq!(tabs.get(Some(&popup)).unwrap_err().code, ErrorCode::TabNotFound);
    }

    #[test]
    fn no_tab_is_an_error_not_a_fallback() {
        let tabs = tabs();
        assert_eq!(tabs.get(None).unwrap_err().code, ErrorCode::TabNotFound);
        let only = tabs.open(None, false);
        assert_eq!(tabs.get(None).unwrap().id, only.id, "the first tab is selected");
        tabs.remove(&only.id);
        assert_eq!(tabs.get(None).unwrap_err().code, ErrorCode::TabNotFound);
        assert!(only.is_closed());
    }
}
