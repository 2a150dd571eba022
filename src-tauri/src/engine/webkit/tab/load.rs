//! A tab's load signals: load progress as counters and events (started, committed with
//! its HTTP status, finished, failed: named by the session proxy's record of the request
//! when the proxy refused it or gave up on it), the URL and title the listings show,
//! requests in flight (the network half of "settled"), and the web process's death.

use webkit2gtk::{LoadEvent, URIResponseExt, WebResourceExt, WebViewExt};

use super::Tab;
use crate::events::EventKind;
use crate::state::TabSignal;

/// Connects the load signals of `tab`'s view.
pub(super) fn connect(tab: &Tab) {
    let page = &tab.state;
    let view = &tab.view;
    // Load progress: counters, http status, events, page state.
    let (load, changed, events, tab_id, page_state) =
        (tab.load.clone(), tab.load_changed.clone(), tab.events.clone(), tab.id.clone(), page.clone());
    view.connect_load_changed(move |view, event| {
        let url = view.uri().map(|uri| uri.to_string()).unwrap_or_default();
        match event {
            LoadEvent::Started => {
                let mut state = load.borrow_mut();
                // A new load runs in a new web process: the tab has recovered.
                state.crashed = false;
                state.started += 1;
                state.started_uri = url.clone();
                state.failure = None;
                state.http_status = None;
                drop(state);
                page_state.page_began(events.seq_now(), &url);
                page_state.signal(TabSignal::LoadStarted { url });
            }
            LoadEvent::Committed => {
                let status = view
                    .main_resource()
                    .and_then(|resource| resource.response())
                    .map(|response| response.status_code())
                    .filter(|status| *status > 0)
                    .map(|status| status as u16);
                {
                    let mut state = load.borrow_mut();
                    state.http_status = status;
                    state.committed += 1;
                }
                page_state.status.set_url(&url);
                page_state.signal(TabSignal::Committed { url: url.clone(), http_status: status });
                events.push(Some(&tab_id), EventKind::Navigation { url, http_status: status });
            }
            LoadEvent::Finished => {
                let mut state = load.borrow_mut();
                state.finished = state.started;
                let failed = state.failure.is_some();
                drop(state);
                if !failed {
                    let title = view.title().map(|title| title.to_string()).unwrap_or_default();
                    page_state.signal(TabSignal::Loaded { url: url.clone() });
                    events.push(Some(&tab_id), EventKind::Load { url, title });
                }
            }
            _ => {}
        }
        changed.notify_waiters();
    });

    let (load, changed, events, tab_id, page_state) =
        (tab.load.clone(), tab.load_changed.clone(), tab.events.clone(), tab.id.clone(), page.clone());
    view.connect_load_failed(move |_view, _event, failing_uri, error| {
        let (name, description) = describe_load_error(error);
        let (name, description) = match page_state.traffic.failure_for(failing_uri) {
            Some(reason) if from_the_network(error) => (failure_name(&reason), reason),
            _ => (name, description),
        };
        load.borrow_mut().failure = Some((name.clone(), description.clone()));
        page_state.signal(TabSignal::LoadFailed { url: failing_uri.to_string(), net_error: name.clone() });
        let failed = EventKind::LoadFailed { url: failing_uri.to_string(), net_error: name, net_error_description: description };
        events.push(Some(&tab_id), failed);
        changed.notify_waiters();
        // true: no WebKit error page; the agent gets the error in the API instead.
        true
    });

    let (page_state, load) = (page.clone(), tab.load.clone());
    view.connect_uri_notify(move |view| {
        if let Some(uri) = view.uri() {
            page_state.status.set_url(&uri);
            // Outside a load, a new URL is the same document's (history API, fragment).
            let idle = {
                let state = load.borrow();
                state.finished == state.started && state.committed > 0
            };
            if idle {
                page_state.signal(TabSignal::SameDocument { url: uri.to_string() });
            }
        }
    });
    let page_state = page.clone();
    view.connect_title_notify(move |view| {
        let title = view.title().map(|title| title.to_string()).unwrap_or_default();
        page_state.status.set_title(&title);
        page_state.signal(TabSignal::Title { title });
    });

    // Requests in flight, for the network half of "settled".
    let pending = tab.pending_requests.clone();
    view.connect_resource_load_started(move |_view, resource, _request| {
        pending.set(pending.get() + 1);
        let pending = pending.clone();
        resource.connect_finished(move |_resource| pending.set(pending.get() - 1));
    });

    let (load, changed, events, tab_id, page_state) =
        (tab.load.clone(), tab.load_changed.clone(), tab.events.clone(), tab.id.clone(), page.clone());
    view.connect_web_process_terminated(move |_view, reason| {
        let mut state = load.borrow_mut();
        state.crashed = true;
        state.crashes += 1;
        // The load that was under way will never finish.
        state.finished = state.started;
        drop(state);
        events.push(Some(&tab_id), EventKind::Crash { reason: format!("{reason:?}").to_lowercase() });
        page_state.signal(TabSignal::Crashed);
        changed.notify_waiters();
    });
}

/// Whether a load error is what the page saw of its connection (a closed one, say), which
/// the session proxy's record of the request explains: the proxy refuses a request or
/// gives up on it by closing the page's connection, so WebKit reports a truncated answer
/// (`partial_input`) whether the person's policy refused the site, the upstream proxy
/// refused the login or the name did not resolve. Not a load WebKit itself stopped.
fn from_the_network(error: &glib::Error) -> bool {
    use webkit2gtk::{NetworkError, PolicyError};
    error.kind::<PolicyError>().is_none() && error.kind::<NetworkError>() != Some(NetworkError::Cancelled)
}

/// The `net_error` of a failure the proxy recorded (`proxy_failed: proxy_auth_failed: ...`
/// is `proxy_failed`).
fn failure_name(reason: &str) -> String {
    reason.split(':').next().unwrap_or("network_failed").trim().to_string()
}

/// A short, stable name and a description for a load error.
fn describe_load_error(error: &glib::Error) -> (String, String) {
    use webkit2gtk::gio::{IOErrorEnum, ResolverError, TlsError};
    use webkit2gtk::{NetworkError, PolicyError};
    let name = if let Some(kind) = error.kind::<IOErrorEnum>() {
        snake_case(&format!("{kind:?}"))
    } else if error.kind::<ResolverError>().is_some() {
        "name_not_resolved".to_string()
    } else if error.kind::<TlsError>().is_some() {
        "tls_error".to_string()
    } else if let Some(kind) = error.kind::<NetworkError>() {
        match kind {
            NetworkError::Cancelled => "cancelled".to_string(),
            NetworkError::UnknownProtocol => "unknown_protocol".to_string(),
            NetworkError::FileDoesNotExist => "file_does_not_exist".to_string(),
            NetworkError::Transport => "transport".to_string(),
            _ => "network_failed".to_string(),
        }
    } else if let Some(kind) = error.kind::<PolicyError>() {
        match kind {
            // The response became a download (or was otherwise not shown).
            PolicyError::FrameLoadInterruptedByPolicyChange => "frame_load_interrupted".to_string(),
            PolicyError::CannotUseRestrictedPort => "restricted_port".to_string(),
            _ => "blocked_by_policy".to_string(),
        }
    } else {
        error.domain().as_str().replace('-', "_").to_lowercase()
    };
    (name, error.message().to_string())
}

pub(super) fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (index, character) in camel.chars().enumerate() {
        if character.is_uppercase() && index > 0 {
            out.push('_');
        }
        out.extend(character.to_lowercase());
    }
    out
}
