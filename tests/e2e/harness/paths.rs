//! Where things are: temporary directories, the files below a directory, files of the
//! repository, the test Python and the `malo` binary.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// A fresh temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("malo-e2e-{label}-{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

/// Every file below `dir` (recursively), as paths relative to it.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap_or(&path).to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// The `malo` binary: cargo's path for tests, else the one beside this executable's
/// directory (`target/<profile>/examples/bench` -> `target/<profile>/malo`).
pub fn malo_binary() -> PathBuf {
    if let Some(path) = option_env!("CARGO_BIN_EXE_malo") {
        return PathBuf::from(path);
    }
    let me = std::env::current_exe().unwrap();
    me.parent().and_then(Path::parent).unwrap().join("malo")
}

/// The Python with the test tools (the MCP SDK, schemathesis, dbus-next).
pub fn python() -> String {
    std::env::var("MALO_PYTHON").unwrap_or_else(|_| format!("{}/.cache/malo-browser/venv/bin/python", std::env::var("HOME").unwrap()))
}

/// A file of the repository, by its path from the top.
pub fn repo_file(path: &str) -> String {
    format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))
}
