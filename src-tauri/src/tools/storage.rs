//! Cookies and storage in and out (issue #28): `cookies` (get, set, clear with every
//! attribute) and `storage_state` (export and import Playwright's `storageState` JSON,
//! inline or as a file: export writes a `.json` file of the session's `artifacts/`, the
//! folder every tool that takes a file name writes in; import reads one there, or any
//! readable file named by its absolute path, as `set_file_input` does, outside the
//! daemon's data directory). Input is read whole and checked before anything is applied
//! (`engine::storage_check`). Cookie values, httpOnly ones included, go only to
//! the caller's answer or file: the registry records a call's name and outcome, never its
//! input or result.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{LocalPath, Positional, Tool, ToolContext};
use crate::engine::storage::{self, Cookie, OriginStorage, StorageRequest, StorageState};
use crate::engine::storage_check::{self, refused};
use crate::engine::SessionRequest;
use crate::error::{Error, Result};

/// Largest storage state file read, in bytes.
const MAX_STATE_FILE: u64 = 16 << 20;

/// What `cookies` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CookiesAction {
    /// The session's cookies (those sent to `urls`, when given).
    Get,
    /// Add or replace `cookies`.
    Set,
    /// Delete every cookie (those sent to `urls`, when given).
    Clear,
}

/// A cookie to set, as Playwright's `addCookies` takes it (documentation only: the input is
/// read field by field so that a refusal names the field).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct CookieParam {
    /// Name.
    name: String,
    /// Value.
    value: String,
    /// `example.com` (that host only) or `.example.com` (with its subdomains); or give `url`.
    domain: Option<String>,
    /// Default `/`.
    path: Option<String>,
    /// Instead of domain and path: a host cookie of the URL's directory, secure on https.
    url: Option<String>,
    /// Unix seconds; -1 (default) for a session cookie.
    expires: Option<f64>,
    /// Default false.
    http_only: Option<bool>,
    /// Default false.
    secure: Option<bool>,
    /// `Strict`, `Lax` (default) or `None`.
    same_site: Option<storage::SameSite>,
}

/// Input of `cookies`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CookiesInput {
    /// `get`, `set` or `clear`.
    action: CookiesAction,
    /// get and clear: only the cookies a request of one of these http(s) URLs carries.
    #[serde(default)]
    urls: Option<Vec<String>>,
    /// set: the cookies (name, value, domain or url, path, expires, httpOnly, secure, sameSite).
    #[serde(default)]
    #[schemars(with = "Option<Vec<CookieParam>>")]
    cookies: Option<Value>,
}

/// Output of `cookies`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum CookiesOutput {
    /// get.
    Got {
        /// The cookies, as Playwright writes them.
        cookies: Vec<Cookie>,
    },
    /// set.
    Set {
        /// How many were set.
        set: usize,
    },
    /// clear.
    Cleared {
        /// How many were deleted.
        cleared: usize,
    },
}

/// What `storage_state` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StateAction {
    /// Answer (or write to `path`) the session's cookies and localStorage.
    Export,
    /// Add `state` (or the file `path`) to the session.
    Import,
}

/// Input of `storage_state`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StorageStateInput {
    /// `export` or `import`.
    action: StateAction,
    /// export: a plain file name ending in `.json` in the session's artifacts/, written
    /// (mode 0600, replacing it). import: the file to read, by its absolute path (a
    /// Playwright state file where it is), or a plain file name in artifacts/.
    #[serde(default)]
    path: Option<String>,
    /// import: the state itself, in Playwright's storageState format.
    #[serde(default)]
    #[schemars(with = "Option<StorageState>")]
    state: Option<Value>,
}

