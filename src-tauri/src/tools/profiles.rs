//! `profiles`: list the named login profiles, or clear (delete) one that no session uses.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Tool, ToolContext};
use crate::error::Error;
use crate::session::ProfileInfo;

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

/// Output of `profiles`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum ProfilesOutput {
    /// `list`.
    Listed(ProfileList),
    /// `clear`.
    Cleared(ProfileCleared),
}

/// The profiles, as `list` answers them.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ProfileList {
    /// Every named profile.
    profiles: Vec<ProfileInfo>,
}

/// A profile `clear` deleted.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ProfileCleared {
    /// Always true.
    ok: bool,
    /// The profile.
    name: String,
    /// Always true.
    cleared: bool,
}

pub(super) fn tool() -> Tool {
    Tool::session(
        "profiles",
        "List the named login profiles ({\"action\":\"list\"}) or delete one no session uses ({\"action\":\"clear\",\"name\":\"work\"}).",
        |context: ToolContext, input: ProfilesInput| async move {
            let store = context.sessions.profiles();
            match input.action {
                ProfilesAction::List => Ok(ProfilesOutput::Listed(ProfileList { profiles: store.list() })),
                ProfilesAction::Clear => {
                    let name = input.name.ok_or_else(|| Error::bad_request("clear needs a name"))?;
                    store.delete(&name)?;
                    Ok(ProfilesOutput::Cleared(ProfileCleared { ok: true, name, cleared: true }))
                }
            }
        },
    )
}

/// Input of `profile_clone`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CloneInput {
    /// The profile to copy (no session may use it).
    from: String,
    /// The new profile's name (it must not exist).
    to: String,
}

/// Output of `profile_clone`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CloneOutput {
    /// The profile copied.
    from: String,
    /// The new profile.
    to: String,
    /// Always true.
    cloned: bool,
}

pub(super) fn clone_tool() -> Tool {
    Tool::session(
        "profile_clone",
        "Copy a login profile (its cookies, storage and remembered identity) to a new profile: {\"from\":\"work\",\"to\":\"work-2\"}. E_PROFILE_LOCKED while a session uses from (a copy could be torn); E_BAD_REQUEST when to exists.",
        |context: ToolContext, input: CloneInput| async move {
            let store = context.sessions.profiles().clone();
            let (from, to) = (input.from.clone(), input.to.clone());
            tokio::task::spawn_blocking(move || store.copy(&from, &to)).await.map_err(|error| Error::internal(error.to_string()))??;
            Ok(CloneOutput { from: input.from, to: input.to, cloned: true })
        },
    )
}
