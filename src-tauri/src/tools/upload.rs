//! `set_file_input` (seed 001): set files on an `<input type=file>` without a window. The
//! input's own chooser is opened and the engine answers it with the files (no dialog is
//! ever shown), so the page gets trusted `input` and `change` events and a form posts the
//! exact bytes. With `next_chooser`, the next chooser the page opens itself is answered.

use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::limits::ACTION_SETTLE_MS;
use super::page_agent::agent;
use super::targeting::parse_ref;
use super::{LocalPath, Positional, Tool, ToolContext};
use crate::engine::agent::{ElementAddress, FileInput, FileInputState, FrameOf, OpenFileChooser};
use crate::engine::TabRequest;
use crate::error::{Error, ErrorCode, Result};

/// How long an input's chooser may take to open after the click.
const CHOOSER_TIMEOUT: Duration = Duration::from_secs(3);

/// Input of `set_file_input`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetFileInputInput {
    /// Absolute paths of existing, readable regular files (one, or several for an input
    /// with `multiple`).
    #[schemars(length(min = 1))]
    files: Vec<String>,
    /// The file input: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The file input: a CSS selector.
    #[serde(default)]
    selector: Option<String>,
    /// Which match of the selector, from 0 (default 0).
    #[serde(default)]
    nth: Option<usize>,
    /// The selector applies inside this iframe (a selector of the iframe in the page).
    #[serde(default)]
    frame_selector: Option<String>,
    /// Look for the selector inside every open shadow root too.
    #[serde(default)]
    pierce_shadow: bool,
    /// No target: answer the next file chooser the page itself opens (for a file input
    /// that is not in the document). Answers at once; event `file_chooser` when used.
    #[serde(default)]
    next_chooser: bool,
}

/// Output of `set_file_input`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum SetFileInputOutput {
    /// The files are set on the input.
    Set(FilesSet),
    /// `next_chooser`: the page's next file chooser will be answered with the files.
    Armed(ChooserArmed),
}

/// Files set on a file input.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FilesSet {
    /// The tab.
    tab: String,
    /// A selector that finds the input again.
    selector: String,
    /// The input's ref.
    #[serde(rename = "ref")]
    element_ref: String,
    /// How many files the input holds now.
    file_count: usize,
    /// The files, by name and size.
    files: Vec<ChosenFile>,
    /// Whether the input takes several files.
    multiple: bool,
    /// Its `accept` attribute.
    accept: String,
}

/// The page's next file chooser, armed.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ChooserArmed {
    /// The tab.
    tab: String,
    /// Always true.
    armed: bool,
    /// How many files the chooser will answer.
    file_count: usize,
    /// The files, by name and size.
    files: Vec<ChosenFile>,
}

/// A file given to an input.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ChosenFile {
    /// Its name (without the directory).
    name: String,
    /// Its size in bytes.
    size: u64,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "set_file_input",
        "Upload files into an <input type=file>, without any window. Targets by ref or selector, with nth, frame_selector, pierce_shadow; fires input and change as a person's choice does. next_chooser=true (no target) answers the next file chooser the page opens itself. A page's own file chooser is otherwise cancelled and recorded as event file_chooser.",
        set_files,
    )
    .positional(&[Positional::Target, Positional::Field("files")])
    .local_paths(&[LocalPath { field: "files", when: None }])
}

