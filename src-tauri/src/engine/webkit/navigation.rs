//! Navigate, go back/forward/reload, and wait for the page to settle: first the load
//! (WebKit's `load-changed` Finished or `load-failed`), then DOM and network quiet,
//! sampled until the element count holds still with no request in flight, or
//! `settle` runs out. Single-page sites and JS challenges do not finish at `load`.

use std::time::{Duration, Instant};

use serde_json::json;
use webkit2gtk::WebViewExt;

use super::tab::Tab;
use crate::engine::{ActionSettle, HistoryAction, NavigationReport, SettleReport};
use crate::error::{Error, ErrorCode, Result};

/// Time between two settle samples after an action.
const SAMPLE_INTERVAL: Duration = Duration::from_millis(40);
/// Consecutive quiet samples that make a page settled.
const QUIET_SAMPLES: u32 = 2;
/// Time from one settle sample's start to the next after a load. The tab's requests are
/// counted as they start and end, so quiet is known at once; the samples only leave a
/// short window for what timers and promises start after the load: two steps (20 ms from
/// the load, more than a frame at 60 Hz) on a page that has not changed since its load,
/// [`QUIET_SAMPLES_AFTER_CHANGE`] on one that has. The first sample in a new document
/// takes about 7 ms (its script world is new), which the steps include. (With 15 ms steps
/// timed from the end of each sample, the form page's navigate over MCP took a median of
/// 54 ms; with these, 35 ms. 2026-12-06.)
const LOAD_SAMPLE_INTERVAL: Duration = Duration::from_millis(10);
/// Quiet samples after a load that a page which changed since must show (60 ms: longer
/// than the step of a page that grows by a timer every 50 ms).
const QUIET_SAMPLES_AFTER_CHANGE: u32 = 6;
/// How long to wait for WebKit to report that a load started, before treating the call
/// as a same-document navigation (fragment change) that fires no load events.
const START_GRACE: Duration = Duration::from_millis(1500);

/// Loads `url` in the tab and waits for load and settle.
pub(super) async fn navigate(tab: &Tab, url: &str, timeout: Duration, settle: Duration) -> Result<NavigationReport> {
    // A crashed tab recovers here: the load starts a new web process.
    tab.ensure_alive()?;
    let begun = Instant::now();
    let before = Mark::of(tab);
    tab.view.load_uri(url);
    wait_for_load(tab, before, begun, timeout, url, Some(url)).await?;
    finish(tab, url, begun, settle).await
}

/// Back, forward or reload, waiting like a navigation. Going back with no history is a
/// `E_BAD_REQUEST`, not a silent no-op.
pub(super) async fn history(tab: &Tab, action: HistoryAction, timeout: Duration, settle: Duration) -> Result<NavigationReport> {
    tab.ensure_alive()?;
    let begun = Instant::now();
    let before = Mark::of(tab);
    match action {
        HistoryAction::Back if !tab.view.can_go_back() => return Err(Error::bad_request("there is no page to go back to")),
        HistoryAction::Forward if !tab.view.can_go_forward() => return Err(Error::bad_request("there is no page to go forward to")),
        HistoryAction::Back => tab.view.go_back(),
        HistoryAction::Forward => tab.view.go_forward(),
        HistoryAction::Reload => tab.view.reload(),
    }
    let requested = tab.view.uri().map(|uri| uri.to_string()).unwrap_or_default();
    wait_for_load(tab, before, begun, timeout, &requested, None).await?;
    let requested = tab.view.uri().map(|uri| uri.to_string()).unwrap_or_default();
    finish(tab, &requested, begun, settle).await
}

/// Waits until a load that started after `before` has finished. With `expected_uri`,
/// only a load of that URI counts: a load that was already under way when the call came
/// (the session's first about:blank, a page's own redirect) must not end the wait.
async fn wait_for_load(tab: &Tab, before: Mark, begun: Instant, timeout: Duration, url: &str, expected_uri: Option<&str>) -> Result<()> {
    // The page's time, not the machine's: a stalled main thread does not count.
    let deadline = super::Deadline::after(timeout.saturating_sub(begun.elapsed()));
    loop {
        tab.ensure_alive()?;
        let (started, finished, crashes, ours) = {
            let state = tab.load.borrow();
            let ours = expected_uri.is_none_or(|expected| state.started_uri == expected);
            (state.started, state.finished, state.crashes, ours)
        };
        if crashes > before.crashes {
            // The web process died during this load (not before it: a crashed tab recovers
            // by loading).
            return Err(super::tab::crashed_error().with_details(json!({ "navigation": { "url": url }, "recover": "navigate" })));
        }
        if started > before.started && finished == started && ours {
            return Ok(());
        }
        let elapsed = begun.elapsed();
        if started == before.started && elapsed >= START_GRACE && !tab.view.is_loading() {
            // A same-document navigation: no load events will come.
            return Ok(());
        }
        if deadline.passed() {
            tab.view.stop_loading();
            return Err(Error::new(ErrorCode::Timeout, format!("the page did not finish loading within {} ms", timeout.as_millis()))
                .with_details(json!({ "navigation": { "url": url, "timed_out": true } })));
        }
        // Wake on the next load signal, or re-check shortly (covers the grace period).
        let notified = tab.load_changed.notified();
        tokio::select! {
            _ = notified => {}
            _ = glib::timeout_future(Duration::from_millis(50)) => {}
        }
    }
}

