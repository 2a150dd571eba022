//! Page and Emulation: loads (navigate, reload, history), scripts for new documents,
//! screenshots, layout metrics and the viewport's size. Loads and resizes take the tab's
//! turn, as tools do; loads answer at commit and the rest is told by events.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use super::{Context, PageSession};
use crate::cdp::wire::{ProtocolError, Reply};
use crate::engine::devtools::{DevtoolsRequest, HistoryEntry, LoadBegun, LoadTarget, RuntimeOp, World};
use crate::engine::{Capture, Frame, FromAnswer, TabRequest};
use crate::imaging::{self, Format, PixelRect};

/// How long a load may take to commit.
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);
/// The private world the endpoint reads layout in.
const READ_WORLD: &str = "__malo_devtools_read__";

impl PageSession {
    /// Asks the engine something of this page's tab.
    pub(super) async fn ask<T: FromAnswer>(&self, request: TabRequest) -> Result<T, ProtocolError> {
        let target = self.shared.session.address(&self.tab);
        Ok(self.shared.session.engine.tab(target, request).await?)
    }

    async fn load(&self, target: LoadTarget) -> Reply {
        let loader = self.expect_load();
        let begun: Value = {
            let _turn = self.tab.lock.lock().await;
            self.ask(TabRequest::Devtools(DevtoolsRequest::Load { target, timeout: LOAD_TIMEOUT })).await?
        };
        let begun: LoadBegun = serde_json::from_value(begun).map_err(|error| ProtocolError::server(error.to_string()))?;
        let mut answer = json!({ "frameId": self.frame_id, "loaderId": loader });
        if begun.is_download {
            answer["isDownload"] = json!(true);
        } else if let (false, Some(error)) = (begun.committed, begun.net_error) {
            answer["errorText"] = json!(format!("net::ERR_{}", error.to_uppercase()));
        }
        Ok(answer)
    }

    pub(super) async fn navigate(&self, params: &Value) -> Reply {
        let url = params["url"].as_str().ok_or_else(|| ProtocolError::invalid("url is required"))?;
        if url != "about:blank" {
            crate::urls::check_navigation_url(url).map_err(|error| {
                ProtocolError::server(format!("Cannot navigate to invalid URL ({}: {})", error.code.as_str(), error.message))
            })?;
        }
        self.load(LoadTarget::Url(url.to_string())).await
    }

    pub(super) async fn reload(&self) -> Reply {
        self.load(LoadTarget::Reload).await
    }

    async fn entries(&self) -> Result<Vec<HistoryEntry>, ProtocolError> {
        let entries: Value = self.ask(TabRequest::Devtools(DevtoolsRequest::History)).await?;
        serde_json::from_value(entries).map_err(|error| ProtocolError::server(error.to_string()))
    }

