//! `malo daemon`: takes the data directory's lock, starts the broker on tokio threads,
//! runs the Tauri (GTK) main loop with the engine actor and the tray on the main thread,
//! and shuts everything down in order on Quit, SIGINT or SIGTERM.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tauri::RunEvent;
use tokio::sync::watch;

use crate::broker::instance::{BrokerInfo, InstanceError, InstanceLock};
use crate::broker::{Broker, LeaseServerSpawner};
use crate::config::{DaemonArgs, Settings};
use crate::engine::EngineHandle;
use crate::tools::ToolRegistry;

/// `MALO_PROXY=off` runs sessions without their proxy: a diagnostics switch for measuring
/// what the proxy costs (the benchmark uses it), not a product setting.
pub const NO_PROXY_ENV: &str = "MALO_PROXY";

/// Why the daemon could not start (or stopped with an error).
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// Bad flags.
    #[error("{0}")]
    Settings(#[from] crate::error::Error),
    /// Another daemon owns the data directory, or it is unusable.
    #[error(transparent)]
    Instance(#[from] InstanceError),
    /// The broker port cannot be bound.
    #[error("cannot listen on 127.0.0.1:{port}: {source} (is another program using it? pass --daemon-port)")]
    Bind {
        /// The port.
        port: u16,
        /// Why.
        source: std::io::Error,
    },
    /// File or runtime trouble.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The person's policy file exists and does not parse.
    #[error("the policy file does not parse: {0} (`malo policy check` explains it; fix or remove it)")]
    Policy(#[from] crate::policy::PolicyFileError),
    /// The session proxy's certificate authority could not be made or read.
    #[error("the session proxy cannot start: {0}")]
    Proxy(String),
    /// The GUI toolkit could not start (e.g. no display).
    #[error("the window system could not start: {0}")]
    Tauri(#[from] tauri::Error),
    /// There is no screen to draw on, or it cannot be opened.
    #[error("{0}")]
    Display(String),
    /// The engine started but could not open a page.
    #[error("{0}")]
    Engine(String),
    /// `--require-sandbox`, and web processes cannot run sandboxed here.
    #[error("--require-sandbox: web processes cannot run sandboxed: {0}")]
    Sandbox(String),
}

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> DaemonError {
    move |source| DaemonError::Io { what, source }
}

/// Runs the daemon until it is asked to quit.
pub fn run_daemon(args: DaemonArgs) -> Result<(), DaemonError> {
    // Before any thread allocates: how the allocator gives memory back (`memory.rs`).
    crate::memory::configure();
    let settings = Settings::from_args(&args)?;
    let lock = Arc::new(InstanceLock::acquire(&settings.data_dir)?);
    // A policy the person wrote and broke is not ignored: the daemon does not start on it.
    crate::policy::PolicyStore::check_at_start(&settings.data_dir)?;
    quiet_panics();
    // Whether web processes can run sandboxed: bwrap runs while the screen and GTK open.
    let mut sandbox_probe = crate::engine::sandbox::Probe::start();
    if args.require_sandbox || crate::engine::sandbox::required_by_env() {
        // Refused before anything starts, in one line.
        if let (crate::engine::sandbox::Verdict::Off(reason), _) = sandbox_probe.finish() {
            return Err(DaemonError::Sandbox(reason));
        }
    }
    // Before any thread starts: a private screen sets DISPLAY for GTK and the web processes.
    let screen = crate::display::choose().map_err(DaemonError::Display)?;
    let _log_guard = crate::logging::init(&settings.data_dir).map_err(io("cannot open the log directory"))?;
    tracing::info!("drawing on {}", screen.describe());
    #[cfg(target_os = "linux")]
    crate::engine::webkit::init_toolkit().map_err(DaemonError::Display)?;
    settle_sandbox(sandbox_probe);
    if let Some(stale) = lock.stale_broker_file() {
        tracing::warn!(pid = stale.pid, endpoint = %stale.endpoint, "replacing the broker.json of a daemon that is no longer running");
    }
    // Idle connections cost a descriptor each: take what the system allows, and ration it.
    crate::listen::raise_open_file_limit();
    // Leases and anonymous sessions never outlive a daemon: clear what a crash left.
    let _ = std::fs::remove_dir_all(settings.data_dir.join("leases"));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("malo-io")
        .enable_all()
        .build()
        .map_err(io("cannot start the async runtime"))?;
    tauri::async_runtime::set(runtime.handle().clone());

    let listener = {
        let _entered = runtime.enter();
        let listener = std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, settings.daemon_port)))
            .map_err(|source| DaemonError::Bind { port: settings.daemon_port, source })?;
        listener.set_nonblocking(true).map_err(io("cannot configure the broker socket"))?;
        tokio::net::TcpListener::from_std(listener).map_err(io("cannot configure the broker socket"))?
    };
    let port = listener.local_addr().map_err(io("cannot read the broker address"))?.port();

    let (engine, engine_commands) = EngineHandle::channel();
    let registry = Arc::new(ToolRegistry::standard());
    let lease_servers: LeaseServerSpawner = Arc::new(move |listener, lease, shutdown| {
        tokio::spawn(crate::http::serve(listener, crate::http::lease_router(lease, registry.clone()), shutdown))
    });
    // Every session's pages reach the web through a proxy; none may reach the daemon itself.
    let seq = Arc::new(crate::events::SeqCounter::default());
    let ports = Arc::new(crate::network::DaemonPorts::default());
    ports.add(port);
    let proxy = if std::env::var(NO_PROXY_ENV).is_ok_and(|value| value == "off") {
        // For measuring what the proxy costs: sessions then have no capture or interception.
        tracing::warn!("{NO_PROXY_ENV}=off: sessions run without their proxy (no capture, no interception, no port guard)");
        None
    } else {
        let services = crate::proxy::ProxyServices::new(&settings.data_dir, ports, seq.clone())
            .map_err(|error| DaemonError::Proxy(error.to_string()))?;
        Some(Arc::new(services))
    };
    let broker = Arc::new(Broker::new(settings.clone(), engine, lease_servers, seq, proxy));
    #[cfg(target_os = "linux")]
    let web_process_dir =
        crate::engine::webkit::install_web_process_extension(&settings.data_dir).map_err(io("cannot install the web-process extension"))?;
    let info =
        BrokerInfo { endpoint: format!("http://127.0.0.1:{port}"), token: broker.token.expose().to_string(), pid: std::process::id() };

    let (stop_servers, servers_stopped) = watch::channel(false);
    // Ready as soon as the broker can answer: the JSON line, broker.json and the broker's
    // port come before any web process has started (a cold start does not wait for one).
    // The engine's proof follows: a page opened, by the first agent's session or by a
    // probe of the daemon's own; if the engine cannot open one, the daemon ends with one
    // line saying why.
    let failure: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
    let announce = {
        let (broker, lock, failure, data_dir) = (broker.clone(), lock.clone(), failure.clone(), settings.data_dir.clone());
        move |handle: tauri::AppHandle| async move {
            let until_stopped = |mut receiver: watch::Receiver<bool>| async move {
                let _ = receiver.wait_for(|stopped| *stopped).await;
            };
            if let Err(error) = lock.write_broker_file(&info) {
                *failure.lock().expect("failure poisoned") = Some(format!("cannot write broker.json: {error}"));
                handle.exit(1);
                return;
            }
            tokio::spawn(crate::http::serve(
                listener,
                crate::http::broker_router(broker.clone(), port),
                until_stopped(servers_stopped.clone()),
            ));
            tokio::spawn(broker.clone().run_reaper(until_stopped(servers_stopped)));
            let line = serde_json::to_string(&info).expect("broker info serialises");
            {
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{line}").and_then(|()| stdout.flush());
            }
            tracing::info!(endpoint = %info.endpoint, pid = info.pid, data_dir = %data_dir.display(), "daemon started");
            if let Err(error) = broker.prove_engine().await {
                *failure.lock().expect("failure poisoned") = Some(format!("the browser engine cannot open a page: {}", error.message));
                handle.exit(1);
            }
        }
    };

    let app = tauri::Builder::default()
        .setup({
            let broker = broker.clone();
            move |app| {
                #[cfg(target_os = "macos")]
                app.set_activation_policy(tauri::ActivationPolicy::Accessory);
                #[cfg(target_os = "linux")]
                crate::engine::webkit::start(engine_commands, web_process_dir.clone());
                #[cfg(not(target_os = "linux"))]
                drop(engine_commands);
                let handle = app.handle().clone();
                let desktop_stopped = Arc::new(tokio::sync::Notify::new());
                let quit: Arc<dyn Fn() + Send + Sync> = Arc::new({
                    let (broker, handle, stop_servers, desktop_stopped) =
                        (broker.clone(), handle.clone(), stop_servers.clone(), desktop_stopped.clone());
                    move || {
                        let stopping = Stopping {
                            broker: broker.clone(),
                            handle: handle.clone(),
                            stop_servers: stop_servers.clone(),
                            desktop_stopped: desktop_stopped.clone(),
                        };
                        tauri::async_runtime::spawn(shut_down(stopping));
                    }
                });
                if crate::display::is_private() {
                    tracing::info!("no tray and no notifications: nobody sees a private screen");
                    desktop_stopped.notify_one();
                } else {
                    crate::desktop::install(&handle, broker.clone(), quit.clone(), desktop_stopped);
                }
                tauri::async_runtime::spawn(quit_on_signal(quit));
                tauri::async_runtime::spawn(announce(handle));
                Ok(())
            }
        })
        .build(tauri::generate_context!())?;
    // The app has no windows; keep it alive when none is open.
    let code = app.run_return(|_app, event| {
        if let RunEvent::ExitRequested { code: None, api, .. } = event {
            api.prevent_exit();
        }
    });

    lock.remove_broker_file();
    runtime.shutdown_timeout(Duration::from_secs(2));
    // Leases and anonymous sessions never outlive the daemon; a network process that was
    // still exiting may have written into a session directory after it was removed.
    // Under load that can happen just after this removal, so it is checked again (bounded).
    let leases_dir = settings.data_dir.join("leases");
    for _ in 0..20 {
        let _ = std::fs::remove_dir_all(&leases_dir);
        std::thread::sleep(Duration::from_millis(50));
        if !leases_dir.exists() {
            break;
        }
    }
    drop(screen);
    if let Some(reason) = failure.lock().expect("failure poisoned").take() {
        tracing::error!(%reason, "daemon could not start");
        return Err(DaemonError::Engine(reason));
    }
    tracing::info!(code, "daemon stopped");
    Ok(())
}

