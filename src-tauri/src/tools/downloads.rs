//! Downloads (seed 001): `set_download_behavior` (accept into the session's `downloads/` or
//! another directory, or deny), `list_downloads` and `cancel_download`. A page never
//! chooses where a file goes; see `state/downloads.rs`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::limits::LIST_DOWNLOADS_LIMIT;
use super::{Tool, ToolContext};
use crate::engine::SessionRequest;
use crate::error::{Error, ErrorCode, Result};
use crate::state::downloads::{DownloadBehavior, DownloadPolicy, DownloadRecord, DownloadStatus};

/// Input of `set_download_behavior`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetDownloadBehaviorInput {
    /// `accept` (save downloads) or `deny` (refuse them; recorded as `denied`).
    behavior: DownloadBehavior,
    /// With accept: an existing writable directory to save into, as an absolute path
    /// (default: the session's own `downloads/`).
    #[serde(default)]
    download_path: Option<String>,
    /// Record downloads in the session's events (default true); they are listed either way.
    #[serde(default)]
    events_enabled: Option<bool>,
}

/// Input of `list_downloads`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListDownloadsInput {
    /// How many, newest first (1-100, default 20).
    #[serde(default, with = "super::numbers::Lenient")]
    limit: Option<usize>,
    /// Only the downloads this open tab started.
    #[serde(default)]
    tab: Option<String>,
}

/// Input of `cancel_download`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CancelDownloadInput {
    /// The download, from `list_downloads` or an action's `downloads`.
    download_id: String,
}

/// Output of `set_download_behavior`: the policy now in force.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DownloadBehaviorOutput {
    /// `session`: the policy holds for every tab of the session.
    scope: &'static str,
    /// `accept` or `deny`.
    behavior: DownloadBehavior,
    /// Where accepted downloads go.
    download_path: String,
    /// Whether downloads are recorded in the session's events.
    events_enabled: bool,
}

/// Output of `list_downloads`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ListDownloadsOutput {
    /// The downloads, newest first.
    downloads: Vec<DownloadRecord>,
}

/// Output of `cancel_download`: the download's record after the call.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CancelDownloadOutput {
    /// The record.
    #[serde(flatten)]
    record: DownloadRecord,
    /// true: it was running and is cancelled; false: it had already ended.
    canceled: bool,
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::session(
            "set_download_behavior",
            "Decide what happens to the session's downloads: accept (into the session's downloads/ directory, or download_path) or deny. Session-wide; answers the policy.",
            |context: ToolContext, input: SetDownloadBehaviorInput| async move {
                let downloads = &context.session.downloads;
                let path = match (input.behavior, input.download_path) {
                    (DownloadBehavior::Deny, Some(_)) => {
                        return Err(Error::bad_request("download_path goes with behavior accept only"));
                    }
                    (_, Some(path)) => {
                        // Never into the daemon's data directory (where the person's policy
                        // lives), the session's own directories aside.
                        let session_root = Some(context.session.dirs.root.as_path());
                        if context.sessions.policy().guards(std::path::Path::new(&path), session_root) {
                            return Err(Error::bad_request(format!(
                                "download_path {path} is inside the daemon's data directory: choose a directory of your own"
                            ))
                            .with_details(json!({ "download_path": path, "reason": "inside the data directory" })));
                        }
                        writable_directory(&path)?
                    }
                    (_, None) => downloads.default_dir.clone(),
                };
                // The agent's own choice from now on: a denial is its own, not the policy's.
                let events_enabled = input.events_enabled.unwrap_or(true);
                let policy = DownloadPolicy { behavior: input.behavior, path, events_enabled, refused_by: None };
                downloads.set_policy(policy.clone());
                Ok(DownloadBehaviorOutput {
                    scope: "session",
                    behavior: policy.behavior,
                    download_path: policy.path.display().to_string(),
                    events_enabled: policy.events_enabled,
                })
            },
        ),
        Tool::session(
            "list_downloads",
            "List the session's recent downloads, newest first. At most 100 are kept: id, tab, url, suggested and saved name, status (started, in_progress, completed, canceled, denied, failed), bytes, MIME type, sha256 when completed, times, error.",
            |context: ToolContext, input: ListDownloadsInput| async move {
                let limit = LIST_DOWNLOADS_LIMIT.count(input.limit, "limit")?;
                context.check_tab_filter(input.tab.as_deref())?;
                Ok(ListDownloadsOutput { downloads: context.session.downloads.list(limit, input.tab.as_deref()) })
            },
        ),
        Tool::session(
            "cancel_download",
            "Cancel a download in progress (no partial file is left). On a download that already ended it changes nothing and answers its record with canceled=false.",
            |context: ToolContext, input: CancelDownloadInput| async move {
                let session = &context.session;
                let Some((record, running)) =
                    session.downloads.mark_canceled(&input.download_id, DownloadStatus::Canceled, Some("canceled by the agent".into()))
                else {
                    return Err(Error::new(ErrorCode::NotFound, format!("no download {} in this session", input.download_id)));
                };
                if running {
                    session.engine.session::<bool>(&session.id, SessionRequest::CancelDownload { download_id: input.download_id }).await?;
                }
                Ok(CancelDownloadOutput { record, canceled: running })
            },
        ),
    ]
}

/// An existing directory the daemon can write into, given as an absolute path.
fn writable_directory(path: &str) -> Result<PathBuf> {
    let path = PathBuf::from(path);
    let refuse = |reason: &str| {
        Error::bad_request(format!("download_path {} {reason}", path.display()))
            .with_details(json!({ "download_path": path.display().to_string(), "reason": reason }))
    };
    if !path.is_absolute() {
        return Err(refuse("is not an absolute path"));
    }
    match std::fs::metadata(&path) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => return Err(refuse("is not a directory")),
        Err(_) => return Err(refuse("does not exist")),
    }
    // Writable for the daemon: a probe file, created and removed at once.
    let probe = path.join(format!(".malo-probe-{}", crate::secret::random_hex(4)));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(path)
        }
        Err(_) => Err(refuse("is not writable")),
    }
}
