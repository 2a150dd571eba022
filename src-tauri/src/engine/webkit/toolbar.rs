//! The takeover window's toolbar (`ui/toolbar.html`): a small view of malo's own page on a
//! context of its own (in memory, nothing of any session's), whose web processes run
//! sandboxed like every other. Its buttons post `{command, url?}` as JSON through
//! `window.ipc.postMessage`; the daemon sends the page's URL with `window.setUrl(url)`.

use std::cell::OnceCell;

use serde_json::json;
use webkit2gtk::{
    SettingsExt, UserContentInjectedFrames, UserContentManagerExt, UserScript, UserScriptInjectionTime, WebContextExt, WebViewExt,
};

/// The name of the toolbar's message handler.
const HANDLER: &str = "ipc";

thread_local! {
    /// One context for every toolbar, built on first use (main thread only).
    static CONTEXT: OnceCell<webkit2gtk::WebContext> = const { OnceCell::new() };
}

fn context() -> webkit2gtk::WebContext {
    CONTEXT.with(|cell| {
        cell.get_or_init(|| {
            let context = webkit2gtk::WebContext::new_ephemeral();
            context.set_automation_allowed(false);
            super::sandbox::apply(&context, &[]);
            context
        })
        .clone()
    })
}

/// A toolbar view showing `html`, its address bar at `initial_url`, handing each message
/// of its page to `on_message`.
pub(super) fn build(html: &str, initial_url: &str, on_message: impl Fn(&str) + 'static) -> webkit2gtk::WebView {
    let content = webkit2gtk::UserContentManager::new();
    let view = webkit2gtk::WebView::builder()
        .web_context(&context())
        .user_content_manager(&content)
        .settings(&webkit2gtk::Settings::new())
        .build();
    if let Some(settings) = WebViewExt::settings(&view) {
        settings.set_enable_developer_extras(false);
        settings.set_javascript_can_access_clipboard(false);
        settings.set_hardware_acceleration_policy(webkit2gtk::HardwareAccelerationPolicy::Never);
    }
    let bridge = format!(
        "window.__maloUrl = {}; Object.defineProperty(window, 'ipc', {{ value: Object.freeze({{ postMessage: (message) => window.webkit.messageHandlers.{HANDLER}.postMessage(message) }}) }});",
        json!(initial_url)
    );
    content.add_script(&UserScript::new(&bridge, UserContentInjectedFrames::TopFrame, UserScriptInjectionTime::Start, &[], &[]));
    content.connect_script_message_received(Some(HANDLER), move |_content, message| {
        use javascriptcore::ValueExt;
        if let Some(text) = message.js_value().map(|value| value.to_str()) {
            on_message(&text);
        }
    });
    content.register_script_message_handler(HANDLER);
    view.load_html(html, None);
    view
}

/// Shows `url` in the toolbar's address bar (unless the person is typing there).
pub(super) fn set_url(view: &webkit2gtk::WebView, url: &str) {
    let script = format!("window.setUrl && window.setUrl({})", json!(url));
    view.evaluate_javascript(&script, None, None, None::<&webkit2gtk::gio::Cancellable>, |_| {});
}
