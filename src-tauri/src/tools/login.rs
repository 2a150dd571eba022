//! `login`: sign in with a username and password the agent passes once. Fields and the
//! submit control are detected (or given as selectors); the outcome is judged by, in
//! order, `success_url_contains`, `success_selector`, the password field going away, the
//! URL changing, the page text changing; an error message (`error_selector` or common
//! error text) answers `reason: "login_error"` at once, without retrying.
//!
//! Credentials live only in this call's memory: they are typed into the page and never
//! written to a log, an event, a file or a response.

use std::fmt;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::limits::{ACTION_SETTLE_MS, LOGIN_PASSWORD_TIMEOUT_MS, LOGIN_TIMEOUT_MAX_MS, LOGIN_WATCH_TIMEOUT_MS};
use super::outcome::failure_screenshot;
use super::page_agent::{self, agent};
use super::targeting::{check_actionable, locate, ElementTarget};
use super::{Tool, ToolContext};
use crate::engine::agent::{ElementAddress, Fill, LoginForm, LoginState};
use crate::engine::{InputEvent, Modifiers, MouseButton, TabRequest, WatchChange};
use crate::error::{Error, Result};

/// A secret string: deserialised like a string, never printed.
#[derive(Clone, Deserialize, JsonSchema)]
#[serde(transparent)]
pub(crate) struct SecretText(String);

impl fmt::Debug for SecretText {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("[redacted]")
    }
}

/// How to log in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LoginMode {
    /// Fill username and password, submit, judge the outcome.
    Password,
    /// Show the session to a person (the takeover window) and wait until they are logged
    /// in (the same success signals) or press Done.
    Watch,
}

/// Input of `login`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoginInput {
    /// `password` fills and submits; `watch` waits for a person.
    mode: LoginMode,
    /// The username (omit when the form has none).
    #[serde(default)]
    username: Option<SecretText>,
    /// Watch mode: keep the window open after success or Done (default: hide it).
    #[serde(default)]
    keep_visible: bool,
    /// Watch mode: bring the window forward with keyboard focus (default false).
    #[serde(default)]
    focus: bool,
    /// The password (or give `credential`).
    #[serde(default)]
    password: Option<SecretText>,
    /// A vault credential's name. Made by `malo credentials add`; its username and password
    /// are filled only when the page is on the credential's origin.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    credential: Option<String>,
    /// The username field, when detection is not enough.
    #[serde(default)]
    username_selector: Option<String>,
    /// The password field, when detection is not enough.
    #[serde(default)]
    password_selector: Option<String>,
    /// The submit control, when detection is not enough (default: the form's submit
    /// button, else Enter in the password field).
    #[serde(default)]
    submit_selector: Option<String>,
    /// Success when the URL contains this.
    #[serde(default)]
    success_url_contains: Option<String>,
    /// Success when this selector is visible.
    #[serde(default)]
    success_selector: Option<String>,
    /// Failure when this selector is visible.
    #[serde(default)]
    error_selector: Option<String>,
    /// How long to wait for the outcome in ms (default 15000 for password, 180000 for
    /// watch; max 600000). A watch that times out leaves the window open for the person.
    #[serde(default)]
    #[schemars(range(max = LOGIN_TIMEOUT_MAX_MS))]
    timeout_ms: Option<u64>,
}

/// Output of `login`: how the attempt ended (a failed login is an answer, not an error).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct LoginOutput {
    /// Whether the session is logged in (or, in watch mode, the person pressed Done).
    ok: bool,
    /// `password` or `watch`.
    mode: &'static str,
    /// `success`, `done` (watch: the person pressed Done), `login_error` or `timeout`.
    reason: &'static str,
    /// The page's URL at the end.
    url: String,
    /// The session's named profile, which keeps the login (null: anonymous).
    profile: Option<String>,
    /// How long the wait for the outcome took.
    waited_ms: u64,
    /// What decided success: `success_url_contains`, `success_selector`,
    /// `password_field_gone`, `url_changed`, `page_text_changed` or `done_button`.
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<&'static str>,
    /// The error message the page showed (reason `login_error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    error_text: Option<String>,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "login",
        "Log in with a username and password, or let a person log in (mode watch). Given once, never stored, logged or echoed: detects the fields and submit control (or takes selectors), submits, and reports success (with the signal that decided it) or reason login_error / timeout. The session's profile keeps the login when it has one.",
        |context: ToolContext, input: LoginInput| async move {
            match input.mode {
                LoginMode::Password => password_login(&context, input).await,
                LoginMode::Watch => watch_login(&context, input).await,
            }
        },
    )
    .long()
}

