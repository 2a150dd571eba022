//! `find` and locators: elements as a person names them (Playwright's `getByRole`,
//! `getByText`, `getByLabel`, ...): a role with its accessible name, a visible text, a
//! label, a placeholder, an alt text, a title or a test id (`data-testid`), with `nth`,
//! looked for in every frame (entered as snapshots enter them) and open shadow root.
//! `find` answers the refs of the matches, the same refs snapshot gives; every action takes
//! the same locator as `locator` in place of `ref` or `selector` (`targeting.rs`), where
//! one that matches several elements is `E_AMBIGUOUS`, listing them.

use std::future::Future;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::page_agent::agent;
use super::{Tool, ToolContext};
use crate::engine::agent::Find;
use crate::error::{Error, ErrorCode, Result};

/// Frames nested deeper than this are not entered (as snapshots).
const MAX_FRAME_DEPTH: usize = 3;
/// At most this many frames are entered (as snapshots).
const MAX_FRAMES: usize = 20;
/// Matches a document describes at most.
const MAX_MATCHES: usize = 200;
/// Matches an ambiguity error lists at most.
const LISTED_IN_ERRORS: usize = 10;

/// An element as a person names it: one of `role` (with `name`), `text`, `label`,
/// `placeholder`, `alt`, `title` or `testid`; `find` takes it, and every action as
/// `locator` in place of `ref` or `selector`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Locator {
    /// An ARIA role (button, link, textbox, checkbox, heading, ...), with `name`.
    #[serde(default)]
    pub(crate) role: Option<String>,
    /// With role: the accessible name.
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// The element's visible text.
    #[serde(default)]
    pub(crate) text: Option<String>,
    /// A form control's label (label element, aria-label, aria-labelledby).
    #[serde(default)]
    pub(crate) label: Option<String>,
    /// An input's placeholder.
    #[serde(default)]
    pub(crate) placeholder: Option<String>,
    /// An image's alt text.
    #[serde(default)]
    pub(crate) alt: Option<String>,
    /// The title attribute.
    #[serde(default)]
    pub(crate) title: Option<String>,
    /// The data-testid attribute (always exact).
    #[serde(default)]
    pub(crate) testid: Option<String>,
    /// Whole text and case must match (default: a part of it in any case, the whole preferred).
    #[serde(default)]
    pub(crate) exact: bool,
    /// Which match, from 0; negative counts from the end (-1: the last).
    #[serde(default)]
    pub(crate) nth: Option<i64>,
}

impl Locator {
    /// The kind and the value looked for; `E_BAD_REQUEST` naming the field (after
    /// `prefix`, `locator.` in an action's input) unless exactly one kind is given.
    fn kind(&self, prefix: &str) -> Result<(&'static str, &str)> {
        let given: Vec<(&'static str, &str)> = [
            ("role", &self.role),
            ("text", &self.text),
            ("label", &self.label),
            ("placeholder", &self.placeholder),
            ("alt", &self.alt),
            ("title", &self.title),
            ("testid", &self.testid),
        ]
        .into_iter()
        .filter_map(|(kind, value)| value.as_deref().map(|value| (kind, value)))
        .collect();
        let refused = |field: &str, message: String| {
            Error::bad_request(format!("{prefix}{field}: {message}")).with_details(json!({ "field": format!("{prefix}{field}") }))
        };
        let (kind, value) = match given.as_slice() {
            [one] => *one,
            [] => {
                let field = prefix.trim_end_matches('.');
                let field = if field.is_empty() { "role" } else { field };
                return Err(Error::bad_request(format!(
                    "{field}: give one of role (with name), text, label, placeholder, alt, title or testid"
                ))
                .with_details(json!({ "field": field })));
            }
            [_, second, ..] => {
                return Err(refused(
                    second.0,
                    format!("give one of role, text, label, placeholder, alt, title, testid, not {} and {}", given[0].0, second.0),
                ))
            }
        };
        if value.trim().is_empty() {
            return Err(refused(kind, "is empty".into()));
        }
        if self.name.is_some() && kind != "role" {
            return Err(refused("name", "goes with role (the accessible name of an element of that role)".into()));
        }
        Ok((kind, value))
    }

