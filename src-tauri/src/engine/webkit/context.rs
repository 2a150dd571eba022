//! WebKit contexts: one per data directory (an anonymous session's own, or a profile's,
//! shared by that profile's sessions), each with its own website data manager (cookies,
//! storage, cache) and network process.
//!
//! Tabs are WebKit views built here directly, not through wry: wry connects a download
//! handler of its own to every context it builds views in, and that handler saves into
//! the XDG download folder or the process's working directory (measured: a page's
//! `<a download>` landed in the daemon's working directory).

use std::path::Path;

use webkit2gtk::{CookieManagerExt, CookiePersistentStorage, WebContextExt, WebsiteDataManager, WebsiteDataManagerExt};

/// A context whose data (cookies, storage, cache) lives in `dir`.
pub(super) fn persistent(dir: &Path) -> webkit2gtk::WebContext {
    let dir_text = dir.to_string_lossy();
    let manager = WebsiteDataManager::builder().base_cache_directory(&*dir_text).base_data_directory(&*dir_text).build();
    if let Some(cookies) = manager.cookie_manager() {
        cookies.set_persistent_storage(&dir.join("cookies").to_string_lossy(), CookiePersistentStorage::Text);
    }
    let context = webkit2gtk::WebContext::builder().website_data_manager(&manager).build();
    context.set_automation_allowed(false);
    context
}
