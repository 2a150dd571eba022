//! malo's WebKit web-process extension: loaded by every web process of malo's contexts, it
//! does what no API of the UI process can.
//!
//! It names each request's tab to the session proxy: `send-request` appends
//! `TAB_MARKER<page id>.<context secret>` to the request's `User-Agent` header, which the
//! proxy reads and removes. The page's own user agent (`navigator.userAgent`, workers, the
//! settings) stays clean, and a service worker's `FetchEvent` does not see the header
//! (measured: it sees the request's other headers). The secret comes from the UI process
//! once per web process (`initialize_with_user_data`); page ids are the UI process's own
//! (`webkit_web_view_get_page_id`), so the proxy needs nothing else to find the tab.
//!
//! And it tells the view what the engine itself writes to a page's console (security
//! refusals, failed loads). The refusal of a local or engine URL ("Not allowed to load
//! local resource") is the only trace WebKit leaves of a page trying to load one, whether
//! by a link, a form, script, a frame or a meta refresh.
//!
//! And it moves the page's work 10 nice steps behind the daemon (`priority.rs`).
//!
//! And, as the daemon asks, it keeps the process off one CPU while an agent waits on an
//! interactive call of another session's page (`cpu.rs`): affinity, unlike a nice value,
//! can be given back.
//!
//! Built by `build.rs` with plain `rustc` (no crates: a handful of C functions) into a
//! shared object that the `malo-daemon` binary carries and writes into its data directory.
//! Messages written by the page's own `console` calls are left to the page-world hook,
//! which sees their arguments, and uncaught errors to the page agent, which sees their
//! stacks.

#![allow(unsafe_code, non_camel_case_types)]

use std::ffi::{c_char, c_ulong, c_void, CStr, CString};
use std::sync::OnceLock;

mod cpu;
mod priority;
mod threads;

type gpointer = *mut c_void;
type GCallback = *const c_void;

/// `WEBKIT_CONSOLE_MESSAGE_SOURCE_JAVASCRIPT`: uncaught errors (the agent reports those).
const SOURCE_JAVASCRIPT: u32 = 0;
/// `WEBKIT_CONSOLE_MESSAGE_SOURCE_CONSOLE_API`: the page's own `console.*` calls.
const SOURCE_CONSOLE_API: u32 = 2;
/// The name of the message the view receives (`user-message-received`).
const MESSAGE_NAME: &CStr = c"malo:console";
/// The name of the daemon's message about CPUs (a `u`: share, yield, served).
const CPU_MESSAGE: &CStr = c"malo:cpu";
/// What precedes a tab's token in a request's User-Agent (`network::TAB_MARKER`).
const TAB_MARKER: &str = " malo/";
/// The header the token rides in.
const USER_AGENT: &CStr = c"User-Agent";

/// The context's secret, from the UI process (`<page id>.<secret>` names a tab).
static SECRET: OnceLock<String> = OnceLock::new();

#[link(name = "webkit2gtk-4.1")]
#[link(name = "gobject-2.0")]
#[link(name = "glib-2.0")]
unsafe extern "C" {
    fn g_signal_connect_data(
        instance: gpointer,
        signal: *const c_char,
        handler: GCallback,
        data: gpointer,
        destroy: gpointer,
        flags: u32,
    ) -> c_ulong;
    fn g_variant_new(format: *const c_char, ...) -> gpointer;
    fn g_variant_get_type_string(value: gpointer) -> *const c_char;
    fn g_variant_get_string(value: gpointer, length: *mut usize) -> *const c_char;
    fn g_variant_get_uint32(value: gpointer) -> u32;
    fn g_object_weak_ref(object: gpointer, notify: GCallback, data: gpointer);
    fn webkit_user_message_get_name(message: gpointer) -> *const c_char;
    fn webkit_user_message_get_parameters(message: gpointer) -> gpointer;
    fn webkit_web_page_get_id(page: gpointer) -> u64;
    fn webkit_uri_request_get_http_headers(request: gpointer) -> gpointer;
    fn webkit_console_message_get_source(message: gpointer) -> u32;
    fn webkit_console_message_get_level(message: gpointer) -> u32;
    fn webkit_console_message_get_text(message: gpointer) -> *const c_char;
    fn webkit_console_message_get_line(message: gpointer) -> u32;
    fn webkit_console_message_get_source_id(message: gpointer) -> *const c_char;
    fn webkit_user_message_new(name: *const c_char, parameters: gpointer) -> gpointer;
    fn webkit_web_page_send_message_to_view(page: gpointer, message: gpointer, cancellable: gpointer, callback: gpointer, data: gpointer);
}

