//! What the DevTools endpoint asks of a tab (see `engine::devtools`): scripts in any world
//! of the main frame, scripts for every new document, loads that answer at commit, the
//! history list, the viewport's size, text insertion and whole-document captures.

use std::time::Duration;

use serde_json::{json, Value};
use webkit2gtk::{BackForwardListExt, BackForwardListItemExt, UserContentManagerExt, UserScript, WebViewExt};

use super::tab::Tab;
use crate::engine::devtools::{DevtoolsRequest, HistoryEntry, LoadBegun, LoadTarget, RuntimeOp, World, RUNTIME_SOURCE};
use crate::engine::Answer;
use crate::error::{Error, ErrorCode, Result};
use crate::state::init_scripts::InitScript;
use crate::state::TabSignal;

/// Carries out one DevTools request on `tab`.
pub(super) async fn handle(tab: &Tab, request: DevtoolsRequest) -> Result<Answer> {
    Ok(match request {
        DevtoolsRequest::Runtime { world, op, code, request, limit } => {
            Answer::Value(runtime(tab, &world, op, code.as_deref(), &request, limit).await?)
        }
        DevtoolsRequest::AddDocumentScript { world, source, all_frames } => {
            Answer::Count(add_document_script(tab, &world, &source, all_frames)?)
        }
        DevtoolsRequest::RemoveDocumentScript { id } => {
            remove_document_script(tab, id);
            Answer::Done
        }
        DevtoolsRequest::SyncInitScripts { scripts } => {
            tab.ensure_alive()?;
            sync_init_scripts(tab, scripts);
            Answer::Done
        }
        DevtoolsRequest::Load { target, timeout } => Answer::Value(json!(load(tab, target, timeout).await?)),
        DevtoolsRequest::History => Answer::Value(json!(history(tab)?)),
        DevtoolsRequest::SetViewport { width, height } => {
            set_viewport(tab, width, height).await?;
            Answer::Done
        }
        DevtoolsRequest::InsertText { text } => {
            tab.ensure_open()?;
            tab.view.execute_editing_command_with_argument("InsertText", &text);
            Answer::Done
        }
        DevtoolsRequest::Input { events } => {
            tab.deliver_input(&events).await?;
            wait_until_input_seen(tab).await;
            Answer::Done
        }
    })
}

/// The DevTools runtime of a tab: its name, its source, and the worlds whose new
/// documents get it at their start.
#[derive(Debug)]
pub(in crate::engine::webkit) struct Runtime {
    name: String,
    source: String,
    worlds: std::cell::RefCell<std::collections::HashSet<World>>,
}

impl Runtime {
    /// A runtime for a tab whose agent answers node events of type `nodes`.
    pub(in crate::engine::webkit) fn new(nodes: &str) -> Runtime {
        let name = format!("__malo_{}", crate::secret::random_hex(8));
        let source = RUNTIME_SOURCE.replace("__MALO_RUNTIME__", &name).replace("__MALO_NODES__", nodes);
        Runtime { name, source, worlds: Default::default() }
    }
}

/// What the calling script answers when the document has no runtime yet.
const MISSING_RUNTIME: &str = "__malo_missing_runtime__";

/// Runs a runtime operation in `world` (installing the runtime first where it is
/// missing); answers the runtime's JSON answer.
async fn runtime(tab: &Tab, world: &World, op: RuntimeOp, code: Option<&str>, request: &Value, limit: Duration) -> Result<Value> {
    tab.ensure_open()?;
    let runtime = &tab.devtools;
    if runtime.worlds.borrow_mut().insert(world.clone()) {
        add_runtime_script(tab, world)?;
    }
    let request_text = serde_json::to_string(&request.to_string()).map_err(|error| Error::internal(error.to_string()))?;
    let name = &runtime.name;
    let guard = format!("if (typeof {name} === 'undefined') return {};\n", json!(MISSING_RUNTIME));
    let body = match (op, code) {
        (RuntimeOp::Call, Some(code)) => format!("{guard}return {name}.call((\n{code}\n), {request_text});"),
        (RuntimeOp::Evaluate, Some(code)) => format!("{guard}return {name}.evaluate(() => (\n{code}\n), {request_text});"),
        (op, _) => format!("{guard}return {name}.{}({request_text});", op.name()),
    };
    let mut body = body;
    let mut answer = run_body(tab, world, &body, limit).await;
    if op == RuntimeOp::Evaluate && answer.as_ref().is_err_and(|error| error.message.contains("SyntaxError")) {
        // Not an expression: statements, evaluated as a script of their own.
        let mut with_text = request.clone();
        with_text["expression"] = Value::from(code.unwrap_or_default());
        let text = serde_json::to_string(&with_text.to_string()).map_err(|error| Error::internal(error.to_string()))?;
        body = format!("{guard}return {name}.evaluateText({text});");
        answer = run_body(tab, world, &body, limit).await;
    }
    let mut answer = answer?;
    if answer.as_str() == Some(MISSING_RUNTIME) {
        let install = tab.view.evaluate_javascript_future(&runtime.source, world.webkit_name(), None);
        if let Err(error) = install.await {
            // A call beside this one installed it first: the name is taken, by the runtime.
            if !error.message().contains("duplicate variable") {
                return Err(Error::internal(format!("the DevTools runtime did not install: {}", error.message())));
            }
        }
        answer = run_body(tab, world, &body, limit).await?;
    }
    let text = answer.as_str().ok_or_else(|| Error::internal("the DevTools runtime answered no text"))?;
    serde_json::from_str(text).map_err(|error| Error::internal(format!("the DevTools runtime answered bad JSON: {error}")))
}

