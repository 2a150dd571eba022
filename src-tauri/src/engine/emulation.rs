//! What a session emulates for its pages besides its identity (issue #49): the media
//! features `prefers-color-scheme`, `prefers-reduced-motion` and `forced-colors`, device
//! presets, HTTP authentication credentials, and the session's own clipboard. This file
//! holds the types, the presets' table and the checks; `engine/webkit/emulation.rs`
//! carries them out (WebKitGTK keeps these media features per process, so the page side
//! emulates them per session: docs/API.md says how far that goes).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Longest clipboard text a session holds (bytes): every document of the session's tabs
/// carries it in its isolated world.
pub const MAX_CLIPBOARD: usize = 256 * 1024;

/// `prefers-color-scheme` as emulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SchemeChoice {
    Light,
    Dark,
    /// The engine's own (light).
    Default,
}

/// `prefers-reduced-motion` as emulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MotionChoice {
    Reduce,
    NoPreference,
    /// The engine's own.
    Default,
}

/// `forced-colors` as emulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ForcedChoice {
    Active,
    None,
    /// The engine's own (none).
    Default,
}

/// The media features a session's pages see; `None`: the engine's own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Media {
    /// `light` or `dark`.
    pub color_scheme: Option<String>,
    /// `reduce` or `no-preference`.
    pub reduced_motion: Option<String>,
    /// `active` or `none`.
    pub forced_colors: Option<String>,
}

impl Media {
    /// Applies the choices given (a `default` gives the feature back to the engine).
    pub fn change(&mut self, scheme: Option<SchemeChoice>, motion: Option<MotionChoice>, forced: Option<ForcedChoice>) {
        if let Some(scheme) = scheme {
            self.color_scheme = match scheme {
                SchemeChoice::Light => Some("light".into()),
                SchemeChoice::Dark => Some("dark".into()),
                SchemeChoice::Default => None,
            };
        }
        if let Some(motion) = motion {
            self.reduced_motion = match motion {
                MotionChoice::Reduce => Some("reduce".into()),
                MotionChoice::NoPreference => Some("no-preference".into()),
                MotionChoice::Default => None,
            };
        }
        if let Some(forced) = forced {
            self.forced_colors = match forced {
                ForcedChoice::Active => Some("active".into()),
                ForcedChoice::None => Some("none".into()),
                ForcedChoice::Default => None,
            };
        }
    }

    /// The page-side state: `{"prefers-color-scheme": "dark", ...}` for the features set.
    pub fn page_state(&self) -> serde_json::Value {
        let mut state = serde_json::Map::new();
        for (feature, value) in [
            ("prefers-color-scheme", &self.color_scheme),
            ("prefers-reduced-motion", &self.reduced_motion),
            ("forced-colors", &self.forced_colors),
        ] {
            if let Some(value) = value {
                state.insert(feature.into(), value.clone().into());
            }
        }
        serde_json::Value::Object(state)
    }
}

/// HTTP authentication credentials a session answers 401 challenges with. The password is
/// never shown: not by `Debug`, not in any answer or event.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpCredentials {
    pub username: String,
    pub password: String,
    /// `scheme://host[:port]` the credentials are given to; `None`: every origin.
    pub origin: Option<String>,
}

impl std::fmt::Debug for HttpCredentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("HttpCredentials").field("username", &self.username).field("origin", &self.origin).finish_non_exhaustive()
    }
}

/// A named device preset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Device {
    pub name: &'static str,
    pub width: u32,
    pub height: u32,
    pub device_scale_factor: f64,
    /// `None`: the session's own.
    pub user_agent: Option<&'static str>,
    pub touch: bool,
}

