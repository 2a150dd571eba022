//! The person's policy: `<data-dir>/policy.toml`, written by the person and by nobody else
//! (no tool, API call, MCP call or CLI command writes it), with rules for anonymous
//! sessions and for each profile by name: which sites pages may reach (enforced by the
//! session proxy), which powerful tools the agent may use (`allow`, `deny`, or `ask` a
//! person), which vault credentials it may use, and whether a person is asked before a
//! profile opens.
//!
//! The rooms: `file.rs` reads and describes the file, `domains.rs` matches hosts,
//! `gate.rs` says which tool calls a rule concerns, `approval.rs` asks a person (through
//! whatever the desktop registers) and remembers "allow for this lease".
//!
//! Invariant: the store only reads the file; it is reread when it changes, and a file
//! that no longer parses leaves the last good policy in force (logged).

mod approval;
pub mod domains;
mod file;
pub mod gate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

pub use self::approval::{settle, Answer, Approvals, Asking, LeaseGrants, Person, Question};
pub use self::file::{describe, parse, read, PolicyFileError};

use self::domains::DomainPattern;

/// The policy's file name in the data directory.
pub const POLICY_FILE: &str = "policy.toml";

/// The `[profiles."*"]` table: every profile without a table of its own.
pub const ANY_PROFILE: &str = "*";

/// How often the store looks at the file's modification time, at most.
const RECHECK: Duration = Duration::from_millis(250);

/// The example policy the docs show (and the unit tests parse).
pub const EXAMPLE: &str = r#"# <data-dir>/policy.toml: what agents may do. Only you write this file.
# How long an agent's call waits for your answer to a question (default 60).
approval_timeout_seconds = 120

# Anonymous sessions: any site except these, and no response bodies without asking.
[anonymous]
block_domains = ["*.ads.example", "tracker.example"]
[anonymous.tools]
response_bodies = "ask"

# The "work" profile: only the company's sites, a person is asked before it opens
# (once per lease), no JavaScript from the agent, downloads need a person's yes.
[profiles.work]
open = "ask"
allow_domains = ["example.com", "*.example.com"]
credentials = ["work-sso"]
[profiles.work.tools]
evaluate = "deny"
export_har = "deny"
storage_state_export = "deny"
downloads = "ask"

# Every other profile.
[profiles."*"]
[profiles."*".tools]
storage_state_export = "ask"
"#;

/// What a rule says about an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The agent may.
    Allow,
    /// The agent may not (`E_POLICY_DENIED`).
    Deny,
    /// A person is asked each time (or once for the lease).
    Ask,
}

/// What a policy can gate, beside sites and credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Gated {
    /// `evaluate`: the agent's JavaScript in the page's own world.
    Evaluate,
    /// Interception rules (`add_intercept_rule`): answering or failing a page's requests.
    Intercept,
    /// Response-body capture (`network_capture`).
    ResponseBodies,
    /// `export_har`: the request log with captured bodies, as a file.
    ExportHar,
    /// `storage_state` export: cookies and storage, as data the agent holds.
    StorageStateExport,
    /// Saving downloads (`set_download_behavior {behavior: accept}`).
    Downloads,
    /// Handing files to a page (`set_file_input`).
    Uploads,
}

impl Gated {
    /// Every gated action, in the order descriptions list them.
    pub const ALL: [Gated; 7] = [
        Gated::Evaluate,
        Gated::Intercept,
        Gated::ResponseBodies,
        Gated::ExportHar,
        Gated::StorageStateExport,
        Gated::Downloads,
        Gated::Uploads,
    ];