/// Output of `storage_state`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct StorageStateOutput {
    /// How many cookies were exported or imported.
    cookies: usize,
    /// How many origins' localStorage were exported or imported.
    origins: usize,
    /// The file written or read (absolute).
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// export without `path`: the state, in Playwright's storageState format.
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<StorageState>,
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::session(
            "cookies",
            "Get, set or clear the session's cookies, in Playwright's shape. A profile's sessions share theirs; the shape: {name, value, domain, path, expires (Unix seconds, -1 for session cookies), httpOnly, secure, sameSite Strict|Lax|None}. get and clear take urls to only touch the cookies those URLs receive; set takes cookies (domain and path, or url). A wrong cookie refuses the whole call, naming its field.",
            |context: ToolContext, input: CookiesInput| async move { cookies(&context, input).await },
        ),
        Tool::session(
            "storage_state",
            "Export or import cookies and localStorage as Playwright's storageState. The JSON is ({cookies, origins: [{origin, localStorage: [{name, value}]}]}): export answers it, or writes it to path (a .json name in the session's artifacts/); import adds state, or the file at path (absolute, or a name in artifacts/), to the session, checked whole first (a wrong field refuses everything, naming it).",
            |context: ToolContext, input: StorageStateInput| async move { storage_state(&context, input).await },
        )
        .positional(&[Positional::Field("action"), Positional::Field("path")])
        .local_paths(&[LocalPath { field: "path", when: Some(("action", "import")) }]),
    ]
}

async fn ask<T: crate::engine::FromAnswer>(context: &ToolContext, request: StorageRequest) -> Result<T> {
    let session = &context.session;
    session.engine.session(&session.id, SessionRequest::Storage(request)).await
}

async fn all_cookies(context: &ToolContext) -> Result<Vec<Cookie>> {
    let listed: Value = ask(context, StorageRequest::Cookies).await?;
    serde_json::from_value(listed).map_err(|error| Error::internal(format!("unreadable cookie list: {error}")))
}

/// The cookies of `all` that a request of one of `urls` carries (all of them without `urls`).
fn sent_to(all: Vec<Cookie>, urls: &Option<Vec<url::Url>>) -> Vec<Cookie> {
    match urls {
        None => all,
        Some(urls) => all.into_iter().filter(|cookie| urls.iter().any(|url| cookie.is_sent_to(url))).collect(),
    }
}

async fn cookies(context: &ToolContext, input: CookiesInput) -> Result<CookiesOutput> {
    let urls = input.urls.as_deref().map(|urls| storage_check::urls(urls, "urls")).transpose()?;
    match input.action {
        CookiesAction::Get | CookiesAction::Clear if input.cookies.is_some() => {
            Err(refused("cookies", "only set takes cookies (get and clear take urls)"))
        }
        CookiesAction::Get => Ok(CookiesOutput::Got { cookies: sent_to(all_cookies(context).await?, &urls) }),
        CookiesAction::Clear => {
            let all = all_cookies(context).await?;
            let count = all.len();
            let chosen = sent_to(all, &urls);
            let cleared = chosen.len();
            if urls.is_none() || cleared == count {
                ask::<()>(context, StorageRequest::ClearCookies).await?;
            } else if cleared > 0 {
                ask::<()>(context, StorageRequest::DeleteCookies(chosen)).await?;
            }
            Ok(CookiesOutput::Cleared { cleared })
        }
        CookiesAction::Set => {
            if urls.is_some() {
                return Err(refused("urls", "set takes cookies only (a cookie's own url field names its URL)"));
            }
            let given = input.cookies.ok_or_else(|| refused("cookies", "set needs cookies"))?;
            let cookies = storage_check::cookies(&given, "cookies")?;
            let set = cookies.len();
            ask::<()>(context, StorageRequest::AddCookies(cookies)).await?;
            Ok(CookiesOutput::Set { set })
        }
    }
}

