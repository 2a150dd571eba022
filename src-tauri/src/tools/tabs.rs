//! Tabs (seed 002): `tab_new`, `tab_list`, `tab_select`, `tab_close`, and
//! `set_popup_policy` (popups denied, or opened as tabs of the session). Tabs of a session
//! share its cookies, storage and downloads; every page tool takes `tab` (default: the
//! selected tab).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::limits::{LOAD_TIMEOUT_MS, NAVIGATION_SETTLE_MS};
use super::{Positional, Tool, ToolContext};
use crate::engine::{NavigationReport, SessionRequest, TabAddress, TabRequest};
use crate::error::{Error, ErrorCode};
use crate::events::{ClosedBy, EventKind};
use crate::state::tabs::TabSummary;
use crate::state::PopupPolicy;

/// Input of `tab_new`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TabNewInput {
    /// Load this http(s) URL in the new tab (default: about:blank).
    #[serde(default)]
    url: Option<String>,
    /// As navigate's settle_ms, when a url is given (default 3000, max 60000).
    #[serde(default)]
    #[schemars(range(max = NAVIGATION_SETTLE_MS.max))]
    settle_ms: Option<u64>,
}

/// Input of `tab_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TabListInput {}

/// Input of `tab_select` and `tab_close`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TabInput {
    /// The tab's short id (from tab_list, tab_new or a popup).
    tab: String,
}

/// Input of `set_popup_policy`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PopupPolicyInput {
    /// `deny` (window.open answers null; event popup_blocked) or `tab` (each popup opens
    /// as a new tab of the session, keeping window.opener; event popup).
    policy: PopupPolicy,
}

/// Output of `tab_new`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TabNewOutput {
    /// The new tab's short id (now the selected tab).
    tab: String,
    /// Its URL (`about:blank` without `url`).
    url: String,
    /// How loading `url` went, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    navigation: Option<NavigationReport>,
    /// The session's open tabs.
    tabs: Vec<TabSummary>,
}

/// Output of `tab_list`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TabListOutput {
    /// The session's open tabs.
    tabs: Vec<TabSummary>,
    /// The selected tab (null when the session has none).
    selected: Option<String>,
}

/// Output of `tab_select`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TabSelectOutput {
    /// The tab.
    tab: String,
    /// Its URL.
    url: String,
    /// Its title.
    title: String,
    /// Always true.
    selected: bool,
}

/// Output of `tab_close`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TabCloseOutput {
    /// Always true.
    closed: bool,
    /// The tab that closed.
    tab_closed: String,
    /// The selected tab now (null when none is left).
    selected: Option<String>,
    /// The tabs left.
    tabs: Vec<TabSummary>,
}