    /// Its key in a `tools` table.
    pub fn key(self) -> &'static str {
        match self {
            Gated::Evaluate => "evaluate",
            Gated::Intercept => "intercept",
            Gated::ResponseBodies => "response_bodies",
            Gated::ExportHar => "export_har",
            Gated::StorageStateExport => "storage_state_export",
            Gated::Downloads => "downloads",
            Gated::Uploads => "uploads",
        }
    }

    /// What it lets the agent do, in plain words (for people).
    pub fn words(self) -> &'static str {
        match self {
            Gated::Evaluate => "run JavaScript in pages (evaluate)",
            Gated::Intercept => "intercept requests (interception rules)",
            Gated::ResponseBodies => "read response bodies (network_capture)",
            Gated::ExportHar => "export the request log as HAR (export_har)",
            Gated::StorageStateExport => "export cookies and storage (storage_state export)",
            Gated::Downloads => "save downloads",
            Gated::Uploads => "upload files to pages (set_file_input)",
        }
    }
}

/// The rules for one kind of session: anonymous ones, or one profile's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Where they are written (`anonymous`, `profiles.work`, `profiles."*"`), or `none`.
    pub scope: String,
    /// Only these sites (and nothing when empty); `None`: any site.
    pub allow_domains: Option<Vec<DomainPattern>>,
    /// Never these sites (they win over `allow_domains`).
    pub block_domains: Vec<DomainPattern>,
    /// Decisions for gated actions (absent: allowed).
    pub tools: BTreeMap<Gated, Decision>,
    /// Only these vault credentials (by name); `None`: any.
    pub credentials: Option<Vec<String>>,
    /// Whether a session may open with this profile.
    pub open: Decision,
    /// Set when no good policy was ever read: everything is refused, for this reason.
    pub locked: Option<String>,
}

impl Rules {
    /// No rules: everything allowed.
    fn none() -> Rules {
        Rules {
            scope: "none".into(),
            allow_domains: None,
            block_domains: Vec::new(),
            tools: BTreeMap::new(),
            credentials: None,
            open: Decision::Allow,
            locked: None,
        }
    }

    /// What the rules say about `gated`, and the rule that says it
    /// (`profiles.work.tools.evaluate`).
    pub fn tool(&self, gated: Gated) -> (Decision, String) {
        if let Some(reason) = &self.locked {
            return (Decision::Deny, reason.clone());
        }
        let decision = self.tools.get(&gated).copied().unwrap_or(Decision::Allow);
        (decision, format!("{}.tools.{}", self.scope, gated.key()))
    }

    /// The rule that refuses `host`, if one does (`profiles.work.allow_domains`,
    /// `anonymous.block_domains "*.ads.example"`).
    pub fn refuses_host(&self, host: &str) -> Option<String> {
        if let Some(reason) = &self.locked {
            return Some(reason.clone());
        }
        if let Some(pattern) = self.block_domains.iter().find(|pattern| pattern.matches(host)) {
            return Some(format!("{}.block_domains \"{pattern}\"", self.scope));
        }
        match &self.allow_domains {
            Some(allowed) if !allowed.iter().any(|pattern| pattern.matches(host)) => Some(format!("{}.allow_domains", self.scope)),
            _ => None,
        }
    }

    /// The rule that refuses the vault credential `name`, if one does.
    pub fn refuses_credential(&self, name: &str) -> Option<String> {
        if let Some(reason) = &self.locked {
            return Some(reason.clone());
        }
        match &self.credentials {
            Some(allowed) if !allowed.iter().any(|allowed| allowed == name) => Some(format!("{}.credentials", self.scope)),
            _ => None,
        }
    }

    /// What the rules say about opening the profile, and the rule that says it.
    pub fn opening(&self) -> (Decision, String) {
        if let Some(reason) = &self.locked {
            return (Decision::Deny, reason.clone());
        }
        (self.open, format!("{}.open", self.scope))
    }

    /// The rules as a session's summary shows them to its agent.
    pub fn summary(&self) -> PolicySummary {
        let written = |patterns: &[DomainPattern]| patterns.iter().map(ToString::to_string).collect::<Vec<_>>();
        PolicySummary {
            rules: self.scope.clone(),
            allow_domains: self.allow_domains.as_deref().map(written),
            block_domains: written(&self.block_domains),
            tools: Gated::ALL.iter().map(|gated| (gated.key(), self.tool(*gated).0)).collect(),
            credentials: self.credentials.clone(),
            locked: self.locked.clone(),
        }
    }
}

