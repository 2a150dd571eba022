//! Asking a person: for each `ask` of the policy, a question (who, which profile, which
//! site, what) goes to whatever the desktop registered as the [`Person`] (a notification
//! with Allow, Allow for this lease and Deny), and the call waits for the answer within
//! its time. With nobody registered, or nobody reachable, the answer says so and the
//! action is refused. "Allow for this lease" is kept in the lease's [`LeaseGrants`],
//! which end with the lease.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::json;

use crate::error::{Error, ErrorCode, Result};
use crate::events::ApprovalAnswer;

/// What a person is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The agent holding the lease.
    pub agent: String,
    /// The session's name.
    pub session: String,
    /// The session's profile (`None`: anonymous).
    pub profile: Option<String>,
    /// The site the session is on (host), or what it opens.
    pub site: String,
    /// What the agent wants to do, in plain words.
    pub action: String,
}

/// What came of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Allow, this once.
    AllowOnce,
    /// Allow, and do not ask again while this lease lasts.
    AllowForLease,
    /// The person said no (Deny, or dismissed the question).
    Deny,
    /// Nobody answered in time.
    NoAnswer,
    /// There is no way to reach a person (no notification server, no display): why.
    Unreachable(String),
}

/// Whoever can ask a person (the desktop's notifications).
pub trait Person: Send + Sync + std::fmt::Debug {
    /// Asks `question`, answering within `timeout` (then [`Answer::NoAnswer`], with the
    /// question withdrawn).
    fn ask(&self, question: Question, timeout: Duration) -> Pin<Box<dyn Future<Output = Answer> + Send>>;
}

/// The daemon's way to a person, once the desktop has registered one.
#[derive(Debug, Default)]
pub struct Approvals {
    // A std RwLock: set once at start, read on each question.
    person: RwLock<Option<Arc<dyn Person>>>,
}

impl Approvals {
    /// Registers the way to a person (the desktop does, when it starts).
    pub fn set_person(&self, person: Arc<dyn Person>) {
        *self.person.write().expect("approvals poisoned") = Some(person);
    }

    /// Asks a person, waiting at most `timeout`.
    pub async fn ask(&self, question: Question, timeout: Duration) -> Answer {
        let person = self.person.read().expect("approvals poisoned").clone();
        let Some(person) = person else {
            return Answer::Unreachable("the daemon has no desktop to ask on (it runs on a screen nobody sees)".into());
        };
        // The person's side bounds its own wait; this bound only guards against one that does not.
        tokio::time::timeout(timeout + Duration::from_secs(2), person.ask(question, timeout)).await.unwrap_or(Answer::NoAnswer)
    }
}

/// A question to settle: asked unless the lease already has the grant.
#[derive(Debug)]
pub struct Asking<'a> {
    /// The way to a person.
    pub approvals: &'a Approvals,
    /// The lease's grants.
    pub grants: &'a LeaseGrants,
    /// The rule that asks (`profiles.work.tools.evaluate`): also the grant's key.
    pub rule: String,
    /// What is asked.
    pub question: Question,
    /// How long to wait.
    pub timeout: Duration,
}

/// Settles a question: what came of it (for the event) and whether the action may go on
/// (`E_DENIED_BY_PERSON`, `E_APPROVAL_TIMEOUT`, or `E_POLICY_DENIED` when nobody can be
/// reached). Each decision is a line in the daemon's log (never the page's data).
pub async fn settle(asking: Asking<'_>) -> (ApprovalAnswer, Result<()>) {
    let Asking { approvals, grants, rule, question, timeout } = asking;
    let outcome = if grants.granted(&rule) {
        ApprovalAnswer::AllowedEarlierInLease
    } else {
        match approvals.ask(question.clone(), timeout).await {
            Answer::AllowOnce => ApprovalAnswer::AllowedOnce,
            Answer::AllowForLease => {
                grants.grant(&rule);
                ApprovalAnswer::AllowedForLease
            }
            Answer::Deny => ApprovalAnswer::Denied,
            Answer::NoAnswer => ApprovalAnswer::TimedOut,
            Answer::Unreachable(why) => {
                tracing::warn!(agent = %question.agent, session = %question.session, %rule, action = %question.action, site = %question.site, %why, "approval: nobody to ask, refused");
                let error = Error::new(
                    ErrorCode::PolicyDenied,
                    format!(
                        "the person's policy asks them before you {} (rule {rule}), and there is no way to reach them: {why}. Tell your person; they can allow it in policy.toml",
                        question.action
                    ),
                )
                .with_details(json!({ "rule": rule, "reason": "no_person_reachable" }));
                return (ApprovalAnswer::Unreachable, Err(error));
            }
        }
    };
    tracing::info!(agent = %question.agent, session = %question.session, %rule, action = %question.action, site = %question.site, answer = ?outcome, "approval");
    let result = match outcome {
        ApprovalAnswer::Denied => Err(Error::new(
            ErrorCode::DeniedByPerson,
            format!("your person denied this when asked: {} on {} (rule {rule})", question.action, question.site),
        )
        .with_details(json!({ "rule": rule }))),
        ApprovalAnswer::TimedOut => Err(Error::new(
            ErrorCode::ApprovalTimeout,
            format!(
                "nobody answered the request to {} within {} s (rule {rule}): tell your person that malo-browser asks for their approval in a desktop notification",
                question.action,
                timeout.as_secs_f64().ceil()
            ),
        )
        .with_details(json!({ "rule": rule, "timeout_ms": timeout.as_millis() as u64 }))),
        _ => Ok(()),
    };
    (outcome, result)
}

/// What a person allowed for the rest of one lease (`<rules>:<action>` keys).
#[derive(Debug, Default)]
pub struct LeaseGrants {
    // A std mutex: a set lookup or insert.
    granted: Mutex<HashSet<String>>,
}

impl LeaseGrants {
    /// Whether `key` was allowed for this lease.
    pub fn granted(&self, key: &str) -> bool {
        self.granted.lock().expect("grants poisoned").contains(key)
    }

    /// Remembers that `key` is allowed for this lease.
    pub fn grant(&self, key: &str) {
        self.granted.lock().expect("grants poisoned").insert(key.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Scripted(Answer);

    impl Person for Scripted {
        fn ask(&self, _question: Question, _timeout: Duration) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
            let answer = self.0.clone();
            Box::pin(async move { answer })
        }
    }

    fn question() -> Question {
        Question { agent: "a".into(), session: "s".into(), profile: None, site: "example.com".into(), action: "x".into() }
    }

    #[tokio::test]
    async fn without_a_person_the_answer_says_nobody_can_be_reached() {
        let approvals = Approvals::default();
        assert!(matches!(approvals.ask(question(), Duration::from_millis(10)).await, Answer::Unreachable(_)));
        approvals.set_person(Arc::new(Scripted(Answer::AllowForLease)));
        assert_eq!(approvals.ask(question(), Duration::from_millis(10)).await, Answer::AllowForLease);
        let grants = LeaseGrants::default();
        assert!(!grants.granted("anonymous:evaluate"));
        grants.grant("anonymous:evaluate");
        assert!(grants.granted("anonymous:evaluate") && !grants.granted("anonymous:uploads"));
    }
}
