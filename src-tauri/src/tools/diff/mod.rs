//! `diff`: what changed since the agent last looked. `snapshot`: the page against the tab's
//! last snapshot, line by line (added, removed, changed). `screenshot`: a picture of the
//! page against a baseline file or the tab's last screenshot, pixel by pixel, with a
//! picture of the changes in the session's artifacts. `url`: two pages' snapshots, each
//! loaded in a tab of its own that closes after.

mod lines;
mod pixels;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use self::lines::{ChangedLine, LineDiff};
use super::artifacts::artifact_path;
use super::limits::{LOAD_TIMEOUT_MS, NAVIGATION_SETTLE_MS};
use super::local_files::outside_data_dir;
use super::screenshot::{self, ScreenshotInput};
use super::{LocalPath, Positional, Presentation, Tool, ToolContext};
use crate::engine::{NavigationReport, SessionRequest, TabAddress, TabRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::events::{ClosedBy, EventKind};

/// What `diff` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DiffKind {
    /// The page against the tab's last snapshot.
    Snapshot,
    /// A picture against `baseline` or the tab's last screenshot.
    Screenshot,
    /// The snapshots of two `urls`.
    Url,
}

/// How a line diff is answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DiffFormat {
    /// Lists of lines (default).
    #[default]
    Json,
    /// Unified-diff-like lines.
    Text,
}

/// Input of `diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DiffInput {
    /// What to compare.
    kind: DiffKind,
    /// screenshot: a picture file (absolute path) instead of the tab's last screenshot.
    #[serde(default)]
    baseline: Option<String>,
    /// url: the two URLs.
    #[serde(default)]
    urls: Vec<String>,
    /// `json` (default) or `text`: a unified diff (snapshot, url).
    #[serde(default)]
    format: DiffFormat,
}

/// Output of `diff`, one shape per kind and format.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum DiffOutput {
    /// snapshot and url, as JSON.
    Lines(LinesOutput),
    /// snapshot and url, as text.
    Text(TextOutput),
    /// screenshot.
    Pixels(PixelsOutput),
}

/// Two snapshots compared, line by line (lines as snapshot's text form shows them).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct LinesOutput {
    /// The page compared (the second URL of `url`).
    url: String,
    /// The page it was compared with (the last snapshot's, or the first URL); null when
    /// the tab had no snapshot yet (every line is then added).
    previous_url: Option<String>,
    /// Lines that are new.
    added: Vec<String>,
    /// Lines that are gone.
    removed: Vec<String>,
    /// Lines that changed.
    changed: Vec<ChangedLine>,
    /// Lines alike in both (refs aside).
    unchanged: usize,
    /// Diff lines left out at the size limit (the lists stay whole).
    #[serde(skip_serializing_if = "is_zero")]
    cut: usize,
}

/// Two snapshots compared, as text.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TextOutput {
    /// `text`.
    format: &'static str,
    /// The page compared.
    url: String,
    /// A summary line, then `@@ N @@` where edits start (N: the line now), `- old`, `+ new`.
    text: String,
}

/// Two pictures compared, pixel by pixel.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PixelsOutput {
    /// What the picture was compared with: the baseline's path, or `last screenshot`.
    baseline: String,
    /// Pixels that differ.
    changed_pixels: u64,
    /// Pixels compared.
    total_pixels: u64,
    /// changed_pixels / total_pixels (0 to 1).
    changed_ratio: f64,
    /// The new picture's width (px).
    width: u32,
    /// Its height (px).
    height: u32,
    /// Whether the two pictures' sizes differ (pixels only one has count as changed).
    size_changed: bool,
    /// The picture of the changes (the page faded, changes red) in the session's artifacts/.
    path: String,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "diff",
        "What changed: snapshot (the page against the tab's last snapshot: added, removed, changed lines), screenshot (changed-pixel ratio against baseline or the last screenshot; writes a diff picture) or url (two URLs' snapshots).",
        |context: ToolContext, input: DiffInput| async move {
            check(&input)?;
            match input.kind {
                DiffKind::Snapshot => {
                    let (now, before) = super::snapshot::page_lines(&context).await?;
                    let previous_url = before.as_ref().map(|before| before.url.clone());
                    let before = before.map(|before| before.page).unwrap_or_default();
                    Ok(lines_answer(lines::diff(&before, &now.page), now.url, previous_url, input.format))
                }
                DiffKind::Url => {
                    let (first, second) = two_pages(&context, &input.urls).await?;
                    Ok(lines_answer(lines::diff(&first.page, &second.page), second.url, Some(first.url), input.format))
                }
                DiffKind::Screenshot => pictures(&context, input.baseline.as_deref()).await.map(DiffOutput::Pixels),
            }
        },
    )
    .positional(&[Positional::Field("kind"), Positional::Field("urls")])
    .local_paths(&[LocalPath { field: "baseline", when: None }])
    .presented(Presentation {
        mcp_defaults: &[("format", "text")],
        cli_defaults: &[("format", "text")],
        text_field: Some("text"),
        ..Presentation::default()
    })
}

