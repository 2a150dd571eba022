//! The browser level: the session's tabs as targets (a `tab` target and its `page`), who is
//! attached to what, auto-attach in the two shapes clients expect (Puppeteer and
//! chrome-devtools-mcp want tabs first and pages under them; Playwright wants pages
//! directly), and the `Target`/`Browser` commands answered from that state.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{json, Value};

use super::methods::{self, Level};
use super::page::PageSession;
use super::wire::{params, Command, ProtocolError, Reply};
use super::Shared;
use crate::state::{TabState, TabsChange};

/// The page target id of a tab (also its main frame's id).
pub(crate) fn page_target_id(tab: &str) -> String {
    format!("{:0>32}", format!("P{tab}").to_uppercase())
}

/// The tab target id of a tab.
fn tab_target_id(tab: &str) -> String {
    format!("{:0>32}", format!("T{tab}").to_uppercase())
}

/// A URL as Chrome shows it: the empty page is `about:blank`.
pub(crate) fn shown_url(url: &str) -> String {
    if url.is_empty() {
        "about:blank".into()
    } else {
        url.to_string()
    }
}

/// How the client asked to be attached (browser-level `Target.setAutoAttach`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Tab targets at the browser level, each page under its tab's session.
    Tabs,
    /// Page targets directly at the browser level.
    Pages,
}

#[derive(Debug)]
enum Attachment {
    Tab { tab: String },
    Page { tab: String, page: Arc<PageSession>, parent: Option<String> },
}

#[derive(Debug, Default)]
struct State {
    mode: Option<Mode>,
    discover: bool,
    announced: HashSet<String>,
    attached: HashMap<String, Attachment>,
}

