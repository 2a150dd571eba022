//! Cookies and localStorage of a session's WebKit context (`engine::storage`).
//!
//! Cookies go through the context's cookie manager (its network process's jar): WebKit
//! 2.42's `get_all_cookies`, which the gtk-rs binding does not cover, is called through
//! its C function. localStorage has no WebKit API for an origin no page shows, so each
//! origin is opened in a hidden helper view of the same context whose document is
//! `load_html` content with that origin's URL as its base: nothing goes to the network (no
//! server is asked, the session proxy sees nothing), and the document's origin is the one
//! asked for, so its `localStorage` is that origin's, shared with every page of the context
//! (measured on 2.50: `load_alternate_html` gives the document an opaque origin instead,
//! whose `localStorage` throws `SecurityError`).
//! A script then reads or writes the items (as Playwright does with a blank page per origin);
//! a write answers once a second view reads what was written.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use gtk::prelude::*;
use serde_json::{json, Value};
use webkit2gtk::{CookieManagerExt, LoadEvent, SettingsExt, WebContextExt, WebViewExt, WebsiteDataManagerExt};

use super::context::Context;
use crate::engine::storage::{Cookie, OriginStorage, SameSite, StorageItem, StorageRequest};
use crate::engine::Answer;
use crate::error::{Error, ErrorCode, Result};

/// How long a helper document may take to load.
const HELPER_LOAD: Duration = Duration::from_secs(10);
/// How long written localStorage may take to be seen by another view.
const KEPT_WITHIN: Duration = Duration::from_secs(5);
/// How long a helper script may take.
const HELPER_SCRIPT: Duration = Duration::from_secs(10);

/// Carries out one storage request on `context`.
pub(super) async fn handle(context: &Context, request: StorageRequest) -> Result<Answer> {
    Ok(match request {
        StorageRequest::Cookies => Answer::Value(json!(all_cookies(&cookie_manager(context)?).await?)),
        StorageRequest::AddCookies(cookies) => {
            let manager = cookie_manager(context)?;
            for cookie in &cookies {
                manager
                    .add_cookie_future(&mut to_soup(cookie)?)
                    .await
                    .map_err(|error| Error::internal(format!("WebKit did not take the cookie {:?}: {}", cookie.name, error.message())))?;
            }
            Answer::Done
        }
        StorageRequest::DeleteCookies(cookies) => {
            let manager = cookie_manager(context)?;
            for cookie in &cookies {
                manager
                    .delete_cookie_future(&mut to_soup(cookie)?)
                    .await
                    .map_err(|error| Error::internal(format!("WebKit did not delete the cookie {:?}: {}", cookie.name, error.message())))?;
            }
            Answer::Done
        }
        StorageRequest::ClearCookies => {
            use webkit2gtk::WebsiteDataManagerExtManual;
            let manager =
                context.web.website_data_manager().ok_or_else(|| Error::internal("the session's WebKit context has no data manager"))?;
            let (sender, receiver) = tokio::sync::oneshot::channel();
            manager.clear(webkit2gtk::WebsiteDataTypes::COOKIES, glib::TimeSpan(0), None::<&webkit2gtk::gio::Cancellable>, move |result| {
                let _ = sender.send(result);
            });
            receiver
                .await
                .map_err(|_| Error::internal("WebKit dropped the clearing of cookies"))?
                .map_err(|error| Error::internal(format!("WebKit could not clear the cookies: {}", error.message())))?;
            Answer::Done
        }
        StorageRequest::ReadLocalStorage(origins) if origins.is_empty() => Answer::Value(json!([])),
        StorageRequest::ReadLocalStorage(origins) => {
            let helper = Helper::new(context);
            let mut read = Vec::new();
            for origin in origins {
                helper.open(&origin).await?;
                let items = helper.run(READ_ITEMS, None).await?;
                let local_storage: Vec<StorageItem> = serde_json::from_value(items)
                    .map_err(|error| Error::internal(format!("unreadable localStorage of {origin}: {error}")))?;
                if !local_storage.is_empty() {
                    read.push(OriginStorage { origin, local_storage });
                }
            }
            Answer::Value(json!(read))
        }
        StorageRequest::WriteLocalStorage(origins) if origins.is_empty() => Answer::Done,
        StorageRequest::WriteLocalStorage(origins) => {
            let writer = Helper::new(context);
            for entry in &origins {
                writer.open(&entry.origin).await?;
                let items = serde_json::to_string(&entry.local_storage).map_err(|error| Error::internal(error.to_string()))?;
                let arguments = glib::VariantDict::new(None);
                arguments.insert("items", items);
                writer.run(WRITE_ITEMS, Some(&arguments.end())).await?;
            }
            // A page's writes reach the network process (which shares and saves them)
            // after the script has returned: answer once another view reads them, with
            // the writer still alive.
            let reader = Helper::new(context);
            for entry in &origins {
                let deadline = super::Deadline::after(KEPT_WITHIN);
                loop {
                    reader.open(&entry.origin).await?;
                    let read: Vec<StorageItem> = serde_json::from_value(reader.run(READ_ITEMS, None).await?).unwrap_or_default();
                    if entry.local_storage.iter().all(|item| read.contains(item)) {
                        break;
                    }
                    if deadline.passed() {
                        return Err(Error::internal(format!(
                            "the localStorage of {} was not kept within {} s",
                            entry.origin,
                            KEPT_WITHIN.as_secs()
                        )));
                    }
                    glib::timeout_future(Duration::from_millis(50)).await;
                }
            }
            Answer::Done
        }
    })
}

