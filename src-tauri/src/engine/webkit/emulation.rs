//! What a session emulates, carried out on its views (`engine::emulation` holds the types):
//! media features, the user agent, HTTP credentials and the session's own clipboard.
//!
//! Media features. WebKitGTK 2.50 has no per-view way to set `prefers-color-scheme`,
//! `prefers-reduced-motion` or `forced-colors`: `PageClientImpl::effectiveAppearanceIsDark`
//! reads GTK's settings of the view's screen (`gtk-application-prefer-dark-theme`,
//! `gtk-theme-name`, `$GTK_THEME`; one `GtkSettings` per screen, so per daemon), reduced
//! motion follows `gtk-enable-animations` the same way, and neither `WebKitSettings`,
//! `WebKitWebsitePolicies` nor the web-process extension's API reaches WebCore's
//! appearance override (only the Web Inspector protocol does, which malo does not run).
//! So a page-world script (`scripts/emulation_media.js`, every frame, before the page's
//! scripts) rewrites the matching `@media` conditions of the document's style sheets and
//! answers `matchMedia` for them, from the session's first media emulation on (before it,
//! pages keep the engine's own `matchMedia`); the engine itself always stays light.
//!
//! The clipboard. WebKitGTK copies to and pastes from GTK's X11/Wayland clipboard, the
//! person's, shared by every session: a page's copy (a trusted Ctrl+C, or
//! `execCommand('copy')` in a user gesture) wrote the person's clipboard, and a paste in
//! any session read it. The isolated-world script `scripts/clipboard.js` takes every
//! copy, cut and paste event first, plays it in the page with the session's clipboard, and
//! cancels the engine's own, so the system clipboard is neither read nor written.

use std::cell::RefCell;
use std::rc::Rc;

use glib::object::ObjectExt;

use serde_json::{json, Value};
use webkit2gtk::{
    AuthenticationRequestExt, SettingsExt, UserContentInjectedFrames, UserContentManagerExt, UserScript, UserScriptInjectionTime,
    WebViewExt,
};

use super::SCRIPT_WORLD;
use crate::engine::emulation::{EmulationRequest, HttpCredentials, Media};
use crate::engine::Answer;
use crate::error::Result;

/// The page-world media script, with its channel and state still to be filled in.
const MEDIA_SOURCE: &str = include_str!("../scripts/emulation_media.js");
/// The isolated-world clipboard script, with its secret, handler and text to be filled in.
const CLIPBOARD_SOURCE: &str = include_str!("../scripts/clipboard.js");
/// The script message handler (in malo's world) a page's copy reaches the session by.
const CLIPBOARD_HANDLER: &str = "maloclip";

/// One view of the session, with the scripts installed in it for new documents.
struct Attached {
    view: glib::WeakRef<webkit2gtk::WebView>,
    media: RefCell<Option<UserScript>>,
    clipboard: RefCell<Option<UserScript>>,
}

/// What one session emulates, shared by its tabs.
pub(super) struct SessionEmulation {
    media: RefCell<Media>,
    /// Whether the session ever emulated a media feature: until then its pages keep the
    /// engine's own `matchMedia` (no script of malo's in their world).
    media_used: std::cell::Cell<bool>,
    /// The user agent set by `emulate` (`None`: the session's own, `own_user_agent`).
    user_agent: RefCell<Option<String>>,
    own_user_agent: Option<String>,
    credentials: RefCell<Option<HttpCredentials>>,
    clipboard: RefCell<String>,
    /// The page-world event the media script listens to (not a secret: a page that sends
    /// it changes only its own emulation).
    channel: String,
    /// Between the clipboard scripts of a tab's frames (isolated world; pages never see it).
    secret: String,
    views: RefCell<Vec<Attached>>,
}

impl SessionEmulation {
    /// A session's emulation: its color scheme at creation, if it named one, and its own
    /// user agent (`None`: WebKit's).
    pub(super) fn new(identity: &crate::engine::identity::Identity) -> Rc<SessionEmulation> {
        let mut media = Media::default();
        if let Some(scheme) = identity.color_scheme {
            let scheme = match scheme {
                crate::engine::identity::ColorScheme::Light => "light",
                crate::engine::identity::ColorScheme::Dark => "dark",
            };
            media.color_scheme = Some(scheme.into());
        }
        let media_used = media != Media::default();
        Rc::new(SessionEmulation {
            media: RefCell::new(media),
            media_used: std::cell::Cell::new(media_used),
            user_agent: RefCell::default(),
            own_user_agent: identity.user_agent.clone(),
            credentials: RefCell::default(),
            clipboard: RefCell::default(),
            channel: format!("malo-{}", crate::secret::random_hex(8)),
            secret: crate::secret::random_hex(16),
            views: RefCell::default(),
        })
    }