    /// `role button "Save"`, `label "Email"`, for messages.
    fn describe(&self) -> String {
        let (kind, value) = self.kind("").unwrap_or(("?", ""));
        let mut text = format!("{kind} {value:?}");
        if let Some(name) = &self.name {
            text.push_str(&format!(" name {name:?}"));
        }
        if let Some(nth) = self.nth {
            text.push_str(&format!(" nth {nth}"));
        }
        text
    }
}

/// An element a locator matched.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct FoundElement {
    /// Its ref (e.g. `e12`), usable by every action.
    #[serde(rename = "ref")]
    pub(crate) element_ref: String,
    /// Its ARIA role (or tag name).
    pub(crate) role: String,
    /// Its accessible name (may be empty).
    pub(crate) name: String,
    /// The frame holding it (`f3`, `f3.1`), when not the main frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) frame: Option<String>,
    /// False when it is not visible (hidden, zero-sized).
    #[serde(skip_serializing_if = "is_true")]
    pub(crate) visible: bool,
}

fn is_true(value: &bool) -> bool {
    *value
}

/// Output of `find`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FindOutput {
    /// How many elements the locator matched (before `nth`).
    pub(crate) count: usize,
    /// The matches in document order (with `nth`, that one), at most 200 per frame.
    pub(crate) matches: Vec<FoundElement>,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "find",
        "Find elements by role and name, text, label, placeholder, alt, title or testid, in every frame and shadow root; answers their refs, and every action takes the same fields as `locator` in place of a ref.",
        |context: ToolContext, locator: Locator| async move { find(&context, &locator, "").await },
    )
}

/// Every match of `locator` (with `nth`, that one), in document order across frames.
pub(crate) async fn find(context: &ToolContext, locator: &Locator, prefix: &str) -> Result<FindOutput> {
    let (kind, value) = locator.kind(prefix)?;
    let request = Find { by: kind, value: value.to_string(), name: locator.name.clone(), exact: locator.exact, limit: MAX_MATCHES };
    let mut walker = FrameWalker { context, request: &request, entered: 0, count: 0, matches: Vec::new() };
    walker.read(Vec::new()).await?;
    let FrameWalker { mut count, matches, .. } = walker;
    // Without `exact`, a text may be a part of what an element shows; where some elements
    // show the whole of it (in any case), those are the ones meant: `Save` is the button
    // "Save", not "Save draft" too.
    let any_whole = matches.iter().any(|(_, whole)| *whole);
    let mut matches: Vec<FoundElement> = matches.into_iter().filter(|(_, whole)| *whole || !any_whole).map(|(found, _)| found).collect();
    if any_whole {
        count = count.min(matches.len());
    }
    if let Some(nth) = locator.nth {
        let index = if nth < 0 { count as i64 + nth } else { nth };
        let chosen = usize::try_from(index).ok().filter(|index| *index < matches.len()).map(|index| matches.swap_remove(index));
        matches = chosen.into_iter().collect();
    }
    Ok(FindOutput { count, matches })
}

/// The one element `locator` names, for an action: its frame path and ref number.
/// `E_NOT_FOUND` when it matches none (or `nth` is past the last), `E_AMBIGUOUS` listing
/// the matches when it matches several and no `nth` chooses one.
pub(crate) async fn one(context: &ToolContext, locator: &Locator) -> Result<(Vec<u32>, u64)> {
    let found = find(context, locator, "locator.").await?;
    match found.matches.as_slice() {
        [only] => {
            let number = super::targeting::parse_ref(&only.element_ref)?;
            let frame = context.tab()?.refs.lock().expect("ref table poisoned").frame_of.get(&number).cloned().unwrap_or_default();
            Ok((frame, number))
        }
        [] => {
            let message = match locator.nth {
                Some(nth) if found.count > 0 => {
                    format!("the locator {} matches {} elements: there is no nth {nth}", locator.describe(), found.count)
                }
                _ => format!("no element matches the locator {}", locator.describe()),
            };
            Err(Error::new(ErrorCode::NotFound, message).with_details(json!({ "locator": locator.describe(), "count": found.count })))
        }
        several => {
            let listed: Vec<String> = several
                .iter()
                .take(LISTED_IN_ERRORS)
                .map(|found| format!("{} ({} {:?})", found.element_ref, found.role, found.name))
                .collect();
            let message = format!(
                "the locator {} matches {} elements: {}{}; make it exact, add nth, or use a ref",
                locator.describe(),
                found.count,
                listed.join(", "),
                if found.count > listed.len() { ", ..." } else { "" }
            );
            let matches: Vec<&FoundElement> = several.iter().take(LISTED_IN_ERRORS).collect();
            Err(Error::new(ErrorCode::Ambiguous, message).with_details(json!({ "count": found.count, "matches": matches })))
        }
    }
}

