//! malo's WebKit web-process extension: loaded by every web process of malo's contexts, it
//! tells the view what the engine itself writes to a page's console (security refusals,
//! failed loads), which no API of the UI process reports, and gives memory back when the
//! daemon asks (an idle session: no UI-process API collects a page's garbage). The
//! refusal of a local or engine URL ("Not allowed to load local resource") is the only
//! trace WebKit leaves of a page trying to load one, whether by a link, a form, script, a
//! frame or a meta refresh.
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
/// The name of the message the view sends when its session is idle.
const RELEASE_MEMORY: &CStr = c"malo:release-memory";

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
    fn webkit_user_message_get_name(message: gpointer) -> *const c_char;
    fn webkit_user_message_send_reply(message: gpointer, reply: gpointer);
    fn webkit_web_page_get_main_frame(page: gpointer) -> gpointer;
    fn webkit_frame_get_javascript_global_context(frame: gpointer) -> gpointer;
    fn malloc_trim(pad: usize) -> i32;
    fn dlsym(handle: gpointer, symbol: *const c_char) -> gpointer;
}

/// `RTLD_DEFAULT`: look a symbol up in every object the process loaded.
const RTLD_DEFAULT: gpointer = std::ptr::null_mut();

#[link(name = "javascriptcoregtk-4.1")]
unsafe extern "C" {
    /// A full, synchronous collection of the context's heap. "ForDebugging" in name: it is
    /// the only entry point that collects now rather than hinting (`JSGarbageCollect`).
    fn JSSynchronousGarbageCollectForDebugging(context: gpointer);
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
    // SAFETY: as above, for `user-message-received` (page, message, user data) -> gboolean.
    unsafe { connect(page, c"user-message-received", user_message_received as GCallback) };
}

/// `user-message-received`: on `malo:release-memory`, gives back what the web process can
/// (see [`release_memory`]) and replies. Other messages are not ours.
unsafe extern "C" fn user_message_received(page: gpointer, message: gpointer, _data: gpointer) -> i32 {
    // SAFETY: `message` is the signal's live WebKitUserMessage and its name a NUL-terminated
    // string it owns; `page` is the signal's live page. The signal runs on the web
    // process's main thread, where WebKit runs every script and its memory relief.
    unsafe {
        let name = webkit_user_message_get_name(message);
        if name.is_null() || CStr::from_ptr(name) != RELEASE_MEMORY {
            return 0;
        }
        release_memory(page);
        malloc_trim(0);
        // The reply tells the view it is done (a floating reference, which the call sinks).
        webkit_user_message_send_reply(message, webkit_user_message_new(RELEASE_MEMORY.as_ptr(), std::ptr::null_mut()));
    }
    1
}

/// What WebKit does when the system runs short of memory, now: its memory-pressure
/// handler's critical relief (the back/forward and memory caches, decoded images, font
/// and glyph caches, a full collection of every script heap, then the allocator's free
/// pages). No C API reaches it, so it is looked up by its C++ name in WTF (exported by
/// JavaScriptCore); a WebKit without it gets a full collection of the main frame's heap.
///
/// # Safety
/// On the web process's main thread, with `page` a live WebKitWebPage.
unsafe fn release_memory(page: gpointer) {
    /// `WTF::MemoryPressureHandler::singleton()`.
    type Singleton = unsafe extern "C" fn() -> gpointer;
    /// `WTF::MemoryPressureHandler::releaseMemory(Critical, Synchronous)`: both `enum
    /// class : bool`, passed as bytes.
    type Release = unsafe extern "C" fn(handler: gpointer, critical: u8, synchronous: u8);
    // SAFETY: dlsym with NUL-terminated names; a symbol found has the C++ signature above
    // (an instance method takes `this` first), and the singleton lives for the process.
    unsafe {
        let singleton = dlsym(RTLD_DEFAULT, c"_ZN3WTF21MemoryPressureHandler9singletonEv".as_ptr());
        let release = dlsym(RTLD_DEFAULT, c"_ZN3WTF21MemoryPressureHandler13releaseMemoryENS_8CriticalENS_11SynchronousE".as_ptr());
        if !singleton.is_null() && !release.is_null() {
            let singleton: Singleton = std::mem::transmute(singleton);
            let release: Release = std::mem::transmute(release);
            release(singleton(), 1, 1);
            return;
        }
        let frame = webkit_web_page_get_main_frame(page);
        if !frame.is_null() {
            let context = webkit_frame_get_javascript_global_context(frame);
            if !context.is_null() {
                JSSynchronousGarbageCollectForDebugging(context);
            }
        }
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
