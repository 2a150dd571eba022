//! What the person's policy says when a session opens: whether its profile may open at
//! all (`open = "ask"` asks a person, once per lease when they allow it for the lease),
//! and whether downloads start refused (when the policy gates them).

use super::table::SessionTable;
use crate::error::{Error, ErrorCode, Result};
use crate::policy::{Asking, Decision, Gated, Question, SessionPolicy};
use crate::state::downloads::{DownloadBehavior, Downloads};

/// Lets a session of `profile` open, or answers why not (`E_POLICY_DENIED`,
/// `E_DENIED_BY_PERSON`, `E_APPROVAL_TIMEOUT`).
pub(super) async fn approve_profile(table: &SessionTable, profile: &str, session_name: &str) -> Result<()> {
    let policy = table.policy().current();
    let (decision, rule) = policy.rules_for(Some(profile)).opening();
    match decision {
        Decision::Allow => Ok(()),
        Decision::Deny => Err(Error::new(
            ErrorCode::PolicyDenied,
            format!("the person's policy does not let agents open the profile {profile:?} (rule {rule})"),
        )
        .with_details(serde_json::json!({ "rule": rule }))),
        Decision::Ask => {
            let question = Question {
                agent: table.agent_id().to_string(),
                session: session_name.to_string(),
                profile: Some(profile.to_string()),
                site: format!("profile {profile}"),
                action: format!("open the profile {profile:?} (its logins and cookies)"),
            };
            let asking = Asking { approvals: table.approvals(), grants: table.grants(), rule, question, timeout: policy.approval_timeout };
            crate::policy::settle(asking).await.1
        }
    }
}

/// Downloads the policy does not simply allow start refused, naming the rule (a denied
/// download says `blocked_by_policy`): the agent turns them on with
/// `set_download_behavior`, which the policy then gates.
pub(super) fn refuse_downloads_unless_allowed(policy: &SessionPolicy, downloads: &Downloads) {
    let (decision, rule) = policy.rules().tool(Gated::Downloads);
    if decision != Decision::Allow {
        let mut refused = downloads.policy();
        refused.behavior = DownloadBehavior::Deny;
        refused.refused_by = Some(rule);
        downloads.set_policy(refused);
    }
}
