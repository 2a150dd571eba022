//! The threads of this web process.

/// Calls `each` with the id of every thread of this process (as this process's pid
/// namespace numbers them, which is what the scheduling calls take).
pub(crate) fn each(mut each: impl FnMut(i32)) {
    for entry in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        if let Some(thread) = entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok()) {
            each(thread);
        }
    }
}