#[link(name = "soup-3.0")]
unsafe extern "C" {
    fn soup_message_headers_get_one(headers: gpointer, name: *const c_char) -> *const c_char;
    fn soup_message_headers_foreach(headers: gpointer, func: GCallback, data: gpointer);
    fn soup_message_headers_clear(headers: gpointer);
    fn soup_message_headers_append(headers: gpointer, name: *const c_char, value: *const c_char);
}

/// The entry point WebKit looks up in every shared object of the extensions directory;
/// `user_data` is the context's secret (a string variant).
///
/// # Safety
/// Called by WebKit once per web process with a live `WebKitWebExtension` and the
/// context's initialization data (a GVariant, or null when the context set none).
#[no_mangle]
pub unsafe extern "C" fn webkit_web_extension_initialize_with_user_data(extension: gpointer, user_data: gpointer) {
    // SAFETY: a live GVariant (when not null), whose type string is checked before its
    // string is read; the string is copied before this returns.
    unsafe {
        if !user_data.is_null() && CStr::from_ptr(g_variant_get_type_string(user_data)) == c"s" {
            let secret = CStr::from_ptr(g_variant_get_string(user_data, std::ptr::null_mut()));
            let _ = SECRET.set(secret.to_string_lossy().into_owned());
        }
    }
    priority::put_behind();
    cpu::init();
    // SAFETY: a live GObject, a NUL-terminated signal name, and a handler whose signature
    // is that of `page-created` (extension, page, user data).
    unsafe { connect(extension, c"page-created", page_created as GCallback) };
}

/// `page-created`: names the new page's requests, follows its console and hears the
/// daemon's word on CPUs.
unsafe extern "C" fn page_created(_extension: gpointer, page: gpointer, _data: gpointer) {
    // Threads WebKit started since.
    priority::put_behind();
    // SAFETY: `page` is the live WebKitWebPage of the signal; the handlers' signatures are
    // those of `send-request` (page, request, redirected response, user data),
    // `console-message-sent` and `user-message-received` (page, message, user data), and
    // the weak reference's notify (data, the object); its data is the page's id.
    unsafe {
        connect(page, c"send-request", send_request as GCallback);
        connect(page, c"console-message-sent", console_message_sent as GCallback);
        connect(page, c"user-message-received", user_message_received as GCallback);
        g_object_weak_ref(page, page_gone as GCallback, webkit_web_page_get_id(page) as usize as gpointer);
    }
}

/// `user-message-received`: the daemon's word on CPUs. Returns TRUE for that message (it
/// wants no reply), FALSE for any other.
unsafe extern "C" fn user_message_received(page: gpointer, message: gpointer, _data: gpointer) -> i32 {
    // SAFETY: `message` is the signal's live WebKitUserMessage; its name and parameters
    // (a GVariant or null) live as long as it does, and the type is checked before reading.
    unsafe {
        let name = webkit_user_message_get_name(message);
        if name.is_null() || CStr::from_ptr(name) != CPU_MESSAGE {
            return 0;
        }
        let parameters = webkit_user_message_get_parameters(message);
        if !parameters.is_null() && CStr::from_ptr(g_variant_get_type_string(parameters)) == c"u" {
            cpu::set_part(webkit_web_page_get_id(page), g_variant_get_uint32(parameters));
        }
    }
    1
}

/// The weak reference's notify: the page whose id is `data` is gone.
unsafe extern "C" fn page_gone(data: gpointer, _page: gpointer) {
    cpu::forget(data as usize as u64);
}

