//! `close`: close the session; its WebKit processes exit and its directory is removed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Presentation, Tool, ToolContext};

/// Input of `close` (nothing).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CloseInput {}

/// Output of `close`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CloseOutput {
    /// Always true.
    closed: bool,
    /// The session that closed.
    session_id: String,
}

pub(super) fn tool() -> Tool {
    Tool::session(
        "close",
        "Close this session. Its pages, cookies, storage and files are discarded.",
        |context: ToolContext, _input: CloseInput| async move {
            context.sessions.close(&context.session.id, "requested").await?;
            Ok(CloseOutput { closed: true, session_id: context.session.id.clone() })
        },
    )
    .presented(Presentation { ends_session: true, ..Presentation::default() })
}
