//! WebKit contexts: one per data directory (an anonymous session's own, or a profile's,
//! shared by that profile's sessions), each with its own website data manager (cookies,
//! storage, cache) and network process.
//!
//! Why not in-memory data managers for anonymous sessions: WebKitGTK (4.1 API) lets an
//! ephemeral data manager join the network process of an existing persistent one, which
//! cut each extra session from +57 to +45 MiB on the benchmark (1 -> 5 sessions on the
//! large page, 2026-12-03), but an ephemeral session has no HTTP cache at all (measured:
//! a `max-age=3600` script, image and fetch were fetched again on every visit). Agents
//! move from page to page of one site, so the cache stays. Web-process memory-pressure
//! settings (limit 200 MB, thresholds 0.15/0.30, poll 1 s) changed nothing measurable.
//!
//! Tabs are WebKit views built here directly, not through wry: wry connects a download
//! handler of its own to every context it builds views in, and that handler saves into
//! the XDG download folder or the process's working directory (measured: a page's
//! `<a download>` landed in the daemon's working directory).

use std::path::Path;

use webkit2gtk::{
    CookieManagerExt, CookiePersistentStorage, NetworkProxyMode, NetworkProxySettings, TLSErrorsPolicy, WebContextExt, WebsiteDataManager,
    WebsiteDataManagerExt,
};

/// A context whose data (cookies, storage, cache) lives in `dir`, whose web processes
/// load malo's extension from `web_process_dir`.
pub(super) fn persistent(dir: &Path, web_process_dir: &Path) -> webkit2gtk::WebContext {
    let dir_text = dir.to_string_lossy();
    let manager = WebsiteDataManager::builder().base_cache_directory(&*dir_text).base_data_directory(&*dir_text).build();
    if let Some(cookies) = manager.cookie_manager() {
        cookies.set_persistent_storage(&dir.join("cookies").to_string_lossy(), CookiePersistentStorage::Text);
    }
    let context = webkit2gtk::WebContext::builder().website_data_manager(&manager).build();
    context.set_automation_allowed(false);
    context.set_web_extensions_directory(&web_process_dir.to_string_lossy());
    context
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
