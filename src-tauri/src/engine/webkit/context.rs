//! WebKit contexts: one per data directory (an anonymous session's own, or a profile's,
//! shared by that profile's sessions), each with its own website data manager (cookies,
//! storage, cache) and network process.
//!
//! Tabs are WebKit views built here directly, not through wry: wry connects a download
//! handler of its own to every context it builds views in, and that handler saves into
//! the XDG download folder or the process's working directory (measured: a page's
//! `<a download>` landed in the daemon's working directory).

use std::path::Path;

use glib::ToVariant;
use webkit2gtk::{
    CookieManagerExt, CookiePersistentStorage, NetworkProxyMode, NetworkProxySettings, TLSErrorsPolicy, WebContextExt, WebsiteDataManager,
    WebsiteDataManagerExt,
};

use crate::secret::Token;

/// A WebKit context and the secret with which its web processes name each request's tab
/// to the session proxy (see `network::TAB_MARKER`).
#[derive(Clone)]
pub(super) struct Context {
    pub(super) web: webkit2gtk::WebContext,
    /// Handed to every web process of the context as it starts, never to a page.
    pub(super) secret: Token,
}

/// A context whose data (cookies, storage, cache) lives in `dir`, whose web processes
/// load malo's extension from `web_process_dir`.
pub(super) fn persistent(dir: &Path, web_process_dir: &Path) -> Context {
    let dir_text = dir.to_string_lossy();
    let manager = WebsiteDataManager::builder().base_cache_directory(&*dir_text).base_data_directory(&*dir_text).build();
    if let Some(cookies) = manager.cookie_manager() {
        cookies.set_persistent_storage(&dir.join("cookies").to_string_lossy(), CookiePersistentStorage::Text);
    }
    let context = webkit2gtk::WebContext::builder().website_data_manager(&manager).build();
    context.set_automation_allowed(false);
    context.set_web_extensions_directory(&web_process_dir.to_string_lossy());
    let secret = Token::generate();
    let data = secret.expose().to_variant();
    // Each web process gets the secret as it starts (the extension's initialization data).
    context.connect_initialize_web_extensions(move |context| context.set_web_extensions_initialization_user_data(&data));
    Context { web: context, secret }
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