async fn storage_state(context: &ToolContext, input: StorageStateInput) -> Result<StorageStateOutput> {
    let path = match input.action {
        StateAction::Export => input.path.as_deref().map(|name| state_file(context, name)).transpose()?,
        StateAction::Import => input.path.as_deref().map(|path| import_file(context, path)).transpose()?,
    };
    match input.action {
        StateAction::Export => {
            if input.state.is_some() {
                return Err(refused("state", "only import takes a state"));
            }
            let state = export(context).await?;
            let (cookies, origins) = (state.cookies.len(), state.origins.len());
            match path {
                Some(path) => {
                    let written = path.clone();
                    let json = serde_json::to_vec_pretty(&state).map_err(|error| Error::internal(error.to_string()))?;
                    tokio::task::spawn_blocking(move || write_private(&written, &json))
                        .await
                        .map_err(|error| Error::internal(error.to_string()))??;
                    Ok(StorageStateOutput { cookies, origins, path: Some(path.display().to_string()), state: None })
                }
                None => Ok(StorageStateOutput { cookies, origins, path: None, state: Some(state) }),
            }
        }
        StateAction::Import => {
            let state = match (path.as_ref(), input.state) {
                (Some(_), Some(_)) => return Err(refused("state", "give either state or path, not both")),
                (None, None) => return Err(refused("state", "import needs state (or path, the file to read)")),
                (None, Some(state)) => storage_check::state(&state, "state")?,
                (Some(path), None) => read_state_file(path.clone(), input.path.clone().unwrap_or_default()).await?,
            };
            let (cookies, origins) = (state.cookies.len(), state.origins.len());
            let session = &context.session;
            storage::import(&session.engine, &session.id, state).await?;
            Ok(StorageStateOutput { cookies, origins, path: path.map(|path| path.display().to_string()), state: None })
        }
    }
}

/// The session's cookies and the localStorage of every origin it knows of.
async fn export(context: &ToolContext) -> Result<StorageState> {
    let cookies = all_cookies(context).await?;
    let origins = super::storage_origins::known_origins(&context.session);
    let read: Value = ask(context, StorageRequest::ReadLocalStorage(origins)).await?;
    let origins: Vec<OriginStorage> =
        serde_json::from_value(read).map_err(|error| Error::internal(format!("unreadable localStorage: {error}")))?;
    Ok(StorageState { cookies, origins })
}

/// `name` in the session's artifacts/: a plain file name ending in `.json`.
fn state_file(context: &ToolContext, name: &str) -> Result<PathBuf> {
    super::artifacts::artifact_path(context, Some(name), "path", "storage-state", &["json"])
        .map_err(|error| refused("path", error.message.trim_start_matches("path: ")))
}

/// The file `import` reads: a plain name is a file of the session's artifacts/ (where
/// export writes); anything else is an absolute path, anywhere but the daemon's data
/// directory (the session's own directories aside: no session reads another's files).
fn import_file(context: &ToolContext, raw: &str) -> Result<PathBuf> {
    if !raw.contains('/') {
        return state_file(context, raw);
    }
    let path = Path::new(raw);
    if !path.is_absolute() {
        return Err(refused_path(
            raw,
            "not_absolute",
            format!("{raw} is not an absolute path (give one, or a plain file name in the session's artifacts/)"),
        ));
    }
    super::local_files::outside_data_dir(context, "path", raw)?;
    Ok(path.to_path_buf())
}

/// `E_BAD_REQUEST` for `path`: `details.field` is `path`, `details.reason` says why.
fn refused_path(raw: &str, reason: &str, message: String) -> Error {
    Error::bad_request(format!("path: {message}")).with_details(serde_json::json!({ "field": "path", "reason": reason, "path": raw }))
}

/// Reads and checks a state file (off the async threads); `E_BAD_REQUEST` naming `path`
/// (with `details.reason`) when it is missing, not a readable regular file, too large or
/// not JSON, or the wrong field inside it. `shown` is the path as the caller gave it.
async fn read_state_file(path: PathBuf, shown: String) -> Result<StorageState> {
    tokio::task::spawn_blocking(move || {
        let metadata = std::fs::metadata(&path).map_err(|_| refused_path(&shown, "not_found", format!("there is no file {shown}")))?;
        if !metadata.is_file() {
            return Err(refused_path(&shown, "not_a_file", format!("{shown} is not a regular file")));
        }
        let too_large =
            || refused_path(&shown, "too_large", format!("{shown} is larger than {} MiB: not a storage state", MAX_STATE_FILE >> 20));
        if metadata.len() > MAX_STATE_FILE {
            return Err(too_large());
        }
        let mut bytes = Vec::new();
        std::fs::File::open(&path)
            .and_then(|file| file.take(MAX_STATE_FILE + 1).read_to_end(&mut bytes))
            .map_err(|error| refused_path(&shown, "unreadable", format!("cannot read {shown}: {error}")))?;
        if bytes.len() as u64 > MAX_STATE_FILE {
            return Err(too_large());
        }
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|error| refused_path(&shown, "not_json", format!("{shown} is not JSON: {error}")))?;
        storage_check::state(&value, "")
    })
    .await
    .map_err(|error| Error::internal(error.to_string()))?
}