/// Asks each frame's agent, entering child frames where they are.
struct FrameWalker<'call> {
    context: &'call ToolContext,
    request: &'call Find,
    /// Frames entered so far.
    entered: usize,
    /// Matches in every frame read.
    count: usize,
    /// The matches described, in document order, each with whether it showed the whole text.
    matches: Vec<(FoundElement, bool)>,
}

impl FrameWalker<'_> {
    fn read<'walk>(&'walk mut self, path: Vec<u32>) -> Pin<Box<dyn Future<Output = Result<()>> + Send + 'walk>> {
        Box::pin(async move {
            let answer = match agent(self.context, &path, self.request).await {
                Ok(answer) => answer,
                // A child frame that cannot answer (gone, loading) holds no match.
                Err(_) if !path.is_empty() => return Ok(()),
                Err(error) => return Err(error),
            };
            self.count += answer.count;
            let label = (!path.is_empty()).then(|| frame_label(&path));
            for item in answer.items {
                if let Some(frame) = item.frame {
                    if self.entered < MAX_FRAMES && path.len() < MAX_FRAME_DEPTH {
                        self.entered += 1;
                        let mut child = path.clone();
                        child.push(frame);
                        self.read(child).await?;
                    }
                    continue;
                }
                let Some(number) = item.element_ref else { continue };
                if !path.is_empty() {
                    self.context.tab()?.refs.lock().expect("ref table poisoned").frame_of.insert(number, path.clone());
                }
                let found = FoundElement {
                    element_ref: format!("e{number}"),
                    role: item.role,
                    name: item.name,
                    frame: label.clone(),
                    visible: item.visible,
                };
                self.matches.push((found, item.whole));
            }
            Ok(())
        })
    }
}

/// `[3, 1]` -> `f3.1`, as snapshots name frames.
fn frame_label(path: &[u32]) -> String {
    let parts: Vec<String> = path.iter().map(u32::to_string).collect();
    format!("f{}", parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locator(value: serde_json::Value) -> Locator {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_locator_names_exactly_one_kind_and_name_goes_with_role() {
        assert_eq!(locator(json!({ "role": "button", "name": "Save" })).kind("").unwrap(), ("role", "button"));
        assert_eq!(locator(json!({ "testid": "go" })).kind("locator.").unwrap(), ("testid", "go"));
        let none = locator(json!({ "exact": true })).kind("locator.").unwrap_err();
        assert_eq!(none.details["field"], "locator", "{}", none.message);
        let two = locator(json!({ "text": "a", "label": "b" })).kind("").unwrap_err();
        assert_eq!(two.details["field"], "label", "{}", two.message);
        let stray = locator(json!({ "text": "a", "name": "b" })).kind("locator.").unwrap_err();
        assert_eq!(stray.details["field"], "locator.name", "{}", stray.message);
        let empty = locator(json!({ "label": " " })).kind("").unwrap_err();
        assert_eq!(empty.details["field"], "label");
        assert!(serde_json::from_value::<Locator>(json!({ "rol": "button" })).is_err(), "unknown fields are refused");
        assert_eq!(locator(json!({ "role": "button", "name": "Save", "nth": -1 })).describe(), "role \"button\" name \"Save\" nth -1");
    }
}
