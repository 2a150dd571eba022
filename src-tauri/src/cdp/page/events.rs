//! Following a tab: its signals (loads, console, errors, dialogs) become the protocol's
//! events, in the order clients rely on: a new document clears the contexts, then `init`,
//! `frameNavigated` and the new contexts; the navigation's own request is reported before
//! any of them. The network log is read on each signal and every 100 ms.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::{Context, PageSession};
use crate::cdp::wire::now_seconds;
use crate::engine::devtools::World;
use crate::state::{ConsoleLevel, ScriptPlace, TabSignal};

/// How often the network log is read while nothing else happens.
const NETWORK_TICK: Duration = Duration::from_millis(100);

/// Follows the tab until the page session stops (or the tab's signals end).
pub(super) async fn follow(page: Arc<PageSession>, mut signals: broadcast::Receiver<TabSignal>) {
    let mut tick = tokio::time::interval(NETWORK_TICK);
    loop {
        tokio::select! {
            signal = signals.recv() => match signal {
                Ok(TabSignal::Committed { .. }) => {
                    page.on_signal(TabSignal::Committed { url: String::new(), http_status: None });
                    // A new document: the client's bindings again (Chrome keeps them).
                    let bindings = page.state().bindings.clone();
                    if !bindings.is_empty() {
                        let page = page.clone();
                        tokio::spawn(async move {
                            for (name, world) in bindings {
                                let _ = page.install_binding(&name, &world).await;
                            }
                        });
                    }
                }
                Ok(signal) => page.on_signal(signal),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => break,
            },
            _ = tick.tick() => page.scan_network(),
        }
    }
}

fn lifecycle(frame: &str, loader: &str, name: &str) -> Value {
    json!({ "frameId": frame, "loaderId": loader, "name": name, "timestamp": now_seconds() })
}

impl PageSession {
    /// `setLifecycleEventsEnabled`: the current document's lifecycle so far, replayed.
    pub(super) fn set_lifecycle(&self, enabled: bool) -> Value {
        let (loader, dom, loaded) = {
            let mut state = self.state();
            state.lifecycle = enabled;
            (state.loader.clone(), state.dom_content_loaded, state.loaded)
        };
        if enabled {
            self.event("Page.lifecycleEvent", lifecycle(&self.frame_id, &loader, "commit"));
            if dom {
                self.event("Page.lifecycleEvent", lifecycle(&self.frame_id, &loader, "DOMContentLoaded"));
            }
            if loaded {
                self.event("Page.lifecycleEvent", lifecycle(&self.frame_id, &loader, "load"));
                self.event("Page.lifecycleEvent", lifecycle(&self.frame_id, &loader, "networkAlmostIdle"));
                self.event("Page.lifecycleEvent", lifecycle(&self.frame_id, &loader, "networkIdle"));
            }
        }
        json!({})
    }

    /// A load the client asked for: its loader id, known before the load begins.
    pub(super) fn expect_load(&self) -> String {
        let loader = self.shared.fresh_id();
        self.state().pending_loader = Some(loader.clone());
        loader
    }