    /// Gives a new view of the session what the session emulates: scripts for its
    /// documents, its user agent, the clipboard's message handler and HTTP credentials.
    pub(super) fn attach(self: &Rc<Self>, view: &webkit2gtk::WebView) {
        let attached = Attached { view: view.downgrade(), media: RefCell::default(), clipboard: RefCell::default() };
        if let Some(content) = view.user_content_manager() {
            content.register_script_message_handler_in_world(CLIPBOARD_HANDLER, SCRIPT_WORLD);
            let weak = Rc::downgrade(self);
            content.connect_script_message_received(Some(CLIPBOARD_HANDLER), move |_content, message| {
                use javascriptcore::ValueExt;
                let Some(text) = message.js_value().filter(|value| value.is_string()).map(|value| value.to_str().to_string()) else {
                    return;
                };
                if let Some(emulation) = weak.upgrade() {
                    if text.len() <= crate::engine::emulation::MAX_CLIPBOARD {
                        emulation.set_clipboard(text);
                    }
                }
            });
        }
        if self.media_used.get() {
            self.install_media(&attached, view);
        }
        self.install_clipboard(&attached, view);
        if let Some(user_agent) = self.user_agent.borrow().as_ref() {
            if let Some(settings) = WebViewExt::settings(view) {
                settings.set_user_agent(Some(user_agent));
            }
        }
        let weak = Rc::downgrade(self);
        view.connect_authenticate(move |_view, request| {
            if let Some(emulation) = weak.upgrade() {
                emulation.authenticate(request);
            } else {
                request.cancel();
            }
            true
        });
        self.views.borrow_mut().retain(|attached| attached.view.upgrade().is_some());
        self.views.borrow_mut().push(attached);
    }

    /// Carries out one request; answers the session's emulation state, or the clipboard.
    pub(super) fn handle(&self, request: EmulationRequest) -> Result<Answer> {
        match request {
            EmulationRequest::Media { color_scheme, reduced_motion, forced_colors } => {
                let before = self.media.borrow().clone();
                self.media.borrow_mut().change(color_scheme, reduced_motion, forced_colors);
                if *self.media.borrow() == before {
                    return Ok(Answer::Value(self.state()));
                }
                self.media_used.set(true);
                for attached in self.views.borrow().iter() {
                    if let Some(view) = attached.view.upgrade() {
                        let first = attached.media.borrow().is_none();
                        self.install_media(attached, &view);
                        if first {
                            // The documents open now have no media script yet.
                            view.evaluate_javascript(&self.media_source(), None, None, None::<&webkit2gtk::gio::Cancellable>, |_| {});
                        } else {
                            self.tell_media(&view);
                        }
                    }
                }
            }
            EmulationRequest::UserAgent(user_agent) => {
                *self.user_agent.borrow_mut() = user_agent;
                let wanted = self.user_agent.borrow().clone().or_else(|| self.own_user_agent.clone());
                for attached in self.views.borrow().iter() {
                    if let Some(settings) = attached.view.upgrade().and_then(|view| WebViewExt::settings(&view)) {
                        match &wanted {
                            Some(user_agent) => settings.set_user_agent(Some(user_agent)),
                            // WebKit's own again.
                            None => settings.set_user_agent(None),
                        }
                    }
                }
            }
            EmulationRequest::Credentials(credentials) => *self.credentials.borrow_mut() = credentials,
            EmulationRequest::ClipboardRead => return Ok(Answer::Value(json!(self.clipboard.borrow().clone()))),
            EmulationRequest::ClipboardWrite(text) => {
                self.set_clipboard(text);
                return Ok(Answer::Done);
            }
        }
        Ok(Answer::Value(self.state()))
    }

    /// What the session emulates now (never the password).
    fn state(&self) -> Value {
        let credentials = self.credentials.borrow();
        json!({
            "media": *self.media.borrow(),
            "user_agent": *self.user_agent.borrow(),
            "credentials": credentials.as_ref().map(|credentials| json!({ "username": credentials.username, "origin": credentials.origin })),
        })
    }

    /// Answers a 401 challenge with the session's credentials when they are for its
    /// origin; otherwise (and after a rejected answer, so a wrong password does not loop)
    /// continues without credentials, so the page is the server's 401 answer. A proxy's challenge is never answered
    /// with a site's credentials. WebKit's own answer would be a GTK dialog in the hidden
    /// view that nobody can fill in.
    fn authenticate(&self, request: &webkit2gtk::AuthenticationRequest) {
        let credentials = self.credentials.borrow();
        let origin = request.security_origin().map(|origin| origin_text(&origin)).unwrap_or_default();
        let usable = credentials.as_ref().filter(|credentials| {
            !request.is_for_proxy() && !request.is_retry() && credentials.origin.as_ref().is_none_or(|wanted| *wanted == origin)
        });
        answer(request, usable);
    }

