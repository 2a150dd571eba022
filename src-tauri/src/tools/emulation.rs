//! `emulate` and `clipboard` (issue #49): what a session's pages see of the device and the
//! person's preferences (media features, a device preset, a user agent), the HTTP
//! credentials it answers 401 challenges with, and its own clipboard, never the person's.
//! The engine's side is `engine::webkit::emulation`; docs/API.md says what a page can
//! still tell.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};

use super::{Positional, Tool, ToolContext};
use crate::engine::devtools::DevtoolsRequest;
use crate::engine::emulation::{self, EmulationRequest, ForcedChoice, HttpCredentials, Media, MotionChoice, SchemeChoice};
use crate::engine::identity::unsupported;
use crate::engine::{SessionRequest, TabRequest};
use crate::error::{Error, ErrorCode, Result};

/// A password as the input carries it: never shown by `Debug`.
#[derive(Clone, Deserialize, JsonSchema)]
#[serde(transparent)]
pub(crate) struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("[redacted]")
    }
}

/// HTTP credentials: `{username, password, origin?}` or `{credential}` (a vault name).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CredentialsInput {
    username: Option<String>,
    password: Option<Password>,
    /// Only this origin's challenges (`http://host:port`); default: any origin.
    origin: Option<String>,
    /// A vault credential's name (its own origin only).
    credential: Option<String>,
}

/// Input of `emulate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EmulateInput {
    /// prefers-color-scheme.
    #[serde(default)]
    color_scheme: Option<SchemeChoice>,
    /// prefers-reduced-motion.
    #[serde(default)]
    reduced_motion: Option<MotionChoice>,
    /// forced-colors.
    #[serde(default)]
    forced_colors: Option<ForcedChoice>,
    /// iPhone 15, Pixel 7, iPad, Desktop 1080p, Desktop 720p (this tab's viewport, the session's user agent).
    #[serde(default)]
    device: Option<String>,
    /// With device: skip what the engine cannot give (listed in not_emulated).
    #[serde(default)]
    best_effort: bool,
    /// User agent ("": the session's own).
    #[serde(default)]
    user_agent: Option<String>,
    /// HTTP auth: {username, password, origin?} or {credential}; null: none.
    #[serde(default, deserialize_with = "present")]
    credentials: Option<Option<CredentialsInput>>,
}

/// A field given as `null` (`Some(None)`) told apart from one left out (`None`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> std::result::Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

/// The credentials in force, without the password.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct CredentialsShown {
    username: String,
    /// `null`: any origin.
    origin: Option<String>,
}

/// The device preset applied.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DeviceShown {
    name: &'static str,
    width: u32,
    height: u32,
}

/// Output of `emulate`: what the session emulates now.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct EmulateOutput {
    /// Media features emulated (absent: the engine's own).
    media: Media,
    /// The user agent set by emulate (null: the session's own).
    user_agent: Option<String>,
    /// HTTP credentials (never the password).
    credentials: Option<CredentialsShown>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<DeviceShown>,
    /// Preset fields the engine could not give (best_effort).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_emulated: Vec<&'static str>,
}

/// What `clipboard` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ClipboardAction {
    Read,
    Write,
    Copy,
    Cut,
    Paste,
}

/// Input of `clipboard`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClipboardInput {
    /// copy/cut: the selection; paste: into the focused field.
    action: ClipboardAction,
    /// For write.
    #[serde(default)]
    text: Option<String>,
}

/// Output of `clipboard`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ClipboardOutput {
    /// The session's clipboard now.
    text: String,
    /// For paste: whether text went into the focused field (false: nothing editable
    /// focused, or the page handled the paste itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pasted: Option<bool>,
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::page(
            "emulate",
            "Emulate media features (CSS, matchMedia), a device, a user agent, HTTP auth for the session.",
            |context: ToolContext, input: EmulateInput| async move { emulate(&context, input).await },
        )
        .positional(&[Positional::Field("device")]),
        Tool::page(
            "clipboard",
            "The session's own clipboard (never the system's): read, write, copy, cut, paste.",
            |context: ToolContext, input: ClipboardInput| async move { clipboard(&context, input).await },
        )
        .positional(&[Positional::Field("action"), Positional::Field("text")]),
    ]
}