/// `E_BAD_REQUEST` naming `field`.
fn refused(field: &str, message: impl std::fmt::Display) -> Error {
    Error::bad_request(format!("{field}: {message}")).with_details(json!({ "field": field }))
}

/// The fields each kind takes.
fn check(input: &DiffInput) -> Result<()> {
    if input.kind != DiffKind::Url && !input.urls.is_empty() {
        return Err(refused("urls", "goes with kind url"));
    }
    if input.kind != DiffKind::Screenshot && input.baseline.is_some() {
        return Err(refused("baseline", "goes with kind screenshot"));
    }
    if input.kind == DiffKind::Url && input.urls.len() != 2 {
        return Err(refused("urls", format!("give two URLs to compare, not {}", input.urls.len())));
    }
    if let Some(baseline) = &input.baseline {
        if !std::path::Path::new(baseline).is_absolute() {
            return Err(refused("baseline", format!("give an absolute path (the CLI makes a relative one absolute), not {baseline:?}")));
        }
    }
    Ok(())
}

fn lines_answer(diff: LineDiff, url: String, previous_url: Option<String>, format: DiffFormat) -> DiffOutput {
    match format {
        DiffFormat::Json => DiffOutput::Lines(LinesOutput {
            url,
            previous_url,
            added: diff.added,
            removed: diff.removed,
            changed: diff.changed,
            unchanged: diff.unchanged,
            cut: diff.cut,
        }),
        DiffFormat::Text => {
            let against = match &previous_url {
                Some(previous) if *previous == url => "its last snapshot".to_string(),
                Some(previous) => format!("<{previous}>"),
                None => "nothing (no earlier snapshot of this tab)".to_string(),
            };
            let mut text = format!(
                "<{url}> against {against}: {} changed, {} added, {} removed, {} unchanged\n",
                diff.changed.len(),
                diff.added.len(),
                diff.removed.len(),
                diff.unchanged
            );
            text.push_str(&diff.text);
            if diff.cut > 0 {
                text.push_str(&format!("({} more diff lines cut; format json lists every line)\n", diff.cut));
            }
            DiffOutput::Text(TextOutput { format: "text", url, text })
        }
    }
}

/// The snapshots of two URLs, each loaded in one temporary tab that closes after; the
/// session's selected tab stays selected.
async fn two_pages(context: &ToolContext, urls: &[String]) -> Result<(crate::state::PreviousSnapshot, crate::state::PreviousSnapshot)> {
    for (index, url) in urls.iter().enumerate() {
        crate::urls::check_navigation_url(url).map_err(|error| {
            let field = format!("urls[{index}]");
            Error::new(error.code, format!("{field}: {}", error.message)).with_details(json!({ "field": field }))
        })?;
    }
    let session = &context.session;
    let selected = session.tabs.selected_id();
    let tab: String = session.engine.session(&session.id, SessionRequest::NewTab).await?;
    let compared = async {
        let opened = session.tabs.get(Some(&tab))?;
        let scratch = ToolContext { tab: Some(opened), ..context.clone() };
        let mut pages = Vec::new();
        for url in urls {
            let target = TabAddress { session_id: session.id.clone(), tab: tab.clone() };
            let timeout = std::time::Duration::from_millis(LOAD_TIMEOUT_MS.default);
            let settle = std::time::Duration::from_millis(NAVIGATION_SETTLE_MS.default);
            let loaded: NavigationReport = session.engine.tab(target, TabRequest::Navigate { url: url.clone(), timeout, settle }).await?;
            if let Some(failure) = loaded.net_error.as_ref().or(loaded.proxy_error.as_ref()) {
                return Err(Error::new(ErrorCode::NavigationFailed, format!("{url} did not load: {failure}")));
            }
            pages.push(super::snapshot::page_lines(&scratch).await?.0);
        }
        let second = pages.pop().expect("two pages");
        Ok((pages.pop().expect("two pages"), second))
    }
    .await;
    let closed = session.engine.session::<()>(&session.id, SessionRequest::CloseTab { tab: tab.clone() }).await;
    if closed.is_ok() {
        session.events.push(Some(&tab), EventKind::TabClosed { by: ClosedBy::Agent });
    }
    if let Some(selected) = selected {
        let _ = session.tabs.select(&selected);
    }
    compared
}

