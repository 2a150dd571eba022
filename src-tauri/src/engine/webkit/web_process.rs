//! malo's web-process extension (`src-tauri/web-process/extension.rs`, built by `build.rs`):
//! installed into the data directory at start, loaded by every web process of malo's
//! contexts, and the messages it sends to a view.

use std::path::{Path, PathBuf};

use webkit2gtk::UserMessageExt;

use crate::state::ConsoleLevel;

/// The shared object, as built for this binary.
const EXTENSION: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libmalo_web_process.so"));
const FILE_NAME: &str = "libmalo_web_process.so";
/// The name of the extension's message (see the extension).
const MESSAGE_NAME: &str = "malo:console";
/// The name of the message that tells a page its part in sharing CPUs.
const CPU_MESSAGE: &str = "malo:cpu";
/// The prefix of WebKit's refusal of a local or engine URL.
const LOCAL_REFUSAL: &str = "Not allowed to load local resource: ";

/// Writes the extension into `<data_dir>/web-process/` (unless it is there already) and
/// returns that directory, which holds nothing else: WebKit loads every shared object in it.
pub(crate) fn install(data_dir: &Path) -> std::io::Result<PathBuf> {
    let dir = data_dir.join("web-process");
    std::fs::create_dir_all(&dir)?; // inside the private data directory
    let path = dir.join(FILE_NAME);
    if std::fs::read(&path).is_ok_and(|existing| existing == EXTENSION) {
        return Ok(dir);
    }
    // Atomically: a web process of another daemon version may be loading the old one.
    let partial = dir.join(format!(".{FILE_NAME}.{}", std::process::id()));
    std::fs::write(&partial, EXTENSION)?;
    std::fs::rename(&partial, &path)?;
    Ok(dir)
}

/// A message WebKit itself wrote to a page's console.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct EngineMessage {
    /// `network`, `security` or `other`.
    pub(super) category: &'static str,
    /// Its level.
    pub(super) level: ConsoleLevel,
    pub(super) text: String,
    /// The document or script it concerns, when WebKit names one.
    pub(super) source: Option<String>,
    pub(super) line: Option<u64>,
}

impl EngineMessage {
    /// The extension's message, if `message` is one.
    pub(super) fn from_user_message(message: &webkit2gtk::UserMessage) -> Option<EngineMessage> {
        if message.name().as_deref() != Some(MESSAGE_NAME) {
            return None;
        }
        let (source, level, line, source_id, text) = message.parameters()?.get::<(u32, u32, u32, String, String)>()?;
        Some(EngineMessage {
            category: match source {
                1 => "network",
                3 => "security",
                _ => "other",
            },
            level: match level {
                0 => ConsoleLevel::Info,
                1 => ConsoleLevel::Log,
                2 => ConsoleLevel::Warn,
                3 => ConsoleLevel::Error,
                _ => ConsoleLevel::Debug,
            },
            text,
            source: (!source_id.is_empty()).then_some(source_id),
            line: (line > 0).then_some(u64::from(line)),
        })
    }

    /// The URL WebKit refused to load, when this is such a refusal: the only trace of a
    /// page's navigation (link, form, script, frame, meta refresh) or subresource aimed at
    /// a file: or engine URL.
    pub(super) fn refused_url(&self) -> Option<&str> {
        self.text.strip_prefix(LOCAL_REFUSAL).map(str::trim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_is_carried_and_installed_once() {
        assert!(EXTENSION.starts_with(b"\x7fELF"), "a shared object");
        let dir = std::env::temp_dir().join(format!("malo-web-process-test-{}", std::process::id()));
        let installed = install(&dir).unwrap();
        assert_eq!(std::fs::read(installed.join(FILE_NAME)).unwrap(), EXTENSION);
        let modified = std::fs::metadata(installed.join(FILE_NAME)).unwrap().modified().unwrap();
        install(&dir).unwrap();
        assert_eq!(std::fs::metadata(installed.join(FILE_NAME)).unwrap().modified().unwrap(), modified, "not rewritten");
        assert_eq!(std::fs::read_dir(&installed).unwrap().count(), 1, "nothing else in the directory");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A page's part in sharing the machine's CPUs (`engine::cpu_share`), as the extension reads
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CpuPart {
    /// All CPUs (no interactive call is waiting).
    Share = 0,
    /// All but one: an interactive call of another page is waiting.
    Yield = 1,
    /// All: an agent waits on this page.
    Served = 2,
}

/// Tells `view`'s page its part. One way: the extension does not answer.
#[allow(unsafe_code)]
pub(super) fn tell_cpu_part(view: &webkit2gtk::WebView, part: CpuPart) {
    use glib::translate::ToGlibPtr;
    use glib::ToVariant;
    let message = webkit2gtk::UserMessage::new(CPU_MESSAGE, Some(&(part as u32).to_variant()));
    // SAFETY: a live view and message, borrowed for the call (WebKit takes its own
    // reference); no callback, so no reply is expected and none is kept.
    unsafe {
        webkit2gtk::ffi::webkit_web_view_send_message_to_page(
            view.to_glib_none().0,
            message.to_glib_none().0,
            std::ptr::null_mut(),
            None,
            std::ptr::null_mut(),
        );
    }
}
