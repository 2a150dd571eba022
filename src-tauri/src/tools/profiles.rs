//! `profiles`: list the named login profiles, or clear (delete) one that no session uses.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{Tool, ToolContext};
use crate::error::Error;

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ProfilesAction {
    /// List the profiles.
    List,
    /// Delete one (refused with E_PROFILE_LOCKED while a session uses it).
    Clear,
}

/// Input of `profiles`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfilesInput {
    /// `list` or `clear`.
    action: ProfilesAction,
    /// The profile to clear.
    #[serde(default)]
    name: Option<String>,
}

pub(super) fn tool() -> Tool {
    Tool::session(
        "profiles",
        "List the named login profiles ({\"action\":\"list\"}) or delete one no session uses ({\"action\":\"clear\",\"name\":\"work\"}).",
        |context: ToolContext, input: ProfilesInput| async move {
            let store = context.sessions.profiles();
            match input.action {
                ProfilesAction::List => Ok(json!({ "profiles": store.list() })),
                ProfilesAction::Clear => {
                    let name = input.name.ok_or_else(|| Error::bad_request("clear needs a name"))?;
                    store.delete(&name)?;
                    Ok(json!({ "ok": true, "name": name, "cleared": true }))
                }
            }
        },
    )
}