/// Runs a function body in `world`; answers its value as JSON.
async fn run_body(tab: &Tab, world: &World, body: &str, limit: Duration) -> Result<Value> {
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

/// New documents of the main frame get the runtime in `world` at their start.
fn add_runtime_script(tab: &Tab, world: &World) -> Result<()> {
    let content = tab.view.user_content_manager().ok_or_else(|| Error::internal("the tab has no content manager"))?;
    let frames = webkit2gtk::UserContentInjectedFrames::TopFrame;
    let start = webkit2gtk::UserScriptInjectionTime::Start;
    let script = match world.webkit_name() {
        Some(name) => UserScript::for_world(&tab.devtools.source, frames, start, name, &[], &[]),
        None => UserScript::new(&tab.devtools.source, frames, start, &[], &[]),
    };
    content.add_script(&script);
    Ok(())
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

/// Makes the tab's init scripts those its session lists now: scripts no longer listed
/// are removed, new ones added (after those kept, so they run in the order added).
pub(in crate::engine::webkit) fn sync_init_scripts(tab: &Tab, listed: Vec<InitScript>) {
    let Some(content) = tab.view.user_content_manager() else { return };
    let mut installed = tab.document_scripts.init.borrow_mut();
    installed.retain(|(id, script)| {
        let kept = listed.iter().any(|listed| listed.id == *id);
        if !kept {
            content.remove_script(script);
        }
        kept
    });
    for listed in listed {
        if installed.iter().any(|(id, _)| *id == listed.id) {
            continue;
        }
        let frames = webkit2gtk::UserContentInjectedFrames::AllFrames;
        let script = UserScript::new(&listed.source, frames, webkit2gtk::UserScriptInjectionTime::Start, &[], &[]);
        content.add_script(&script);
        installed.push((listed.id, script));
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

/// Waits until the page has seen the input just delivered (it travels on another channel
/// than scripts), at most 300 ms plus 2 ms an event, or until a load begins.
async fn wait_until_input_seen(tab: &Tab) {
    let mark = tab.input_mark.replace(-1);
    let expected = tab.input_expected.replace(0).max(1);
    if mark < 0 {
        return;
    }
    let started = tab.load.borrow().started;
    let deadline = super::Deadline::after(Duration::from_millis((300 + 2 * expected as u64).min(5000)));
    while !deadline.passed() && tab.load.borrow().started == started {
        if tab.input_count().await >= mark + expected {
            return;
        }
        glib::timeout_future(Duration::from_millis(3)).await;
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

async fn set_viewport(tab: &Tab, width: u32, height: u32) -> Result<()> {
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
    tab.host.set_default_size(width as i32, height as i32);
    tab.host.queue_resize();
    tab.state.set_viewport(width, height);
    tab.state.signal(TabSignal::Resized { width, height });
    // As in Chrome, the page sees the new size once this answers (bounded: 2 s).
    let deadline = super::Deadline::after(Duration::from_secs(2));
    let check = format!("return innerWidth === {width} && innerHeight === {height};");
    while !deadline.passed() {
        if tab.evaluate_within(&check, Duration::from_millis(500)).await.ok() == Some(Value::Bool(true)) {
            break;
        }
        glib::timeout_future(Duration::from_millis(10)).await;
    }
    Ok(())
}