    fn on_signal(&self, signal: TabSignal) {
        match signal {
            TabSignal::LoadStarted { .. } => {
                let page_events = {
                    let mut state = self.state();
                    if state.pending_loader.is_none() {
                        state.pending_loader = Some(self.shared.fresh_id());
                    }
                    state.page_events
                };
                if page_events {
                    self.event("Page.frameStartedLoading", json!({ "frameId": self.frame_id }));
                }
            }
            TabSignal::Committed { .. } => self.committed(),
            TabSignal::DomContentLoaded => self.dom_content_loaded(),
            TabSignal::Loaded { .. } => {
                self.scan_network();
                let (dom, page_events, lifecycle_on, loader) = {
                    let mut state = self.state();
                    state.loaded = true;
                    (state.dom_content_loaded, state.page_events, state.lifecycle, state.loader.clone())
                };
                if !dom {
                    self.dom_content_loaded();
                }
                if page_events {
                    self.event("Page.loadEventFired", json!({ "timestamp": now_seconds() }));
                    if lifecycle_on {
                        self.event("Page.lifecycleEvent", lifecycle(&self.frame_id, &loader, "load"));
                    }
                    self.event("Page.frameStoppedLoading", json!({ "frameId": self.frame_id }));
                }
            }
            TabSignal::LoadFailed { .. } => {
                self.scan_network();
                let page_events = {
                    let mut state = self.state();
                    state.pending_loader = None;
                    state.page_events
                };
                if page_events {
                    self.event("Page.frameStoppedLoading", json!({ "frameId": self.frame_id }));
                }
            }
            TabSignal::SameDocument { url } => {
                if self.state().page_events {
                    self.event(
                        "Page.navigatedWithinDocument",
                        json!({ "frameId": self.frame_id, "url": url, "navigationType": "historyApi" }),
                    );
                }
            }
            TabSignal::Console { level, args, place } => self.console(level, args, place),
            TabSignal::PageError { message, stack, frame_url } => {
                if self.state().runtime {
                    let description = match stack {
                        Some(stack) if !stack.is_empty() => format!("{message}\n{stack}"),
                        _ => message.clone(),
                    };
                    self.event(
                        "Runtime.exceptionThrown",
                        json!({
                            "timestamp": now_seconds() * 1000.0,
                            "exceptionDetails": {
                                "exceptionId": 1, "text": "Uncaught", "lineNumber": 0, "columnNumber": 0, "url": frame_url,
                                "exception": { "type": "object", "subtype": "error", "className": "Error", "description": description },
                            },
                        }),
                    );
                }
            }
            TabSignal::Dialog { dialog_type, message, accepted, prompt_text, default_prompt } => {
                if self.state().page_events {
                    let (url, _) = self.tab.status.get();
                    self.event(
                        "Page.javascriptDialogOpening",
                        json!({
                            "url": url, "frameId": self.frame_id, "message": message, "type": dialog_type,
                            "hasBrowserHandler": true, "defaultPrompt": default_prompt.unwrap_or_default(),
                        }),
                    );
                    self.event(
                        "Page.javascriptDialogClosed",
                        json!({ "frameId": self.frame_id, "result": accepted, "userInput": prompt_text.unwrap_or_default() }),
                    );
                }
            }
            TabSignal::Crashed => self.event("Inspector.targetCrashed", json!({})),
            TabSignal::Binding { name, payload, world } => {
                let world = match world {
                    Some(world) => World::Named(world),
                    None => World::Page,
                };
                let context = {
                    let state = self.state();
                    let bound = state.bindings.iter().any(|(known, in_world)| known == &name && in_world == &world);
                    let context = state.contexts.iter().find(|context| context.world == world).map(|context| context.id);
                    context.filter(|_| bound && state.runtime)
                };
                if let Some(context) = context {
                    self.event("Runtime.bindingCalled", json!({ "name": name, "payload": payload, "executionContextId": context }));
                }
            }
            TabSignal::Title { .. } | TabSignal::Resized { .. } | TabSignal::Closed => {}
        }
    }

    /// A new document: old contexts go, `init` and `frameNavigated`, new contexts come.
    fn committed(&self) {
        self.scan_network();
        let (loader, contexts, runtime, page_events, lifecycle_on) = {
            let mut state = self.state();
            let loader = state.pending_loader.take().unwrap_or_else(|| self.shared.fresh_id());
            state.loader = loader.clone();
            state.dom_content_loaded = false;
            state.loaded = false;
            let mut contexts = vec![Context { id: self.shared.context_id(), world: World::Page }];
            for world in &state.worlds {
                contexts.push(Context { id: self.shared.context_id(), world: World::Named(world.clone()) });
            }
            state.contexts = contexts.clone();
            (loader, contexts, state.runtime, state.page_events, state.lifecycle)
        };
        if runtime {
            self.event("Runtime.executionContextsCleared", json!({}));
        }
        if page_events {
            if lifecycle_on {
                self.event("Page.lifecycleEvent", lifecycle(&self.frame_id, &loader, "init"));
            }
            self.event("Page.frameNavigated", json!({ "frame": self.frame(), "type": "Navigation" }));
        }
        if runtime {
            for context in &contexts {
                self.event("Runtime.executionContextCreated", self.describe_context(context));
            }
        }
        if page_events && lifecycle_on {
            self.event("Page.lifecycleEvent", lifecycle(&self.frame_id, &loader, "commit"));
        }
    }

