//! Desktop notifications where none are built yet (everything but Linux): connecting
//! fails with the reason, so the daemon logs it once and runs on.

/// No notification service on this platform yet.
#[derive(Debug, Clone)]
pub struct Notifier;

impl Notifier {
    /// Always fails: notifications are built for Linux only so far.
    pub fn connect() -> Result<Notifier, String> {
        Err("desktop notifications are built for Linux only so far".into())
    }

    /// Never called: there is no notifier.
    pub fn show(&self, _summary: &str, _body: &str) -> Result<u32, String> {
        Err("unsupported".into())
    }

    /// Never called: there is no notifier.
    pub fn on_click(&self, _clicked: tokio::sync::mpsc::UnboundedSender<u32>) {}

    /// Never called: there is no notifier.
    pub fn ask(&self, _summary: &str, _body: &str, _actions: &[(&str, &str)]) -> Result<u32, String> {
        Err("unsupported".into())
    }

    /// Never called: there is no notifier.
    pub fn on_answer(&self, _answers: tokio::sync::mpsc::UnboundedSender<(u32, NotificationAnswer)>) {}

    /// Never called: there is no notifier.
    pub fn close(&self, _id: u32) -> Result<(), String> {
        Err("unsupported".into())
    }
}

/// What happened to a notification (see the Linux notifier).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotificationAnswer {
    /// A person invoked this action.
    Action(String),
    /// It was closed.
    Closed {
        /// Whether a person dismissed it.
        by_person: bool,
    },
}
