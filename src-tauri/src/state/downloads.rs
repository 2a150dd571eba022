//! A session's downloads, as both sides see them: the policy the agent set (accept into a
//! directory, or deny), the records of recent downloads, and the byte budget. The engine
//! writes records from the main thread as WebKit reports progress; tools read them.
//!
//! Invariant: a page never chooses where a file goes. Every destination is a fresh,
//! sanitised name inside the policy's directory (the session's `downloads/` unless the
//! agent chose another), never overwriting a file.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::events::{EventKind, EventLog};

/// How many download records a session keeps (newest first when listed).
pub const MAX_DOWNLOAD_RECORDS: usize = 100;

/// Longest file name (in bytes) a download is saved under.
const MAX_FILE_NAME_BYTES: usize = 200;
/// How long a download announced by the tab's response policy may take to begin before
/// nobody waits for it (WebKit decided it is one).
pub const DECIDED_DOWNLOAD: Duration = Duration::from_secs(15);
/// How long a download a click on a `download` link promises may take to begin (the link
/// may still navigate instead, for a cross-origin URL).
pub const LINK_DOWNLOAD: Duration = Duration::from_secs(2);

/// What a download the person's policy refused says failed it.
pub const BLOCKED_BY_POLICY: &str = "blocked_by_policy";

/// Accept downloads into a directory, or deny them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DownloadBehavior {
    /// Save downloads.
    Accept,
    /// Refuse every download (recorded as `denied`).
    Deny,
}

/// The session's download policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadPolicy {
    /// Accept or deny.
    pub behavior: DownloadBehavior,
    /// Where accepted downloads go.
    pub path: PathBuf,
    /// Whether downloads are recorded in the session's events (they are listed either way).
    pub events_enabled: bool,
    /// The person's policy rule that keeps downloads refused, while the agent has not set a
    /// behavior of its own (a denied download then says `blocked_by_policy` and names it).
    pub refused_by: Option<String>,
}

pub use crate::events::DownloadStatus;

/// One download, as `list_downloads` answers it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DownloadRecord {
    /// `dl-<hex>`.
    pub download_id: String,
    /// The tab that started it, when known.
    pub tab: Option<String>,
    /// What was downloaded.
    pub url: String,
    /// The name the server (or the page) suggested, before sanitising.
    pub suggested_filename: Option<String>,
    /// Where it stands.
    pub status: DownloadStatus,
    /// Where it is (or was being) saved.
    pub saved_path: Option<String>,
    /// Bytes received so far.
    pub received_bytes: u64,
    /// `Content-Length`, when the server sent one.
    pub total_bytes: Option<u64>,
    /// The response's MIME type.
    pub mime_type: Option<String>,
    /// SHA-256 of the saved file (lowercase hex), once completed.
    pub sha256: Option<String>,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub finished_at: Option<String>,
    /// Why it failed or was denied (`quota`, a network error, `blocked_by_policy`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With `error: "blocked_by_policy"`, the person's rule that refused it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_rule: Option<String>,
    /// Its place among the session's downloads (1 for the first).
    #[serde(skip)]
    pub ordinal: u64,
}

/// A session's downloads: policy, records, budget. Shared by the engine and the tools.
#[derive(Debug)]
pub struct Downloads {
    /// The session's own `downloads/` directory (the default destination).
    pub default_dir: PathBuf,
    /// Bytes the session may download in all (`--max-download-bytes`).
    pub max_bytes: u64,
    events: Arc<EventLog>,
    // A std mutex: every critical section is a few field updates, never held across await.
    state: Mutex<DownloadsState>,
}

#[derive(Debug)]
struct DownloadsState {
    /// Downloads begun so far (each record's `ordinal` is its place in that count).
    begun: u64,
    policy: DownloadPolicy,
    records: VecDeque<DownloadRecord>,
    /// Destinations handed out and not finished yet, so two downloads of one name never
    /// get the same file.
    reserved: HashSet<PathBuf>,
    /// Bytes received by every download of the session.
    used_bytes: u64,
    /// Responses the engine has turned into downloads that WebKit has not started yet,
    /// by tab and when: an answer that names the download waits for these.
    /// Downloads on their way: the tab, and until when one is expected.
    announced: Vec<(String, Instant)>,
}