/// The person's policy, as the session summary shows it: what this session's agent may do.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PolicySummary {
    /// The table of `policy.toml` that applies (`anonymous`, `profiles.<name>`,
    /// `profiles."*"`), or `none`.
    pub rules: String,
    /// Pages may reach only these sites (null: any).
    pub allow_domains: Option<Vec<String>>,
    /// Pages may never reach these.
    pub block_domains: Vec<String>,
    /// Each gated action: `allow`, `deny` or `ask` (a person is asked).
    pub tools: BTreeMap<&'static str, Decision>,
    /// The vault credentials `login` may use (null: any, each on its own origin).
    pub credentials: Option<Vec<String>>,
    /// Set when the policy file could not be read when the daemon started: everything
    /// is refused until it is fixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked: Option<String>,
}

/// How long a call waits for a person by default (the file's `approval_timeout_seconds`).
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(60);

/// A whole policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// How long a call waits for a person's answer (a call's own shorter `timeout_ms` wins).
    pub approval_timeout: Duration,
    /// `[anonymous]`.
    pub anonymous: Option<Rules>,
    /// `[profiles.<name>]`.
    pub profiles: BTreeMap<String, Rules>,
    /// `[profiles."*"]`.
    pub any_profile: Option<Rules>,
}

impl Policy {
    /// The rules for a session of `profile` (`None`: anonymous).
    pub fn rules_for(&self, profile: Option<&str>) -> Rules {
        let found = match profile {
            None => self.anonymous.as_ref(),
            Some(name) => self.profiles.get(name).or(self.any_profile.as_ref()),
        };
        found.cloned().unwrap_or_else(Rules::none)
    }

    /// The policy in force when the file was broken from the start: everything refused.
    fn locked(error: &PolicyFileError) -> Policy {
        let rules = Rules { locked: Some(format!("policy.toml cannot be read ({error})")), ..Rules::none() };
        Policy { anonymous: Some(rules.clone()), any_profile: Some(rules), ..Policy::default() }
    }
}

impl Default for Policy {
    /// No file: nothing restricted.
    fn default() -> Policy {
        Policy { approval_timeout: DEFAULT_APPROVAL_TIMEOUT, anonymous: None, profiles: BTreeMap::new(), any_profile: None }
    }
}

/// What identifies a version of the file on disk.
type Stamp = (SystemTime, u64, u64);

fn stamp_of(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len(), metadata.ino()))
}

/// The daemon's policy: read at start, reread when the file changes (looked at no more
/// than every [`RECHECK`]), the last good one kept when a new version does not parse.
#[derive(Debug)]
pub struct PolicyStore {
    path: PathBuf,
    data_dir: PathBuf,
    // A std mutex: a stat and, rarely, a read of a small file; never held across an await.
    state: Mutex<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    policy: Arc<Policy>,
    stamp: Option<Stamp>,
    checked_at: Instant,
}

impl PolicyStore {
    /// The policy of `data_dir`. A file that does not parse refuses everything until it is
    /// fixed (the daemon refuses to start on one: see [`PolicyStore::check_at_start`]).
    pub fn new(data_dir: &Path) -> PolicyStore {
        let path = data_dir.join(POLICY_FILE);
        let stamp = stamp_of(&path);
        let policy = match read(&path) {
            Ok(policy) => policy.unwrap_or_default(),
            Err(error) => {
                tracing::error!(%error, "the policy file cannot be read: everything is refused until it is fixed");
                Policy::locked(&error)
            }
        };
        let state = Loaded { policy: Arc::new(policy), stamp, checked_at: Instant::now() };
        PolicyStore { path, data_dir: data_dir.to_path_buf(), state: Mutex::new(state) }
    }

    /// The file's error, if it exists and does not parse (the daemon does not start then).
    pub fn check_at_start(data_dir: &Path) -> Result<(), PolicyFileError> {
        read(&data_dir.join(POLICY_FILE)).map(drop)
    }