/// `send-request`: appends the tab's token to the request's User-Agent (once: a redirect's
/// request already carries it). Returns FALSE: the request goes on.
unsafe extern "C" fn send_request(page: gpointer, request: gpointer, _redirected: gpointer, _data: gpointer) -> i32 {
    let Some(secret) = SECRET.get() else { return 0 };
    // SAFETY: `request` is the signal's live WebKitURIRequest; its headers (null for a
    // request that is not HTTP) live as long as it does, and the agent's text is copied
    // before the header is replaced.
    unsafe {
        let headers = webkit_uri_request_get_http_headers(request);
        if headers.is_null() {
            return 0;
        }
        let agent = soup_message_headers_get_one(headers, USER_AGENT.as_ptr());
        let agent = if agent.is_null() { String::new() } else { CStr::from_ptr(agent).to_string_lossy().into_owned() };
        let token = format!("{TAB_MARKER}{}.{secret}", webkit_web_page_get_id(page));
        if agent.ends_with(&token) {
            return 0;
        }
        let Ok(extended) = CString::new(format!("{agent}{token}")) else { return 0 };
        // Rewritten in their order, the User-Agent where it was: libsoup's `replace` would
        // move it last, and servers would see an order no WebKit sends.
        let mut all: Vec<(CString, CString)> = Vec::new();
        soup_message_headers_foreach(headers, collect_header as GCallback, (&raw mut all).cast());
        soup_message_headers_clear(headers);
        for (name, value) in &all {
            let value = if name.as_bytes().eq_ignore_ascii_case(USER_AGENT.to_bytes()) { &extended } else { value };
            soup_message_headers_append(headers, name.as_ptr(), value.as_ptr());
        }
        if !all.iter().any(|(name, _)| name.as_bytes().eq_ignore_ascii_case(USER_AGENT.to_bytes())) {
            soup_message_headers_append(headers, USER_AGENT.as_ptr(), extended.as_ptr());
        }
    }
    0
}

/// `soup_message_headers_foreach`'s function: copies one header into the vector at `data`.
unsafe extern "C" fn collect_header(name: *const c_char, value: *const c_char, data: gpointer) {
    // SAFETY: `data` is the `Vec` that `send_request` lent for the call; the strings are
    // libsoup's, valid during the call, and copied here.
    unsafe {
        let all = &mut *data.cast::<Vec<(CString, CString)>>();
        all.push((CStr::from_ptr(name).to_owned(), CStr::from_ptr(value).to_owned()));
    }
}

/// `console-message-sent`: forwards an engine message to the view, as
/// `(source, level, line, source_id, text)`.
unsafe extern "C" fn console_message_sent(page: gpointer, message: gpointer, _data: gpointer) {
    // SAFETY: `message` is the signal's live WebKitConsoleMessage; its strings live as long
    // as it does, and `g_variant_new` copies them before this returns. The new message is
    // floating: sending it takes that reference.
    unsafe {
        let source = webkit_console_message_get_source(message);
        if source == SOURCE_CONSOLE_API || source == SOURCE_JAVASCRIPT {
            return;
        }
        let text = or_empty(webkit_console_message_get_text(message));
        let source_id = or_empty(webkit_console_message_get_source_id(message));
        let parameters = g_variant_new(
            c"(uuuss)".as_ptr(),
            source,
            webkit_console_message_get_level(message),
            webkit_console_message_get_line(message),
            source_id,
            text,
        );
        let user_message = webkit_user_message_new(MESSAGE_NAME.as_ptr(), parameters);
        webkit_web_page_send_message_to_view(page, user_message, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    }
}

/// # Safety
/// `instance` must be a live GObject with a signal `signal` whose handler has the
/// signature of `handler`.
unsafe fn connect(instance: gpointer, signal: &CStr, handler: GCallback) {
    // SAFETY: as the caller promises; no user data, no destroy notify.
    unsafe {
        g_signal_connect_data(instance, signal.as_ptr(), handler, std::ptr::null_mut(), std::ptr::null_mut(), 0);
    }
}

fn or_empty(text: *const c_char) -> *const c_char {
    if text.is_null() {
        c"".as_ptr()
    } else {
        text
    }
}
