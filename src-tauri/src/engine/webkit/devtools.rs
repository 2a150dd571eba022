//! What the DevTools endpoint asks of a tab (see `engine::devtools`): scripts in any world
//! of the main frame, scripts for every new document, loads that answer at commit, the
//! history list, the viewport's size, text insertion and whole-document captures.

use std::time::Duration;

use serde_json::{json, Value};
use webkit2gtk::{BackForwardListExt, BackForwardListItemExt, UserContentManagerExt, UserScript, WebViewExt};

use super::tab::Tab;
use crate::engine::devtools::{DevtoolsRequest, HistoryEntry, LoadBegun, LoadTarget, World};
use crate::engine::Answer;
use crate::error::{Error, ErrorCode, Result};
use crate::state::TabSignal;

/// Carries out one DevTools request on `tab`.
pub(super) async fn handle(tab: &Tab, request: DevtoolsRequest) -> Result<Answer> {
    Ok(match request {
        DevtoolsRequest::Call { world, body, limit } => Answer::Value(call(tab, &world, &body, limit).await?),
        DevtoolsRequest::Run { world, source } => Answer::Value(run(tab, &world, &source).await?),
        DevtoolsRequest::AddDocumentScript { world, source, all_frames } => {
            Answer::Count(add_document_script(tab, &world, &source, all_frames)?)
        }
        DevtoolsRequest::RemoveDocumentScript { id } => {
            remove_document_script(tab, id);
            Answer::Done
        }
        DevtoolsRequest::Load { target, timeout } => Answer::Value(json!(load(tab, target, timeout).await?)),
        DevtoolsRequest::History => Answer::Value(json!(history(tab)?)),
        DevtoolsRequest::SetViewport { width, height } => {
            set_viewport(tab, width, height)?;
            Answer::Done
        }
        DevtoolsRequest::InsertText { text } => {
            tab.ensure_open()?;
            tab.view.execute_editing_command_with_argument("InsertText", &text);
            Answer::Done
        }
        DevtoolsRequest::CaptureDocument => Answer::Frame(super::capture::document(tab).await?),
    })
}

/// Runs a function body in `world`; answers its JSON value.
async fn call(tab: &Tab, world: &World, body: &str, limit: Duration) -> Result<Value> {
    tab.ensure_open()?;
    let call = tab.view.call_async_javascript_function_future(body, None, world.webkit_name(), None);
    let value = tokio::select! {
        value = call => value,
        () = super::engine_time(limit) => {
            return Err(Error::new(ErrorCode::Timeout, format!("the page did not answer within {} ms", limit.as_millis())));
        }
    };
    let value = value.map_err(|error| Error::new(ErrorCode::ScriptError, error.message().to_string()))?;
    Ok(to_json(&value))
}

/// Runs global code in `world`; answers its completion value.
async fn run(tab: &Tab, world: &World, source: &str) -> Result<Value> {
    tab.ensure_open()?;
    let run = tab.view.evaluate_javascript_future(source, world.webkit_name(), None);
    let value = tokio::select! {
        value = run => value,
        () = super::engine_time(Duration::from_secs(10)) => return Err(Error::new(ErrorCode::Timeout, "the script did not finish within 10 s")),
    };
    let value = value.map_err(|error| Error::new(ErrorCode::ScriptError, error.message().to_string()))?;
    Ok(to_json(&value))
}

/// A JavaScript value as JSON (`null` for what JSON cannot carry).
fn to_json(value: &javascriptcore::Value) -> Value {
    use javascriptcore::ValueExt;
    if value.is_undefined() || value.is_null() {
        return Value::Null;
    }
    value.to_json(0).and_then(|text| serde_json::from_str(&text).ok()).unwrap_or(Value::Null)
}

fn add_document_script(tab: &Tab, world: &World, source: &str, all_frames: bool) -> Result<u64> {
    tab.ensure_alive()?;
    let content = tab.view.user_content_manager().ok_or_else(|| Error::internal("the tab has no content manager"))?;
    let frames =
        if all_frames { webkit2gtk::UserContentInjectedFrames::AllFrames } else { webkit2gtk::UserContentInjectedFrames::TopFrame };
    let start = webkit2gtk::UserScriptInjectionTime::Start;
    let script = match world.webkit_name() {
        Some(name) => UserScript::for_world(source, frames, start, name, &[], &[]),
        None => UserScript::new(source, frames, start, &[], &[]),
    };
    content.add_script(&script);
    let id = tab.document_scripts.next_id.get() + 1;
    tab.document_scripts.next_id.set(id);
    tab.document_scripts.scripts.borrow_mut().push((id, script));
    Ok(id)
}