/// Where a tab's loads stood before a call: loads started, and crashes.
#[derive(Debug, Clone, Copy)]
struct Mark {
    started: u64,
    crashes: u64,
}

impl Mark {
    fn of(tab: &Tab) -> Mark {
        let state = tab.load.borrow();
        Mark { started: state.started, crashes: state.crashes }
    }
}

/// Builds the report after load: a failed load is an `E_NAVIGATION_FAILED` carrying the
/// report in `details.navigation`; otherwise the page is settled first.
async fn finish(tab: &Tab, requested: &str, begun: Instant, settle: Duration) -> Result<NavigationReport> {
    let (http_status, failure) = {
        let state = tab.load.borrow();
        (state.http_status, state.failure.clone())
    };
    let url = tab.view.uri().map(|uri| uri.to_string()).unwrap_or_default();
    // WebKit sees only a closed connection when the proxy refused or could not reach the
    // server: the proxy's record says what really happened (a TLS error, a refusal, ...).
    let failure = failure.map(|(name, description)| match tab.state.traffic.failure_for(requested) {
        Some(reason) => {
            let name = reason.split(':').next().unwrap_or("network_failed").trim().to_string();
            (name, reason)
        }
        None => (name, description),
    });
    // WebKit refuses some addresses without a word (ports on the fetch standard's blocked
    // list, host 0): the load ends on about:blank. That is a failed navigation.
    let failure = failure.or_else(|| {
        (url == "about:blank" && !requested.starts_with("about:")).then(|| match crate::urls::blocked_port(requested) {
            Some(port) => {
                ("restricted_port".to_string(), format!("the browser does not load port {port} (a port kept for other protocols)"))
            }
            None => ("blocked_by_engine".to_string(), format!("the browser refused to load {requested}")),
        })
    });
    if let Some((name, description)) = failure {
        let (proxy_error, policy_rule) = failure_details(&name, &description);
        let report = NavigationReport {
            requested_url: requested.to_string(),
            url,
            http_status,
            net_error: Some(name.clone()),
            net_error_description: Some(description.clone()),
            proxy_error,
            policy_rule,
            settle: SettleReport { waited_ms: begun.elapsed().as_millis() as u64, ..SettleReport::default() },
        };
        return Err(Error::new(ErrorCode::NavigationFailed, format!("the page could not be loaded: {description} ({name})"))
            .with_details(json!({ "navigation": report })));
    }
    let settle = wait_for_quiet(tab, begun, settle).await;
    Ok(NavigationReport {
        requested_url: requested.to_string(),
        url: tab.view.uri().map(|uri| uri.to_string()).unwrap_or(url),
        http_status,
        net_error: None,
        net_error_description: None,
        proxy_error: None,
        policy_rule: None,
        settle,
    })
}

/// What a failure the session proxy named says beyond its `net_error`: the kind of an
/// upstream proxy's failure (`proxy_failed: proxy_auth_failed: ...`), the person's rule
/// that refused the site (`blocked_by_policy: <rule>`).
fn failure_details(name: &str, description: &str) -> (Option<String>, Option<String>) {
    let rest = description.strip_prefix(name).and_then(|rest| rest.strip_prefix(": "));
    match (name, rest) {
        ("proxy_failed", Some(rest)) => {
            let kind = rest.split(':').next().unwrap_or_default();
            (kind.starts_with("proxy_").then(|| kind.to_string()), None)
        }
        ("blocked_by_policy", Some(rule)) => (None, Some(rule.to_string())),
        _ => (None, None),
    }
}

/// Samples the DOM size and pending requests until both hold still.
async fn wait_for_quiet(tab: &Tab, begun: Instant, budget: Duration) -> SettleReport {
    let deadline = Instant::now() + budget;
    let mut last_count = None;
    let mut quiet_samples = 0;
    let mut changed = false;
    loop {
        let sampled = Instant::now();
        let count =
            tab.evaluate("return document.getElementsByTagName('*').length;").await.ok().and_then(|value| value.as_u64()).unwrap_or(0);
        let loading = {
            let state = tab.load.borrow();
            state.started != state.finished
        };
        let network_idle = tab.pending_requests.get() <= 0 && !loading;
        changed |= last_count.is_some_and(|last| last != count);
        if last_count == Some(count) && network_idle {
            quiet_samples += 1;
        } else {
            quiet_samples = 0;
        }
        last_count = Some(count);
        let needed = if changed { QUIET_SAMPLES_AFTER_CHANGE } else { QUIET_SAMPLES };
        let timed_out = Instant::now() >= deadline;
        if quiet_samples >= needed || timed_out || tab.closed.get() {
            return settle_report(begun, count, quiet_samples, needed, network_idle, timed_out);
        }
        glib::timeout_future((sampled + LOAD_SAMPLE_INTERVAL).saturating_duration_since(Instant::now())).await;
    }
}

