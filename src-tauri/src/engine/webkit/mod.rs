//! The main-thread engine actor on WebKitGTK. It owns every session's offscreen host,
//! WebKit context and webviews, and serves [`Command`]s sent by [`super::EngineHandle`].
//!
//! Invariant: everything in this module runs on the GTK main thread (the actor is a
//! `spawn_local` future on the default main context), so nothing here is `Send`.

mod agent;
mod capture;
mod context;
mod download;
mod input;
mod navigation;
mod tab;
mod takeover;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use tokio::sync::mpsc::UnboundedReceiver;
use gtk::prelude::WidgetExt;
use webkit2gtk::WebViewExt;

use self::tab::Tab;
use super::{Command, SessionSpec, WatchChange};
use crate::error::{Error, ErrorCode, Result};

/// The named script world our scripts run in: it sees the DOM, not the page's globals.
pub(crate) const SCRIPT_WORLD: &str = "malo";

/// The GDK keyval of a DOM key name, if the key exists.
pub fn keyval(key: &str) -> Option<u32> {
    input::keyval(key)
}

/// Starts the actor on the default main context. Call once, on the main thread, after
/// GTK is initialised (Tauri's `setup`).
pub fn start(mut receiver: UnboundedReceiver<Command>) {
    let main_context = glib::MainContext::default();
    main_context.spawn_local(async move {
        let engine = Rc::new(Engine::default());
        while let Some(command) = receiver.recv().await {
            // Each command runs as its own local task, so a long navigate in one session
            // never delays another session's commands.
            glib::MainContext::default().spawn_local(engine.clone().handle(command));
        }
        engine.close_all();
    });
}

/// All hosted sessions, by id.
#[derive(Default)]
struct Engine {
    sessions: RefCell<HashMap<String, Rc<HostedSession>>>,
    /// One WebKit context per data directory: sessions of the same profile share theirs
    /// (cookies, storage, one network process); an anonymous session has its own.
    contexts: RefCell<HashMap<PathBuf, webkit2gtk::WebContext>>,
    /// Downloads in progress, for `cancel_download`.
    downloads: Rc<download::RunningDownloads>,
}

/// One session on the engine side: its WebKit context and the tabs that share it.
struct HostedSession {
    /// The data directory of its context.
    data_dir: PathBuf,
    /// Its downloads (policy, records).
    downloads: std::sync::Arc<crate::engine::downloads::Downloads>,
    tabs: RefCell<Vec<Rc<Tab>>>,
}

impl HostedSession {
    fn active_tab(&self) -> Result<Rc<Tab>> {
        self.tabs.borrow().first().cloned().ok_or_else(|| {
            Error::new(ErrorCode::EngineUnavailable, "the session has no open tab")
        })
    }

    fn close_tabs(&self) {
        for tab in self.tabs.borrow_mut().drain(..) {
            tab.close();
        }
    }
}