    pub(super) async fn history(&self) -> Reply {
        let entries = self.entries().await?;
        let current = entries.iter().position(|entry| entry.offset == 0).unwrap_or(0);
        let shown: Vec<Value> = entries
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                let url = crate::cdp::targets::shown_url(&entry.url);
                json!({ "id": index, "url": url, "userTypedURL": url, "title": entry.title, "transitionType": "typed" })
            })
            .collect();
        Ok(json!({ "currentIndex": current, "entries": shown }))
    }

    pub(super) async fn go_to_entry(&self, params: &Value) -> Reply {
        let id = params["entryId"].as_u64().ok_or_else(|| ProtocolError::invalid("entryId is required"))? as usize;
        let entries = self.entries().await?;
        let entry = entries.get(id).ok_or_else(|| ProtocolError::server("No entry with passed id"))?;
        if entry.offset == 0 {
            return self.reload().await.map(|_| json!({}));
        }
        self.load(LoadTarget::HistoryStep(entry.offset)).await.map(|_| json!({}))
    }

    pub(super) async fn add_script(&self, params: &Value) -> Reply {
        let source = params["source"].as_str().unwrap_or("").to_string();
        let world = match params["worldName"].as_str().filter(|name| !name.is_empty()) {
            Some(name) => {
                let mut state = self.state();
                if !state.worlds.iter().any(|world| world == name) {
                    state.worlds.push(name.to_string());
                }
                World::Named(name.to_string())
            }
            None => World::Page,
        };
        let crate::engine::Count(id) =
            self.ask(TabRequest::Devtools(DevtoolsRequest::AddDocumentScript { world, source, all_frames: true })).await?;
        let identifier = id.to_string();
        self.state().scripts.insert(identifier.clone(), id);
        Ok(json!({ "identifier": identifier }))
    }

    pub(super) async fn remove_script(&self, params: &Value) -> Reply {
        let identifier = params["identifier"].as_str().unwrap_or("");
        let id = self.state().scripts.remove(identifier);
        if let Some(id) = id {
            let _: () = self.ask(TabRequest::Devtools(DevtoolsRequest::RemoveDocumentScript { id })).await?;
        }
        Ok(json!({}))
    }

    pub(super) async fn bring_to_front(&self) -> Reply {
        self.shared.tool("tab_select", json!({ "tab": self.tab.id })).await?;
        Ok(json!({}))
    }

    /// The viewport's size and scroll position and the document's size (CSS px).
    async fn layout(&self) -> Result<Layout, ProtocolError> {
        let context = Context { id: 0, world: World::Named(READ_WORLD.into()) };
        let expression = "({ width: innerWidth, height: innerHeight, x: scrollX, y: scrollY, \
            contentWidth: Math.max(document.documentElement.scrollWidth, innerWidth), \
            contentHeight: Math.max(document.documentElement.scrollHeight, innerHeight) })";
        let request = json!({ "context": 0, "returnByValue": true, "awaitPromise": false });
        let asked = DevtoolsRequest::Runtime {
            world: context.world,
            op: RuntimeOp::Evaluate,
            code: Some(expression.into()),
            request,
            limit: Duration::from_secs(10),
        };
        let answer: Value = self.ask(TabRequest::Devtools(asked)).await?;
        serde_json::from_value(answer["result"]["value"].clone()).map_err(|error| ProtocolError::server(format!("layout: {error}")))
    }

    pub(super) async fn layout_metrics(&self) -> Reply {
        let layout = self.layout().await?;
        let layout_viewport = json!({ "pageX": layout.x, "pageY": layout.y, "clientWidth": layout.width, "clientHeight": layout.height });
        let visual_viewport = json!({
            "offsetX": 0, "offsetY": 0, "pageX": layout.x, "pageY": layout.y,
            "clientWidth": layout.width, "clientHeight": layout.height, "scale": 1, "zoom": 1,
        });
        let content = json!({ "x": 0, "y": 0, "width": layout.content_width, "height": layout.content_height });
        Ok(json!({
            "layoutViewport": layout_viewport, "visualViewport": visual_viewport, "contentSize": content,
            "cssLayoutViewport": layout_viewport, "cssVisualViewport": visual_viewport, "cssContentSize": content,
        }))
    }

    /// `Page.captureScreenshot`: the viewport (or the whole document), clipped, as PNG,
    /// JPEG or WebP; encoding runs off the engine's thread.
    pub(super) async fn screenshot(&self, params: &Value) -> Reply {
        let whole = params["captureBeyondViewport"].as_bool() == Some(true);
        let frame: Frame = self.ask(TabRequest::Screenshot(if whole { Capture::DOCUMENT } else { Capture::VIEWPORT })).await?;
        let clip = match params.get("clip").filter(|clip| clip.is_object()) {
            None => None,
            Some(clip) => {
                let layout = self.layout().await?;
                let scale = if layout.width > 0.0 { frame.width as f64 / layout.width } else { 1.0 };
                let (dx, dy) = if whole { (0.0, 0.0) } else { (layout.x, layout.y) };
                let number = |name: &str| clip[name].as_f64().unwrap_or(0.0);
                Some(((number("x") - dx) * scale, (number("y") - dy) * scale, number("width") * scale, number("height") * scale))
            }
        };
        let format = match params["format"].as_str() {
            Some("jpeg") => Format::Jpeg,
            Some("webp") => Format::Webp,
            _ => Format::Png,
        };
        let quality = params["quality"].as_u64().unwrap_or(80).clamp(1, 100) as u8;
        let data = tokio::task::spawn_blocking(move || encode(frame, clip, format, quality))
            .await
            .map_err(|error| ProtocolError::server(error.to_string()))??;
        Ok(json!({ "data": base64::engine::general_purpose::STANDARD.encode(data) }))
    }

    pub(super) async fn set_viewport(&self, params: &Value) -> Reply {
        let size = |name: &str| params[name].as_u64().filter(|size| *size > 0).map(|size| size as u32);
        let width = size("width").unwrap_or(self.shared.session.width);
        let height = size("height").unwrap_or(self.shared.session.height);
        let _turn = self.tab.lock.lock().await;
        let _: () = self.ask(TabRequest::Devtools(DevtoolsRequest::SetViewport { width, height })).await?;
        Ok(json!({}))
    }

    pub(super) async fn clear_viewport(&self) -> Reply {
        let (width, height) = (self.shared.session.width, self.shared.session.height);
        let _turn = self.tab.lock.lock().await;
        let _: () = self.ask(TabRequest::Devtools(DevtoolsRequest::SetViewport { width, height })).await?;
        Ok(json!({}))
    }
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Layout {
    width: f64,
    height: f64,
    x: f64,
    y: f64,
    content_width: f64,
    content_height: f64,
}

/// A frame, clipped to a device-pixel rectangle if asked (rounded to whole pixels, at
/// least one across and down, cut at the frame's edges), in the asked format.
fn encode(frame: Frame, clip: Option<(f64, f64, f64, f64)>, format: Format, quality: u8) -> Result<Vec<u8>, ProtocolError> {
    let frame = match clip {
        None => frame,
        Some((x, y, width, height)) => {
            let whole = |value: f64| value.max(0.0).round() as u32;
            let rect = PixelRect { x: whole(x), y: whole(y), width: whole(width).max(1), height: whole(height).max(1) };
            imaging::crop(&frame, rect).map_err(|_| ProtocolError::server("the clip is outside the captured area"))?
        }
    };
    imaging::encode(&frame, format, quality)
        .map_err(|error| ProtocolError::server(format!("the screenshot could not be encoded: {}", error.message)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(width: u32, height: u32) -> Frame {
        Frame { width, height, rgba: vec![200; (width * height * 4) as usize] }
    }

    #[test]
    fn screenshots_are_clipped_and_encoded_as_asked() {
        let png = encode(frame(40, 30), None, Format::Png, 80).unwrap();
        let decoded = image::load_from_memory(&png).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (40, 30));
        let jpeg = encode(frame(40, 30), Some((10.0, 5.0, 20.0, 10.0)), Format::Jpeg, 50).unwrap();
        assert_eq!(&jpeg[..2], &[0xFF, 0xD8], "a JPEG");
        let decoded = image::load_from_memory(&jpeg).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (20, 10));
        let webp = encode(frame(40, 30), Some((30.4, 20.6, 50.0, 50.0)), Format::Webp, 50).unwrap();
        assert_eq!(&webp[..4], b"RIFF", "a WebP");
        let decoded = image::load_from_memory(&webp).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (10, 9), "a clip past the edges is cut at them");
        assert!(encode(frame(40, 30), Some((50.0, 0.0, 5.0, 5.0)), Format::Png, 80).is_err(), "a clip outside the frame is an error");
    }
}
