//! Downloads on WebKitGTK: every download of a context is caught at `download-started`,
//! attributed to the tab whose webview started it, and given a destination decided by
//! that session's [`Downloads`] (or cancelled). Without this WebKit would save into the
//! process's working directory or the user's XDG download folder: a page could write
//! files anywhere the daemon can.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Read;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use webkit2gtk::{DownloadExt, URIRequestExt, URIResponseExt, WebContextExt};

use crate::state::downloads::{DownloadStatus, Downloads};

/// Downloads still running, by id, so that the agent can cancel one.
#[derive(Default)]
pub(super) struct RunningDownloads {
    running: RefCell<HashMap<String, webkit2gtk::Download>>,
}

impl RunningDownloads {
    /// Cancels a running download; answers whether there was one.
    pub(super) fn cancel(&self, download_id: &str) -> bool {
        let download = self.running.borrow_mut().remove(download_id);
        match download {
            Some(download) => {
                download.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every running download of `downloads` (its session is closing).
    pub(super) fn cancel_all_of(&self, downloads: &Arc<Downloads>) {
        let ids: Vec<String> = self.running.borrow().keys().cloned().collect();
        for id in ids {
            if downloads.get(&id).is_some() {
                downloads.mark_canceled(&id, DownloadStatus::Canceled, Some("the session closed".into()));
                self.cancel(&id);
            }
        }
    }
}

/// Who started a download: the tab's id and its session's downloads.
pub(super) struct Origin {
    pub(super) tab: String,
    pub(super) downloads: Arc<Downloads>,
}

/// Catches every download of `context`. `origin_of` finds the tab of a webview; a
/// download no tab claims is cancelled.
pub(super) fn catch_downloads(
    context: &webkit2gtk::WebContext,
    running: Weak<RunningDownloads>,
    origin_of: impl Fn(&webkit2gtk::WebView) -> Option<Origin> + 'static,
) {
    context.connect_download_started(move |_context, download| {
        let origin = download.web_view().and_then(|view| origin_of(&view));
        let (Some(origin), Some(running)) = (origin, running.upgrade()) else {
            tracing::warn!("a download came from no known tab; cancelled");
            download.cancel();
            return;
        };
        follow(download, origin, &running);
    });
}

fn follow(download: &webkit2gtk::Download, origin: Origin, running: &Rc<RunningDownloads>) {
    let url = download.request().and_then(|request| request.uri()).map(|uri| uri.to_string()).unwrap_or_default();
    let downloads = origin.downloads;
    let id = downloads.begin(Some(&origin.tab), &url);
    download.set_allow_overwrite(false);
    running.running.borrow_mut().insert(id.clone(), download.clone());

    let (decide_downloads, decide_id) = (downloads.clone(), id.clone());
    download.connect_decide_destination(move |download, suggested| {
        let response = download.response();
        let mime_type = response.as_ref().and_then(|response| response.mime_type()).map(|mime| mime.to_string());
        let total = response.as_ref().map(|response| response.content_length()).filter(|length| *length > 0);
        match decide_downloads.decide(&decide_id, suggested, mime_type, total) {
            Some(path) => download.set_destination(&path.to_string_lossy()),
            None => download.cancel(),
        }
        true
    });

    let (received_downloads, received_id) = (downloads.clone(), id.clone());
    download.connect_received_data(move |download, length| {
        if !received_downloads.received(&received_id, length) {
            received_downloads.finish(&received_id, DownloadStatus::Failed, Some("quota".into()), None);
            download.cancel();
        }
    });

    let (failed_downloads, failed_id, failed_running) = (downloads.clone(), id.clone(), Rc::downgrade(running));
    download.connect_failed(move |_download, error| {
        let cancelled = error.matches(webkit2gtk::DownloadError::CancelledByUser);
        let status = if cancelled { DownloadStatus::Canceled } else { DownloadStatus::Failed };
        failed_downloads.finish(&failed_id, status, (!cancelled).then(|| error.message().to_string()), None);
        discard_partial(&failed_downloads, &failed_id);
        if let Some(running) = failed_running.upgrade() {
            running.running.borrow_mut().remove(&failed_id);
        }
    });

    let finished_running = Rc::downgrade(running);
    download.connect_finished(move |_download| {
        if let Some(running) = finished_running.upgrade() {
            running.running.borrow_mut().remove(&id);
        }
        let Some(record) = downloads.get(&id) else { return };
        if record.status.is_final() {
            // Failed, cancelled or denied: `failed` has said so.
            discard_partial(&downloads, &id);
            return;
        }
        let Some(path) = record.saved_path else { return };
        // Hashing a large file would stall the main loop: done on a thread of its own.
        let (downloads, id) = (downloads.clone(), id.clone());
        std::thread::spawn(move || match sha256_of(std::path::Path::new(&path)) {
            Ok(hash) => {
                downloads.finish(&id, DownloadStatus::Completed, None, Some(hash));
            }
            Err(error) => {
                downloads.finish(&id, DownloadStatus::Failed, Some(format!("the saved file cannot be read: {error}")), None);
            }
        });
    });
}

/// Removes what a download that did not complete may have left.
fn discard_partial(downloads: &Downloads, download_id: &str) {
    if let Some(record) = downloads.get(download_id) {
        if record.status != DownloadStatus::Completed {
            if let Some(path) = record.saved_path {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

fn sha256_of(path: &std::path::Path) -> std::io::Result<String> {
    use sha2::Digest;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect())
}