/// The report of a wait for quiet that ended now.
fn settle_report(begun: Instant, count: u64, quiet_samples: u32, needed: u32, network_idle: bool, timed_out: bool) -> SettleReport {
    SettleReport {
        waited_ms: begun.elapsed().as_millis() as u64,
        dom_elements: count,
        stable_samples: quiet_samples,
        network_idle,
        timed_out: timed_out && quiet_samples < needed,
    }
}

/// After an input action: if it started a navigation, wait for that like `navigate`;
/// otherwise let the page react (one animation frame) and wait for quiet, up to `budget`.
/// A navigation that fails is reported in the result, not as the action's error.
pub(super) async fn after_action(tab: &Tab, mark: u64, budget: Duration, wait_frame: bool) -> Result<ActionSettle> {
    tab.ensure_open()?;
    let begun = Instant::now();
    let deadline = begun + budget;
    // One round trip through the web process (which has then handled the input) and one
    // frame, so handlers and their DOM updates have run.
    // Input travels to the page on another channel than our scripts: first wait until the
    // page has seen it (bounded: input aimed at a frame is not counted by the main frame).
    let input_mark = tab.input_mark.replace(-1);
    let expected = tab.input_expected.replace(0).max(1);
    if wait_frame && input_mark >= 0 {
        // Every event of a long typing counts: a bound that grows with them (at most 5 s).
        let bound = Duration::from_millis((300 + 2 * expected as u64).min(5000));
        let seen_by = Instant::now() + bound;
        while Instant::now() < seen_by && tab.load.borrow().started == mark {
            if tab.input_count().await >= input_mark + expected {
                break;
            }
            glib::timeout_future(Duration::from_millis(3)).await;
        }
    }
    // If the action navigates, the old document may never run that frame: bounded.
    if wait_frame {
        let _ = tab
            .evaluate_within(
                "await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))); return 0;",
                Duration::from_millis(500),
            )
            .await;
    }
    let mut last_count = None;
    let mut quiet_samples = 0;
    loop {
        let started = tab.load.borrow().started;
        if started > mark || (tab.view.is_loading() && started == mark && tab.load.borrow().finished == started) {
            return navigation_after_action(tab, mark, begun, budget).await;
        }
        let sample = tab
            .evaluate("return [document.getElementsByTagName('*').length, !!(globalThis.__malo && __malo.isLeaving())];")
            .await
            .unwrap_or_default();
        if sample[1] == serde_json::Value::Bool(true) {
            return navigation_after_action(tab, mark, begun, budget).await;
        }
        let count = sample[0].as_u64().unwrap_or(0);
        let network_idle = tab.pending_requests.get() <= 0;
        let settled_now = network_idle && (last_count.is_none() || last_count == Some(count));
        quiet_samples = if settled_now { quiet_samples + 1 } else { 0 };
        // The first quiet sample right after the frame is enough; after activity, two.
        let needed = if last_count.is_none() { 1 } else { QUIET_SAMPLES };
        last_count = Some(count);
        let timed_out = Instant::now() >= deadline;
        if quiet_samples >= needed || timed_out || tab.closed.get() {
            return Ok(ActionSettle {
                navigated: false,
                navigation: None,
                settle: settle_report(begun, count, quiet_samples, needed, network_idle, timed_out),
            });
        }
        glib::timeout_future(SAMPLE_INTERVAL).await;
    }
}

async fn navigation_after_action(tab: &Tab, mark: u64, begun: Instant, budget: Duration) -> Result<ActionSettle> {
    let url = tab.view.uri().map(|uri| uri.to_string()).unwrap_or_default();
    let before = Mark { started: mark, crashes: tab.load.borrow().crashes };
    wait_for_load(tab, before, begun, Duration::from_secs(30), &url, None).await?;
    let requested = tab.load.borrow().started_uri.clone();
    let report = match finish(tab, &requested, begun, budget).await {
        Ok(report) => report,
        Err(error) if error.code == ErrorCode::NavigationFailed => {
            serde_json::from_value(error.details["navigation"].clone()).map_err(|_| error)?
        }
        Err(error) => return Err(error),
    };
    Ok(ActionSettle { navigated: true, settle: report.settle.clone(), navigation: Some(report) })
}
