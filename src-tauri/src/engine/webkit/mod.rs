//! The main-thread engine actor on WebKitGTK. It owns every session's WebKit context and
//! tabs (each a webview in its own offscreen host), and serves [`Command`]s sent by
//! [`super::EngineHandle`]: one match arm per request, each a call into the module that
//! does the work.
//!
//! Invariant: everything in this module runs on the GTK main thread (the actor is a
//! `spawn_local` future on the default main context), so nothing here is `Send`.

mod agent;
mod capture;
mod context;
mod devtools;
mod download;
mod emulation;
mod frames;
mod highlight;
mod identity;
mod input;
mod navigation;
mod print;
mod sandbox;
mod storage;
mod tab;
mod takeover;
mod toolbar;
mod web_process;
mod window;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::json;
use webkit2gtk::{URIRequestExt, WebViewExt};

use self::tab::Tab;
use super::main_thread::{self, MainThread, Timed};
use super::{Answer, Command, EngineQueue, Queued, SessionRequest, SessionSpec, TabAddress, TabRequest, WatchChange};
use crate::error::{Error, ErrorCode, Result};
use crate::events::{ClosedBy, EventKind};
use crate::state::downloads::Downloads;
use crate::state::{PopupPolicy, Tabs};

/// The named script world our scripts run in: it sees the DOM, not the page's globals.
pub(crate) const SCRIPT_WORLD: &str = "malo";

/// The WebKitGTK library this process runs with: `(major, minor, micro)`.
#[allow(unsafe_code)]
pub(crate) fn runtime_version() -> (u32, u32, u32) {
    // SAFETY: the three functions take no argument and only read constants of the loaded
    // library; they need no initialised GTK and no main thread.
    unsafe {
        (
            webkit2gtk::ffi::webkit_get_major_version(),
            webkit2gtk::ffi::webkit_get_minor_version(),
            webkit2gtk::ffi::webkit_get_micro_version(),
        )
    }
}

/// The GDK keyval of a DOM key name, if the key exists.
pub fn keyval(key: &crate::engine::keys::Key) -> Option<u32> {
    input::keyval(key)
}

/// Writes malo's web-process extension into `data_dir`; returns the directory to give
/// [`start`].
pub fn install_web_process_extension(data_dir: &std::path::Path) -> std::io::Result<PathBuf> {
    web_process::install(data_dir)
}

/// Opens the display for GTK; the error says which display could not be opened. Call on
/// the main thread before Tauri starts (Tauri's own start would panic instead).
pub fn init_toolkit() -> std::result::Result<(), String> {
    gtk::init().map_err(|_| {
        let wayland = std::env::var("WAYLAND_DISPLAY").unwrap_or_default();
        let display = std::env::var("DISPLAY").unwrap_or_default();
        let named = match (wayland.is_empty(), display.is_empty()) {
            (false, _) => format!("the Wayland display {wayland:?}"),
            (true, false) => format!("the X display {display}"),
            (true, true) => "a display".to_string(),
        };
        format!("cannot open {named}: is its X server or compositor running, and may this user connect to it?")
    })
}

/// Starts the actor on the default main context. Call once, on the main thread, after
/// GTK is initialised (Tauri's `setup`). `web_process_dir`: where malo's web-process
/// extension is installed.
pub fn start(queue: EngineQueue, web_process_dir: PathBuf) {
    let EngineQueue { mut receiver, main_thread } = queue;
    super::install_keyvals();
    MAIN_THREAD.with(|slot| *slot.borrow_mut() = Some(main_thread.clone()));
    heartbeat(main_thread.clone());
    identity::set_default_languages();
    let main_context = glib::MainContext::default();
    main_context.spawn_local(async move {
        let engine = Rc::new(Engine { web_process_dir, ..Engine::default() });
        while let Some(Queued { command, sent, ticket }) = receiver.recv().await {
            // Each command runs as its own local task, so a long navigate in one session
            // never delays another session's commands.
            let (engine, main_thread) = (engine.clone(), main_thread.clone());
            glib::MainContext::default().spawn_local(async move {
                if !ticket.start() {
                    // Its caller was answered E_BUSY already.
                    return;
                }
                main_thread.started(sent.elapsed());
                let kind = command.kind();
                Timed::new(engine.handle(command), kind, main_thread).await;
            });
        }
        engine.close_all();
    });
}