/// Writes `bytes` to `path`, readable by this user only.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|error| Error::internal(format!("cannot write the storage state: {error}")))?;
    file.write_all(bytes).map_err(|error| Error::internal(format!("cannot write the storage state: {error}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::session::{CreateSession, Owner, Session, SessionLimits, SessionServices, SessionTable};
    use crate::testing::TempDir;
    use crate::tools::ToolRegistry;

    /// A session over the fake engine (which keeps cookies and localStorage), and its table.
    struct Fixture {
        sessions: std::sync::Arc<SessionTable>,
        session: std::sync::Arc<Session>,
        registry: std::sync::Arc<ToolRegistry>,
        _dir: TempDir,
    }

    async fn fake_session() -> Fixture {
        let dir = TempDir::new("malo-storage-tests");
        let services = SessionServices::new(crate::engine::fake::fake_engine(), Default::default(), Default::default(), dir.path(), None);
        let owner = Owner { lease_id: "lease-test".into(), agent_id: "agent".into(), lease_dir: dir.path().join("lease"), port: 0 };
        let sessions = std::sync::Arc::new(SessionTable::new(owner, SessionLimits { max_sessions: 2, max_download_bytes: 1 }, services));
        let session = sessions.create(CreateSession::default()).await.unwrap();
        Fixture { sessions, session, registry: std::sync::Arc::new(ToolRegistry::standard()), _dir: dir }
    }

    async fn call_session_tool(fixture: &Fixture, tool: &str, input: Value) -> Result<Value> {
        let context = ToolContext::new(fixture.session.clone(), fixture.sessions.clone(), fixture.registry.clone());
        fixture.registry.call(tool, context, input).await.map(|output| output.result)
    }

    const STATE: &str = r#"{"cookies": [
        {"name": "sid", "value": "s-1", "domain": "127.0.0.1", "path": "/", "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"},
        {"name": "admin", "value": "a-1", "domain": "127.0.0.1", "path": "/admin", "expires": 1893456000, "httpOnly": false, "secure": true, "sameSite": "Strict"}
    ], "origins": [{"origin": "http://127.0.0.1:8080", "localStorage": [{"name": "greeting", "value": "hi"}]}]}"#;

    #[tokio::test]
    async fn a_state_imports_whole_and_exports_as_it_came_in() {
        let fixture = fake_session().await;
        let state: Value = serde_json::from_str(STATE).unwrap();
        let imported = call_session_tool(&fixture, "storage_state", json!({ "action": "import", "state": state })).await.unwrap();
        assert_eq!((imported["cookies"].as_u64(), imported["origins"].as_u64()), (Some(2), Some(1)));
        let exported = call_session_tool(&fixture, "storage_state", json!({ "action": "export" })).await.unwrap();
        // The fake knows the origin only from its own storage directory: none, so it is
        // named by the tab's page, which the fake never loads; the cookies come back whole.
        assert_eq!(exported["state"]["cookies"], state["cookies"]);
        let got =
            call_session_tool(&fixture, "cookies", json!({ "action": "get", "urls": ["http://127.0.0.1:8080/admin/x"] })).await.unwrap();
        assert_eq!(got["cookies"].as_array().unwrap().len(), 1, "the secure cookie stays off http: {got}");
        let cleared =
            call_session_tool(&fixture, "cookies", json!({ "action": "clear", "urls": ["https://127.0.0.1/admin/"] })).await.unwrap();
        assert_eq!(cleared["cleared"], 2);
        let got = call_session_tool(&fixture, "cookies", json!({ "action": "get" })).await.unwrap();
        assert_eq!(got["cookies"], json!([]));
    }

    #[tokio::test]
    async fn import_reads_an_absolute_path_outside_the_data_directory_and_export_stays_in_artifacts() {
        let fixture = fake_session().await;
        let elsewhere = TempDir::new("malo-storage-elsewhere");
        let file = elsewhere.path().join("state.json");
        std::fs::write(&file, STATE).unwrap();
        let shown = file.display().to_string();
        let imported = call_session_tool(&fixture, "storage_state", json!({ "action": "import", "path": shown })).await.unwrap();
        assert_eq!((imported["cookies"].as_u64(), imported["path"].as_str()), (Some(2), Some(shown.as_str())), "{imported}");
        // Another session's files (anything in the data directory but this session's own)
        // and anything but an absolute path or a plain name are refused, saying why.
        let other = fixture._dir.path().join("lease/sessions/sess-other/artifacts");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("theirs.json"), STATE).unwrap();
        let own = fixture.session.dirs.artifacts.join("mine.json");
        std::fs::write(&own, STATE).unwrap();
        assert!(call_session_tool(&fixture, "storage_state", json!({ "action": "import", "path": own })).await.is_ok());
        for (path, reason) in [
            (other.join("theirs.json").display().to_string(), "inside_data_dir"),
            ("./state.json".to_string(), "not_absolute"),
            ("sub/state.json".to_string(), "not_absolute"),
            (elsewhere.path().join("missing.json").display().to_string(), "not_found"),
            (elsewhere.path().display().to_string(), "not_a_file"),
        ] {
            let error = call_session_tool(&fixture, "storage_state", json!({ "action": "import", "path": path })).await.unwrap_err();
            assert_eq!(
                (error.details["field"].as_str(), error.details["reason"].as_str()),
                (Some("path"), Some(reason)),
                "{path}: {}",
                error.message
            );
            assert!(error.message.starts_with("path: "), "{}", error.message);
        }
        std::fs::write(elsewhere.path().join("notes.txt"), "not json").unwrap();
        let path = elsewhere.path().join("notes.txt").display().to_string();
        let error = call_session_tool(&fixture, "storage_state", json!({ "action": "import", "path": path })).await.unwrap_err();
        assert_eq!(error.details["reason"], "not_json", "{}", error.message);
        // Export writes a plain name in artifacts/ only.
        let error = call_session_tool(&fixture, "storage_state", json!({ "action": "export", "path": shown })).await.unwrap_err();
        assert_eq!(error.details["field"], "path", "{}", error.message);
    }

    #[tokio::test]
    async fn a_wrong_field_anywhere_refuses_the_whole_import() {
        let fixture = fake_session().await;
        call_session_tool(&fixture, "cookies", json!({ "action": "set", "cookies": [{"name": "keep", "value": "1", "domain": "a.test"}] }))
            .await
            .unwrap();
        let mut state: Value = serde_json::from_str(STATE).unwrap();
        state["cookies"][1]["expires"] = json!("2030-01-01");
        let error = call_session_tool(&fixture, "storage_state", json!({ "action": "import", "state": state })).await.unwrap_err();
        assert_eq!(error.details["field"], "state.cookies[1].expires", "{}", error.message);
        for (input, field) in [
            (json!({ "action": "import", "path": "../x.json" }), "path"),
            (json!({ "action": "import", "path": "missing.json" }), "path"),
            (json!({ "action": "export", "state": {} }), "state"),
            (json!({ "action": "import" }), "state"),
        ] {
            let error = call_session_tool(&fixture, "storage_state", input.clone()).await.unwrap_err();
            assert_eq!(error.details["field"], field, "{input}: {}", error.message);
        }
        let error =
            call_session_tool(&fixture, "cookies", json!({ "action": "set", "cookies": [{"name": "x", "value": "1"}] })).await.unwrap_err();
        assert_eq!(error.details["field"], "cookies[0].domain");
        let got = call_session_tool(&fixture, "cookies", json!({ "action": "get" })).await.unwrap();
        assert_eq!(got["cookies"].as_array().unwrap().len(), 1, "nothing changed: {got}");
        assert_eq!(got["cookies"][0]["name"], "keep");
    }
}