/// Output of `set_popup_policy`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PopupPolicyOutput {
    /// `session`: the policy holds for every tab of the session.
    scope: &'static str,
    /// The policy now in force.
    policy: PopupPolicy,
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::session(
            "tab_new",
            "Open a new tab in the session (same cookies, storage and downloads), optionally loading url; it becomes the selected tab. Works when the session has no tab left.",
            |context: ToolContext, input: TabNewInput| async move {
                let url = input.url.as_deref().map(crate::urls::check_navigation_url).transpose()?;
                let settle = NAVIGATION_SETTLE_MS.millis(input.settle_ms, "settle_ms")?;
                let session = &context.session;
                let tab: String = session.engine.session(&session.id, SessionRequest::NewTab).await?;
                let mut answer = TabNewOutput { tab: tab.clone(), url: "about:blank".into(), navigation: None, tabs: Vec::new() };
                if let Some(url) = url {
                    // The load is a page tool's work on the new tab: it takes the tab's turn
                    // (the tab is selected already, so another call may have picked it up).
                    let opened = session.tabs.get(Some(&tab))?;
                    let _turn = opened.lock.lock().await;
                    if opened.is_closed() {
                        return Err(Error::new(ErrorCode::TabNotFound, format!("tab {tab} was closed")));
                    }
                    let target = TabAddress { session_id: session.id.clone(), tab };
                    let request = TabRequest::Navigate { url: url.to_string(), timeout: std::time::Duration::from_millis(LOAD_TIMEOUT_MS.default), settle };
                    let navigation: NavigationReport = session.engine.tab(target, request).await?;
                    answer.url = navigation.url.clone();
                    answer.navigation = Some(navigation);
                }
                answer.tabs = session.tabs.summaries();
                Ok(answer)
            },
        )
        .positional(&[Positional::Field("url")]),
        Tool::session(
            "tab_list",
            "List the session's open tabs: id, url, title, whether selected, and the opener of popups.",
            |context: ToolContext, _input: TabListInput| async move {
                Ok(TabListOutput { tabs: context.session.tabs.summaries(), selected: context.session.tabs.selected_id() })
            },
        ),
        Tool::session(
            "tab_select",
            "Make a tab the selected one: page tools without `tab` act on it, and watch shows it.",
            |context: ToolContext, input: TabInput| async move {
                let tab = context.session.tabs.select(&input.tab)?;
                let (url, title) = tab.status.get();
                Ok(TabSelectOutput { tab: tab.id.clone(), url, title, selected: true })
            },
        )
        .positional(&[Positional::Field("tab")]),
        Tool::session(
            "tab_close",
            "Close a tab; its id and what it held (refs, logs, rules) go. Closing the last tab is allowed: the session then has none until tab_new.",
            |context: ToolContext, input: TabInput| async move {
                let session = &context.session;
                let tab = session.tabs.get(Some(&input.tab))?;
                // A call running on the tab finishes first (a person's login may take
                // minutes: after 5 s the tab closes under it, and it fails).
                let _turn = tokio::time::timeout(std::time::Duration::from_secs(5), tab.lock.lock()).await;
                session.engine.session::<()>(&session.id, SessionRequest::CloseTab { tab: tab.id.clone() }).await?;
                session.events.push(Some(&tab.id), EventKind::TabClosed { by: ClosedBy::Agent });
                Ok(TabCloseOutput { closed: true, tab_closed: tab.id.clone(), selected: session.tabs.selected_id(), tabs: session.tabs.summaries() })
            },
        )
        .positional(&[Positional::Field("tab")]),
        Tool::session(
            "set_popup_policy",
            "Decide what window.open and target=_blank do: deny (default) or tab (a new tab of the session, keeping window.opener, so sign-in popups that post back and close work).",
            |context: ToolContext, input: PopupPolicyInput| async move {
                context.session.tabs.set_popup_policy(input.policy);
                Ok(PopupPolicyOutput { scope: "session", policy: input.policy })
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use serde_json::json;

    use crate::engine::{Answer, Command, EngineHandle, NavigationReport, SessionRequest, SettleReport, TabRequest};
    use crate::session::{CreateSession, Owner, SessionLimits, SessionServices, SessionTable};
    use crate::tools::{ToolContext, ToolRegistry};

    /// An engine whose new tabs are taken at once by another call that runs for a second;
    /// it logs that call's start and end and every navigation.
    fn engine_with_a_busy_new_tab(log: Arc<Mutex<Vec<&'static str>>>) -> EngineHandle {
        let (engine, mut queue) = EngineHandle::channel();
        tokio::spawn(async move {
            let mut tabs = None;
            while let Some(queued) = queue.receiver.recv().await {
                queued.ticket.start();
                match queued.command {
                    Command::Open { spec, reply } => {
                        spec.tabs.open(None, true);
                        tabs = Some(spec.tabs.clone());
                        drop(reply.send(Ok(())));
                    }
                    Command::Session { request: SessionRequest::NewTab, reply, .. } => {
                        let tab = tabs.as_ref().expect("a session is open").open(None, true);
                        let (taken, turn_taken) = tokio::sync::oneshot::channel();
                        let (other, log) = (tab.clone(), log.clone());
                        tokio::spawn(async move {
                            let _turn = other.lock.lock().await;
                            log.lock().unwrap().push("other call begins");
                            let _ = taken.send(());
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            log.lock().unwrap().push("other call ends");
                        });
                        turn_taken.await.unwrap();
                        drop(reply.send(Ok(Answer::Tab(tab.id.clone()))));
                    }
                    Command::Page { request: TabRequest::Navigate { url, .. }, reply, .. } => {
                        log.lock().unwrap().push("tab_new loads");
                        let settle =
                            SettleReport { waited_ms: 0, dom_elements: 0, stable_samples: 0, network_idle: true, timed_out: false };
                        let report = NavigationReport {
                            requested_url: url.clone(),
                            url,
                            http_status: Some(200),
                            net_error: None,
                            net_error_description: None,
                            proxy_error: None,
                            policy_rule: None,
                            settle,
                        };
                        drop(reply.send(Ok(Answer::Navigation(report))));
                    }
                    _ => {}
                }
            }
        });
        engine
    }

    #[tokio::test(start_paused = true)]
    async fn tab_new_loads_its_url_in_the_tabs_turn() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let data_dir = crate::testing::TempDir::new("malo-tabs-test");
        let services = SessionServices::new(engine_with_a_busy_new_tab(log.clone()), Arc::default(), Arc::default(), data_dir.path(), None);
        let owner =
            Owner { lease_id: "lease-test".into(), agent_id: "agent".into(), lease_dir: data_dir.path().join("lease-test"), port: 0 };
        let sessions = Arc::new(SessionTable::new(owner, SessionLimits { max_sessions: 1, max_download_bytes: 1 << 20 }, services));
        let session = sessions.create(CreateSession::default()).await.unwrap();
        let registry = Arc::new(ToolRegistry::standard());
        let context = ToolContext::new(session, sessions, registry.clone());
        let answer = registry.call("tab_new", context, json!({ "url": "http://example.com/" })).await.unwrap();
        assert_eq!(answer.result["url"], "http://example.com/");
        assert_eq!(*log.lock().unwrap(), ["other call begins", "other call ends", "tab_new loads"]);
    }
}