async fn emulate(context: &ToolContext, input: EmulateInput) -> Result<EmulateOutput> {
    // Everything is checked before anything changes.
    let credentials = match input.credentials {
        None => None,
        Some(None) => Some(None),
        Some(Some(given)) => Some(Some(credentials(context, given).await?)),
    };
    if let Some(user_agent) = &input.user_agent {
        if user_agent.len() > 512 || user_agent.chars().any(char::is_control) {
            return Err(Error::bad_request("user_agent must be at most 512 characters, without control characters")
                .with_details(json!({ "field": "user_agent" })));
        }
    }
    let mut not_emulated = Vec::new();
    let device = match &input.device {
        None => None,
        Some(name) => {
            let device = emulation::device(name)?;
            let screen: Value = context.session.engine.session(&context.session.id, SessionRequest::ScreenScale).await?;
            let screen = screen.as_f64().unwrap_or(1.0);
            if (device.device_scale_factor - screen).abs() > f64::EPSILON {
                if !input.best_effort {
                    return Err(unsupported(
                        "device_scale_factor",
                        format!(
                            "{} has devicePixelRatio {}, and WebKitGTK takes it from the daemon's screen ({screen}); best_effort=true applies the rest",
                            device.name, device.device_scale_factor
                        ),
                    ));
                }
                not_emulated.push("device_scale_factor");
            }
            if device.touch {
                if !input.best_effort {
                    return Err(unsupported(
                        "touch",
                        format!(
                            "{} has a touch screen, and WebKitGTK gives pages touch events only on a screen with a touch device; best_effort=true applies the rest",
                            device.name
                        ),
                    ));
                }
                not_emulated.push("touch");
            }
            if input.user_agent.is_some() {
                return Err(Error::bad_request("give device or user_agent, not both").with_details(json!({ "field": "user_agent" })));
            }
            Some(device)
        }
    };

    let session = &context.session;
    let ask = |request: EmulationRequest| session.engine.session::<Value>(&session.id, SessionRequest::Emulation(request));
    if let Some(device) = device {
        let (width, height) = (device.width, device.height);
        context.ask::<()>(TabRequest::Devtools(DevtoolsRequest::SetViewport { width, height })).await?;
        ask(EmulationRequest::UserAgent(device.user_agent.map(str::to_string))).await?;
    }
    if let Some(user_agent) = input.user_agent {
        ask(EmulationRequest::UserAgent(Some(user_agent).filter(|text| !text.is_empty()))).await?;
    }
    if let Some(credentials) = credentials {
        ask(EmulationRequest::Credentials(credentials)).await?;
    }
    let state = ask(EmulationRequest::Media {
        color_scheme: input.color_scheme,
        reduced_motion: input.reduced_motion,
        forced_colors: input.forced_colors,
    })
    .await?;
    Ok(EmulateOutput {
        media: serde_json::from_value(state["media"].clone()).unwrap_or_default(),
        user_agent: state["user_agent"].as_str().map(str::to_string),
        credentials: serde_json::from_value(state["credentials"].clone()).ok().flatten(),
        device: device.map(|device| DeviceShown { name: device.name, width: device.width, height: device.height }),
        not_emulated,
    })
}