fn remove_document_script(tab: &Tab, id: u64) {
    let removed = {
        let mut scripts = tab.document_scripts.scripts.borrow_mut();
        scripts.iter().position(|(script_id, _)| *script_id == id).map(|index| scripts.remove(index))
    };
    if let (Some((_, script)), Some(content)) = (removed, tab.view.user_content_manager()) {
        content.remove_script(&script);
    }
}

/// Starts a load and waits until it committed, failed or became a download.
async fn load(tab: &Tab, target: LoadTarget, timeout: Duration) -> Result<LoadBegun> {
    tab.ensure_alive()?;
    let (started_before, committed_before) = {
        let state = tab.load.borrow();
        (state.started, state.committed)
    };
    match target {
        LoadTarget::Url(url) => tab.view.load_uri(&url),
        LoadTarget::Reload => tab.view.reload(),
        LoadTarget::HistoryStep(step) => {
            let list = tab.view.back_forward_list().ok_or_else(|| Error::internal("the tab has no history"))?;
            let item = list.nth_item(step).ok_or_else(|| Error::bad_request(format!("there is no history entry {step} steps away")))?;
            tab.view.go_to_back_forward_list_item(&item);
        }
    }
    let deadline = super::Deadline::after(timeout);
    loop {
        tab.ensure_alive()?;
        {
            let state = tab.load.borrow();
            let began = state.started > started_before;
            if state.committed > committed_before {
                return Ok(LoadBegun {
                    committed: true,
                    url: tab.view.uri().map(|uri| uri.to_string()).unwrap_or_default(),
                    http_status: state.http_status,
                    net_error: None,
                    is_download: false,
                });
            }
            if began && state.finished == state.started {
                let net_error = state.failure.as_ref().map(|(name, _)| name.clone());
                let is_download = net_error.as_deref() == Some("frame_load_interrupted");
                return Ok(LoadBegun { committed: false, url: state.started_uri.clone(), http_status: None, net_error, is_download });
            }
        }
        if deadline.passed() {
            return Err(Error::new(ErrorCode::Timeout, format!("the load did not commit within {} ms", timeout.as_millis())));
        }
        let changed = tab.load_changed.notified();
        tokio::select! {
            _ = changed => {}
            _ = glib::timeout_future(Duration::from_millis(50)) => {}
        }
    }
}

/// The history around the current entry, oldest first.
fn history(tab: &Tab) -> Result<Vec<HistoryEntry>> {
    tab.ensure_alive()?;
    let Some(list) = tab.view.back_forward_list() else { return Ok(Vec::new()) };
    let back = list.back_list().len() as i32;
    let forward = list.forward_list().len() as i32;
    let mut entries = Vec::new();
    for offset in -back..=forward {
        if let Some(item) = list.nth_item(offset) {
            entries.push(HistoryEntry {
                offset,
                url: item.uri().map(|uri| uri.to_string()).unwrap_or_default(),
                title: item.title().map(|title| title.to_string()).unwrap_or_default(),
            });
        }
    }
    if entries.is_empty() {
        let (url, title) = tab.state.status.get();
        entries.push(HistoryEntry { offset: 0, url, title });
    }
    Ok(entries)
}

fn set_viewport(tab: &Tab, width: u32, height: u32) -> Result<()> {
    use gtk::prelude::*;
    tab.ensure_alive()?;
    if !(1..=16_384).contains(&width) || !(1..=16_384).contains(&height) {
        return Err(Error::bad_request("the viewport must be between 1 and 16384 px each way"));
    }
    tab.size.set((width as i32, height as i32));
    tab.view.set_size_request(width as i32, height as i32);
    if tab.takeover.window.borrow().is_none() {
        tab.host.resize(width as i32, height as i32);
    }
    tab.state.set_viewport(width, height);
    tab.state.signal(TabSignal::Resized { width, height });
    Ok(())
}
