//! Where a session's identity lives in WebKitGTK 2.50 (measured: docs/ARCHITECTURE.md):
//! the user agent per view (`tab/mod.rs`), the time zone and the geolocation manager per
//! context (`context.rs`), and the languages and the scale factor per process
//! (`prefers-color-scheme` is per process too: `emulation.rs` emulates it per session). A process-wide field is given to a session only when no other live session
//! named another value; a per-context one only when the session's profile context, shared
//! with its other sessions, already has it.

use gtk::prelude::*;
use webkit2gtk::WebContextExt;

use super::context::Context;
use crate::engine::identity::{unsupported, Identity};
use crate::error::Result;

/// `E_UNSUPPORTED` when `identity` names a locale that another live session (`others`)
/// named differently, or a scale factor other than the screen's.
pub(super) fn check_process_wide(identity: &Identity, others: &[&Identity]) -> Result<()> {
    if let Some(locale) = &identity.locale {
        if let Some(other) = others.iter().filter_map(|other| other.locale.as_ref()).find(|other| *other != locale) {
            return Err(unsupported(
                "locale",
                format!(
                    "WebKitGTK keeps navigator.language per daemon, and another session uses {other}: close it, or ask for the same locale"
                ),
            ));
        }
    }
    if let Some(factor) = identity.device_scale_factor {
        let screen = screen_scale_factor();
        if (factor - screen).abs() > f64::EPSILON {
            return Err(unsupported(
                "device_scale_factor",
                format!("WebKitGTK takes devicePixelRatio from the daemon's screen ({screen}), not per session"),
            ));
        }
    }
    Ok(())
}

/// `E_UNSUPPORTED` when `identity` asks a profile's context, which its other sessions
/// already use, for a time zone or a position it does not have.
pub(super) fn check_shared_context(context: &Context, identity: &Identity) -> Result<()> {
    if identity.timezone != context.timezone {
        return Err(unsupported(
            "timezone",
            "a profile's sessions share one WebKit context, whose time zone is fixed by its first open session: ask for the same one",
        ));
    }
    if identity.geolocation.is_some() && identity.geolocation != context.position.get() {
        return Err(unsupported(
            "geolocation",
            "a profile's sessions share one WebKit context, which has one position: ask for the same one, or none",
        ));
    }
    Ok(())
}

/// Sets what `identity` names of the process-wide fields (checked already).
pub(super) fn apply_process_wide(identity: &Identity) {
    if let Some(locale) = &identity.locale {
        // Any context's call sets the languages of the whole process: web processes take
        // them as they start, and the network process's Accept-Language follows at once
        // (the proxy sets each session's own anyway).
        webkit2gtk::WebContext::default().inspect(|context| context.set_preferred_languages(&[locale.as_str()]));
    }
}

/// Once the last session naming a process-wide field has closed (`others` are the sessions
/// still open), gives that field back to the daemon's default.
pub(super) fn release_process_wide(closed: &Identity, others: &[Identity]) {
    if closed.locale.is_some() && others.iter().all(|other| other.locale.is_none()) {
        set_default_languages();
    }
}

/// Gives pages the system's languages, except under the C or POSIX locale (a service's
/// usual one, `C.UTF-8` included), where WebKit tells pages `navigator.language == "C"`
/// and `Intl`'s locale `en-US-u-va-posix`, which no browser a person uses says (measured):
/// they get `en-US`, as Chromium's default.
pub(super) fn set_default_languages() {
    let system = glib::language_names();
    let plain = system.first().is_none_or(|first| {
        let language = first.split(['.', '@']).next().unwrap_or_default();
        matches!(language, "C" | "POSIX")
    });
    let languages: &[&str] = if plain { &["en-US"] } else { &[] };
    webkit2gtk::WebContext::default().inspect(|context| context.set_preferred_languages(languages));
}

/// The scale factor of the daemon's screen (GDK_SCALE), which every page's
/// `devicePixelRatio` follows.
pub(super) fn screen_scale_factor() -> f64 {
    gtk::gdk::Display::default().and_then(|display| display.monitor(0)).map(|monitor| f64::from(monitor.scale_factor())).unwrap_or(1.0)
}
