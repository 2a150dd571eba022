//! Every kind of event a session's log holds, with its fields: the one list the engine,
//! the proxy and the tools push from, and the API document describes (a test keeps the
//! two equal).

use serde::Serialize;

/// Defines [`EventKind`] and [`EventKind::NAMES`] from one list, so that a kind cannot be
/// pushed without being listed.
macro_rules! event_kinds {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $name:literal { $($(#[$field_meta:meta])* $field:ident: $type:ty),* $(,)? }
    )*) => {
        /// What happened, with its fields (the event's `type` is the variant's name).
        #[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
        #[serde(tag = "type")]
        pub enum EventKind {
            $(
                $(#[$doc])*
                #[serde(rename = $name)]
                $variant { $($(#[$field_meta])* $field: $type),* },
            )*
        }

        impl EventKind {
            /// Every kind's `type`, in the list's order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// This event's `type`.
            pub fn name(&self) -> &'static str {
                match self {
                    $(EventKind::$variant { .. } => $name,)*
                }
            }
        }
    };
}

event_kinds! {
    /// The session opened.
    SessionCreated = "session_created" { name: String, width: u32, height: u32 }
    /// A tool call ended (never its input, which may hold secrets).
    Action = "action" {
        tool: String,
        ok: bool,
        duration_ms: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'static str>,
    }
    /// The main frame committed a new document.
    Navigation = "navigation" { url: String, http_status: Option<u16> }
    /// The main frame finished loading.
    Load = "load" { url: String, title: String }
    /// The main frame's load failed.
    LoadFailed = "load_failed" { url: String, net_error: String, net_error_description: String }
    /// The tab's web process died.
    Crash = "crash" { reason: String }
    /// A popup the policy refused.
    PopupBlocked = "popup_blocked" { url: String }
    /// A popup opened as a new tab (the event's `tab`).
    Popup = "popup" { opener: String, url: String }
    /// A tab closed.
    TabClosed = "tab_closed" { by: ClosedBy }
    /// A download began.
    DownloadStarted = "download_started" {
        download_id: String,
        url: String,
        suggested_filename: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        saved_path: Option<String>,
    }
    /// A download ended (completed, canceled, denied or failed).
    DownloadFinished = "download_finished" {
        download_id: String,
        status: DownloadStatus,
        url: String,
        suggested_filename: Option<String>,
        saved_path: Option<String>,
        received_bytes: u64,
        sha256: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// With `error: "blocked_by_policy"`, the person's rule that refused it.
        #[serde(skip_serializing_if = "Option::is_none")]
        policy_rule: Option<String>,
    }
    /// The page opened a file chooser (answered with armed files, or cancelled).
    FileChooser = "file_chooser" {
        multiple: bool,
        accept: Vec<String>,
        mime_types: Vec<String>,
        answered: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        file_count: Option<usize>,
    }
    /// A JavaScript dialog was answered.
    Dialog = "dialog" {
        dialog_type: &'static str,
        message: String,
        action: &'static str,
        policy: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        prompt_text: Option<String>,
    }
    /// A permission request was denied.
    PermissionDenied = "permission_denied" { permission: String }
    /// A navigation (or a load) to a URL pages may not open was refused.
    NavigationBlocked = "navigation_blocked" {
        url: String,
        reason: BlockReason,
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<String>,
        /// With `reason: "policy"`, the person's rule that refused the site.
        #[serde(skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
    }
    /// The policy asked a person to approve an action (or could not), and what came of it.
    Approval = "approval" {
        action: &'static str,
        rule: String,
        site: String,
        answer: ApprovalAnswer,
    }
    /// A native drag began offscreen and was cancelled.
    NativeDragCancelled = "native_drag_cancelled" {}
    /// The takeover window was shown or hidden.
    Watch = "watch" {
        shown: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        focus: Option<bool>,
    }
    /// A person handed the session back.
    WatchDone = "watch_done" {}
    /// `login {mode: "watch"}` waits for a person.
    LoginWaiting = "login_waiting" {
        mode: &'static str,
        url: String,
        /// The live view's link, when the person comes through it (no display).
        #[serde(skip_serializing_if = "Option::is_none")]
        live_url: Option<String>,
    }
}

/// Who closed a tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClosedBy {
    /// The page (`window.close()`).
    Page,
    /// The agent (`tab_close`).
    Agent,
}

/// Why a navigation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockReason {
    /// A page or frame navigation to a scheme pages may not open.
    Scheme,
    /// WebKit refused a file: or engine URL.
    LocalResource,
    /// A server redirected to such a URL.
    Redirect,
    /// The person's policy keeps pages of this session off the site.
    Policy,
}

/// What came of asking a person to approve an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Allowed, this once.
    AllowedOnce,
    /// Allowed for the rest of the lease.
    AllowedForLease,
    /// Not asked: allowed for this lease earlier.
    AllowedEarlierInLease,
    /// The person said no.
    Denied,
    /// Nobody answered in time.
    TimedOut,
    /// There was no way to reach a person.
    Unreachable,
}

/// Where a download stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DownloadStatus {
    /// Announced; the response has not arrived yet.
    Started,
    /// Bytes are arriving.
    InProgress,
    /// Saved whole.
    Completed,
    /// Cancelled by the agent (no file left).
    Canceled,
    /// Refused by the policy (no file written).
    Denied,
    /// Failed (network, disk, quota); no partial file left.
    Failed,
}

impl DownloadStatus {
    /// Whether the download is over.
    pub fn is_final(self) -> bool {
        !matches!(self, DownloadStatus::Started | DownloadStatus::InProgress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_document_lists_exactly_the_event_kinds() {
        let document = include_str!("../../../../docs/API.md");
        let table = &document[document.find("## Event types").expect("docs/API.md has an event type table")..];
        let listed: Vec<&str> = table
            .lines()
            .skip_while(|line| !line.starts_with("| `"))
            .take_while(|line| line.starts_with("| `"))
            .map(|line| line.trim_start_matches("| `").split('`').next().unwrap_or_default())
            .collect();
        assert_eq!(listed, EventKind::NAMES, "docs/API.md's event types and EventKind differ");
    }

    #[test]
    fn events_serialize_with_their_type_beside_their_fields() {
        let event = EventKind::Navigation { url: "http://a/".into(), http_status: None };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            serde_json::json!({ "type": "navigation", "url": "http://a/", "http_status": null })
        );
        assert_eq!(event.name(), "navigation");
        let closed = EventKind::TabClosed { by: ClosedBy::Page };
        assert_eq!(serde_json::to_value(&closed).unwrap(), serde_json::json!({ "type": "tab_closed", "by": "page" }));
    }
}