/// The browser of one connection.
#[derive(Debug)]
pub(crate) struct Browser {
    pub(crate) shared: Arc<Shared>,
    // A std mutex: bookkeeping only, never held across an await.
    state: Mutex<State>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AutoAttach {
    auto_attach: bool,
    #[serde(default)]
    filter: Option<Vec<Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TargetParams {
    #[serde(default)]
    target_id: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    flatten: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DownloadBehaviorParams {
    behavior: String,
}

impl Browser {
    pub(crate) fn new(shared: Arc<Shared>) -> Browser {
        Browser { shared, state: Mutex::default() }
    }

    fn context_id(&self) -> String {
        format!("{:0>32}", self.shared.session.id.trim_start_matches("sess-").to_uppercase())
    }

    fn info(&self, tab: &TabState, page: bool, attached: bool) -> Value {
        let (url, title) = tab.status.get();
        let mut info = json!({
            "targetId": if page { page_target_id(&tab.id) } else { tab_target_id(&tab.id) },
            "type": if page { "page" } else { "tab" },
            "title": title,
            "url": shown_url(&url),
            "attached": attached,
            "canAccessOpener": false,
            "browserContextId": self.context_id(),
        });
        if let (true, Some(opener)) = (page, &tab.opener) {
            info["openerId"] = json!(page_target_id(opener));
        }
        info
    }

    fn tab_of(&self, target: &str) -> Option<(Arc<TabState>, bool)> {
        self.shared.session.tabs.list().into_iter().find_map(|tab| {
            if page_target_id(&tab.id) == target {
                Some((tab, true))
            } else if tab_target_id(&tab.id) == target {
                Some((tab, false))
            } else {
                None
            }
        })
    }

    /// Routes a command to the browser, a tab's session or a page's.
    pub(crate) fn route(self: &Arc<Self>, command: Command) {
        let out = &self.shared.out;
        let Some(session_id) = command.session_id.clone() else {
            if methods::lookup(&command.method, Level::Browser).is_none() {
                return out.answer(command.id, None, Err(ProtocolError::not_found(&command.method)));
            }
            let browser = self.clone();
            return match command.method.as_str() {
                "Target.createTarget" | "Target.closeTarget" | "Target.activateTarget" | "Browser.setDownloadBehavior" => {
                    tokio::spawn(async move {
                        let reply = browser.run(&command).await;
                        browser.shared.out.answer(command.id, None, reply);
                    });
                }
                _ => {
                    let reply = self.answer(&command);
                    out.answer(command.id, None, reply);
                }
            };
        };
        let page = {
            let state = self.state.lock().expect("targets poisoned");
            match state.attached.get(&session_id) {
                None => None,
                Some(Attachment::Page { page, .. }) => Some(Some(page.clone())),
                Some(Attachment::Tab { .. }) => Some(None),
            }
        };
        match page {
            None => out.answer(
                command.id,
                Some(&session_id),
                Err(ProtocolError { code: -32001, message: "Session with given id not found.".into() }),
            ),
            Some(Some(page)) => page.route(command),
            Some(None) => {
                let reply = match command.method.as_str() {
                    "Target.setAutoAttach" => self.attach_page_of_tab(&session_id),
                    "Runtime.runIfWaitingForDebugger" => Ok(json!({})),
                    method => Err(ProtocolError::not_found(method)),
                };
                out.answer(command.id, Some(&session_id), reply);
            }
        }
    }

    /// Browser-level commands answered from the connection's state.
    fn answer(&self, command: &Command) -> Reply {
        match command.method.as_str() {
            "Browser.getVersion" => Ok(json!({
                "protocolVersion": super::PROTOCOL_VERSION,
                "product": super::browser_product(),
                "revision": format!("malo-browser@{}", env!("CARGO_PKG_VERSION")),
                "userAgent": super::user_agent(),
                "jsVersion": "",
            })),
            "Target.getBrowserContexts" => Ok(json!({ "browserContextIds": [], "defaultBrowserContextId": self.context_id() })),
            "Target.createBrowserContext" => Err(ProtocolError::server(
                "malo-browser: a DevTools connection drives one session; open another session (with its own endpoint) for another context",
            )),
            "Target.setDiscoverTargets" => {
                let discover = command.params["discover"].as_bool().unwrap_or(false);
                self.state.lock().expect("targets poisoned").discover = discover;
                if discover {
                    for tab in self.shared.session.tabs.list() {
                        self.announce(&tab);
                    }
                }
                Ok(json!({}))
            }
            "Target.setAutoAttach" => {
                let wanted: AutoAttach = params(&command.params)?;
                let tabs_first = wanted
                    .filter
                    .as_ref()
                    .is_some_and(|filter| filter.iter().any(|entry| entry["type"] == "page" && entry["exclude"] == true));
                let mode = if tabs_first { Mode::Tabs } else { Mode::Pages };
                self.state.lock().expect("targets poisoned").mode = wanted.auto_attach.then_some(mode);
                if wanted.auto_attach {
                    for tab in self.shared.session.tabs.list() {
                        self.auto_attach(&tab);
                    }
                }
                Ok(json!({}))
            }
            "Target.getTargets" => {
                let attached: HashSet<String> = {
                    let state = self.state.lock().expect("targets poisoned");
                    state
                        .attached
                        .values()
                        .map(|attachment| match attachment {
                            Attachment::Tab { tab } | Attachment::Page { tab, .. } => tab.clone(),
                        })
                        .collect()
                };
                let mut infos = Vec::new();
                for tab in self.shared.session.tabs.list() {
                    let attached = attached.contains(&tab.id);
                    infos.push(self.info(&tab, false, attached));
                    infos.push(self.info(&tab, true, attached));
                }
                Ok(json!({ "targetInfos": infos }))
            }
            "Target.getTargetInfo" => {
                let wanted: TargetParams = params(&command.params)?;
                match wanted.target_id {
                    None => Ok(
                        json!({ "targetInfo": { "targetId": self.context_id(), "type": "browser", "title": "", "url": "", "attached": true, "canAccessOpener": false } }),
                    ),
                    Some(target) => {
                        let (tab, page) = self.tab_of(&target).ok_or_else(no_target)?;
                        Ok(json!({ "targetInfo": self.info(&tab, page, true) }))
                    }
                }
            }
            "Target.attachToTarget" => {
                let wanted: TargetParams = params(&command.params)?;
                if wanted.flatten == Some(false) {
                    return Err(ProtocolError::server("malo-browser serves flat sessions only (flatten: true)"));
                }
                let (tab, page) = self.tab_of(wanted.target_id.as_deref().unwrap_or("")).ok_or_else(no_target)?;
                let session_id = if page { self.attach_page(&tab, None) } else { self.attach_tab(&tab) };
                Ok(json!({ "sessionId": session_id }))
            }
            "Target.detachFromTarget" => {
                let wanted: TargetParams = params(&command.params)?;
                let session_id = wanted.session_id.ok_or_else(|| ProtocolError::invalid("sessionId is required"))?;
                self.detach(&session_id);
                Ok(json!({}))
            }
            "Target.getDevToolsTarget" => Ok(json!({})),
            "Runtime.runIfWaitingForDebugger" => Ok(json!({})),
            method => Err(ProtocolError::not_found(method)),
        }
    }

    /// Browser-level commands that run tools.
    async fn run(self: &Arc<Self>, command: &Command) -> Reply {
        match command.method.as_str() {
            "Target.createTarget" => {
                let wanted: TargetParams = params(&command.params)?;
                let url = wanted.url.filter(|url| !url.is_empty() && url != "about:blank");
                let input = match &url {
                    Some(url) => json!({ "url": url }),
                    None => json!({}),
                };
                let created = self.shared.tool("tab_new", input).await?;
                let tab = created["tab"].as_str().ok_or_else(|| ProtocolError::server("tab_new answered no tab"))?.to_string();
                self.tabs_changed(TabsChange::Opened { tab: tab.clone(), opener: None });
                Ok(json!({ "targetId": page_target_id(&tab) }))
            }
            "Target.closeTarget" | "Target.activateTarget" => {
                let wanted: TargetParams = params(&command.params)?;
                let (tab, _) = self.tab_of(wanted.target_id.as_deref().unwrap_or("")).ok_or_else(no_target)?;
                if command.method == "Target.closeTarget" {
                    self.shared.tool("tab_close", json!({ "tab": tab.id })).await?;
                    Ok(json!({ "success": true }))
                } else {
                    self.shared.tool("tab_select", json!({ "tab": tab.id })).await?;
                    Ok(json!({}))
                }
            }
            "Browser.setDownloadBehavior" => {
                let wanted: DownloadBehaviorParams = params(&command.params)?;
                let behavior = match wanted.behavior.as_str() {
                    "deny" => "deny",
                    "allow" | "allowAndName" | "default" => "accept",
                    other => return Err(ProtocolError::invalid(format!("unknown download behavior {other:?}"))),
                };
                self.shared.tool("set_download_behavior", json!({ "behavior": behavior })).await?;
                Ok(json!({}))
            }
            method => Err(ProtocolError::not_found(method)),
        }
    }

    /// A tab opened or closed in the session (by this client, the agent, or the page).
    pub(crate) fn tabs_changed(self: &Arc<Self>, change: TabsChange) {
        match change {
            TabsChange::Opened { tab, .. } => {
                if let Ok(tab) = self.shared.session.tabs.get(Some(&tab)) {
                    self.announce(&tab);
                    self.auto_attach(&tab);
                }
            }
            TabsChange::Closed { tab } => self.gone(&tab),
        }
    }

    /// After missed changes: opens what is new and closes what is gone.
    pub(crate) fn resync(self: &Arc<Self>) {
        let open: Vec<Arc<TabState>> = self.shared.session.tabs.list();
        let known: Vec<String> = self.state.lock().expect("targets poisoned").announced.iter().cloned().collect();
        for tab in known.iter().filter(|tab| !open.iter().any(|open| &open.id == *tab)) {
            self.gone(tab);
        }
        for tab in &open {
            self.announce(tab);
            self.auto_attach(tab);
        }
    }

    /// `targetCreated` for a tab and its page, once, when the client discovers targets.
    fn announce(&self, tab: &TabState) {
        let mut state = self.state.lock().expect("targets poisoned");
        if !state.discover || !state.announced.insert(tab.id.clone()) {
            return;
        }
        self.shared.out.event(None, "Target.targetCreated", json!({ "targetInfo": self.info(tab, false, false) }));
        self.shared.out.event(None, "Target.targetCreated", json!({ "targetInfo": self.info(tab, true, false) }));
    }

    /// Attaches a tab the way the client asked (once per tab).
    fn auto_attach(&self, tab: &Arc<TabState>) {
        let (mode, attached) = {
            let state = self.state.lock().expect("targets poisoned");
            let attached = state.attached.values().any(|attachment| match attachment {
                Attachment::Tab { tab: id } => id == &tab.id,
                Attachment::Page { tab: id, parent, .. } => id == &tab.id && parent.is_none(),
            });
            (state.mode, attached)
        };
        match (mode, attached) {
            (Some(Mode::Tabs), false) => {
                self.attach_tab(tab);
            }
            (Some(Mode::Pages), false) => {
                self.attach_page(tab, None);
            }
            _ => {}
        }
    }

    fn attach_tab(&self, tab: &TabState) -> String {
        let session_id = self.shared.fresh_id();
        self.state.lock().expect("targets poisoned").attached.insert(session_id.clone(), Attachment::Tab { tab: tab.id.clone() });
        self.shared.out.event(
            None,
            "Target.attachedToTarget",
            json!({ "sessionId": session_id, "targetInfo": self.info(tab, false, true), "waitingForDebugger": false }),
        );
        session_id
    }

    /// A tab's session asked for its children: its page, attached under it (once).
    fn attach_page_of_tab(&self, tab_session: &str) -> Reply {
        let tab_id = {
            let state = self.state.lock().expect("targets poisoned");
            let already = state
                .attached
                .values()
                .any(|attachment| matches!(attachment, Attachment::Page { parent: Some(parent), .. } if parent == tab_session));
            match state.attached.get(tab_session) {
                Some(Attachment::Tab { tab }) if !already => tab.clone(),
                _ => return Ok(json!({})),
            }
        };
        let tab = self.shared.session.tabs.get(Some(&tab_id)).map_err(|_| no_target())?;
        self.attach_page(&tab, Some(tab_session.to_string()));
        Ok(json!({}))
    }

    fn attach_page(&self, tab: &Arc<TabState>, parent: Option<String>) -> String {
        let session_id = self.shared.fresh_id();
        let page = PageSession::start(self.shared.clone(), tab.clone(), session_id.clone(), page_target_id(&tab.id));
        self.state
            .lock()
            .expect("targets poisoned")
            .attached
            .insert(session_id.clone(), Attachment::Page { tab: tab.id.clone(), page, parent: parent.clone() });
        self.shared.out.event(
            parent.as_deref(),
            "Target.attachedToTarget",
            json!({ "sessionId": session_id, "targetInfo": self.info(tab, true, true), "waitingForDebugger": false }),
        );
        session_id
    }

    /// Ends an attached session (and the pages under a tab's session).
    fn detach(&self, session_id: &str) {
        let removed = {
            let mut state = self.state.lock().expect("targets poisoned");
            let mut removed = Vec::new();
            let children: Vec<String> = state
                .attached
                .iter()
                .filter(|(_, attachment)| matches!(attachment, Attachment::Page { parent: Some(parent), .. } if parent == session_id))
                .map(|(id, _)| id.clone())
                .collect();
            for id in children.into_iter().chain(std::iter::once(session_id.to_string())) {
                if let Some(attachment) = state.attached.remove(&id) {
                    removed.push((id, attachment));
                }
            }
            removed
        };
        for (id, attachment) in removed {
            self.detached(&id, attachment);
        }
    }

    fn detached(&self, session_id: &str, attachment: Attachment) {
        let (target, parent) = match attachment {
            Attachment::Tab { tab } => (tab_target_id(&tab), None),
            Attachment::Page { tab, page, parent } => {
                page.stop();
                (page_target_id(&tab), parent)
            }
        };
        self.shared.out.event(parent.as_deref(), "Target.detachedFromTarget", json!({ "sessionId": session_id, "targetId": target }));
    }

    /// A tab closed: its pages' sessions end (page, then tab), then its targets go.
    fn gone(&self, tab: &str) {
        let (pages, tabs, announced) = {
            let mut state = self.state.lock().expect("targets poisoned");
            let ids: Vec<String> = state
                .attached
                .iter()
                .filter(|(_, attachment)| matches!(attachment, Attachment::Tab { tab: id } | Attachment::Page { tab: id, .. } if id == tab))
                .map(|(id, _)| id.clone())
                .collect();
            let mut pages = Vec::new();
            let mut tabs = Vec::new();
            for id in ids {
                match state.attached.remove(&id) {
                    Some(attachment @ Attachment::Page { .. }) => pages.push((id, attachment)),
                    Some(attachment) => tabs.push((id, attachment)),
                    None => {}
                }
            }
            (pages, tabs, state.announced.remove(tab))
        };
        for (id, attachment) in pages {
            self.shared.out.event(Some(&id), "Inspector.detached", json!({ "reason": "Render process gone." }));
            self.detached(&id, attachment);
        }
        if announced {
            self.shared.out.event(None, "Target.targetDestroyed", json!({ "targetId": page_target_id(tab) }));
        }
        for (id, attachment) in tabs {
            self.detached(&id, attachment);
        }
        if announced {
            self.shared.out.event(None, "Target.targetDestroyed", json!({ "targetId": tab_target_id(tab) }));
        }
    }

    /// The connection ends: every attached page stops following its tab.
    pub(crate) fn close(&self) {
        let attached: Vec<Attachment> =
            self.state.lock().expect("targets poisoned").attached.drain().map(|(_, attachment)| attachment).collect();
        for attachment in attached {
            if let Attachment::Page { page, .. } = attachment {
                page.stop();
            }
        }
    }
}

fn no_target() -> ProtocolError {
    ProtocolError::server("No target with given id found")
}