    /// Sets the session's clipboard: every document of its tabs sees it from now on.
    fn set_clipboard(&self, text: String) {
        *self.clipboard.borrow_mut() = text;
        let script = format!("globalThis.__maloClipboard && __maloClipboard.set({});", json!(*self.clipboard.borrow()));
        for attached in self.views.borrow().iter() {
            if let Some(view) = attached.view.upgrade() {
                self.install_clipboard(attached, &view);
                view.evaluate_javascript(&script, Some(SCRIPT_WORLD), None, None::<&webkit2gtk::gio::Cancellable>, |_| {});
            }
        }
    }

    /// The media script for the view's next documents, with the state now.
    fn install_media(&self, attached: &Attached, view: &webkit2gtk::WebView) {
        let script = UserScript::new(&self.media_source(), UserContentInjectedFrames::AllFrames, UserScriptInjectionTime::Start, &[], &[]);
        replace_script(view, &attached.media, script);
    }

    /// Tells the view's current documents (its main frame's and the same-origin frames'
    /// within) the state now; other frames take it with their next document.
    fn tell_media(&self, view: &webkit2gtk::WebView) {
        let script = format!(
            "(() => {{ const detail = {}; const tell = (w) => {{ try {{ w.document.dispatchEvent(new w.CustomEvent({}, {{ detail }})); }} catch (e) {{}} \
             try {{ for (let i = 0; i < w.frames.length; i++) tell(w.frames[i]); }} catch (e) {{}} }}; tell(window); }})();",
            json!(self.media_state()),
            json!(self.channel)
        );
        view.evaluate_javascript(&script, None, None, None::<&webkit2gtk::gio::Cancellable>, |_| {});
    }

    /// The media script with its channel and the state now.
    fn media_source(&self) -> String {
        MEDIA_SOURCE.replace("__MALO_MEDIA_CHANNEL__", &self.channel).replace("__MALO_MEDIA_STATE__", &self.media_state())
    }

    fn media_state(&self) -> String {
        self.media.borrow().page_state().to_string()
    }

    /// The clipboard script for the view's next documents, with the text now.
    fn install_clipboard(&self, attached: &Attached, view: &webkit2gtk::WebView) {
        let source = CLIPBOARD_SOURCE
            .replace("__MALO_CLIP_SECRET__", &self.secret)
            .replace("__MALO_CLIP_HANDLER__", CLIPBOARD_HANDLER)
            .replace("__MALO_CLIP_TEXT__", &json!(*self.clipboard.borrow()).to_string());
        let script =
            UserScript::for_world(&source, UserContentInjectedFrames::AllFrames, UserScriptInjectionTime::Start, SCRIPT_WORLD, &[], &[]);
        replace_script(view, &attached.clipboard, script);
    }
}

/// Swaps the view's script in `slot` for `script`.
fn replace_script(view: &webkit2gtk::WebView, slot: &RefCell<Option<UserScript>>, script: UserScript) {
    let Some(content) = view.user_content_manager() else { return };
    if let Some(old) = slot.borrow_mut().take() {
        content.remove_script(&old);
    }
    content.add_script(&script);
    *slot.borrow_mut() = Some(script);
}

/// `scheme://host[:port]`, the port left out when it is the scheme's default (as
/// `vault::origin_of` writes origins).
fn origin_text(origin: &webkit2gtk::SecurityOrigin) -> String {
    let scheme = origin.protocol().map(|text| text.to_string()).unwrap_or_default();
    let host = origin.host().map(|text| text.to_string()).unwrap_or_default();
    let port = origin.port();
    let default = matches!((scheme.as_str(), port), ("http", 80) | ("https", 443) | (_, 0));
    if default {
        format!("{scheme}://{host}")
    } else {
        format!("{scheme}://{host}:{port}")
    }
}

/// Answers the challenge with `credentials` (kept for the session's context, as a browser
/// keeps them until it quits), or with none: the load goes on and shows the server's 401
/// answer (`cancel` would fail the navigation instead). The binding lacks
/// `webkit_authentication_request_authenticate`.
fn answer(request: &webkit2gtk::AuthenticationRequest, credentials: Option<&HttpCredentials>) {
    use glib::translate::ToGlibPtr;
    let credential = credentials.map(|credentials| {
        webkit2gtk::Credential::new(&credentials.username, &credentials.password, webkit2gtk::CredentialPersistence::ForSession)
    });
    let request_pointer: *mut webkit2gtk::ffi::WebKitAuthenticationRequest = request.to_glib_none().0;
    let credential_pointer: *mut webkit2gtk::ffi::WebKitCredential =
        credential.as_ref().map_or(std::ptr::null_mut(), |credential| credential.to_glib_none().0);
    #[allow(unsafe_code)]
    // SAFETY: both pointers are valid for the call (borrowed from live wrappers) or the
    // credential's is null, which WebKit takes as "no credential"; it copies the credential
    // and does not keep the pointer.
    unsafe {
        webkit2gtk::ffi::webkit_authentication_request_authenticate(request_pointer, credential_pointer);
    }
}