const READ_ITEMS: &str = "const items = []; for (let i = 0; i < localStorage.length; i++) { const name = localStorage.key(i); \
                          items.push({ name, value: localStorage.getItem(name) }); } return items;";
const WRITE_ITEMS: &str = "for (const { name, value } of JSON.parse(items)) localStorage.setItem(name, value); return localStorage.length;";

fn cookie_manager(context: &Context) -> Result<webkit2gtk::CookieManager> {
    context
        .web
        .website_data_manager()
        .and_then(|manager| manager.cookie_manager())
        .ok_or_else(|| Error::internal("the session's WebKit context has no cookie manager"))
}

/// Every cookie of the jar (`webkit_cookie_manager_get_all_cookies`, WebKitGTK 2.42).
async fn all_cookies(manager: &webkit2gtk::CookieManager) -> Result<Vec<Cookie>> {
    let (sender, receiver) = tokio::sync::oneshot::channel::<Result<Vec<Cookie>>>();
    ffi::get_all_cookies(manager, sender);
    let cookies = tokio::select! {
        answer = receiver => answer.map_err(|_| Error::internal("WebKit dropped the cookie list"))?,
        () = super::engine_time(Duration::from_secs(10)) => {
            return Err(Error::new(ErrorCode::Timeout, "WebKit did not list the cookies within 10 s"));
        }
    };
    cookies
}

/// A cookie as libsoup holds it, from one checked by `storage_check`.
fn to_soup(cookie: &Cookie) -> Result<soup::Cookie> {
    let max_age = if cookie.expires < 0.0 { -1 } else { 0 };
    let mut soup = soup::Cookie::new(&cookie.name, &cookie.value, &cookie.domain, &cookie.path, max_age);
    if cookie.expires >= 0.0 {
        let expires = glib::DateTime::from_unix_utc(cookie.expires as i64)
            .map_err(|_| Error::bad_request(format!("the expiry of cookie {:?} is out of range", cookie.name)))?;
        soup.set_expires(&expires);
    }
    soup.set_http_only(cookie.http_only);
    soup.set_secure(cookie.secure);
    soup.set_same_site_policy(match cookie.same_site {
        SameSite::Strict => soup::SameSitePolicy::Strict,
        SameSite::Lax => soup::SameSitePolicy::Lax,
        SameSite::None => soup::SameSitePolicy::None,
    });
    Ok(soup)
}

/// A cookie as Playwright writes it, from libsoup's.
fn from_soup(mut soup: soup::Cookie) -> Cookie {
    Cookie {
        name: soup.name().map(|name| name.to_string()).unwrap_or_default(),
        value: soup.value().map(|value| value.to_string()).unwrap_or_default(),
        domain: soup.domain().map(|domain| domain.to_string()).unwrap_or_default(),
        path: soup.path().map(|path| path.to_string()).unwrap_or_else(|| "/".into()),
        expires: soup.expires().map_or(-1.0, |expires| expires.to_unix() as f64),
        http_only: soup.is_http_only(),
        secure: soup.is_secure(),
        same_site: match soup.same_site_policy() {
            soup::SameSitePolicy::Strict => SameSite::Strict,
            soup::SameSitePolicy::None => SameSite::None,
            _ => SameSite::Lax,
        },
    }
}

/// A hidden view of the session's context that shows one origin at a time (see the
/// module's comment); destroyed with its host when dropped.
struct Helper {
    host: gtk::OffscreenWindow,
    view: webkit2gtk::WebView,
}

impl Helper {
    fn new(context: &Context) -> Helper {
        let host = gtk::OffscreenWindow::new();
        host.set_default_size(64, 64);
        let view = webkit2gtk::WebView::builder()
            .web_context(&context.web)
            .user_content_manager(&webkit2gtk::UserContentManager::new())
            .settings(&webkit2gtk::Settings::new())
            .build();
        if let Some(settings) = WebViewExt::settings(&view) {
            settings.set_enable_javascript_markup(false);
            settings.set_auto_load_images(false);
            settings.set_hardware_acceleration_policy(webkit2gtk::HardwareAccelerationPolicy::Never);
        }
        host.add(&view);
        host.show_all();
        Helper { host, view }
    }

