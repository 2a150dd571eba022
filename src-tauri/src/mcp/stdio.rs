//! `malo mcp`: an MCP server over stdio for one agent. It finds the daemon through
//! `<data-dir>/broker.json` (starting one in the background when none runs), takes a lease
//! named after the client, keeps it alive with heartbeats, and on the way out (stdin closed,
//! SIGINT, SIGTERM) closes its sessions and releases the lease.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use rmcp::ServiceExt;

use super::{HttpBackend, McpServer, SessionOptions};
use crate::error::{Error, Result};
use crate::tools::ToolRegistry;

/// `malo mcp` flags.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    /// The daemon's data directory (as `malo daemon --data-dir`).
    #[arg(long, default_value = crate::config::DEFAULT_DATA_DIR)]
    pub data_dir: String,
    /// The agent id of the lease (default: the MCP client's name and a random suffix).
    #[arg(long)]
    pub agent_id: Option<String>,
    /// Tool groups to list beyond the core set, comma-separated: network, files, state,
    /// vision, pdf, devtools, person, sessions, content, emulation, or all (default: `MALO_MCP_CAPS`, else
    /// none; `browser_enable_caps` adds more while connected).
    #[arg(long, value_name = "GROUPS")]
    pub caps: Option<String>,
    /// The sessions it opens: `--profile`, `--width`, `--height`.
    #[command(flatten)]
    pub sessions: SessionOptions,
}

/// Serves MCP on stdin/stdout until the client goes away.
pub fn run(args: McpArgs) -> Result<()> {
    let data_dir = crate::config::expand_home(&args.data_dir)?;
    let caps = super::caps::from_flag_or_environment(args.caps.as_deref())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| Error::internal(format!("cannot start the async runtime: {error}")))?;
    runtime.block_on(serve(args, data_dir, caps))
}

async fn serve(args: McpArgs, data_dir: PathBuf, caps: super::Caps) -> Result<()> {
    // The handshake is answered at once; the daemon is found (or started) meanwhile, and
    // the first tool call waits for it if it must.
    let backend = Arc::new(HttpBackend::starting(data_dir, args.agent_id.clone()));
    let server = McpServer::new(backend.clone(), ToolRegistry::standard().catalogue(), args.sessions).with_caps(caps);
    let service =
        server.serve(rmcp::transport::stdio()).await.map_err(|error| Error::internal(format!("MCP handshake failed: {error}")))?;
    let heartbeat = tokio::spawn(keep_lease_alive(backend.clone()));
    let cancel = service.cancellation_token();
    tokio::select! {
        _ = service.waiting() => {}
        _ = shutdown_signal() => cancel.cancel(),
    }
    heartbeat.abort();
    backend.close_all().await;
    if let (Some(lease), Ok(broker)) = (backend.held_lease(), backend.broker().await) {
        let _ = broker.call_async("DELETE", format!("/v1/leases/{}", lease.lease_id), None).await;
    }
    Ok(())
}

/// Renews the lease (once taken) at a third of its lifetime.
async fn keep_lease_alive(backend: Arc<HttpBackend>) {
    let mut interval = Duration::from_secs(1);
    loop {
        tokio::time::sleep(interval).await;
        let Some(lease) = backend.held_lease() else { continue };
        let Ok(broker) = backend.broker().await else { continue };
        if let Ok(renewed) = broker.call_async("POST", format!("/v1/leases/{}/heartbeat", lease.lease_id), None).await {
            interval = lifetime(renewed["expires_at"].as_str().unwrap_or(&lease.expires_at)) / 3;
            interval = interval.clamp(Duration::from_millis(300), Duration::from_secs(60));
        }
    }
}

/// Time from now until an API timestamp.
fn lifetime(expires_at: &str) -> Duration {
    let format = time::format_description::well_known::Rfc3339;
    time::OffsetDateTime::parse(expires_at, &format)
        .map(|expiry| (expiry - time::OffsetDateTime::now_utc()).max(time::Duration::ZERO))
        .map(|left| Duration::from_millis(left.whole_milliseconds() as u64))
        .unwrap_or(Duration::from_secs(60))
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut terminate), Ok(mut interrupt)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
}