/// A picture's height, from its header (0 when unreadable).
async fn height_of(picture: &[u8]) -> u32 {
    let header = picture[..picture.len().min(64 * 1024)].to_vec();
    tokio::task::spawn_blocking(move || {
        image::ImageReader::new(std::io::Cursor::new(header)).with_guessed_format().ok()?.into_dimensions().ok().map(|(_, height)| height)
    })
    .await
    .ok()
    .flatten()
    .unwrap_or(0)
}

/// A picture of the page against `baseline` (the viewport, or the whole page when the
/// baseline is taller) or against the tab's last screenshot (taken again as it was asked).
async fn pictures(context: &ToolContext, baseline: Option<&str>) -> Result<PixelsOutput> {
    let (old, input, named) = match baseline {
        Some(path) => {
            outside_data_dir(context, "baseline", path)?;
            let old = tokio::fs::read(path).await.map_err(|error| refused("baseline", format!("cannot read {path}: {error}")))?;
            (old, None, path.to_string())
        }
        None => {
            let last = context.tab()?.refs.lock().expect("ref table poisoned").screenshot.clone();
            let last =
                last.ok_or_else(|| refused("baseline", "this tab has no screenshot yet: take one first, or give a baseline file"))?;
            let input: ScreenshotInput = serde_json::from_value(last.input).map_err(|error| Error::internal(error.to_string()))?;
            (last.picture, Some(input), "last screenshot".to_string())
        }
    };
    let (new, input) = match input {
        Some(input) => (screenshot::picture(context, &input).await?, input),
        None => {
            // The viewport, or the whole page when the baseline is taller than the viewport.
            let viewport = ScreenshotInput::default();
            let new = screenshot::picture(context, &viewport).await?;
            if height_of(&old).await > height_of(&new).await {
                let whole = ScreenshotInput { full_page: true, ..ScreenshotInput::default() };
                (screenshot::picture(context, &whole).await?, whole)
            } else {
                (new, viewport)
            }
        }
    };
    screenshot::remember(context, &new, input)?;
    let compared = tokio::task::spawn_blocking(move || pixels::compare(&old, &new, "baseline"))
        .await
        .map_err(|error| Error::internal(format!("the comparison stopped: {error}")))??;
    let path = artifact_path(context, None, "path", "diff", &["png"])?;
    tokio::fs::write(&path, &compared.png).await.map_err(|error| Error::internal(format!("cannot write the diff picture: {error}")))?;
    let ratio = if compared.total == 0 { 0.0 } else { compared.changed as f64 / compared.total as f64 };
    Ok(PixelsOutput {
        baseline: named,
        changed_pixels: compared.changed,
        total_pixels: compared.total,
        changed_ratio: ratio,
        width: compared.width,
        height: compared.height,
        size_changed: compared.size_changed,
        path: path.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(value: serde_json::Value) -> DiffInput {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn each_kind_takes_its_own_fields() {
        let field = |value: serde_json::Value| check(&input(value)).unwrap_err().details["field"].clone();
        assert_eq!(field(json!({"kind": "snapshot", "urls": ["http://a/"]})), "urls");
        assert_eq!(field(json!({"kind": "url", "urls": ["http://a/"]})), "urls");
        assert_eq!(field(json!({"kind": "snapshot", "baseline": "/tmp/a.png"})), "baseline");
        assert_eq!(field(json!({"kind": "screenshot", "baseline": "a.png"})), "baseline");
        assert!(check(&input(json!({"kind": "url", "urls": ["http://a/", "http://b/"]}))).is_ok());
        assert!(check(&input(json!({"kind": "screenshot", "baseline": "/tmp/a.png"}))).is_ok());
        assert!(serde_json::from_value::<DiffInput>(json!({"kind": "pixels"})).is_err());
    }
}
