//! `watch`: show the session to a person in the takeover window (toolbar + the session's
//! own page), or hand it back offscreen. `focus: false` (the default) never takes the
//! person's keyboard focus or raises the window over theirs where the window manager
//! honours the request (X11); on Wayland the compositor decides, and the answer says so.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Tool, ToolContext};
use crate::engine::{TabRequest, WatchChange};

/// Where the person sees the session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WatchMode {
    /// The takeover window on this machine's screen.
    #[default]
    Window,
    /// A live view in any browser: answers `live_url`, a one-time link to pass to the
    /// person (works without a display; see docs/API.md).
    Live,
}

/// Input of `watch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WatchInput {
    /// `window` (default) or `live`.
    #[serde(default)]
    mode: WatchMode,
    /// Live mode: whether the person may act (default true); false shows frames only.
    #[serde(default = "yes")]
    control: bool,
    /// true (default) shows the window; false hides it and returns the session offscreen.
    #[serde(default = "yes")]
    show: bool,
    /// Bring the window forward with keyboard focus (default false: it appears behind, inactive).
    #[serde(default)]
    focus: bool,
    /// Keep the window up when the person presses Done: control goes back to the agent
    /// while the person keeps watching (default false: Done hides it).
    #[serde(default)]
    keep_visible: bool,
}

/// Output of `watch`: the takeover window's state, as the engine reports it.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct WatchOutput {
    /// Whether the window is shown now.
    shown: bool,
    /// Whether it was brought forward with keyboard focus (when shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    focus: Option<bool>,
    /// Its title (when shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    /// Where the compositor decides focus (Wayland), a note saying so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    /// How many times a person pressed Done so far.
    done_count: u64,
    /// The session.
    #[serde(default)]
    session_id: String,
    /// Live mode: the one-time link of the live view (give it to the person; it is the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    live_url: Option<String>,
    /// Live mode: when the link expires if nobody opens it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<String>,
}

fn yes() -> bool {
    true
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "watch",
        "Show the session to a person in a small window with a toolbar and Done, or hide it. The window has back/forward/reload, an address bar and a Done button (show=true); show=false hides it. The page is the session's own, unchanged; screenshots never include the toolbar. focus=false (default) does not take keyboard focus (on Wayland the compositor decides, and the answer has a note saying so). mode=live answers live_url instead: a one-time link to a live view of the session in any browser (on this machine, or through ssh -L), with the same toolbar and Done; control=false makes it watch-only.",
        |context: ToolContext, input: WatchInput| async move {
            let session = &context.session;
            if input.mode == WatchMode::Live && input.show {
                return live(&context, input.control).await;
            }
            if !input.show {
                crate::live::revoke(&session.id);
            }
            let change = if input.show { WatchChange::Show { title: session.window_title(), focus: input.focus, keep_visible: Some(input.keep_visible) } } else { WatchChange::Hide };
            // The agent asks for a person: the tray marks the session and a notification
            // announces it until the person hands it back.
            let answer: serde_json::Value = context.ask(TabRequest::Watch(change)).await?;
            context.tab()?.status.set_takeover_requested(input.show);
            let mut answer: WatchOutput = serde_json::from_value(answer)
                .map_err(|error| crate::error::Error::internal(format!("the engine's watch answer is unreadable: {error}")))?;
            answer.session_id = session.id.clone();
            Ok(answer)
        },
    )
    .long()
}

/// `watch {mode: "live"}`: a new link (earlier ones end); the session waits for the person
/// until they press Done.
async fn live(context: &ToolContext, control: bool) -> crate::error::Result<WatchOutput> {
    let tab = context.tab()?;
    let link = crate::live::issue(&context.session, &context.sessions, &tab.id, control).await?;
    if control {
        tab.status.set_takeover_requested(true);
    }
    let report: serde_json::Value = context.ask(TabRequest::Watch(WatchChange::Report)).await?;
    Ok(WatchOutput {
        shown: report["shown"].as_bool().unwrap_or(false),
        focus: None,
        title: None,
        note: None,
        done_count: report["done_count"].as_u64().unwrap_or(0),
        session_id: context.session.id.clone(),
        live_url: Some(link.url),
        expires_at: Some(link.expires_at),
    })
}
