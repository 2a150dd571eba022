//! `dialog`: how the next JavaScript dialog (alert, confirm, prompt, beforeunload) is
//! answered. Dialogs never block a session: without a policy, alerts and beforeunload are
//! accepted and confirm/prompt dismissed, and every dialog is recorded as an event.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Positional, Tool, ToolContext};
use crate::state::DialogPolicy;

/// Accept or dismiss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DialogAction {
    /// OK / leave page.
    Accept,
    /// Cancel / stay.
    Dismiss,
    /// Back to the defaults.
    Default,
}

/// Input of `dialog`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DialogInput {
    /// `accept`, `dismiss`, or `default`.
    action: DialogAction,
    /// What a prompt answers when accepted (default: its default text).
    #[serde(default)]
    prompt_text: Option<String>,
    /// Apply to every later dialog, not only the next one.
    #[serde(default)]
    persist: bool,
}

/// Output of `dialog`: the policy now in force.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DialogOutput {
    /// Always true.
    ok: bool,
    /// `accept`, `dismiss` or `default`.
    action: DialogAction,
    /// Whether it applies to every later dialog.
    persist: bool,
    /// What an accepted prompt answers (null: its default text).
    prompt_text: Option<String>,
}

pub(super) fn tool() -> Tool {
    Tool::tab(
        "dialog",
        "Decide how the next JavaScript dialog is answered (accept or dismiss, with prompt text); persist=true keeps it for all later dialogs. Dialogs never block; they appear in events as type dialog.",
        |context: ToolContext, input: DialogInput| async move {
            let policy = DialogPolicy {
                accept: match input.action {
                    DialogAction::Accept => Some(true),
                    DialogAction::Dismiss => Some(false),
                    DialogAction::Default => None,
                },
                prompt_text: input.prompt_text,
                persist: input.persist,
            };
            *context.tab()?.dialog_policy.lock().expect("dialog policy poisoned") = policy.clone();
            Ok(DialogOutput { ok: true, action: input.action, persist: policy.persist, prompt_text: policy.prompt_text })
        },
    )
    .positional(&[Positional::Field("action")])
}