    /// Shows an empty document whose URL is `origin`'s root; returns once it has loaded.
    async fn open(&self, origin: &str) -> Result<()> {
        let (sender, receiver) = tokio::sync::oneshot::channel::<std::result::Result<(), String>>();
        let sender = Rc::new(RefCell::new(Some(sender)));
        let finished = {
            let sender = sender.clone();
            self.view.connect_load_changed(move |_, event| {
                if event == LoadEvent::Finished {
                    if let Some(sender) = sender.borrow_mut().take() {
                        let _ = sender.send(Ok(()));
                    }
                }
            })
        };
        let failed = {
            let sender = sender.clone();
            self.view.connect_load_failed(move |_, _, _, error| {
                if let Some(sender) = sender.borrow_mut().take() {
                    let _ = sender.send(Err(error.message().to_string()));
                }
                false
            })
        };
        self.view.load_html("<!DOCTYPE html><title></title>", Some(&format!("{origin}/")));
        let outcome = tokio::select! {
            outcome = receiver => outcome.unwrap_or_else(|_| Err("the load was dropped".into())),
            () = super::engine_time(HELPER_LOAD) => Err(format!("no load within {} s", HELPER_LOAD.as_secs())),
        };
        self.view.disconnect(finished);
        self.view.disconnect(failed);
        let loaded = self.view.uri().map(|uri| uri.to_string());
        match outcome {
            Ok(()) if loaded.as_deref() == Some(&format!("{origin}/")) => Ok(()),
            Ok(()) => Err(Error::internal(format!("the storage helper for {origin} ended on {loaded:?}"))),
            Err(reason) => Err(Error::internal(format!("the storage helper could not open {origin}: {reason}"))),
        }
    }

    /// Runs a function body in the helper's document; answers its value as JSON.
    async fn run(&self, body: &str, arguments: Option<&glib::Variant>) -> Result<Value> {
        let call = self.view.call_async_javascript_function_future(body, arguments, None, None);
        let value = tokio::select! {
            value = call => value,
            () = super::engine_time(HELPER_SCRIPT) => {
                return Err(Error::new(ErrorCode::Timeout, "the storage helper did not answer within 10 s"));
            }
        };
        let value = value.map_err(|error| Error::internal(format!("the storage helper's script failed: {}", error.message())))?;
        use javascriptcore::ValueExt;
        let json = value.to_json(0).unwrap_or_else(|| "null".into());
        serde_json::from_str(&json).map_err(|error| Error::internal(format!("unreadable storage helper answer: {error}")))
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: gtk-rs marks `destroy` unsafe because other references may still use the
        // widget; the host and its view are referenced only by this helper, which is going.
        unsafe {
            self.host.destroy();
        }
    }
}

/// The C call the binding lacks.
#[allow(unsafe_code)]
mod ffi {
    use glib::translate::{FromGlibPtrContainer, ToGlibPtr};
    use webkit2gtk::gio;

    use super::{from_soup, Cookie};
    use crate::error::{Error, Result};

    type Sender = tokio::sync::oneshot::Sender<Result<Vec<Cookie>>>;

    extern "C" {
        fn webkit_cookie_manager_get_all_cookies(
            cookie_manager: *mut webkit2gtk::ffi::WebKitCookieManager,
            cancellable: *mut gio::ffi::GCancellable,
            callback: gio::ffi::GAsyncReadyCallback,
            user_data: glib::ffi::gpointer,
        );
        fn webkit_cookie_manager_get_all_cookies_finish(
            cookie_manager: *mut webkit2gtk::ffi::WebKitCookieManager,
            result: *mut gio::ffi::GAsyncResult,
            error: *mut *mut glib::ffi::GError,
        ) -> *mut glib::ffi::GList;
    }

    /// Starts the listing; `sender` gets the cookies (on this thread's main context).
    pub(super) fn get_all_cookies(manager: &webkit2gtk::CookieManager, sender: Sender) {
        unsafe extern "C" fn done(source: *mut glib::gobject_ffi::GObject, result: *mut gio::ffi::GAsyncResult, data: glib::ffi::gpointer) {
            // SAFETY: `data` is the box `get_all_cookies` leaked for exactly this one call.
            let sender: Box<Sender> = unsafe { Box::from_raw(data.cast()) };
            let mut error = std::ptr::null_mut();
            // SAFETY: `source` is the cookie manager the call was started on; the list and
            // its cookies are ours (transfer full), taken over by the Vec.
            let answer = unsafe {
                let list = webkit_cookie_manager_get_all_cookies_finish(source.cast(), result, &mut error);
                if error.is_null() {
                    let cookies: Vec<soup::Cookie> = FromGlibPtrContainer::from_glib_full(list);
                    Ok(cookies.into_iter().map(from_soup).collect())
                } else {
                    let error: glib::Error = glib::translate::from_glib_full(error);
                    Err(Error::internal(format!("WebKit could not list the cookies: {}", error.message())))
                }
            };
            let _ = sender.send(answer);
        }
        let data = Box::into_raw(Box::new(sender));
        // SAFETY: the manager is alive for the call (WebKit holds it while the call runs);
        // `done` runs once and frees `data`.
        unsafe {
            webkit_cookie_manager_get_all_cookies(manager.to_glib_none().0, std::ptr::null_mut(), Some(done), data.cast());
        }
    }
}