async fn password_login(context: &ToolContext, mut input: LoginInput) -> Result<LoginOutput> {
    let timeout = LOGIN_PASSWORD_TIMEOUT_MS.millis(input.timeout_ms, "timeout_ms")?;
    match (&input.password, input.credential.take()) {
        (Some(_), None) => {}
        (None, Some(name)) => {
            // The person's policy may keep a session to some credentials, on top of each
            // credential's own origin.
            if let Some(rule) = context.session.policy.rules().refuses_credential(&name) {
                return Err(Error::new(
                    crate::error::ErrorCode::PolicyDenied,
                    format!("the person's policy does not let this session use the credential {name:?} (rule {rule})"),
                )
                .with_details(serde_json::json!({ "rule": rule, "credential": name })));
            }
            let (page_url, _) = context.tab()?.status.get();
            let vault = context.sessions.vault().clone();
            let (info, password) = tokio::task::spawn_blocking(move || vault.secret_for(&name, &page_url))
                .await
                .map_err(|error| Error::internal(error.to_string()))??;
            input.username = Some(SecretText(info.username));
            input.password = Some(SecretText(password));
        }
        _ => return Err(Error::bad_request("give either password (with username) or credential")),
    }
    let password = input.password.clone().expect("set above");
    let form = agent(
        context,
        &[],
        &LoginForm {
            username_selector: input.username_selector.clone(),
            password_selector: input.password_selector.clone(),
            submit_selector: input.submit_selector.clone(),
        },
    )
    .await?;
    let start_url = form.url.clone();
    let start_text = form.text_length;
    let state_now = |errors_before: Vec<String>| LoginState {
        password: Some(form.password),
        error_selector: input.error_selector.clone(),
        success_selector: input.success_selector.clone(),
        errors_before,
    };
    let before = agent(context, &[], &LoginState { error_selector: None, ..state_now(Vec::new()) }).await?;
    let errors_before = before.errors_now;

    if let Some(username) = &input.username {
        let field = form
            .username
            .ok_or_else(|| Error::new(crate::error::ErrorCode::NotFound, "no username field found; pass username_selector"))?;
        fill(context, field, &username.0).await?;
    }
    fill(context, form.password, &password.0).await?;
    let session = &context.session;
    match form.submit {
        Some(submit) => {
            let located = locate(context, &reference(submit), true).await?;
            check_actionable(&located, true)?;
            let (x, y, modifiers) = (located.x, located.y, Modifiers::default());
            page_agent::input(
                context,
                vec![
                    InputEvent::MouseMove { x, y, modifiers },
                    InputEvent::MouseDown { x, y, button: MouseButton::Left, modifiers },
                    InputEvent::MouseUp { x, y, button: MouseButton::Left, modifiers },
                ],
            )
            .await?;
        }
        None => {
            let enter = crate::engine::keys::resolve("Enter", false).and_then(|key| crate::engine::keyval(&key)).unwrap_or(0);
            let stroke = crate::engine::KeyStroke { keyval: enter, modifiers: Modifiers::default() };
            page_agent::input(context, vec![InputEvent::KeyDown(stroke), InputEvent::KeyUp(stroke)]).await?;
        }
    }

    let begun = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let state = match agent(context, &[], &state_now(errors_before.clone())).await {
            Ok(state) => state,
            // Between documents: look again.
            Err(_) => continue,
        };
        let url = state.url.clone();
        let outcome = |ok: bool, reason: &'static str, signal: Option<&'static str>| LoginOutput {
            ok,
            mode: "password",
            reason,
            url: url.clone(),
            profile: session.profile.clone(),
            waited_ms: begun.elapsed().as_millis() as u64,
            signal,
            error_text: state.error.clone(),
        };
        if state.error.is_some() {
            return Ok(outcome(false, "login_error", None));
        }
        let signal = if input.success_url_contains.as_deref().is_some_and(|part| url.contains(part)) {
            Some("success_url_contains")
        } else if input.success_selector.is_some() && state.success_selector {
            Some("success_selector")
        } else if input.success_url_contains.is_none() && input.success_selector.is_none() {
            if !state.password_present {
                Some("password_field_gone")
            } else if url != start_url {
                Some("url_changed")
            } else if state.text_length != start_text {
                Some("page_text_changed")
            } else {
                None
            }
        } else {
            None
        };
        if let Some(signal) = signal {
            // Let the page finish what the login started before the agent looks.
            let settle = TabRequest::AfterAction { mark: 0, budget: Duration::from_millis(ACTION_SETTLE_MS.default), wait_frame: false };
            let _ = context.ask::<crate::engine::ActionSettle>(settle).await;
            return Ok(outcome(true, "success", Some(signal)));
        }
        if begun.elapsed() >= timeout {
            let _ = failure_screenshot(context, "login").await;
            return Ok(outcome(false, "timeout", None));
        }
    }
}

