//! Logs to stderr and to `<data-dir>/logs/malo.log.<date>`. Filter with `MALO_LOG`
//! (default `info`). Tokens and secrets are never passed to a log macro.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter};

/// Installs the global subscriber. Keep the guard alive until exit so the file is flushed.
pub fn init(data_dir: &Path) -> std::io::Result<WorkerGuard> {
    let logs_dir = data_dir.join("logs");
    std::fs::create_dir_all(&logs_dir)?;
    let (file_writer, guard) = tracing_appender::non_blocking(tracing_appender::rolling::daily(&logs_dir, "malo.log"));
    let filter = EnvFilter::try_from_env("MALO_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt::layer().with_writer(std::io::stderr))
        .with(fmt::layer().with_ansi(false).with_writer(file_writer))
        .init();
    Ok(guard)
}