impl Engine {
    async fn handle(self: Rc<Self>, command: Command) {
        match command {
            Command::Open { spec, reply } => {
                let _ = reply.send(self.clone().open(spec).await);
            }
            Command::Close { session_id, reply } => {
                let _ = reply.send(self.close(&session_id));
            }
            Command::Navigate { session_id, url, timeout, settle, reply } => {
                let result = match self.active_tab(&session_id) {
                    Ok(tab) => navigation::navigate(&tab, &url, timeout, settle).await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::History { session_id, action, timeout, settle, reply } => {
                let result = match self.active_tab(&session_id) {
                    Ok(tab) => navigation::history(&tab, action, timeout, settle).await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::Evaluate { session_id, body, reply } => {
                let result = match self.active_tab(&session_id) {
                    Ok(tab) => tab.evaluate(&body).await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::Screenshot { session_id, reply } => {
                let result = match self.active_tab(&session_id) {
                    Ok(tab) => capture::viewport(&tab).await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::Agent { session_id, frame, op, args, reply } => {
                let result = match self.active_tab(&session_id) {
                    Ok(tab) => agent::call(&tab, &frame, op, &args).await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::Input { session_id, events, reply } => {
                let result = match self.active_tab(&session_id) {
                    Ok(tab) => async {
                        tab.ensure_open()?;
                        let mark = tab.load.borrow().started;
                        // The webview must hold focus inside its host before input arrives: a
                        // button press would otherwise take it, and WebKit would scroll the page
                        // to reveal the focused element between our locate and the click.
                        if !tab.view.is_focus() {
                            tab.view.grab_focus();
                        }
                        if !events.is_empty() {
                            tab.input_mark.set(tab.input_count().await);
                        }
                        input::deliver(&tab.view, &tab.buttons_held, &events)?;
                        Ok(mark)
                    }
                    .await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::Editing { session_id, command, argument, reply } => {
                let result = self.active_tab(&session_id).and_then(|tab| {
                    tab.ensure_open()?;
                    let mark = tab.load.borrow().started;
                    match argument {
                        Some(argument) => tab.view.execute_editing_command_with_argument(command, &argument),
                        None => tab.view.execute_editing_command(command),
                    }
                    Ok(mark)
                });
                let _ = reply.send(result);
            }
            Command::AfterAction { session_id, mark, budget, wait_frame, reply } => {
                let result = match self.active_tab(&session_id) {
                    Ok(tab) => navigation::after_action(&tab, mark, budget, wait_frame).await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::EvaluatePage { session_id, expression, reply } => {
                let result = match self.active_tab(&session_id) {
                    Ok(tab) => tab.evaluate_page(&expression).await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::SetDialogPolicy { session_id, policy, reply } => {
                let result = self.active_tab(&session_id).map(|tab| {
                    *tab.dialog_policy.borrow_mut() = policy;
                });
                let _ = reply.send(result);
            }
            Command::Watch { session_id, change, reply } => {
                let result = self.active_tab(&session_id).and_then(|tab| {
                    tab.ensure_open()?;
                    let mut answer = match change {
                        WatchChange::Show { title, focus, keep_visible } => takeover::show(&tab, &title, focus, keep_visible)?,
                        WatchChange::Hide => takeover::hide(&tab)?,
                        WatchChange::HandBack => takeover::hand_back(&tab)?,
                        WatchChange::Report => serde_json::json!({ "shown": tab.takeover.window.borrow().is_some() }),
                    };
                    answer["done_count"] = serde_json::json!(tab.takeover.done.get());
                    Ok(answer)
                });
                let _ = reply.send(result);
            }
            Command::CloseAll { reply } => {
                self.close_all();
                let _ = reply.send(());
            }
        }
    }

    /// Opens a session and returns once its first tab has loaded about:blank, so the
    /// session is ready for its first navigate.
    async fn open(self: Rc<Self>, spec: SessionSpec) -> Result<()> {
        if self.sessions.borrow().contains_key(&spec.session_id) {
            return Err(Error::internal(format!("session {} is already open", spec.session_id)));
        }
        std::fs::create_dir_all(&spec.web_data_dir).map_err(|error| {
            Error::internal(format!("cannot create the session's web data directory: {error}"))
        })?;
        let existing = self.contexts.borrow().get(&spec.web_data_dir).cloned();
        let context = existing.unwrap_or_else(|| {
            let context = context::persistent(&spec.web_data_dir);
            self.contexts.borrow_mut().insert(spec.web_data_dir.clone(), context.clone());
            // Every download of the context goes where its session's policy says, or nowhere.
            let engine = Rc::downgrade(&self);
            download::catch_downloads(&context, Rc::downgrade(&self.downloads), move |view| {
                let tab = engine.upgrade()?.tab_of_view(view)?;
                Some(download::Origin { tab: tab.id.clone(), downloads: tab.downloads.clone() })
            });
            context
        });
        let opened = Tab::open(&context, &spec, tab::first_tab_id());
        let tab = match opened {
            Ok(tab) => Rc::new(tab),
            Err(error) => {
                drop(context);
                self.release_context(&spec.web_data_dir);
                return Err(error);
            }
        };
        let session = HostedSession {
            data_dir: spec.web_data_dir.clone(),
            downloads: spec.downloads.clone(),
            tabs: RefCell::new(vec![tab.clone()]),
        };
        self.sessions.borrow_mut().insert(spec.session_id.clone(), Rc::new(session));
        if let Err(error) = tab.wait_until_idle(std::time::Duration::from_secs(10)).await {
            let _ = self.close(&spec.session_id);
            return Err(error);
        }
        tracing::debug!(session = %spec.session_id, "engine opened session");
        Ok(())
    }

    fn close(&self, session_id: &str) -> Result<()> {
        let session = self.sessions.borrow_mut().remove(session_id).ok_or_else(|| {
            Error::new(ErrorCode::SessionNotFound, format!("no session {session_id} in the engine"))
        })?;
        session.close_tabs();
        self.downloads.cancel_all_of(&session.downloads);
        self.release_context(&session.data_dir);
        tracing::debug!(session = %session_id, "engine closed session");
        Ok(())
    }

    /// Drops a context once no session uses it: its network process exits (and writes
    /// what it holds) as it goes.
    fn release_context(&self, data_dir: &std::path::Path) {
        let in_use = self.sessions.borrow().values().any(|session| session.data_dir == data_dir);
        if !in_use {
            let context = self.contexts.borrow_mut().remove(data_dir);
            drop(context);
        }
    }

    fn close_all(&self) {
        let sessions: Vec<_> = self.sessions.borrow_mut().drain().collect();
        for (_, session) in sessions {
            session.close_tabs();
            self.downloads.cancel_all_of(&session.downloads);
        }
        self.contexts.borrow_mut().clear();
    }

    /// The tab that hosts `view`, in whichever session.
    fn tab_of_view(&self, view: &webkit2gtk::WebView) -> Option<Rc<Tab>> {
        let sessions = self.sessions.borrow();
        sessions.values().find_map(|session| session.tabs.borrow().iter().find(|tab| &tab.view == view).cloned())
    }

    fn active_tab(&self, session_id: &str) -> Result<Rc<Tab>> {
        let session = self.sessions.borrow().get(session_id).cloned().ok_or_else(|| {
            Error::new(ErrorCode::SessionNotFound, format!("no session {session_id} in the engine"))
        })?;
        session.active_tab()
    }
}
