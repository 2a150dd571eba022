//! `highlight`'s side of the engine: an outline drawn over a tab's page for a person who
//! watches it (the takeover window, a live view). The engine draws it on the view's own
//! widget after WebKit has painted, so the page never sees it, and WebKit's snapshots
//! (screenshots) never hold it; `screenshot {highlight: true}` draws it on the picture.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the outline is: an element's border box in the top page's viewport (CSS px) when
/// it was highlighted. It stays there in the viewport (it does not follow a scroll).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HighlightBox {
    /// From the viewport's left edge.
    pub x: f64,
    /// From the viewport's top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// What `highlight` asks of a tab.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HighlightRequest {
    /// Draw the outline here (replacing any other), for `duration` (none: until cleared).
    Show { area: HighlightBox, duration: Option<Duration> },
    /// Remove the outline; answers whether there was one.
    Clear,
    /// The outline shown now, as JSON (`null`: none).
    Current,
}

/// The outline's colour (RGB): a magenta no page theme is likely to use.
pub const HIGHLIGHT_RGB: [u8; 3] = [236, 0, 140];
/// The outline's width, in CSS px, drawn around the box (outside it).
pub const HIGHLIGHT_WIDTH: f64 = 3.0;