    /// The policy file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The policy in force now (rereading the file if it changed).
    pub fn current(&self) -> Arc<Policy> {
        let mut state = self.state.lock().expect("policy store poisoned");
        if state.checked_at.elapsed() >= RECHECK {
            state.checked_at = Instant::now();
            let stamp = stamp_of(&self.path);
            if stamp != state.stamp {
                state.stamp = stamp;
                match read(&self.path) {
                    Ok(policy) => {
                        let policy = policy.unwrap_or_default();
                        if *state.policy != policy {
                            tracing::info!(path = %self.path.display(), "policy reloaded");
                        }
                        state.policy = Arc::new(policy);
                    }
                    Err(error) => {
                        tracing::error!(%error, "the changed policy file does not parse: the last good policy stays in force");
                    }
                }
            }
        }
        state.policy.clone()
    }

    /// Whether `path` lies in the data directory that holds the policy (through any
    /// symlink or `..`): no tool may choose to write there (a session's own directories
    /// aside, which `within` names).
    pub fn guards(&self, path: &Path, within: Option<&Path>) -> bool {
        inside_data_dir(&self.data_dir, path, within)
    }
}

/// Whether `path` lies in `data_dir` (through any symlink or `..`), outside `within`.
pub fn inside_data_dir(data_dir: &Path, path: &Path, within: Option<&Path>) -> bool {
    let resolve = |path: &Path| -> PathBuf {
        // The nearest existing ancestor, resolved, with the rest appended.
        let mut existing = path.to_path_buf();
        let mut rest = Vec::new();
        while !existing.exists() {
            match (existing.file_name().map(|name| name.to_os_string()), existing.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    existing = parent.to_path_buf();
                }
                _ => break,
            }
        }
        let mut resolved = existing.canonicalize().unwrap_or(existing);
        for name in rest.into_iter().rev() {
            resolved.push(name);
        }
        resolved
    };
    let target = resolve(path);
    if within.is_some_and(|within| target.starts_with(resolve(within))) {
        return false;
    }
    target.starts_with(resolve(data_dir))
}

/// One session's view of the policy: the store and the profile it opened with.
#[derive(Debug, Clone)]
pub struct SessionPolicy {
    /// The daemon's policy.
    pub store: Arc<PolicyStore>,
    /// The session's profile (`None`: anonymous).
    pub profile: Option<String>,
}

impl SessionPolicy {
    /// The rules for this session now.
    pub fn rules(&self) -> Rules {
        self.store.current().rules_for(self.profile.as_deref())
    }