/// The presets `emulate {device}` knows.
pub const DEVICES: &[Device] = &[
    Device {
        name: "iPhone 15",
        width: 393,
        height: 852,
        device_scale_factor: 3.0,
        user_agent: Some(
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
        ),
        touch: true,
    },
    Device {
        name: "Pixel 7",
        width: 412,
        height: 915,
        device_scale_factor: 2.625,
        user_agent: Some(
            "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
        ),
        touch: true,
    },
    Device {
        name: "iPad",
        width: 820,
        height: 1180,
        device_scale_factor: 2.0,
        user_agent: Some(
            "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
        ),
        touch: true,
    },
    Device { name: "Desktop 1080p", width: 1920, height: 1080, device_scale_factor: 1.0, user_agent: None, touch: false },
    Device { name: "Desktop 720p", width: 1280, height: 720, device_scale_factor: 1.0, user_agent: None, touch: false },
];

/// The preset of that name (case and spaces aside), or `E_BAD_REQUEST` naming the presets.
pub fn device(name: &str) -> Result<&'static Device> {
    let plain = |text: &str| text.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect::<String>();
    DEVICES.iter().find(|device| plain(device.name) == plain(name)).ok_or_else(|| {
        let names: Vec<&str> = DEVICES.iter().map(|device| device.name).collect();
        Error::bad_request(format!("there is no device preset {name:?}; the presets: {}", names.join(", ")))
            .with_details(serde_json::json!({ "field": "device", "presets": names }))
    })
}

/// Checks a clipboard text's size.
pub fn check_clipboard(text: &str, field: &str) -> Result<()> {
    if text.len() > MAX_CLIPBOARD {
        return Err(Error::bad_request(format!("{field} is {} bytes; a session's clipboard holds at most {MAX_CLIPBOARD}", text.len()))
            .with_details(serde_json::json!({ "field": field })));
    }
    Ok(())
}

/// What a session's emulation is asked (`SessionRequest::Emulation`).
#[derive(Debug)]
pub enum EmulationRequest {
    /// Media features to change (`None`: as they are); answers the state (`{media,
    /// user_agent, credentials}`), as every request but the clipboard's does.
    Media { color_scheme: Option<SchemeChoice>, reduced_motion: Option<MotionChoice>, forced_colors: Option<ForcedChoice> },
    /// The user agent of every tab from now on (`None`: the session's own at creation).
    UserAgent(Option<String>),
    /// HTTP credentials from now on (`None`: none; challenges are then refused).
    Credentials(Option<HttpCredentials>),
    /// Answers the session clipboard's text as a JSON string.
    ClipboardRead,
    /// Sets the session clipboard's text (every frame of every tab sees it).
    ClipboardWrite(String),
}

impl EmulationRequest {
    /// The request's name in the main thread's figures.
    pub fn kind(&self) -> &'static str {
        match self {
            EmulationRequest::Media { .. } => "emulate_media",
            EmulationRequest::UserAgent(_) => "emulate_user_agent",
            EmulationRequest::Credentials(_) => "emulate_credentials",
            EmulationRequest::ClipboardRead => "clipboard_read",
            EmulationRequest::ClipboardWrite(_) => "clipboard_write",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_found_by_loose_name_and_a_wrong_one_lists_them() {
        assert_eq!(device("iphone15").unwrap().name, "iPhone 15");
        assert_eq!(device("Desktop 1080P").unwrap().width, 1920);
        let error = device("Nokia 3310").unwrap_err();
        assert!(error.to_string().contains("Pixel 7"), "{error}");
    }

    #[test]
    fn the_password_never_shows_in_debug() {
        let credentials = HttpCredentials { username: "ann".into(), password: "hunter2-secret".into(), origin: None };
        let shown = format!("{credentials:?} {:?}", EmulationRequest::Credentials(Some(credentials.clone())));
        assert!(!shown.contains("hunter2") && shown.contains("ann"), "{shown}");
    }

    #[test]
    fn media_state_names_only_what_is_set() {
        let mut media = Media::default();
        media.change(Some(SchemeChoice::Dark), Some(MotionChoice::Reduce), None);
        assert_eq!(media.page_state(), serde_json::json!({ "prefers-color-scheme": "dark", "prefers-reduced-motion": "reduce" }));
        media.change(Some(SchemeChoice::Default), None, Some(ForcedChoice::Active));
        assert_eq!(media.page_state(), serde_json::json!({ "prefers-reduced-motion": "reduce", "forced-colors": "active" }));
    }
}
