//! Named login profiles: persistent WebKit data (cookies, storage) under
//! `<data-dir>/profiles/<name>/`, shared by every session opened with that name, kept
//! across session close and daemon restarts. Anonymous sessions never touch them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use crate::engine::identity::Identity;
use crate::error::{Error, ErrorCode, Result};

/// Where a profile keeps what its first session asked to show pages.
const IDENTITY_FILE: &str = "identity.json";

/// Profiles that may exist at once.
pub const MAX_PROFILES: usize = 64;

/// A profile as listed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProfileInfo {
    /// Its name.
    pub name: String,
    /// Open sessions using it (in every lease).
    pub sessions: usize,
    /// Bytes on disk.
    pub size_bytes: u64,
}

/// The profiles directory and which profiles open sessions use.
#[derive(Debug)]
pub struct ProfileStore {
    root: PathBuf,
    // A std mutex: counter updates only.
    in_use: Mutex<HashMap<String, usize>>,
}

impl ProfileStore {
    /// The store at `<data-dir>/profiles`.
    pub fn new(root: PathBuf) -> ProfileStore {
        ProfileStore { root, in_use: Mutex::default() }
    }

    /// Names: lowercase letters, digits, `.`, `_`, `-`; 1 to 64 characters.
    pub fn check_name(name: &str) -> Result<()> {
        let valid = (1..=64).contains(&name.len())
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".-_".contains(c))
            && name != "."
            && name != "..";
        if valid {
            Ok(())
        } else {
            Err(Error::bad_request("profile names are 1 to 64 characters of lowercase letters, digits, '.', '_' and '-'"))
        }
    }

    /// Marks the profile used by one more session, creating it when new; answers its
    /// WebKit data directory.
    pub fn acquire(&self, name: &str) -> Result<PathBuf> {
        Self::check_name(name)?;
        let dir = self.root.join(name);
        let mut in_use = self.in_use.lock().expect("profile store poisoned");
        if !dir.exists() {
            if self.names().len() >= MAX_PROFILES {
                return Err(Error::new(ErrorCode::ProfileLimit, format!("there are already {MAX_PROFILES} profiles; delete one first")));
            }
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .map_err(|error| Error::internal(format!("cannot create the profile directory: {error}")))?;
        }
        *in_use.entry(name.to_string()).or_default() += 1;
        Ok(dir)
    }

    /// What a profile's sessions show pages: `asked`, with every field it leaves out taken
    /// from what the profile's first session asked for (`identity.json` in its directory,
    /// written by that session).
    pub fn remembered_identity(dir: &Path, mut asked: Identity) -> Identity {
        let path = dir.join(IDENTITY_FILE);
        match std::fs::read(&path).ok().and_then(|bytes| serde_json::from_slice::<Identity>(&bytes).ok()) {
            Some(remembered) => asked.fill_from(&remembered),
            None => {
                // Inside the profile's directory (mode 0700).
                if let Ok(json) = serde_json::to_vec_pretty(&asked) {
                    if let Err(error) = std::fs::write(&path, json) {
                        tracing::warn!(%error, "cannot remember the profile's identity");
                    }
                }
            }
        }
        asked
    }

    /// One session fewer uses the profile.
    pub fn release(&self, name: &str) {
        let mut in_use = self.in_use.lock().expect("profile store poisoned");
        if let Some(count) = in_use.get_mut(name) {
            *count -= 1;
            if *count == 0 {
                in_use.remove(name);
            }
        }
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.path().is_dir())
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| Self::check_name(name).is_ok())
            .collect();
        names.sort();
        names
    }

    /// Every profile, with how many sessions use it.
    pub fn list(&self) -> Vec<ProfileInfo> {
        let in_use = self.in_use.lock().expect("profile store poisoned").clone();
        self.names()
            .into_iter()
            .map(|name| ProfileInfo {
                sessions: in_use.get(&name).copied().unwrap_or(0),
                size_bytes: dir_size(&self.root.join(&name)),
                name,
            })
            .collect()
    }

    /// Deletes a profile and everything in it; refused while a session uses it.
    pub fn delete(&self, name: &str) -> Result<()> {
        Self::check_name(name)?;
        let in_use = self.in_use.lock().expect("profile store poisoned");
        if let Some(count) = in_use.get(name) {
            return Err(Error::new(
                ErrorCode::ProfileLocked,
                format!("profile {name} is used by {count} open session(s); close them first"),
            )
            .with_details(serde_json::json!({ "profile": name, "sessions": count })));
        }
        let dir = self.root.join(name);
        if !dir.is_dir() {
            return Err(Error::new(ErrorCode::ProfileNotFound, format!("there is no profile {name}")));
        }
        // The network process of its last session may still be writing its last state as
        // it exits (~250 ms): remove until the directory stays gone.
        for _ in 0..10 {
            std::fs::remove_dir_all(&dir).map_err(|error| Error::internal(format!("cannot delete profile {name}: {error}")))?;
            std::thread::sleep(std::time::Duration::from_millis(100));
            if !dir.exists() {
                break;
            }
        }
        Ok(())
    }
}

fn dir_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => dir_size(&entry.path()),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_locks_and_deletion() {
        for good in ["work", "agent-a.work", "a_1", &"x".repeat(64)] {
            assert!(ProfileStore::check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "Work", "a b", "../x", "a/b", ".", "..", &"x".repeat(65)] {
            assert!(ProfileStore::check_name(bad).is_err(), "{bad}");
        }
        let root = std::env::temp_dir().join(format!("malo-profiles-{}", crate::secret::random_hex(6)));
        let store = ProfileStore::new(root.clone());
        let dir = store.acquire("work").unwrap();
        assert!(dir.is_dir());
        store.acquire("work").unwrap();
        assert_eq!(store.list()[0].sessions, 2);
        assert_eq!(store.delete("work").unwrap_err().code, ErrorCode::ProfileLocked);
        store.release("work");
        store.release("work");
        store.delete("work").unwrap();
        assert!(!dir.exists());
        assert_eq!(store.delete("work").unwrap_err().code, ErrorCode::ProfileNotFound);
        std::fs::remove_dir_all(root).ok();
    }
}