/// Takes the sandbox probe's answer (by now it has long finished: it ran while the screen
/// and GTK opened) for every context to come, and says it in one line.
fn settle_sandbox(mut probe: crate::engine::sandbox::Probe) {
    let (verdict, held_up) = probe.finish();
    let line = verdict.describe();
    if verdict == crate::engine::sandbox::Verdict::On {
        tracing::info!(waited_ms = held_up.as_millis() as u64, "{line}");
    } else {
        tracing::warn!(waited_ms = held_up.as_millis() as u64, "{line}");
    }
    crate::engine::sandbox::settle(verdict);
}

/// A panic is a bug: one line on stderr (the log has the rest), unless `MALO_LOG=debug`
/// asks for the full report.
fn quiet_panics() {
    if std::env::var("MALO_LOG").is_ok_and(|level| level.contains("debug") || level.contains("trace")) {
        return;
    }
    std::panic::set_hook(Box::new(|panic| {
        let place = panic.location().map(|location| format!(" at {}:{}", location.file(), location.line())).unwrap_or_default();
        let message = panic
            .payload()
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| panic.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tracing::error!(%message, %place, "internal error");
        eprintln!("malo: internal error{place}: {message} (MALO_LOG=debug shows more)");
    }));
}

/// Closes every session and lease, stops the servers, then ends the main loop.
/// What an orderly shutdown stops.
struct Stopping {
    broker: Arc<Broker>,
    handle: tauri::AppHandle,
    stop_servers: watch::Sender<bool>,
    /// Notified once the desktop has withdrawn its notifications.
    desktop_stopped: Arc<tokio::sync::Notify>,
}

async fn shut_down(stopping: Stopping) {
    tracing::info!("shutting down");
    stopping.broker.shut_down().await;
    // Nothing the daemon announced may outlive it.
    let _ = tokio::time::timeout(Duration::from_secs(3), stopping.desktop_stopped.notified()).await;
    let _ = stopping.stop_servers.send(true);
    stopping.handle.exit(0);
}

async fn quit_on_signal(quit: Arc<dyn Fn() + Send + Sync>) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut terminate), Ok(mut interrupt)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        tracing::warn!("cannot listen for SIGTERM/SIGINT");
        return;
    };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    quit();
}