/// A person logs in through the takeover window; the agent waits for a success signal
/// or the Done button.
async fn watch_login(context: &ToolContext, input: LoginInput) -> Result<LoginOutput> {
    if input.password.is_some() || input.credential.is_some() || input.username.is_some() {
        return Err(Error::bad_request("watch mode takes no credentials: the person types them"));
    }
    let timeout = LOGIN_WATCH_TIMEOUT_MS.millis(input.timeout_ms, "timeout_ms")?;
    let session = &context.session;
    let tab = context.tab()?.clone();
    let find_form = LoginForm { username_selector: None, password_selector: input.password_selector.clone(), submit_selector: None };
    let password = agent(context, &[], &find_form).await.ok().map(|form| form.password);
    let (start_url, _) = tab.status.get();
    // Without a screen a person can see, the person comes through the live view's link.
    let live_url =
        if crate::display::is_private() { Some(crate::live::issue(session, &context.sessions, &tab.id, true).await?.url) } else { None };
    let _revoke = RevokeLive(&session.id);
    let shown: Value = if live_url.is_some() {
        context.ask(TabRequest::Watch(WatchChange::Report)).await?
    } else {
        let title = format!("malo-browser: log in for {} \u{2014} {}", session.agent_id, session.name);
        let show = WatchChange::Show { title, focus: input.focus, keep_visible: Some(input.keep_visible) };
        context.ask(TabRequest::Watch(show)).await?
    };
    let done_before = shown["done_count"].as_u64().unwrap_or(0);
    let _waiting = session.wait_for_person("log in");
    let waiting = crate::events::EventKind::LoginWaiting { mode: "watch", url: start_url.to_string(), live_url };
    session.events.push(Some(&tab.id), waiting);
    let begun = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let watch: Value = context.ask(TabRequest::Watch(WatchChange::Report)).await?;
        let (url, _) = tab.status.get();
        let finish = |ok: bool, reason: &'static str, signal: Option<&'static str>| LoginOutput {
            ok,
            mode: "watch",
            reason,
            url: url.clone(),
            profile: session.profile.clone(),
            waited_ms: begun.elapsed().as_millis() as u64,
            signal,
            error_text: None,
        };
        if watch["done_count"].as_u64().unwrap_or(0) > done_before {
            return Ok(finish(true, "done", Some("done_button")));
        }
        let looking =
            LoginState { password, error_selector: None, success_selector: input.success_selector.clone(), errors_before: Vec::new() };
        let state = agent(context, &[], &looking).await.ok();
        let signal = if input.success_url_contains.as_deref().is_some_and(|part| url.contains(part)) {
            Some("success_url_contains")
        } else if state.as_ref().is_some_and(|state| state.success_selector) {
            Some("success_selector")
        } else if input.success_url_contains.is_none() && input.success_selector.is_none() {
            if password.is_some() && state.as_ref().is_some_and(|state| !state.password_present) {
                Some("password_field_gone")
            } else if url != start_url {
                Some("url_changed")
            } else {
                None
            }
        } else {
            None
        };
        if let Some(signal) = signal {
            if !input.keep_visible {
                context.ask::<Value>(TabRequest::Watch(WatchChange::Hide)).await?;
            }
            return Ok(finish(true, "success", Some(signal)));
        }
        if begun.elapsed() >= timeout {
            // The window stays for the person; `watch {show: false}` puts it away.
            return Ok(finish(false, "timeout", None));
        }
    }
}

/// Ends the session's live-view link when the wait ends, however it ends.
struct RevokeLive<'a>(&'a str);

impl Drop for RevokeLive<'_> {
    fn drop(&mut self) {
        crate::live::revoke(self.0);
    }
}

fn reference(number: u64) -> ElementTarget {
    ElementTarget { element_ref: Some(format!("e{number}")), ..ElementTarget::default() }
}

async fn fill(context: &ToolContext, field: u64, text: &str) -> Result<()> {
    let located = locate(context, &reference(field), true).await?;
    check_actionable(&located, true)?;
    agent(context, &located.frame, &Fill { target: ElementAddress::by_ref(field), text: text.to_string(), clear: true }).await?;
    Ok(())
}