impl Downloads {
    /// Accepting into `default_dir`, with events on.
    pub fn new(default_dir: PathBuf, max_bytes: u64, events: Arc<EventLog>) -> Downloads {
        let policy =
            DownloadPolicy { behavior: DownloadBehavior::Accept, path: default_dir.clone(), events_enabled: true, refused_by: None };
        Downloads {
            default_dir,
            max_bytes,
            events,
            state: Mutex::new(DownloadsState {
                begun: 0,
                policy,
                records: VecDeque::new(),
                reserved: HashSet::new(),
                used_bytes: 0,
                announced: Vec::new(),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, DownloadsState> {
        self.state.lock().expect("downloads poisoned")
    }

    /// The current policy.
    pub fn policy(&self) -> DownloadPolicy {
        self.state().policy.clone()
    }

    /// Replaces the policy.
    pub fn set_policy(&self, policy: DownloadPolicy) {
        self.state().policy = policy;
    }

    /// Records a new download (status `started`) and answers its id.
    pub fn begin(&self, tab: Option<&str>, url: &str) -> String {
        let download_id = format!("dl-{}", crate::secret::random_hex(6));
        let mut state = self.state();
        state.begun += 1;
        if let Some(index) = state.announced.iter().position(|(announced, _)| Some(announced.as_str()) == tab) {
            state.announced.remove(index);
        }
        let record = DownloadRecord {
            ordinal: state.begun,
            download_id: download_id.clone(),
            tab: tab.map(str::to_string),
            url: url.to_string(),
            suggested_filename: None,
            status: DownloadStatus::Started,
            saved_path: None,
            received_bytes: 0,
            total_bytes: None,
            mime_type: None,
            sha256: None,
            started_at: crate::clock::now(),
            finished_at: None,
            error: None,
            policy_rule: None,
        };
        if state.records.len() == MAX_DOWNLOAD_RECORDS {
            // The oldest finished record goes first; a running one is never forgotten.
            let oldest_finished = state.records.iter().position(|record| record.status.is_final()).unwrap_or(0);
            state.records.remove(oldest_finished);
        }
        state.records.push_back(record);
        download_id
    }

    /// Decides where a download goes (or that it is denied): `None` when denied. The name
    /// is sanitised and made unique in the destination directory; it stays reserved until
    /// the download ends.
    pub fn decide(&self, download_id: &str, suggested: &str, mime_type: Option<String>, total_bytes: Option<u64>) -> Option<PathBuf> {
        let mut state = self.state();
        let policy = state.policy.clone();
        let destination = match policy.behavior {
            DownloadBehavior::Deny => None,
            DownloadBehavior::Accept => {
                let name = sanitize_file_name(suggested);
                let path = unique_path(&policy.path, &name, &state.reserved);
                state.reserved.insert(path.clone());
                Some(path)
            }
        };
        let (tab, url) = {
            let record = state.records.iter_mut().find(|record| record.download_id == download_id)?;
            record.suggested_filename = Some(suggested.to_string());
            record.mime_type = mime_type;
            record.total_bytes = total_bytes;
            match &destination {
                Some(path) => {
                    record.status = DownloadStatus::InProgress;
                    record.saved_path = Some(path.display().to_string());
                }
                None => {
                    record.status = DownloadStatus::Denied;
                    record.finished_at = Some(crate::clock::now());
                    if let Some(rule) = &policy.refused_by {
                        record.error = Some(BLOCKED_BY_POLICY.to_string());
                        record.policy_rule = Some(rule.clone());
                    }
                }
            }
            (record.tab.clone(), record.url.clone())
        };
        drop(state);
        if policy.events_enabled {
            let started = EventKind::DownloadStarted {
                download_id: download_id.to_string(),
                url,
                suggested_filename: Some(suggested.to_string()),
                saved_path: destination.as_ref().map(|path| path.display().to_string()),
            };
            self.events.push(tab.as_deref(), started);
            if destination.is_none() {
                self.finished_event(download_id);
            }
        }
        destination
    }

    /// Counts bytes received; answers false once the session's budget is exceeded (the
    /// download must then be cancelled and is failed with `quota`).
    pub fn received(&self, download_id: &str, bytes: u64) -> bool {
        let mut state = self.state();
        state.used_bytes = state.used_bytes.saturating_add(bytes);
        let within = state.used_bytes <= self.max_bytes;
        if let Some(record) = state.records.iter_mut().find(|record| record.download_id == download_id) {
            record.received_bytes = record.received_bytes.saturating_add(bytes);
        }
        within
    }

    /// Ends a download. A record that already ended keeps its first outcome (a denied or
    /// quota-failed download also reports WebKit's cancellation afterwards). Answers
    /// whether this call ended it.
    pub fn finish(&self, download_id: &str, status: DownloadStatus, error: Option<String>, sha256: Option<String>) -> bool {
        let mut state = self.state();
        let Some(record) = state.records.iter_mut().find(|record| record.download_id == download_id) else {
            return false;
        };
        if record.status.is_final() {
            return false;
        }
        record.status = status;
        record.error = error;
        record.sha256 = sha256;
        record.finished_at = Some(crate::clock::now());
        if status != DownloadStatus::Completed {
            // Nothing of a download that did not complete stays on disk.
            if let Some(path) = record.saved_path.as_deref() {
                let _ = std::fs::remove_file(path);
            }
        }
        let saved = record.saved_path.clone().map(PathBuf::from);
        if let Some(saved) = saved {
            state.reserved.remove(&saved);
        }
        let events_enabled = state.policy.events_enabled;
        drop(state);
        if events_enabled {
            self.finished_event(download_id);
        }
        true
    }

    fn finished_event(&self, download_id: &str) {
        let Some(record) = self.get(download_id) else { return };
        let finished = EventKind::DownloadFinished {
            download_id: record.download_id,
            status: record.status,
            url: record.url,
            suggested_filename: record.suggested_filename,
            saved_path: record.saved_path,
            received_bytes: record.received_bytes,
            sha256: record.sha256,
            error: record.error,
            policy_rule: record.policy_rule,
        };
        self.events.push(record.tab.as_deref(), finished);
    }

    /// Marks a running download as being cancelled by the agent (or the quota); the engine
    /// then cancels it. Answers the record, and whether it was still running.
    pub fn mark_canceled(&self, download_id: &str, status: DownloadStatus, error: Option<String>) -> Option<(DownloadRecord, bool)> {
        let running = !self.get(download_id)?.status.is_final();
        if running {
            self.finish(download_id, status, error, None);
        }
        self.get(download_id).map(|record| (record, running))
    }

    /// Notes that a download of `tab` is on its way (its response is becoming one, or a
    /// `download` link was clicked): WebKit starts it a moment later (a message from the
    /// network process away, longer on a busy machine); it is expected for `lifetime`.
    pub fn announce(&self, tab: &str, lifetime: Duration) {
        let mut state = self.state();
        let now = Instant::now();
        state.announced.retain(|(_, until)| *until > now);
        state.announced.push((tab.to_string(), now + lifetime));
    }

    /// Whether a download announced for `tab` has not begun yet (and may still).
    pub fn awaiting(&self, tab: &str) -> bool {
        let now = Instant::now();
        self.state().announced.iter().any(|(announced, until)| announced == tab && *until > now)
    }

    /// How many downloads have begun so far (a mark for [`Downloads::begun_since`]).
    pub fn begun(&self) -> u64 {
        self.state().begun
    }

    /// The downloads begun after `mark` (oldest first), of `tab` when given.
    pub fn begun_since(&self, mark: u64, tab: Option<&str>) -> Vec<DownloadRecord> {
        self.state()
            .records
            .iter()
            .filter(|record| record.ordinal > mark && tab.is_none_or(|tab| record.tab.as_deref() == Some(tab)))
            .cloned()
            .collect()
    }

    /// One record.
    pub fn get(&self, download_id: &str) -> Option<DownloadRecord> {
        self.state().records.iter().find(|record| record.download_id == download_id).cloned()
    }

    /// The newest `limit` records, newest first (only `tab`'s when given).
    pub fn list(&self, limit: usize, tab: Option<&str>) -> Vec<DownloadRecord> {
        self.state()
            .records
            .iter()
            .rev()
            .filter(|record| tab.is_none_or(|tab| record.tab.as_deref() == Some(tab)))
            .take(limit)
            .cloned()
            .collect()
    }
}

/// A file name a page cannot abuse: no path separators, no leading dot, no control
/// characters, bounded length; never empty.
pub fn sanitize_file_name(suggested: &str) -> String {
    let cleaned: String = suggested
        .chars()
        .map(|character| if matches!(character, '/' | '\\') || character.is_control() { '_' } else { character })
        .collect();
    let cleaned = cleaned.trim().trim_start_matches(['.', ' ']);
    let mut name = String::new();
    for character in cleaned.chars() {
        if name.len() + character.len_utf8() > MAX_FILE_NAME_BYTES {
            break;
        }
        name.push(character);
    }
    if name.is_empty() {
        "download".to_string()
    } else {
        name
    }
}

/// `dir/name`, or `dir/stem (n).ext` for the first n that neither exists nor is reserved.
fn unique_path(dir: &Path, name: &str, reserved: &HashSet<PathBuf>) -> PathBuf {
    let taken = |path: &Path| path.exists() || reserved.contains(path);
    let first = dir.join(name);
    if !taken(&first) {
        return first;
    }
    let (stem, extension) = match name.rfind('.') {
        Some(dot) if dot > 0 => (&name[..dot], &name[dot..]),
        _ => (name, ""),
    };
    (1..).map(|number| dir.join(format!("{stem} ({number}){extension}"))).find(|path| !taken(path)).expect("some suffix is free")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::SeqCounter;

    #[test]
    fn names_cannot_escape_or_hide() {
        assert_eq!(sanitize_file_name("report.txt"), "report.txt");
        assert_eq!(sanitize_file_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(sanitize_file_name("..\\evil.exe"), "_evil.exe");
        assert_eq!(sanitize_file_name(".bashrc"), "bashrc");
        assert_eq!(sanitize_file_name("a\u{0}b\nc"), "a_b_c");
        assert_eq!(sanitize_file_name("..."), "download");
        assert_eq!(sanitize_file_name(""), "download");
        assert!(sanitize_file_name(&"x".repeat(1000)).len() <= MAX_FILE_NAME_BYTES);
    }

    #[test]
    fn an_announced_download_is_awaited_until_its_tab_begins_one() {
        let downloads = Downloads::new(std::env::temp_dir(), 1 << 20, Arc::new(EventLog::new(Arc::new(SeqCounter::default()))));
        assert!(!downloads.awaiting("ab12"));
        downloads.announce("ab12", DECIDED_DOWNLOAD);
        assert!(downloads.awaiting("ab12"));
        assert!(!downloads.awaiting("cd34"), "another tab waits for nothing");
        downloads.begin(Some("cd34"), "http://x/other.bin");
        assert!(downloads.awaiting("ab12"), "another tab's download is not this one");
        downloads.begin(Some("ab12"), "http://x/data.bin");
        assert!(!downloads.awaiting("ab12"));
        // A promise that is not kept expires.
        downloads.announce("ab12", Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(5));
        assert!(!downloads.awaiting("ab12"));
    }

    #[test]
    fn destinations_are_unique_and_never_overwrite() {
        let dir = std::env::temp_dir().join(format!("malo-downloads-test-{}", crate::secret::random_hex(4)));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("report.txt"), "there").unwrap();
        let downloads = Downloads::new(dir.clone(), 1 << 20, Arc::new(EventLog::new(Arc::new(SeqCounter::default()))));
        let first = downloads.begin(Some("ab12"), "http://x/report.txt");
        let second = downloads.begin(Some("ab12"), "http://x/report.txt");
        let one = downloads.decide(&first, "report.txt", None, None).unwrap();
        let two = downloads.decide(&second, "report.txt", None, None).unwrap();
        assert_eq!(one, dir.join("report (1).txt"));
        assert_eq!(two, dir.join("report (2).txt"));
        assert!(downloads.finish(&first, DownloadStatus::Completed, None, Some("00".into())));
        assert!(!downloads.finish(&first, DownloadStatus::Failed, None, None), "the first outcome stays");
        assert_eq!(downloads.list(10, None)[0].download_id, second, "newest first");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn deny_and_quota() {
        let dir = std::env::temp_dir();
        let downloads = Downloads::new(dir.clone(), 10, Arc::new(EventLog::new(Arc::new(SeqCounter::default()))));
        downloads.set_policy(DownloadPolicy { behavior: DownloadBehavior::Deny, path: dir, events_enabled: true, refused_by: None });
        let denied = downloads.begin(None, "http://x/a");
        assert!(downloads.decide(&denied, "a", None, None).is_none());
        assert_eq!(downloads.get(&denied).unwrap().status, DownloadStatus::Denied);
        assert_eq!(downloads.get(&denied).unwrap().error, None, "the agent's own denial names no policy");
        let rule = "profiles.work.tools.downloads".to_string();
        downloads.set_policy(DownloadPolicy { refused_by: Some(rule.clone()), ..downloads.policy() });
        let refused = downloads.begin(None, "http://x/c");
        assert!(downloads.decide(&refused, "c", None, None).is_none());
        let record = downloads.get(&refused).unwrap();
        assert_eq!(
            (record.status, record.error, record.policy_rule),
            (DownloadStatus::Denied, Some("blocked_by_policy".into()), Some(rule))
        );
        let big = downloads.begin(None, "http://x/b");
        assert!(downloads.received(&big, 8));
        assert!(!downloads.received(&big, 8), "over the budget");
    }
}
