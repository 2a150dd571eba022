//! The web-process sandbox on a WebKit context (see `engine::sandbox` for whether it is
//! on): set on a context before its first view loads anything, never after (WebKit aborts
//! the whole process if a context's sandbox or its paths change once it has a web process).

use std::path::Path;

use webkit2gtk::WebContextExt;

/// Sandboxes the web processes of a context just built (no view has used it yet), if the
/// daemon's web processes run sandboxed; each of `paths` is visible inside, read-only when
/// its flag says so.
pub(super) fn apply(context: &webkit2gtk::WebContext, paths: &[(&Path, bool)]) {
    if !crate::engine::sandbox::enabled() {
        return;
    }
    context.set_sandbox_enabled(true);
    for (path, read_only) in paths {
        context.add_path_to_sandbox(path, *read_only);
    }
}
