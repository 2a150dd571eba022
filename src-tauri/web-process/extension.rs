//! malo's WebKit web-process extension: loaded by every web process of malo's contexts, it
//! tells the view what the engine itself writes to a page's console (security refusals,
//! failed loads), which no API of the UI process reports. The refusal of a local or engine
//! URL ("Not allowed to load local resource") is the only trace WebKit leaves of a page
//! trying to load one, whether by a link, a form, script, a frame or a meta refresh.
//!
//! Built by `build.rs` with plain `rustc` (no crates: a handful of C functions) into a
//! shared object that the `malo` binary carries and writes into its data directory.
//! Messages written by the page's own `console` calls are left to the page-world hook,
//! which sees their arguments, and uncaught errors to the page agent, which sees their
//! stacks.

#![allow(unsafe_code, non_camel_case_types)]

use std::ffi::{c_char, c_ulong, c_void, CStr};

type gpointer = *mut c_void;
type GCallback = *const c_void;

/// `WEBKIT_CONSOLE_MESSAGE_SOURCE_JAVASCRIPT`: uncaught errors (the agent reports those).
const SOURCE_JAVASCRIPT: u32 = 0;
/// `WEBKIT_CONSOLE_MESSAGE_SOURCE_CONSOLE_API`: the page's own `console.*` calls.
const SOURCE_CONSOLE_API: u32 = 2;
/// The name of the message the view receives (`user-message-received`).
const MESSAGE_NAME: &CStr = c"malo:console";

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
    fn webkit_console_message_get_source(message: gpointer) -> u32;
    fn webkit_console_message_get_level(message: gpointer) -> u32;
    fn webkit_console_message_get_text(message: gpointer) -> *const c_char;
    fn webkit_console_message_get_line(message: gpointer) -> u32;
    fn webkit_console_message_get_source_id(message: gpointer) -> *const c_char;
    fn webkit_user_message_new(name: *const c_char, parameters: gpointer) -> gpointer;
    fn webkit_web_page_send_message_to_view(page: gpointer, message: gpointer, cancellable: gpointer, callback: gpointer, data: gpointer);
}

/// The entry point WebKit looks up in every shared object of the extensions directory.
///
/// # Safety
/// Called by WebKit once per web process with a live `WebKitWebExtension`.
#[no_mangle]
pub unsafe extern "C" fn webkit_web_extension_initialize(extension: gpointer) {
    // SAFETY: a live GObject, a NUL-terminated signal name, and a handler whose signature
    // is that of `page-created` (extension, page, user data).
    unsafe { connect(extension, c"page-created", page_created as GCallback) };
}

/// `page-created`: follows the new page's console.
unsafe extern "C" fn page_created(_extension: gpointer, page: gpointer, _data: gpointer) {
    // SAFETY: `page` is the live WebKitWebPage of the signal; the handler's signature is
    // that of `console-message-sent` (page, message, user data).
    unsafe { connect(page, c"console-message-sent", console_message_sent as GCallback) };
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
