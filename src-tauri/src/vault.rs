//! The credential vault: agents log in without ever seeing a password. A person stores a
//! password once (`malo credentials add`); it goes to the OS keychain (Secret Service on
//! Linux, Keychain on macOS) through the `keyring` crate. Only the name, origin and
//! username are kept in `<data-dir>/credentials.json` (mode 0600). No API returns a secret;
//! `login {"credential": name}` fills it only on a page of the credential's own origin.

use std::collections::BTreeMap;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};

/// The keychain service name of every entry.
const SERVICE: &str = "malo-browser";

/// What is known of a credential besides its secret.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CredentialInfo {
    /// Its name.
    pub name: String,
    /// `scheme://host[:port]` it may be used on.
    pub origin: String,
    /// The username.
    pub username: String,
}

/// The vault of one data directory.
#[derive(Debug, Clone)]
pub struct Vault {
    index: PathBuf,
    /// Keeps entries of different data directories apart in the shared keychain.
    namespace: String,
}

impl Vault {
    /// The vault of `data_dir`.
    pub fn new(data_dir: &Path) -> Vault {
        let canonical = data_dir.canonicalize().unwrap_or_else(|_| data_dir.to_path_buf());
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in canonical.to_string_lossy().bytes() {
            hash = (hash ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
        }
        Vault { index: data_dir.join("credentials.json"), namespace: format!("{hash:016x}") }
    }

    /// Names must be simple: lowercase letters, digits, `.`, `_`, `-`, 1 to 64 characters.
    fn check_name(name: &str) -> Result<()> {
        let valid =
            (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".-_".contains(c));
        if valid {
            Ok(())
        } else {
            Err(Error::bad_request("credential names are 1 to 64 characters of a-z, 0-9, '.', '_' and '-'"))
        }
    }

    fn entry(&self, name: &str) -> Result<keyring::Entry> {
        keyring::Entry::new(SERVICE, &format!("{}/{name}", self.namespace)).map_err(keychain_error)
    }

    fn load(&self) -> BTreeMap<String, CredentialInfo> {
        std::fs::read(&self.index).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
    }

    fn store(&self, all: &BTreeMap<String, CredentialInfo>) -> Result<()> {
        let temporary = self.index.with_extension("json.tmp");
        let _ = std::fs::remove_file(&temporary);
        let text = serde_json::to_vec_pretty(all).map_err(|error| Error::internal(error.to_string()))?;
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new().create_new(true).write(true).mode(0o600).open(&temporary)?;
            file.write_all(&text)?;
            std::fs::rename(&temporary, &self.index)
        };
        write().map_err(|error| Error::internal(format!("cannot write {}: {error}", self.index.display())))
    }

    /// Stores (or replaces) a credential.
    pub fn add(&self, name: &str, origin: &str, username: &str, password: &str) -> Result<CredentialInfo> {
        Self::check_name(name)?;
        let origin = origin_of(origin)?;
        if password.is_empty() {
            return Err(Error::bad_request("the password is empty"));
        }
        self.entry(name)?.set_password(password).map_err(keychain_error)?;
        let info = CredentialInfo { name: name.to_string(), origin, username: username.to_string() };
        let mut all = self.load();
        all.insert(name.to_string(), info.clone());
        self.store(&all)?;
        Ok(info)
    }

    /// Every credential (no secrets).
    pub fn list(&self) -> Vec<CredentialInfo> {
        self.load().into_values().collect()
    }

    /// Removes a credential and its secret.
    pub fn remove(&self, name: &str) -> Result<()> {
        let mut all = self.load();
        if all.remove(name).is_none() {
            return Err(Error::new(ErrorCode::CredentialNotFound, format!("there is no credential {name:?}")));
        }
        match self.entry(name)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => {}
            Err(error) => return Err(keychain_error(error)),
        }
        self.store(&all)
    }

    /// The username and password of `name`, if `page_url` is on the credential's origin.
    pub fn secret_for(&self, name: &str, page_url: &str) -> Result<(CredentialInfo, String)> {
        let info = self
            .load()
            .remove(name)
            .ok_or_else(|| Error::new(ErrorCode::CredentialNotFound, format!("there is no credential {name:?}")))?;
        let page_origin = origin_of(page_url).unwrap_or_default();
        if page_origin != info.origin {
            return Err(Error::new(
                ErrorCode::CredentialOrigin,
                format!(
                    "credential {name:?} is for {}, and this page is on {}",
                    info.origin,
                    if page_origin.is_empty() { "no web origin" } else { &page_origin }
                ),
            )
            .with_details(serde_json::json!({ "credential_origin": info.origin, "page_origin": page_origin })));
        }
        let password = self.entry(name)?.get_password().map_err(keychain_error)?;
        Ok((info, password))
    }
}

/// `https://Example.com:443/path` -> `https://example.com`.
pub fn origin_of(url: &str) -> Result<String> {
    let parsed = crate::urls::check_navigation_url(url)?;
    let origin = parsed.origin().ascii_serialization();
    Ok(origin)
}

fn keychain_error(error: keyring::Error) -> Error {
    Error::new(ErrorCode::EngineUnavailable, format!("the OS keychain is not available: {error}"))
}
