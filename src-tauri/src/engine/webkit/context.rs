//! WebKit contexts: one per data directory (an anonymous session's own, or a profile's,
//! shared by that profile's sessions), each with its own website data manager (cookies,
//! storage, cache) and network process.
//!
//! Why not in-memory data managers for anonymous sessions: WebKitGTK's 4.1 API starts a
//! network process for every persistent data manager (WebKit's `networkProcessForSession`
//! shares one only under the 6.0 API), and lets an ephemeral data manager join the network
//! process of an existing persistent one. That cut each extra session from +57 to +45 MiB
//! on the benchmark (1 -> 5 sessions on the large page, 2026-12-03), but an ephemeral
//! session has no HTTP cache at all (measured: a `max-age=3600` script, image and fetch
//! were fetched again on every visit). Agents move from page to page of one site, so the
//! cache stays. Web-process memory-pressure settings (limit 200 MB, thresholds 0.15/0.30,
//! poll 1 s) changed nothing measurable.
//!
//! Tabs are WebKit views built here directly, not through wry: wry connects a download
//! handler of its own to every context it builds views in, and that handler saves into
//! the XDG download folder or the process's working directory (measured: a page's
//! `<a download>` landed in the daemon's working directory).

use std::cell::Cell;
use std::path::Path;
use std::rc::Rc;

use glib::ToVariant;
use webkit2gtk::{
    CookieManagerExt, CookiePersistentStorage, GeolocationManagerExt, NetworkProxyMode, NetworkProxySettings, TLSErrorsPolicy,
    WebContextExt, WebsiteDataManager, WebsiteDataManagerExt,
};

use crate::engine::identity::Geolocation;
use crate::secret::Token;

/// A WebKit context and the secret with which its web processes name each request's tab
/// to the session proxy (see `network::TAB_MARKER`).
#[derive(Clone)]
pub(super) struct Context {
    pub(super) web: webkit2gtk::WebContext,
    /// Handed to every web process of the context as it starts, never to a page.
    pub(super) secret: Token,
    /// The time zone its pages follow (`time-zone-override`: fixed when it is built).
    pub(super) timezone: Option<String>,
    /// The position its pages' geolocation reads (WebKit has one geolocation manager per
    /// context); `None`: geolocation fails.
    pub(super) position: Rc<Cell<Option<Geolocation>>>,
}

/// A context whose data (cookies, storage, cache) lives in `dir`, whose web processes
/// load malo's extension from `web_process_dir`, whose pages follow `timezone` (default:
/// the daemon's) and read `position`.
pub(super) fn persistent(dir: &Path, web_process_dir: &Path, timezone: Option<&str>, position: Option<Geolocation>) -> Context {
    let dir_text = dir.to_string_lossy();
    let manager = WebsiteDataManager::builder().base_cache_directory(&*dir_text).base_data_directory(&*dir_text).build();
    if let Some(cookies) = manager.cookie_manager() {
        cookies.set_persistent_storage(&dir.join("cookies").to_string_lossy(), CookiePersistentStorage::Text);
    }
    let mut builder = webkit2gtk::WebContext::builder().website_data_manager(&manager);
    if let Some(timezone) = timezone {
        builder = builder.time_zone_override(timezone);
    }
    let context = builder.build();
    context.set_automation_allowed(false);
    context.set_web_extensions_directory(&web_process_dir.to_string_lossy());
    // Its web processes see the extension and nothing else of the daemon's files: the
    // network process (not sandboxed) reads uploads and writes downloads and the data.
    super::sandbox::apply(&context, &[(web_process_dir, true)]);
    let secret = Token::generate();
    let data = secret.expose().to_variant();
    // Each web process gets the secret as it starts (the extension's initialization data).
    context.connect_initialize_web_extensions(move |context| context.set_web_extensions_initialization_user_data(&data));
    let position = Rc::new(Cell::new(position));
    if let Some(manager) = context.geolocation_manager() {
        // Only pages granted `geolocation` get here (`tab/policy.rs`).
        let position = position.clone();
        manager.connect_start(move |manager| {
            match position.get() {
                Some(Geolocation { latitude, longitude, accuracy }) => {
                    manager.update_position(&mut webkit2gtk::GeolocationPosition::new(latitude, longitude, accuracy.unwrap_or(0.0)))
                }
                None => manager.failed("the session has no geolocation"),
            }
            true
        });
    }
    Context { web: context, secret, timezone: timezone.map(str::to_string), position }
}

/// Sends every request of the context through `proxy` (`http://127.0.0.1:<port>`), loopback
/// included. The proxy terminates TLS with its own leaves and verifies every upstream
/// certificate itself, so the context accepts what the proxy presents: with no host left
/// out of the proxy, no connection of the context reaches a server unverified.
pub(super) fn use_proxy(context: &webkit2gtk::WebContext, proxy: &str) {
    let Some(manager) = context.website_data_manager() else {
        tracing::error!("a context without a data manager cannot use the session proxy");
        return;
    };
    let mut settings = NetworkProxySettings::new(Some(proxy), &[]);
    manager.set_network_proxy_settings(NetworkProxyMode::Custom, Some(&mut settings));
    manager.set_tls_errors_policy(TLSErrorsPolicy::Ignore);
}