async fn set_files(context: ToolContext, input: SetFileInputInput) -> Result<SetFileInputOutput> {
    let files = checked_files(&context, &input.files)?;
    let paths: Vec<String> = files.iter().map(|(path, _, _)| path.clone()).collect();
    let described: Vec<ChosenFile> = files.iter().map(|(_, name, size)| ChosenFile { name: name.clone(), size: *size }).collect();
    let tab = context.tab()?.id.clone();
    let given = input.element_ref.is_some() || input.selector.is_some();
    if input.next_chooser {
        if given || input.frame_selector.is_some() {
            return Err(Error::bad_request("next_chooser answers the page's next chooser: give no ref, selector or frame_selector"));
        }
        context.ask::<()>(TabRequest::ArmFileChooser { files: paths }).await?;
        return Ok(SetFileInputOutput::Armed(ChooserArmed { tab, armed: true, file_count: described.len(), files: described }));
    }
    // Which frame, and which element in it.
    let (frame, target) = match (&input.element_ref, &input.selector) {
        (Some(element_ref), None) => {
            if input.frame_selector.is_some() || input.nth.is_some() {
                return Err(Error::bad_request("frame_selector and nth go with selector, not ref"));
            }
            let number = parse_ref(element_ref)?;
            let frame = context.tab()?.refs.lock().expect("ref table poisoned").frame_of.get(&number).cloned().unwrap_or_default();
            (frame, ElementAddress::by_ref(number))
        }
        (None, Some(selector)) => {
            let frame = match &input.frame_selector {
                Some(frame_selector) => vec![agent(&context, &[], &FrameOf { selector: frame_selector.clone() }).await?.frame],
                None => Vec::new(),
            };
            (frame, ElementAddress { element_ref: None, selector: Some(selector.clone()) })
        }
        _ => return Err(Error::bad_request("give a ref or a selector of the file input (or next_chooser: true)")),
    };
    let request = FileInput { target, nth: input.nth.unwrap_or(0), pierce: input.pierce_shadow, count: paths.len() };
    let found = agent(&context, &frame, &request).await?;
    let element = ElementAddress::by_ref(found.element_ref);
    context.ask::<()>(TabRequest::ArmFileChooser { files: paths }).await?;
    agent(&context, &frame, &OpenFileChooser { target: element.clone() }).await?;
    if !context.ask::<bool>(TabRequest::AwaitFileChooser { timeout: CHOOSER_TIMEOUT }).await? {
        return Err(Error::new(ErrorCode::ScriptError, "the file input did not open its chooser (does the page cancel clicks on it?)"));
    }
    // Let the page's input and change handlers run.
    let settle = TabRequest::AfterAction { mark: 0, budget: Duration::from_millis(ACTION_SETTLE_MS.default), wait_frame: true };
    let _ = context.ask::<crate::engine::ActionSettle>(settle).await;
    let now = agent(&context, &frame, &FileInputState { target: element }).await?;
    if now.count != described.len() {
        return Err(Error::new(
            ErrorCode::ScriptError,
            format!("the input holds {} files after the choice, not {}", now.count, described.len()),
        ));
    }
    Ok(SetFileInputOutput::Set(FilesSet {
        tab,
        selector: found.selector,
        element_ref: format!("e{}", found.element_ref),
        file_count: now.count,
        files: described,
        multiple: found.multiple,
        accept: found.accept,
    }))
}

/// Checks every path: absolute, outside the daemon's data directory (this session's own
/// directories aside, so a file it downloaded goes up again), an existing regular file,
/// readable. Answers `(path, name, size)` for each.
fn checked_files(context: &ToolContext, files: &[String]) -> Result<Vec<(String, String, u64)>> {
    if files.is_empty() {
        return Err(Error::bad_request("files is empty: give at least one path"));
    }
    files
        .iter()
        .enumerate()
        .map(|(index, raw)| {
            let (path, field) = (Path::new(raw), format!("files[{index}]"));
            let refuse = |reason: &str, message: String| {
                Error::bad_request(message).with_details(json!({ "field": field, "reason": reason, "path": raw }))
            };
            if !path.is_absolute() {
                return Err(refuse("not_absolute", format!("{raw} is not an absolute path")));
            }
            super::local_files::outside_data_dir(context, &field, raw)?;
            let metadata = std::fs::metadata(path).map_err(|_| refuse("not_found", format!("{raw} does not exist")))?;
            if !metadata.is_file() {
                return Err(refuse("not_a_file", format!("{raw} is not a regular file")));
            }
            std::fs::File::open(path).map_err(|error| refuse("unreadable", format!("{raw} cannot be read: {error}")))?;
            let name = path.file_name().map(|name| name.to_string_lossy().to_string()).unwrap_or_default();
            Ok((raw.clone(), name, metadata.len()))
        })
        .collect()
}