    /// The rule that refuses `url`'s host for this session's pages, if one does.
    pub fn refuses_url(&self, url: &str) -> Option<String> {
        let host = domains::host_of(url)?;
        let policy = self.store.current();
        let found = match self.profile.as_deref() {
            None => policy.anonymous.as_ref(),
            Some(name) => policy.profiles.get(name).or(policy.any_profile.as_ref()),
        };
        found?.refuses_host(&host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decision_table_follows_the_rules_and_defaults_to_allow() {
        let policy = parse(
            "[anonymous.tools]\nevaluate = \"deny\"\n[profiles.work]\nopen = \"ask\"\n[profiles.work.tools]\nuploads = \"ask\"\n",
            Path::new("p"),
        )
        .unwrap();
        let anonymous = policy.rules_for(None);
        assert_eq!(anonymous.tool(Gated::Evaluate), (Decision::Deny, "anonymous.tools.evaluate".into()));
        assert_eq!(anonymous.tool(Gated::Uploads).0, Decision::Allow);
        let work = policy.rules_for(Some("work"));
        assert_eq!(work.tool(Gated::Evaluate).0, Decision::Allow);
        assert_eq!(work.tool(Gated::Uploads), (Decision::Ask, "profiles.work.tools.uploads".into()));
        assert_eq!(work.opening(), (Decision::Ask, "profiles.work.open".into()));
        // A profile with no table (and no "*" table) has no rules.
        let other = policy.rules_for(Some("other"));
        assert_eq!((other.scope.as_str(), other.opening().0), ("none", Decision::Allow));
        let summary = serde_json::to_value(work.summary()).unwrap();
        assert_eq!(summary["tools"]["uploads"], "ask");
        assert_eq!(summary["tools"]["evaluate"], "allow");
        assert_eq!(summary["allow_domains"], serde_json::Value::Null);
    }

    #[test]
    fn blocked_domains_win_over_allowed_ones_and_name_their_rule() {
        let policy = parse(
            "[profiles.p]\nallow_domains = [\"*.example.com\", \"example.com\"]\nblock_domains = [\"secret.example.com\"]\ncredentials = [\"a\"]\n",
            Path::new("p"),
        )
        .unwrap();
        let rules = policy.rules_for(Some("p"));
        assert_eq!(rules.refuses_host("www.example.com"), None);
        assert_eq!(rules.refuses_host("example.com"), None);
        assert_eq!(rules.refuses_host("secret.example.com").as_deref(), Some("profiles.p.block_domains \"secret.example.com\""));
        assert_eq!(rules.refuses_host("example.org").as_deref(), Some("profiles.p.allow_domains"));
        assert_eq!(rules.refuses_credential("a"), None);
        assert_eq!(rules.refuses_credential("b").as_deref(), Some("profiles.p.credentials"));
        let empty = parse("[anonymous]\nallow_domains = []\n", Path::new("p")).unwrap();
        assert!(empty.rules_for(None).refuses_host("example.com").is_some());
    }

    #[test]
    fn a_broken_file_keeps_the_last_good_policy_and_a_file_broken_from_the_start_refuses_everything() {
        let dir = crate::testing::TempDir::new("policy");
        let path = dir.path().join(POLICY_FILE);
        std::fs::write(&path, "[anonymous.tools]\nevaluate = \"deny\"\n").unwrap();
        let store = PolicyStore::new(dir.path());
        assert_eq!(store.current().rules_for(None).tool(Gated::Evaluate).0, Decision::Deny);
        std::fs::write(&path, "[anonymous.tools]\nevaluate = \"nope\"\nextra = 1\n").unwrap();
        std::thread::sleep(RECHECK + Duration::from_millis(20));
        assert_eq!(store.current().rules_for(None).tool(Gated::Evaluate).0, Decision::Deny, "the last good policy stays");
        std::fs::write(&path, "[anonymous.tools]\nevaluate = \"ask\"\n").unwrap();
        std::thread::sleep(RECHECK + Duration::from_millis(20));
        assert_eq!(store.current().rules_for(None).tool(Gated::Evaluate).0, Decision::Ask, "a fixed file is read again");

        std::fs::write(&path, "[anonymous\n").unwrap();
        assert!(PolicyStore::check_at_start(dir.path()).is_err());
        let locked = PolicyStore::new(dir.path()).current().rules_for(Some("x"));
        assert_eq!(locked.tool(Gated::Uploads).0, Decision::Deny);
        assert!(locked.refuses_host("example.com").unwrap().contains("policy.toml cannot be read"));
    }

    #[test]
    fn the_policy_file_and_its_directory_are_guarded_through_links_and_dots() {
        let dir = crate::testing::TempDir::new("policy-guard");
        let data_dir = dir.path().join("data");
        std::fs::create_dir_all(data_dir.join("leases")).unwrap();
        let store = PolicyStore::new(&data_dir);
        assert!(store.guards(&data_dir.join("policy.toml"), None));
        assert!(store.guards(&data_dir.join("leases/../policy.toml"), None));
        assert!(store.guards(&data_dir, None));
        std::os::unix::fs::symlink(&data_dir, dir.path().join("link")).unwrap();
        assert!(store.guards(&dir.path().join("link/policy.toml"), None));
        assert!(store.guards(&dir.path().join("link"), None));
        let session = data_dir.join("leases/l/sessions/s");
        std::fs::create_dir_all(&session).unwrap();
        assert!(!store.guards(&session.join("downloads"), Some(&session)));
        assert!(store.guards(&session.join("../../../../policy.toml"), Some(&session)));
        assert!(store.guards(&data_dir.join("leases"), Some(&session)));
        assert!(!store.guards(&dir.path().join("elsewhere/policy.toml"), None));
    }
}