    fn dom_content_loaded(&self) {
        let (page_events, lifecycle_on, loader) = {
            let mut state = self.state();
            if state.dom_content_loaded {
                return;
            }
            state.dom_content_loaded = true;
            (state.page_events, state.lifecycle, state.loader.clone())
        };
        if page_events {
            self.event("Page.domContentEventFired", json!({ "timestamp": now_seconds() }));
            if lifecycle_on {
                self.event("Page.lifecycleEvent", lifecycle(&self.frame_id, &loader, "DOMContentLoaded"));
            }
        }
    }

    fn console(&self, level: ConsoleLevel, args: Vec<Value>, place: ScriptPlace) {
        let (runtime, context) = {
            let state = self.state();
            (state.runtime, state.contexts[0].id)
        };
        if !runtime {
            return;
        }
        let kind = match level {
            ConsoleLevel::Log => "log",
            ConsoleLevel::Info => "info",
            ConsoleLevel::Warn => "warning",
            ConsoleLevel::Error => "error",
            ConsoleLevel::Debug => "debug",
        };
        let args: Vec<Value> = args.into_iter().map(remote_argument).collect();
        let frame = json!({
            "functionName": "", "scriptId": "0", "url": place.source.unwrap_or_default(),
            "lineNumber": place.line.unwrap_or(1).saturating_sub(1), "columnNumber": place.column.unwrap_or(1).saturating_sub(1),
        });
        self.event(
            "Runtime.consoleAPICalled",
            json!({
                "type": kind, "args": args, "executionContextId": context, "timestamp": now_seconds() * 1000.0,
                "stackTrace": { "callFrames": [frame] },
            }),
        );
    }
}

/// A console argument as a RemoteObject: JSON values by value, the rest described.
fn remote_argument(value: Value) -> Value {
    match value {
        Value::Null => json!({ "type": "object", "subtype": "null", "value": null }),
        Value::Bool(flag) => json!({ "type": "boolean", "value": flag, "description": flag.to_string() }),
        Value::Number(number) => json!({ "type": "number", "value": number, "description": number.to_string() }),
        Value::String(text) => json!({ "type": "string", "value": text }),
        Value::Object(described) => {
            let kind = described.get("type").and_then(Value::as_str).unwrap_or("object").to_string();
            let description = described.get("description").and_then(Value::as_str).unwrap_or("").to_string();
            match kind.as_str() {
                "undefined" => json!({ "type": "undefined" }),
                "function" | "symbol" | "bigint" => json!({ "type": kind, "description": description }),
                _ => json!({ "type": "object", "className": "Object", "description": description }),
            }
        }
        Value::Array(_) => json!({ "type": "object", "subtype": "array", "className": "Array", "description": "Array" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_arguments_become_remote_objects_puppeteer_can_print() {
        assert_eq!(remote_argument(json!("fixture loaded")), json!({ "type": "string", "value": "fixture loaded" }));
        assert_eq!(remote_argument(json!(42))["value"], 42);
        assert_eq!(remote_argument(json!({ "description": "{\"a\":1}", "type": "object" }))["description"], "{\"a\":1}");
        assert_eq!(remote_argument(json!({ "description": "undefined", "type": "undefined" })), json!({ "type": "undefined" }));
    }
}
