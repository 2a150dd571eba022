//! `set_viewport`: a tab's viewport size, and the scale its pages' `devicePixelRatio`
//! follows. WebKitGTK takes the scale from the daemon's screen, for every page at once
//! (`engine::webkit::identity`), so a `device_scale_factor` is accepted only when it is the
//! screen's own, as at session creation: any other is `E_UNSUPPORTED` naming the field, and
//! nothing changes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Tool, ToolContext};
use crate::engine::devtools::DevtoolsRequest;
use crate::engine::identity::{check_device_scale_factor, unsupported};
use crate::engine::{SessionRequest, TabRequest};
use crate::error::{Error, Result};

/// Smallest and largest viewport side, in CSS pixels (as at session creation).
const SIDES: std::ops::RangeInclusive<u32> = 100..=4096;

/// Input of `set_viewport`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ViewportInput {
    /// Width in CSS pixels (100-4096).
    #[schemars(range(min = 100, max = 4096))]
    width: u32,
    /// Height in CSS pixels (100-4096).
    #[schemars(range(min = 100, max = 4096))]
    height: u32,
    /// `devicePixelRatio`: only the daemon's screen's own is accepted (1 on malo's screens).
    #[serde(default)]
    device_scale_factor: Option<f64>,
}

/// Output of `set_viewport`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ViewportOutput {
    /// The viewport's width now.
    width: u32,
    /// The viewport's height now.
    height: u32,
    /// The `devicePixelRatio` its pages see.
    device_scale_factor: f64,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "set_viewport",
        "Resize the tab's viewport (CSS pixels). Width and height are 100-4096; pages see the new size when this answers. device_scale_factor is accepted only when it is the daemon's screen's own (WebKitGTK keeps devicePixelRatio per daemon): any other is E_UNSUPPORTED and nothing changes.",
        |context: ToolContext, input: ViewportInput| async move { set_viewport(&context, input).await },
    )
}

async fn set_viewport(context: &ToolContext, input: ViewportInput) -> Result<ViewportOutput> {
    for (field, side) in [("width", input.width), ("height", input.height)] {
        if !SIDES.contains(&side) {
            return Err(Error::bad_request(format!("{field} must be between {} and {} pixels", SIDES.start(), SIDES.end()))
                .with_details(serde_json::json!({ "field": field })));
        }
    }
    let session = &context.session;
    let screen: Value = session.engine.session(&session.id, SessionRequest::ScreenScale).await?;
    let screen = screen.as_f64().unwrap_or(1.0);
    if let Some(factor) = input.device_scale_factor {
        check_device_scale_factor(factor)?;
        if (factor - screen).abs() > f64::EPSILON {
            return Err(unsupported(
                "device_scale_factor",
                format!("WebKitGTK takes devicePixelRatio from the daemon's screen ({screen}), not per session or tab"),
            ));
        }
    }
    let (width, height) = (input.width, input.height);
    context.ask::<()>(TabRequest::Devtools(DevtoolsRequest::SetViewport { width, height })).await?;
    Ok(ViewportOutput { width, height, device_scale_factor: screen })
}
