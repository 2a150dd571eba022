//! Cookies and localStorage in and out (issue #28): the shapes of Playwright's documented
//! `storageState` JSON (`{cookies: [{name, value, domain, path, expires, httpOnly, secure,
//! sameSite}], origins: [{origin, localStorage: [{name, value}]}]}`), what the engine is
//! asked about them, and which cookies a URL receives. Untrusted input is read by
//! [`super::storage_check`]; the engine applies only what passed it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};

/// A cookie as Playwright writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cookie {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
    /// `example.com` (that host only) or `.example.com` (and its subdomains).
    pub domain: String,
    /// The path it is sent under (`/` everywhere).
    pub path: String,
    /// When it expires, in Unix seconds; -1 for a session cookie.
    #[serde(serialize_with = "seconds")]
    pub expires: f64,
    /// Hidden from page scripts.
    pub http_only: bool,
    /// Sent over HTTPS only.
    pub secure: bool,
    /// `Strict`, `Lax` or `None`.
    pub same_site: SameSite,
}

/// A cookie's SameSite rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SameSite {
    Strict,
    Lax,
    None,
}

/// One localStorage item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StorageItem {
    /// Key.
    pub name: String,
    /// Value.
    pub value: String,
}

/// The localStorage of one origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OriginStorage {
    /// `https://example.com` (scheme, host, port).
    pub origin: String,
    /// Its items.
    #[serde(rename = "localStorage")]
    pub local_storage: Vec<StorageItem>,
}

/// A storage state in Playwright's format.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorageState {
    /// Every cookie.
    pub cookies: Vec<Cookie>,
    /// localStorage, per origin.
    pub origins: Vec<OriginStorage>,
}

/// What can be asked of a session's cookies and storage (its WebKit context's: a
/// profile's sessions share them).
#[derive(Debug)]
pub enum StorageRequest {
    /// Every cookie; answers a JSON array of [`Cookie`].
    Cookies,
    /// Adds (or replaces: same name, domain and path) these cookies, checked already.
    AddCookies(Vec<Cookie>),
    /// Deletes these cookies (as [`StorageRequest::Cookies`] answered them).
    DeleteCookies(Vec<Cookie>),
    /// Deletes every cookie.
    ClearCookies,
    /// The localStorage of these origins; answers a JSON array of [`OriginStorage`]
    /// (origins without items left out).
    ReadLocalStorage(Vec<String>),
    /// Sets these items (checked already), beside the origins' other items.
    WriteLocalStorage(Vec<OriginStorage>),
}

impl StorageRequest {
    /// The request's name in the main thread's figures.
    pub fn kind(&self) -> &'static str {
        match self {
            StorageRequest::Cookies => "cookies_get",
            StorageRequest::AddCookies(_) => "cookies_add",
            StorageRequest::DeleteCookies(_) => "cookies_delete",
            StorageRequest::ClearCookies => "cookies_clear",
            StorageRequest::ReadLocalStorage(_) => "local_storage_read",
            StorageRequest::WriteLocalStorage(_) => "local_storage_write",
        }
    }
}

/// Adds a checked state's localStorage, then its cookies, to a session (items of the same
/// name and cookies of the same name, domain and path are replaced; nothing else is
/// removed). localStorage goes first: it is what could still fail (an origin's quota).
pub async fn import(engine: &super::EngineHandle, session_id: &str, state: StorageState) -> crate::error::Result<()> {
    use super::SessionRequest::Storage;
    let origins: Vec<OriginStorage> = state.origins.into_iter().filter(|origin| !origin.local_storage.is_empty()).collect();
    if !origins.is_empty() {
        engine.session::<()>(session_id, Storage(StorageRequest::WriteLocalStorage(origins))).await?;
    }
    if !state.cookies.is_empty() {
        engine.session::<()>(session_id, Storage(StorageRequest::AddCookies(state.cookies))).await?;
    }
    Ok(())
}

/// Whole seconds as an integer (`1767225600`, as Playwright writes them), else as is.
fn seconds<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

impl Cookie {
    /// Whether a request of `url` carries this cookie: its host matches the domain (exactly
    /// for a host cookie, or a subdomain of a `.domain` one), its path is under the
    /// cookie's, and a secure cookie goes over HTTPS only.
    pub fn is_sent_to(&self, url: &url::Url) -> bool {
        let Some(host) = url.host_str() else { return false };
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let domain = self.domain.to_ascii_lowercase();
        let domain_matches = match domain.strip_prefix('.') {
            Some(parent) => host == parent || host.ends_with(&format!(".{parent}")),
            None => host == domain.trim_start_matches('[').trim_end_matches(']'),
        };
        let path = url.path();
        let path_matches =
            path == self.path || (path.starts_with(&self.path) && (self.path.ends_with('/') || path[self.path.len()..].starts_with('/')));
        domain_matches && path_matches && (!self.secure || url.scheme() == "https")
    }

    /// Whether this is the same cookie as `other` (name, domain and path).
    pub fn same_as(&self, other: &Cookie) -> bool {
        self.name == other.name && self.domain.eq_ignore_ascii_case(&other.domain) && self.path == other.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookie(domain: &str, path: &str, secure: bool) -> Cookie {
        Cookie {
            name: "a".into(),
            value: "1".into(),
            domain: domain.into(),
            path: path.into(),
            expires: -1.0,
            http_only: false,
            secure,
            same_site: SameSite::Lax,
        }
    }

    #[test]
    fn a_url_gets_the_cookies_of_its_host_path_and_scheme() {
        let url = |text: &str| url::Url::parse(text).unwrap();
        assert!(cookie("example.com", "/", false).is_sent_to(&url("http://example.com/x")));
        assert!(!cookie("example.com", "/", false).is_sent_to(&url("http://www.example.com/x")));
        assert!(cookie(".example.com", "/", false).is_sent_to(&url("http://www.example.com/x")));
        assert!(cookie(".example.com", "/", false).is_sent_to(&url("http://example.com/")));
        assert!(!cookie(".example.com", "/", false).is_sent_to(&url("http://badexample.com/")));
        assert!(cookie("127.0.0.1", "/admin", false).is_sent_to(&url("http://127.0.0.1:8080/admin/users")));
        assert!(cookie("127.0.0.1", "/admin", false).is_sent_to(&url("http://127.0.0.1:8080/admin")));
        assert!(!cookie("127.0.0.1", "/admin", false).is_sent_to(&url("http://127.0.0.1:8080/administrator")));
        assert!(!cookie("127.0.0.1", "/admin", false).is_sent_to(&url("http://127.0.0.1:8080/")));
        assert!(!cookie("127.0.0.1", "/", true).is_sent_to(&url("http://127.0.0.1/")));
        assert!(cookie("127.0.0.1", "/", true).is_sent_to(&url("https://127.0.0.1/")));
    }

    #[test]
    fn expiry_is_written_as_playwright_writes_it() {
        let mut session = cookie("example.com", "/", false);
        assert_eq!(serde_json::to_value(&session).unwrap()["expires"], serde_json::json!(-1));
        session.expires = 1767225600.5;
        assert_eq!(serde_json::to_value(&session).unwrap()["expires"], serde_json::json!(1767225600.5));
        assert_eq!(serde_json::to_value(&session).unwrap()["sameSite"], "Lax");
    }
}
