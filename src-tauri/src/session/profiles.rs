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
    /// Profiles a `profile_clone` reads or writes now: no session opens them meanwhile.
    copying: Mutex<Vec<String>>,
}

impl ProfileStore {
    /// The store at `<data-dir>/profiles`.
    pub fn new(root: PathBuf) -> ProfileStore {
        ProfileStore { root, in_use: Mutex::default(), copying: Mutex::default() }
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
        self.refuse_if_copying(name)?;
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
        self.refuse_if_copying(name)?;
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

impl ProfileStore {
    /// Copies profile `from` (its WebKit data and `identity.json`) to a new profile `to`.
    /// Refused while a session uses `from` (its network process writes cookies and
    /// storage as it goes, so a copy could be torn: `E_PROFILE_LOCKED`), when `to` exists
    /// (`E_BAD_REQUEST`, field `to`) or `from` does not (`E_PROFILE_NOT_FOUND`). Neither
    /// profile can be opened or deleted while the copy runs; a copy during which `from`
    /// changed on disk (the last session's network process still exiting) is made again,
    /// and refused after three tries. Blocking: run it off the async threads.
    pub fn copy(&self, from: &str, to: &str) -> Result<()> {
        let named =
            |field: &str, name: &str| Self::check_name(name).map_err(|error| error.with_details(serde_json::json!({ "field": field })));
        named("from", from)?;
        named("to", to)?;
        let (source, target) = (self.root.join(from), self.root.join(to));
        {
            let in_use = self.in_use.lock().expect("profile store poisoned");
            if let Some(count) = in_use.get(from) {
                return Err(Error::new(
                    ErrorCode::ProfileLocked,
                    format!("profile {from} is used by {count} open session(s), whose cookies and storage are still being written; close them first"),
                )
                .with_details(serde_json::json!({ "profile": from, "sessions": count, "field": "from" })));
            }
            self.refuse_if_copying(from)?;
            self.refuse_if_copying(to)?;
            if !source.is_dir() {
                return Err(Error::new(ErrorCode::ProfileNotFound, format!("there is no profile {from}"))
                    .with_details(serde_json::json!({ "field": "from" })));
            }
            if target.exists() || in_use.contains_key(to) {
                return Err(Error::bad_request(format!("profile {to} exists already; clone into a new name"))
                    .with_details(serde_json::json!({ "field": "to", "reason": "exists" })));
            }
            if self.names().len() >= MAX_PROFILES {
                return Err(Error::new(ErrorCode::ProfileLimit, format!("there are already {MAX_PROFILES} profiles; delete one first")));
            }
            self.copying.lock().expect("profile store poisoned").extend([from.to_string(), to.to_string()]);
        }
        let result = self.copy_steady(&source, &target, to);
        self.copying.lock().expect("profile store poisoned").retain(|name| name != from && name != to);
        result
    }

    /// Copies `source` into a staging folder (a name no profile can have), again until
    /// `source` did not change during a copy, then renames it to `target`.
    fn copy_steady(&self, source: &Path, target: &Path, to: &str) -> Result<()> {
        let staging = self.root.join(format!("+copy-{to}-{}", crate::secret::random_hex(4)));
        let failed = |error: std::io::Error| Error::internal(format!("cannot copy the profile: {error}"));
        for _ in 0..3 {
            let before = fingerprint(source);
            let _ = std::fs::remove_dir_all(&staging);
            if let Err(error) = copy_dir(source, &staging) {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(failed(error));
            }
            if fingerprint(source) == before {
                return std::fs::rename(&staging, target).map_err(|error| {
                    let _ = std::fs::remove_dir_all(&staging);
                    failed(error)
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        let _ = std::fs::remove_dir_all(&staging);
        Err(Error::new(ErrorCode::ProfileLocked, "the profile kept changing while it was copied; try again in a moment")
            .with_details(serde_json::json!({ "field": "from" })))
    }

    /// `E_PROFILE_LOCKED` while a `profile_clone` reads or writes `name`.
    fn refuse_if_copying(&self, name: &str) -> Result<()> {
        if self.copying.lock().expect("profile store poisoned").iter().any(|copying| copying == name) {
            return Err(Error::new(ErrorCode::ProfileLocked, format!("profile {name} is being copied; try again in a moment"))
                .with_details(serde_json::json!({ "profile": name })));
        }
        Ok(())
    }
}

/// Copies a directory tree (directories 0700; symbolic links are left out).
fn copy_dir(source: &Path, target: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(target)?;
    for entry in std::fs::read_dir(source)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let destination = target.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &destination)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &destination)?;
        }
    }
    Ok(())
}

/// Every file's path, size and modification time under `dir`, sorted.
fn fingerprint(dir: &Path) -> Vec<(PathBuf, u64, Option<std::time::SystemTime>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => pending.push(entry.path()),
                Ok(meta) => files.push((entry.path(), meta.len(), meta.modified().ok())),
                Err(_) => {}
            }
        }
    }
    files.sort();
    files
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
        // A copy takes the data and the identity, and is refused while `from` is open.
        std::fs::write(dir.join("identity.json"), "{}").unwrap();
        std::fs::create_dir_all(dir.join("storage/abc")).unwrap();
        std::fs::write(dir.join("storage/abc/origin"), "x").unwrap();
        store.acquire("work").unwrap();
        assert_eq!(store.copy("work", "copy").unwrap_err().code, ErrorCode::ProfileLocked);
        store.release("work");
        store.copy("work", "copy").unwrap();
        assert_eq!(std::fs::read(root.join("copy/storage/abc/origin")).unwrap(), b"x");
        assert!(root.join("copy/identity.json").is_file());
        let exists = store.copy("work", "copy").unwrap_err();
        assert_eq!((exists.code, &exists.details["field"]), (ErrorCode::BadRequest, &serde_json::json!("to")));
        assert_eq!(store.copy("nope", "other").unwrap_err().code, ErrorCode::ProfileNotFound);
        assert_eq!(store.list().iter().map(|profile| profile.name.as_str()).collect::<Vec<_>>(), ["copy", "work"]);
        store.delete("work").unwrap();
        assert!(!dir.exists());
        assert_eq!(store.delete("work").unwrap_err().code, ErrorCode::ProfileNotFound);
        std::fs::remove_dir_all(root).ok();
    }
}
