//! The person's policy before a tool runs: a call that does something the policy gates
//! (`policy::gate::GATES`) goes on when allowed, is refused (`E_POLICY_DENIED` naming the
//! rule) when denied, and waits for a person's answer when the rule says `ask` (within
//! the call's own `timeout_ms`, if it has one, else the policy's `approval_timeout_seconds`).

use std::time::Duration;

use serde_json::{json, Value};

use super::ToolContext;
use crate::error::{Error, ErrorCode, Result};
use crate::events::EventKind;
use crate::policy::{Asking, Decision, Question};

/// Lets a call of `tool` with `input` go on, or answers why not.
pub(super) async fn admit(context: &ToolContext, tool: &str, input: &Value) -> Result<()> {
    let gated = crate::policy::gate::gated(tool, input);
    if gated.is_empty() {
        return Ok(());
    }
    let policy = context.session.policy.store.current();
    let rules = policy.rules_for(context.session.profile.as_deref());
    // Every denial first: a call is never half asked about and then refused.
    for gated_action in &gated {
        let (decision, rule) = rules.tool(*gated_action);
        if decision == Decision::Deny {
            return Err(Error::new(
                ErrorCode::PolicyDenied,
                format!("the person's policy does not let agents {} here (rule {rule}); {tool} is refused", gated_action.words()),
            )
            .with_details(json!({ "rule": rule, "tool": tool })));
        }
    }
    let own_timeout = input.get("timeout_ms").and_then(Value::as_u64).map(Duration::from_millis);
    let timeout = own_timeout.map_or(policy.approval_timeout, |own| own.min(policy.approval_timeout));
    for gated_action in gated {
        let (decision, rule) = rules.tool(gated_action);
        if decision != Decision::Ask {
            continue;
        }
        let tab = context.tab.clone().or_else(|| context.session.tabs.get(None).ok());
        let url = tab.map(|tab| tab.status.get().0).unwrap_or_default();
        let site = crate::policy::domains::host_of(&url).unwrap_or(url);
        let question = Question {
            agent: context.session.agent_id.clone(),
            session: context.session.name.clone(),
            profile: context.session.profile.clone(),
            site: site.clone(),
            action: gated_action.words().to_string(),
        };
        let sessions = &context.sessions;
        let asking = Asking { approvals: sessions.approvals(), grants: sessions.grants(), rule: rule.clone(), question, timeout };
        let (answer, result) = crate::policy::settle(asking).await;
        let tab_id = context.tab.as_ref().map(|tab| tab.id.clone());
        context.session.events.push(tab_id.as_deref(), EventKind::Approval { action: gated_action.key(), rule, site, answer });
        result?;
    }
    Ok(())
}
