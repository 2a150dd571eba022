//! `init_script`: scripts every new document of the session's tabs runs in the page's own
//! world, before the page's own scripts, in every frame (Playwright's `addInitScript`).
//! The session keeps the list (`state::init_scripts`); each tab runs them as WebKit user
//! scripts, the engine's one mechanism for scripts at document start (the CDP tunnel's
//! `Page.addScriptToEvaluateOnNewDocument` uses it too). Tabs opened later, popups
//! included, get them before their first document.

use std::io::Read;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::numbers::Lenient;
use super::{LocalPath, Positional, Tool, ToolContext};
use crate::engine::devtools::DevtoolsRequest;
use crate::engine::TabRequest;
use crate::error::{Error, Result};
use crate::state::init_scripts::{INIT_SCRIPTS_MAX, INIT_SCRIPT_MAX_BYTES};

/// What `init_script` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum InitScriptAction {
    /// Add a script (`script`, or the file at `path`).
    Add,
    /// Remove the script `id`.
    Remove,
    /// List the scripts.
    List,
}

/// Input of `init_script`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InitScriptInput {
    /// `add`, `remove` or `list`.
    action: InitScriptAction,
    /// add: the script's source.
    #[serde(default)]
    script: Option<String>,
    /// add: an absolute path of a file holding the script, instead of `script`.
    #[serde(default)]
    path: Option<String>,
    /// remove: the script's id.
    #[serde(default, with = "Lenient")]
    id: Option<u64>,
}

/// One init script, as listed.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct InitScriptSummary {
    /// Its id (for `remove`).
    id: u64,
    /// Its length in characters.
    chars: usize,
    /// Its first line, cut at 80 characters.
    start: String,
}

/// Output of `init_script`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct InitScriptOutput {
    /// The id of the script added.
    #[serde(skip_serializing_if = "Option::is_none")]
    added: Option<u64>,
    /// The id of the script removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    removed: Option<u64>,
    /// The session's init scripts now, in the order they run.
    scripts: Vec<InitScriptSummary>,
}

pub(super) fn tool() -> Tool {
    Tool::session(
        "init_script",
        "Add, remove (by id) or list scripts that every later document of the session's tabs runs in the page's own world before its own scripts, in every frame.",
        init_script,
    )
    .positional(&[Positional::Field("action"), Positional::Field("path")])
    .local_paths(&[LocalPath { field: "path", when: Some(("action", "add")) }])
}

async fn init_script(context: ToolContext, input: InitScriptInput) -> Result<InitScriptOutput> {
    let scripts = context.session.tabs.init_scripts();
    let (mut added, mut removed) = (None, None);
    match input.action {
        InitScriptAction::Add => {
            let source = match (input.script, input.path) {
                (Some(script), None) => script,
                (None, Some(path)) => read_script(&context, path).await?,
                (Some(_), Some(_)) => return Err(refused("path", "give either script or path, not both")),
                (None, None) => return Err(refused("script", "add takes the script (script) or a file holding it (path)")),
            };
            if source.len() > INIT_SCRIPT_MAX_BYTES {
                return Err(refused("script", &format!("the script is larger than {} KiB", INIT_SCRIPT_MAX_BYTES >> 10)));
            }
            let id = scripts.add(source).ok_or_else(|| {
                refused("script", &format!("the session has {INIT_SCRIPTS_MAX} init scripts, the most it may; remove one first"))
            })?;
            added = Some(id);
        }
        InitScriptAction::Remove => {
            let id = input.id.ok_or_else(|| refused("id", "remove takes the id of the script (init_script list shows them)"))?;
            if !scripts.remove(id) {
                let error = Error::new(crate::error::ErrorCode::NotFound, format!("there is no init script {id}"));
                return Err(error.with_details(json!({ "field": "id", "id": id })));
            }
            removed = Some(id);
        }
        InitScriptAction::List => {}
    }
    if added.is_some() || removed.is_some() {
        // Every open tab runs the list from its next document on (a tab opened later gets
        // it as it opens).
        let listed = scripts.list();
        for tab in context.session.tabs.list() {
            let request = TabRequest::Devtools(DevtoolsRequest::SyncInitScripts { scripts: listed.clone() });
            match context.session.engine.tab::<()>(context.session.address(&tab), request).await {
                Err(error) if tab.is_closed() || error.code == crate::error::ErrorCode::TabNotFound => {}
                other => other?,
            }
        }
    }
    let scripts = scripts.list().into_iter().map(|script| summary(script.id, &script.source)).collect();
    Ok(InitScriptOutput { added, removed, scripts })
}

fn summary(id: u64, source: &str) -> InitScriptSummary {
    let first = source.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("");
    let start = if first.chars().count() > 80 { format!("{}…", first.chars().take(79).collect::<String>()) } else { first.to_string() };
    InitScriptSummary { id, chars: source.chars().count(), start }
}

/// `E_BAD_REQUEST` naming `field`.
fn refused(field: &str, message: &str) -> Error {
    Error::bad_request(format!("{field}: {message}")).with_details(json!({ "field": field }))
}

/// Reads the script file at `raw` (absolute, outside the daemon's data directory, UTF-8,
/// at most [`INIT_SCRIPT_MAX_BYTES`]), off the async threads.
async fn read_script(context: &ToolContext, raw: String) -> Result<String> {
    if !Path::new(&raw).is_absolute() {
        return Err(refused("path", &format!("{raw} is not an absolute path")));
    }
    super::local_files::outside_data_dir(context, "path", &raw)?;
    tokio::task::spawn_blocking(move || {
        let file = std::fs::File::open(&raw).map_err(|error| refused("path", &format!("cannot read {raw}: {error}")))?;
        if !file.metadata().is_ok_and(|metadata| metadata.is_file()) {
            return Err(refused("path", &format!("{raw} is not a regular file")));
        }
        let mut bytes = Vec::new();
        file.take(INIT_SCRIPT_MAX_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| refused("path", &format!("cannot read {raw}: {error}")))?;
        if bytes.len() > INIT_SCRIPT_MAX_BYTES {
            return Err(refused("path", &format!("{raw} is larger than {} KiB", INIT_SCRIPT_MAX_BYTES >> 10)));
        }
        String::from_utf8(bytes).map_err(|_| refused("path", &format!("{raw} is not UTF-8 text")))
    })
    .await
    .map_err(|error| Error::internal(error.to_string()))?
}