thread_local! {
    /// The main thread's figures, for the engine's own time limits.
    static MAIN_THREAD: RefCell<Option<Arc<MainThread>>> = const { RefCell::new(None) };
}

/// Ticks every [`main_thread::HEARTBEAT`] on the main thread; how late each tick fires is
/// how long the thread was held.
fn heartbeat(main_thread: Arc<MainThread>) {
    let due = std::cell::Cell::new(std::time::Instant::now() + main_thread::HEARTBEAT);
    glib::timeout_add_local(main_thread::HEARTBEAT, move || {
        let now = std::time::Instant::now();
        main_thread.beat(now.saturating_duration_since(due.get()));
        due.set(now + main_thread::HEARTBEAT);
        glib::ControlFlow::Continue
    });
}

/// Resolves once `limit` has passed in time the main thread was available to run the
/// engine (a stall of the whole thread does not count against a page), or three times
/// `limit` of wall time, whichever comes first.
pub(super) async fn engine_time(limit: std::time::Duration) {
    Deadline::after(limit).reached().await;
}

/// A time limit counted in time the main thread was available (see [`engine_time`]): a
/// page is not blamed for the machine being busy.
pub(super) struct Deadline {
    limit: std::time::Duration,
    begun: std::time::Instant,
    mark: Option<(Arc<MainThread>, crate::engine::main_thread::AvailabilityMark)>,
}

impl Deadline {
    pub(super) fn after(limit: std::time::Duration) -> Deadline {
        let mark = MAIN_THREAD.with(|slot| slot.borrow().clone()).map(|thread| {
            let mark = thread.mark();
            (thread, mark)
        });
        Deadline { limit, begun: std::time::Instant::now(), mark }
    }

    /// The time still left, `None` once the limit has passed.
    pub(super) fn left(&self) -> Option<std::time::Duration> {
        let wall = self.begun.elapsed();
        let available = match &self.mark {
            Some((thread, mark)) => thread.available_since(mark),
            None => wall,
        };
        (available < self.limit && wall < self.limit * 3).then(|| self.limit - available)
    }

    pub(super) fn passed(&self) -> bool {
        self.left().is_none()
    }

    /// Resolves once the limit has passed.
    pub(super) async fn reached(&self) {
        while let Some(left) = self.left() {
            glib::timeout_future(left.max(std::time::Duration::from_millis(10))).await;
        }
    }
}

/// All hosted sessions, by id.
#[derive(Default)]
struct Engine {
    sessions: RefCell<HashMap<String, Rc<HostedSession>>>,
    /// One WebKit context per data directory: sessions of the same profile share theirs
    /// (cookies, storage, one network process); an anonymous session has its own.
    contexts: RefCell<HashMap<PathBuf, context::Context>>,
    /// Downloads in progress, for `cancel_download`.
    downloads: Rc<download::RunningDownloads>,
    /// Where malo's web-process extension is (every context loads it).
    web_process_dir: PathBuf,
}

/// One session on the engine side: its WebKit context and the tabs that share it.
struct HostedSession {
    spec: SessionSpec,
    context: context::Context,
    /// What the session shows pages, as its tabs read it (grants change it later).
    identity: Rc<RefCell<crate::engine::identity::Identity>>,
    /// What the session emulates (media, user agent, HTTP credentials, its clipboard).
    emulation: Rc<emulation::SessionEmulation>,
    tabs: RefCell<Vec<Rc<Tab>>>,
}

impl HostedSession {
    fn tab(&self, id: &str) -> Result<Rc<Tab>> {
        self.tabs
            .borrow()
            .iter()
            .find(|tab| tab.id == id)
            .cloned()
            .ok_or_else(|| Error::new(ErrorCode::TabNotFound, format!("no tab {id:?} in this session; tab_list shows the open tabs")))
    }