/// The credentials asked for, checked: by value (an origin normalized) or from the vault
/// (the person's policy may refuse it; its own origin only).
async fn credentials(context: &ToolContext, given: CredentialsInput) -> Result<HttpCredentials> {
    let field = |name: &str| json!({ "field": format!("credentials.{name}") });
    match (given.credential, given.username, given.password) {
        (Some(name), None, None) => {
            if given.origin.is_some() {
                return Err(Error::bad_request("a vault credential has its own origin").with_details(field("origin")));
            }
            if let Some(rule) = context.session.policy.rules().refuses_credential(&name) {
                return Err(Error::new(
                    ErrorCode::PolicyDenied,
                    format!("the person's policy does not let this session use the credential {name:?} (rule {rule})"),
                )
                .with_details(json!({ "rule": rule, "credential": name })));
            }
            let vault = context.sessions.vault().clone();
            let lookup = name.clone();
            let (info, password) = tokio::task::spawn_blocking(move || {
                let info = vault
                    .list()
                    .into_iter()
                    .find(|info| info.name == lookup)
                    .ok_or_else(|| Error::new(ErrorCode::CredentialNotFound, format!("there is no credential {lookup:?}")))?;
                vault.secret_for(&lookup, &info.origin)
            })
            .await
            .map_err(|error| Error::internal(error.to_string()))??;
            Ok(HttpCredentials { username: info.username, password, origin: Some(info.origin) })
        }
        (None, Some(username), Some(Password(password))) => {
            if username.is_empty() || username.contains(':') || username.len() > 256 {
                return Err(Error::bad_request("username must be 1-256 characters, without ':'").with_details(field("username")));
            }
            if password.len() > 1024 {
                return Err(Error::bad_request("password must be at most 1024 characters").with_details(field("password")));
            }
            let origin = match given.origin {
                None => None,
                Some(origin) => {
                    let normalized = crate::vault::origin_of(&origin).map_err(|_| {
                        Error::bad_request(format!("{origin:?} is not an origin (http://host:port)")).with_details(field("origin"))
                    })?;
                    Some(normalized)
                }
            };
            Ok(HttpCredentials { username, password, origin })
        }
        (Some(_), _, _) => Err(Error::bad_request("give credential alone, or username and password").with_details(field("credential"))),
        (None, None, _) => {
            Err(Error::bad_request("credentials need a username and a password, or credential").with_details(field("username")))
        }
        (None, Some(_), None) => Err(Error::bad_request("credentials need a password").with_details(field("password"))),
    }
}

async fn clipboard(context: &ToolContext, input: ClipboardInput) -> Result<ClipboardOutput> {
    let session = &context.session;
    let ask = |request: EmulationRequest| session.engine.session::<Value>(&session.id, SessionRequest::Emulation(request));
    if input.text.is_some() && input.action != ClipboardAction::Write {
        return Err(Error::bad_request("text is for action write only").with_details(json!({ "field": "text" })));
    }
    let mut pasted = None;
    match input.action {
        ClipboardAction::Read => {}
        ClipboardAction::Write => {
            let text = input.text.ok_or_else(|| Error::bad_request("write needs text").with_details(json!({ "field": "text" })))?;
            emulation::check_clipboard(&text, "text")?;
            session.engine.session::<()>(&session.id, SessionRequest::Emulation(EmulationRequest::ClipboardWrite(text))).await?;
        }
        ClipboardAction::Copy | ClipboardAction::Cut => {
            let kind = if input.action == ClipboardAction::Cut { "cut" } else { "copy" };
            let body = format!("return globalThis.__maloClipboard ? __maloClipboard.copy({}) : null;", json!(kind));
            let copied: Value = context.ask(TabRequest::Evaluate { body }).await?;
            if let Some(text) = copied.as_str() {
                emulation::check_clipboard(text, "selection")?;
                session.engine.session::<()>(&session.id, SessionRequest::Emulation(EmulationRequest::ClipboardWrite(text.into()))).await?;
            }
        }
        ClipboardAction::Paste => {
            let body = "return globalThis.__maloClipboard ? __maloClipboard.paste() : { pasted: false };".to_string();
            let answer: Value = context.ask(TabRequest::Evaluate { body }).await?;
            pasted = Some(answer["pasted"] == json!(true));
        }
    }
    let text: Value = ask(EmulationRequest::ClipboardRead).await?;
    Ok(ClipboardOutput { text: text.as_str().unwrap_or_default().to_string(), pasted })
}
