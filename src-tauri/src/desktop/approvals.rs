//! Asking the person at the desktop: a notification naming the agent, the session and its
//! profile, the site and the action, with Allow, Allow for this lease and Deny
//! (`org.freedesktop.Notifications` actions). The answer comes back as `ActionInvoked`;
//! a notification the person dismisses (`NotificationClosed`, reason 2) is a no. Without a
//! session bus or a notification server, the question cannot be asked and says why.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use super::notify::NotificationAnswer;
use super::Notifier;
use crate::policy::{Answer, Person, Question};

/// The buttons of a question: action keys and labels.
const ACTIONS: [(&str, &str); 3] = [("allow", "Allow"), ("allow_lease", "Allow for this lease"), ("deny", "Deny")];

/// Answers that came before their question was registered, kept this many at most.
const EARLY_ANSWERS: usize = 32;

/// The desktop's way to a person.
#[derive(Debug, Default)]
pub(super) struct DesktopPerson {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    // A tokio mutex: connecting blocks (on a worker thread) and later questions wait for it.
    notifier: tokio::sync::Mutex<Option<Notifier>>,
    // A std mutex: map inserts and removals from the answer dispatcher and the askers.
    routes: Mutex<Routes>,
}

#[derive(Debug, Default)]
struct Routes {
    /// Questions waiting, by notification id.
    waiting: HashMap<u32, UnboundedSender<NotificationAnswer>>,
    /// Answers to ids nobody waits for (yet), newest last.
    early: VecDeque<(u32, NotificationAnswer)>,
}

impl Inner {
    /// The notifier, connected (and listening for answers) on first use; a failure is
    /// not kept, so a notification server that appears later is found.
    async fn notifier(self: &Arc<Self>) -> Result<Notifier, String> {
        let mut slot = self.notifier.lock().await;
        if let Some(notifier) = slot.as_ref() {
            return Ok(notifier.clone());
        }
        let (answers, mut answered) = unbounded_channel();
        let connect = move || {
            let notifier = Notifier::connect()?;
            notifier.on_answer(answers);
            Ok::<_, String>(notifier)
        };
        let notifier = tokio::task::spawn_blocking(connect).await.map_err(|error| error.to_string())??;
        let inner = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some((id, answer)) = answered.recv().await {
                let Some(inner) = inner.upgrade() else { return };
                inner.route(id, answer);
            }
        });
        *slot = Some(notifier.clone());
        Ok(notifier)
    }

    fn route(&self, id: u32, answer: NotificationAnswer) {
        let mut routes = self.routes.lock().expect("routes poisoned");
        match routes.waiting.get(&id) {
            Some(waiting) => {
                let _ = waiting.send(answer);
            }
            None => {
                if routes.early.len() == EARLY_ANSWERS {
                    routes.early.pop_front();
                }
                routes.early.push_back((id, answer));
            }
        }
    }
}

/// Withdraws a question when its wait ends, however it ends.
struct Withdraw {
    inner: Arc<Inner>,
    notifier: Notifier,
    id: u32,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        self.inner.routes.lock().expect("routes poisoned").waiting.remove(&self.id);
        let (notifier, id) = (self.notifier.clone(), self.id);
        tokio::task::spawn_blocking(move || {
            let _ = notifier.close(id);
        });
    }
}

impl Person for DesktopPerson {
    fn ask(&self, question: Question, timeout: Duration) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let notifier = match inner.notifier().await {
                Ok(notifier) => notifier,
                Err(why) => return Answer::Unreachable(format!("no desktop notifications ({why})")),
            };
            let (summary, body) = texts(&question);
            let shown = {
                let notifier = notifier.clone();
                tokio::task::spawn_blocking(move || notifier.ask(&summary, &body, &ACTIONS)).await
            };
            let id = match shown {
                Ok(Ok(id)) => id,
                Ok(Err(error)) => return Answer::Unreachable(format!("no notification server answers on the session D-Bus ({error})")),
                Err(error) => return Answer::Unreachable(error.to_string()),
            };
            let (answers, mut answered) = unbounded_channel();
            {
                let mut routes = inner.routes.lock().expect("routes poisoned");
                let early: Vec<NotificationAnswer> =
                    routes.early.iter().filter(|(early_id, _)| *early_id == id).map(|(_, answer)| answer.clone()).collect();
                routes.early.retain(|(early_id, _)| *early_id != id);
                for answer in early {
                    let _ = answers.send(answer);
                }
                routes.waiting.insert(id, answers);
            }
            let _withdraw = Withdraw { inner: inner.clone(), notifier, id };
            let wait = async {
                while let Some(answer) = answered.recv().await {
                    match answer {
                        NotificationAnswer::Action(action) => match action.as_str() {
                            "allow" => return Answer::AllowOnce,
                            "allow_lease" => return Answer::AllowForLease,
                            "deny" => return Answer::Deny,
                            // A click on the notification itself is no answer.
                            _ => {}
                        },
                        NotificationAnswer::Closed { by_person: true } => return Answer::Deny,
                        NotificationAnswer::Closed { by_person: false } => return Answer::NoAnswer,
                    }
                }
                Answer::NoAnswer
            };
            tokio::time::timeout(timeout, wait).await.unwrap_or(Answer::NoAnswer)
        })
    }
}

/// The notification's title and text: who asks, to do what, where.
fn texts(question: &Question) -> (String, String) {
    let summary = format!("{} asks to {}", question.agent, question.action);
    let profile = match &question.profile {
        Some(profile) => format!("profile \u{201c}{profile}\u{201d}"),
        None => "an anonymous session".to_string(),
    };
    let body = format!(
        "Agent {} wants to {} on {} (session \u{201c}{}\u{201d}, {profile}). Allow it once, for the rest of this lease, or deny it.",
        question.agent, question.action, question.site, question.session
    );
    (summary, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_names_the_agent_the_profile_the_site_and_the_action() {
        let question = Question {
            agent: "agent-a".into(),
            session: "mail".into(),
            profile: Some("work".into()),
            site: "mail.example.com".into(),
            action: "run JavaScript in pages (evaluate)".into(),
        };
        let (summary, body) = texts(&question);
        assert_eq!(summary, "agent-a asks to run JavaScript in pages (evaluate)");
        for said in ["agent-a", "\u{201c}work\u{201d}", "mail.example.com", "evaluate", "\u{201c}mail\u{201d}"] {
            assert!(body.contains(said), "{said}: {body}");
        }
    }
}