    fn tabs(&self) -> &Arc<Tabs> {
        &self.spec.tabs
    }

    fn downloads(&self) -> &Arc<Downloads> {
        &self.spec.downloads
    }

    /// Closes one tab: its webview goes, and its id is free again.
    fn close_tab(&self, id: &str) -> Result<()> {
        let tab = self.tab(id)?;
        self.tabs.borrow_mut().retain(|open| open.id != id);
        close(&tab);
        self.tabs().remove(id);
        Ok(())
    }

    fn close_tabs(&self) {
        let tabs: Vec<Rc<Tab>> = self.tabs.borrow_mut().drain(..).collect();
        for tab in tabs {
            close(&tab);
            self.tabs().remove(&tab.id);
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
            Command::Session { session_id, request, reply } => {
                let result = match self.session(&session_id) {
                    Ok(session) => self.clone().session_request(&session, request).await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::Page { target, request, reply } => {
                let result = match self.tab(&target) {
                    Ok(tab) => page_request(&tab, request).await,
                    Err(error) => Err(error),
                };
                let _ = reply.send(result);
            }
            Command::CloseAll { reply } => {
                self.close_all();
                let _ = reply.send(());
            }
            Command::ShareCpus { served } => self.share_cpus(&served),
        }
    }

    /// Tells every page its part (`cpu_share`): served, yielding, or sharing all CPUs when
    /// none is served. A page a person sees is served.
    fn share_cpus(&self, served: &[TabAddress]) {
        for session in self.sessions.borrow().values() {
            for tab in session.tabs.borrow().iter() {
                let part = if served.is_empty() {
                    web_process::CpuPart::Share
                } else if tab.is_seen()
                    || served.iter().any(|address| address.session_id == session.spec.session_id && address.tab == tab.id)
                {
                    web_process::CpuPart::Served
                } else {
                    web_process::CpuPart::Yield
                };
                tab.tell_cpu_part(part);
            }
        }
    }

    async fn session_request(self: Rc<Self>, session: &Rc<HostedSession>, request: SessionRequest) -> Result<Answer> {
        Ok(match request {
            SessionRequest::NewTab => Answer::Tab(self.open_tab(session, None).await?.id.clone()),
            SessionRequest::CloseTab { tab } => {
                session.close_tab(&tab)?;
                Answer::Done
            }
            SessionRequest::CancelDownload { download_id } => Answer::Flag(self.downloads.cancel(&download_id)),
            SessionRequest::SetGeolocation(position) => {
                let shared =
                    self.sessions.borrow().values().any(|other| {
                        other.spec.session_id != session.spec.session_id && other.spec.web_data_dir == session.spec.web_data_dir
                    });
                if shared && session.context.position.get() != Some(position) {
                    return Err(crate::engine::identity::unsupported(
                        "geolocation",
                        "another open session shares this profile's WebKit context, which has one position",
                    ));
                }
                session.context.position.set(Some(position));
                Answer::Done
            }
            SessionRequest::GrantPermissions(grants) => {
                session.identity.borrow_mut().permissions.extend(grants);
                Answer::Done
            }
            SessionRequest::Storage(request) => storage::handle(&session.context, request).await?,
            SessionRequest::ScreenScale => Answer::Value(json!(identity::screen_scale_factor())),
            SessionRequest::Emulation(request) => session.emulation.handle(request)?,
        })
    }

    /// Opens a session's context (or joins its profile's) and its first tab, and returns
    /// once the tab has loaded about:blank, so the session is ready for its first navigate.
    async fn open(self: Rc<Self>, spec: SessionSpec) -> Result<()> {
        if self.sessions.borrow().contains_key(&spec.session_id) {
            return Err(Error::internal(format!("session {} is already open", spec.session_id)));
        }
        std::fs::create_dir_all(&spec.web_data_dir)
            .map_err(|error| Error::internal(format!("cannot create the session's web data directory: {error}")))?;
        self.check_identity(&spec)?;
        let existing = self.contexts.borrow().get(&spec.web_data_dir).cloned();
        if let Some(existing) = &existing {
            identity::check_shared_context(existing, &spec.identity)?;
        }
        identity::apply_process_wide(&spec.identity);
        let context = existing.unwrap_or_else(|| {
            let identity = &spec.identity;
            let context =
                context::persistent(&spec.web_data_dir, &self.web_process_dir, identity.timezone.as_deref(), identity.geolocation);
            if let Some(proxy) = &spec.proxy {
                context::use_proxy(&context.web, proxy);
            }
            self.contexts.borrow_mut().insert(spec.web_data_dir.clone(), context.clone());
            // Every download of the context goes where its session's policy says, or nowhere.
            let engine = Rc::downgrade(&self);
            download::catch_downloads(&context.web, Rc::downgrade(&self.downloads), move |view| {
                let tab = engine.upgrade()?.tab_of_view(view)?;
                Some(download::Origin { tab: tab.id.clone(), downloads: tab.downloads.clone() })
            });
            context
        });
        let session_id = spec.session_id.clone();
        let identity = Rc::new(RefCell::new(spec.identity.clone()));
        let emulation = emulation::SessionEmulation::new(&spec.identity);
        let session = Rc::new(HostedSession { spec, context, identity, emulation, tabs: RefCell::default() });
        self.sessions.borrow_mut().insert(session_id.clone(), session.clone());
        if let Err(error) = self.open_tab(&session, None).await {
            let _ = self.close(&session_id);
            return Err(error);
        }
        tracing::debug!(session = %session_id, "engine opened session");
        Ok(())
    }

    /// Opens a tab in `session` and waits until it has loaded about:blank. It becomes the
    /// selected tab.
    async fn open_tab(self: &Rc<Self>, session: &Rc<HostedSession>, opener: Option<&str>) -> Result<Rc<Tab>> {
        let state = session.tabs().open(opener, true);
        let tab = match Tab::open(&session.context, &session.spec, &session.identity, state.clone(), None, agent::tab_scripts()) {
            Ok(tab) => Rc::new(tab),
            Err(error) => {
                session.tabs().remove(&state.id);
                return Err(error);
            }
        };
        session.emulation.attach(&tab.view);
        session.tabs.borrow_mut().push(tab.clone());
        self.wire(session, &tab);
        if let Err(error) = tab.wait_until_idle(std::time::Duration::from_secs(10)).await {
            let _ = session.close_tab(&tab.id);
            return Err(error);
        }
        Ok(tab)
    }

    /// Connects what a tab's page may do to the session: open popups (as tabs, or not at
    /// all) and close itself.
    fn wire(self: &Rc<Self>, session: &Rc<HostedSession>, tab: &Rc<Tab>) {
        use gtk::prelude::Cast;
        let (engine, weak_session, opener, events) = (Rc::downgrade(self), Rc::downgrade(session), tab.id.clone(), tab.events.clone());
        tab.view.connect_create(move |view, action| {
            let url = action.request().and_then(|request| request.uri()).map(|uri| uri.to_string()).unwrap_or_default();
            let (Some(engine), Some(session)) = (engine.upgrade(), weak_session.upgrade()) else { return None };
            if session.tabs().popup_policy() == PopupPolicy::Deny {
                events.push(Some(&opener), EventKind::PopupBlocked { url });
                return None;
            }
            let popup = engine.open_popup(&session, view, &opener, &url)?;
            // The binding hands WebKit a full reference to the new view, which WebKit never
            // releases (C code returns the new widget's floating reference instead): give
            // it back once the signal has returned, or the view and its context leak (the
            // session's network process outlived it: measured).
            let returned = popup.view.clone();
            glib::idle_add_local_once(move || tab::release_reference(&returned));
            Some(popup.view.clone().upcast::<gtk::Widget>())
        });
        let (weak_session, tab_id, events) = (Rc::downgrade(session), tab.id.clone(), tab.events.clone());
        tab.view.connect_close(move |_view| {
            // window.close(): the page closes its own tab, once this signal has returned.
            let (weak_session, tab_id, events) = (weak_session.clone(), tab_id.clone(), events.clone());
            glib::idle_add_local_once(move || {
                if let Some(session) = weak_session.upgrade() {
                    if session.close_tab(&tab_id).is_ok() {
                        events.push(Some(&tab_id), EventKind::TabClosed { by: ClosedBy::Page });
                    }
                }
            });
        });
    }

    /// A popup as a new tab of the session, related to its opener (so `window.opener`
    /// works), not selected; WebKit loads its URL in it.
    fn open_popup(
        self: &Rc<Self>,
        session: &Rc<HostedSession>,
        opener_view: &webkit2gtk::WebView,
        opener: &str,
        url: &str,
    ) -> Option<Rc<Tab>> {
        let state = session.tabs().open(Some(opener), false);
        let tab =
            match Tab::open(&session.context, &session.spec, &session.identity, state.clone(), Some(opener_view), agent::tab_scripts()) {
                Ok(tab) => Rc::new(tab),
                Err(error) => {
                    tracing::warn!(%error, "could not open a popup as a tab");
                    session.tabs().remove(&state.id);
                    return None;
                }
            };
        session.emulation.attach(&tab.view);
        session.tabs.borrow_mut().push(tab.clone());
        self.wire(session, &tab);
        tab.events.push(Some(&tab.id), EventKind::Popup { opener: opener.to_string(), url: url.to_string() });
        Some(tab)
    }

    fn close(&self, session_id: &str) -> Result<()> {
        let session = self
            .sessions
            .borrow_mut()
            .remove(session_id)
            .ok_or_else(|| Error::new(ErrorCode::SessionNotFound, format!("no session {session_id} in the engine")))?;
        session.close_tabs();
        // A profile's context outlives this session when others use it: its traffic goes
        // through one of theirs now (this session's proxy closes with it).
        let heir = self.sessions.borrow().values().find(|other| other.spec.web_data_dir == session.spec.web_data_dir).cloned();
        if let (Some(heir), Some(proxy)) = (heir, session.spec.proxy.as_ref()) {
            if let Some(heir_proxy) = heir.spec.proxy.as_ref().filter(|heir_proxy| *heir_proxy != proxy) {
                context::use_proxy(&heir.context.web, heir_proxy);
            }
        }
        self.downloads.cancel_all_of(session.downloads());
        self.release_context(&session.spec.web_data_dir);
        let others: Vec<_> = self.sessions.borrow().values().map(|other| other.spec.identity.clone()).collect();
        identity::release_process_wide(&session.spec.identity, &others);
        tracing::debug!(session = %session_id, "engine closed session");
        Ok(())
    }

    /// Drops a context once no session uses it: its network process exits (and writes
    /// what it holds) as it goes.
    fn release_context(&self, data_dir: &std::path::Path) {
        let in_use = self.sessions.borrow().values().any(|session| session.spec.web_data_dir == data_dir);
        if !in_use {
            let context = self.contexts.borrow_mut().remove(data_dir);
            drop(context);
        }
    }

    fn close_all(&self) {
        let sessions: Vec<_> = self.sessions.borrow_mut().drain().collect();
        for (_, session) in sessions {
            session.close_tabs();
            self.downloads.cancel_all_of(session.downloads());
        }
        self.contexts.borrow_mut().clear();
    }

    /// Checks what `spec` asks of the engine against what it can give: fields WebKitGTK
    /// keeps per daemon must agree with every other live session's.
    fn check_identity(&self, spec: &SessionSpec) -> Result<()> {
        let sessions = self.sessions.borrow();
        let others: Vec<_> = sessions.values().map(|session| &session.spec.identity).collect();
        identity::check_process_wide(&spec.identity, &others)
    }

    /// The tab that hosts `view`, in whichever session.
    fn tab_of_view(&self, view: &webkit2gtk::WebView) -> Option<Rc<Tab>> {
        let sessions = self.sessions.borrow();
        sessions.values().find_map(|session| session.tabs.borrow().iter().find(|tab| &tab.view == view).cloned())
    }

    fn session(&self, session_id: &str) -> Result<Rc<HostedSession>> {
        self.sessions
            .borrow()
            .get(session_id)
            .cloned()
            .ok_or_else(|| Error::new(ErrorCode::SessionNotFound, format!("no session {session_id} in the engine")))
    }

    fn tab(&self, target: &TabAddress) -> Result<Rc<Tab>> {
        self.session(&target.session_id)?.tab(&target.tab)
    }
}

/// Closes a tab: its takeover window first (the page goes back to its host), then the
/// view and its host.
fn close(tab: &Tab) {
    frames::stop(tab);
    let _ = takeover::hide_window(tab);
    tab.close();
}

/// Carries out one request on one tab.
async fn page_request(tab: &Rc<Tab>, request: TabRequest) -> Result<Answer> {
    Ok(match request {
        TabRequest::Navigate { url, timeout, settle } => Answer::Navigation(navigation::navigate(tab, &url, timeout, settle).await?),
        TabRequest::History { action, timeout, settle } => Answer::Navigation(navigation::history(tab, action, timeout, settle).await?),
        TabRequest::Evaluate { body } => Answer::Value(tab.evaluate(&body).await?),
        TabRequest::EvaluatePage { expression } => Answer::Value(tab.evaluate_page(&expression).await?),
        TabRequest::Screenshot(what) => Answer::Frame(capture::capture(tab, what).await?),
        TabRequest::Agent { frame, op, args } => Answer::Value(agent::call(tab, &frame, op, &args).await?),
        TabRequest::Input { events } => Answer::Mark(tab.deliver_input(&events).await?),
        TabRequest::Editing { command } => Answer::Mark(tab.edit(command)?),
        TabRequest::AfterAction { mark, budget, wait_frame } => {
            Answer::Settle(navigation::after_action(tab, mark, budget, wait_frame).await?)
        }
        TabRequest::Watch(change) => Answer::Value(watch(tab, change)?),
        TabRequest::ArmFileChooser { files } => {
            tab.ensure_open()?;
            *tab.chooser.borrow_mut() = Some(files);
            Answer::Done
        }
        TabRequest::AwaitFileChooser { timeout } => Answer::Flag(tab.await_file_chooser(timeout).await),
        TabRequest::Devtools(request) => devtools::handle(tab, request).await?,
        TabRequest::Print(job) => {
            print::print(tab, job).await?;
            Answer::Done
        }
        TabRequest::Live(request) => frames::handle(tab, request)?,
        TabRequest::Highlight(request) => highlight::handle(tab, request)?,
    })
}

/// Shows, hides or reports the tab's takeover window; answers `{shown, done_count, ...}`.
fn watch(tab: &Rc<Tab>, change: WatchChange) -> Result<serde_json::Value> {
    tab.ensure_open()?;
    if matches!(change, WatchChange::Show { .. }) && crate::display::is_private() {
        return Err(Error::new(
            ErrorCode::NoDisplay,
            "no person can see this daemon's screen: it runs on a private X server because it was started without a display; \
             use watch {mode: \"live\"} for a live view in the person's own browser, or start the daemon in a desktop session \
             (DISPLAY or WAYLAND_DISPLAY set) to show a window",
        ));
    }
    let mut answer = match change {
        WatchChange::Show { title, focus, keep_visible } => takeover::show(tab, &title, focus, keep_visible)?,
        WatchChange::Hide => takeover::hide(tab)?,
        WatchChange::HandBack => takeover::hand_back(tab)?,
        WatchChange::Report => json!({ "shown": tab.takeover.window.borrow().is_some() }),
    };
    answer["done_count"] = json!(tab.takeover.done.get());
    Ok(answer)
}
