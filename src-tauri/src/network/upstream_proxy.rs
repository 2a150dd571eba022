//! A session's upstream proxy as asked at creation (issue #28): `{server, username?,
//! password? | credential?, bypass?}`, checked (`E_BAD_REQUEST` naming the field) into the
//! form the session keeps, answers and a profile remembers. The password is held in a
//! [`Password`] that no `Debug`, log line, answer or file ever shows: a profile's
//! `identity.json` keeps the server, username, credential name and bypass list only.
//!
//! The session proxy (`proxy/chain.rs`) connects through it; `bypass` hosts go direct.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Most bypass entries accepted.
const MAX_BYPASS: usize = 64;
/// Longest username or password (SOCKS5 carries at most 255 bytes of each).
const MAX_SECRET: usize = 255;
/// The bypass entry that names every loopback host.
pub const LOOPBACK: &str = "<loopback>";

/// A proxy password: shown by nothing (its `Debug` is redacted, it is never serialized).
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Password(String);

impl Password {
    /// A password from the vault.
    pub fn new(password: String) -> Password {
        Password(password)
    }

    /// The password itself, for the proxy handshake only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Password(<redacted>)")
    }
}

/// `proxy` at session creation.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamProxyInput {
    /// `http://host:port`, `https://host:port` or `socks5://host:port` (`host:port` alone
    /// is http); default ports 80, 443 and 1080.
    #[schemars(length(min = 1, max = 300))]
    pub server: String,
    /// The username the proxy asks for (HTTP Basic, or SOCKS5 username/password).
    #[serde(default)]
    pub username: Option<String>,
    /// Its password (never answered, logged or written to disk).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub password: Option<Password>,
    /// A vault credential whose username and password to use instead; it must be stored
    /// for the proxy's origin (`http://host:port`; `https://` for an https proxy).
    #[serde(default)]
    pub credential: Option<String>,
    /// Hosts that go direct: exact names or addresses, `*.example.com` (its subdomains),
    /// `<loopback>` (localhost, 127.0.0.0/8, ::1). At most 64.
    #[serde(default)]
    pub bypass: Option<Vec<String>>,
}

/// How the session proxy speaks to the upstream proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProxyScheme {
    /// HTTP CONNECT over TCP.
    Http,
    /// HTTP CONNECT over TLS to the proxy.
    Https,
    /// SOCKS5 (RFC 1928, RFC 1929 username/password); names are resolved by the proxy.
    Socks5,
}

/// A checked upstream proxy: what a session keeps and answers, and a profile remembers
/// (the password never: it is not serialized).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UpstreamProxyConfig {
    /// `scheme://host:port`, normalized.
    pub server: String,
    /// The username, if any (from the vault credential when `credential` is set).
    #[serde(default)]
    pub username: Option<String>,
    /// The vault credential it uses, if any.
    #[serde(default)]
    pub credential: Option<String>,
    /// Hosts that go direct, lower-cased.
    #[serde(default)]
    pub bypass: Vec<String>,
    #[serde(skip)]
    #[schemars(skip)]
    pub password: Option<Password>,
}

impl UpstreamProxyInput {
    /// Checks the input (`E_BAD_REQUEST` with `details.field` naming the wrong part).
    pub fn check(&self) -> Result<UpstreamProxyConfig> {
        let (scheme, host, port) = parse_server(&self.server)?;
        let server = format!("{}://{}:{port}", scheme_name(scheme), bracket(&host));
        if self.credential.is_some() && (self.username.is_some() || self.password.is_some()) {
            return Err(field_error(
                "proxy.credential",
                "proxy.credential takes the place of proxy.username and proxy.password: give one or the other",
            ));
        }
        if let Some(credential) = &self.credential {
            let valid = (1..=64).contains(&credential.len())
                && credential.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".-_".contains(c));
            if !valid {
                return Err(field_error(
                    "proxy.credential",
                    "proxy.credential is a vault credential name (1 to 64 of a-z, 0-9, '.', '_', '-')",
                ));
            }
        }
        match (&self.username, &self.password) {
            (None, Some(_)) => return Err(field_error("proxy.password", "proxy.password needs proxy.username")),
            (Some(_), None) => {
                return Err(field_error("proxy.username", "proxy.username needs proxy.password (or name a vault credential instead)"))
            }
            (Some(username), Some(password)) => {
                check_secret_text("proxy.username", username)?;
                if username.contains(':') && scheme != ProxyScheme::Socks5 {
                    return Err(field_error("proxy.username", "an HTTP proxy's username cannot contain ':' (Basic authentication)"));
                }
                check_secret_text("proxy.password", password.expose())?;
            }
            (None, None) => {}
        }
        let bypass = self.bypass.as_deref().map(check_bypass).transpose()?.unwrap_or_default();
        Ok(UpstreamProxyConfig {
            server,
            username: self.username.clone(),
            credential: self.credential.clone(),
            bypass,
            password: self.password.clone(),
        })
    }
}

impl UpstreamProxyConfig {
    /// The scheme, host and port of `server`.
    pub fn endpoint(&self) -> Result<(ProxyScheme, String, u16)> {
        parse_server(&self.server)
    }

    /// The origin a vault credential for this proxy must be stored for: `http://host:port`
    /// (`https://` for an https proxy).
    pub fn credential_origin(&self) -> String {
        match self.endpoint() {
            Ok((scheme, host, port)) => {
                let web = if scheme == ProxyScheme::Https { "https" } else { "http" };
                format!("{web}://{}:{port}", bracket(&host))
            }
            Err(_) => String::new(),
        }
    }

    /// Whether it needs a password it does not hold: a username given with a password
    /// that was not kept (a profile remembers no password).
    pub fn lacks_password(&self) -> bool {
        self.username.is_some() && self.password.is_none() && self.credential.is_none()
    }

    /// Whether requests to `host` go direct.
    pub fn bypasses(&self, host: &str) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']').trim_end_matches('.').to_ascii_lowercase();
        self.bypass.iter().any(|entry| match entry.as_str() {
            LOOPBACK => is_loopback_host(&host),
            wildcard if wildcard.starts_with("*.") => host.ends_with(&wildcard[1..]),
            exact => exact.trim_start_matches('[').trim_end_matches(']') == host,
        })
    }
}

/// Whether `host` is a loopback name or address (`localhost`, `*.localhost`, 127.0.0.0/8,
/// `::1`).
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']').trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>().is_ok_and(|ip| match ip {
        std::net::IpAddr::V6(v6) => v6.to_canonical().is_loopback(),
        v4 => v4.is_loopback(),
    })
}

fn scheme_name(scheme: ProxyScheme) -> &'static str {
    match scheme {
        ProxyScheme::Http => "http",
        ProxyScheme::Https => "https",
        ProxyScheme::Socks5 => "socks5",
    }
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// `socks5://Proxy.example:1080` -> (Socks5, "proxy.example", 1080).
fn parse_server(server: &str) -> Result<(ProxyScheme, String, u16)> {
    let bad = |message: String| field_error("proxy.server", message);
    let text = if server.contains("://") { server.to_string() } else { format!("http://{server}") };
    let url = url::Url::parse(&text).map_err(|error| bad(format!("proxy.server is not a proxy URL such as http://host:3128 ({error})")))?;
    let scheme = match url.scheme() {
        "http" => ProxyScheme::Http,
        "https" => ProxyScheme::Https,
        "socks5" => ProxyScheme::Socks5,
        other => return Err(bad(format!("proxy.server's scheme must be http, https or socks5, not {other:?}"))),
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("proxy.server carries no credentials: give proxy.username and proxy.password (or proxy.credential)".into()));
    }
    let host = match url.host() {
        Some(url::Host::Domain(name)) if !name.is_empty() => name.to_ascii_lowercase(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        _ => return Err(bad("proxy.server names no host".into())),
    };
    // A non-special scheme (socks5) keeps its host as written: it must still be a name.
    if !host.bytes().all(|byte| byte.is_ascii_alphanumeric() || b".-_:".contains(&byte)) {
        return Err(bad(format!("proxy.server's host {host:?} is not a host name or address")));
    }
    if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
        return Err(bad("proxy.server is scheme://host:port, without a path, query or fragment".into()));
    }
    let port = url.port().unwrap_or(match scheme {
        ProxyScheme::Http => 80,
        ProxyScheme::Https => 443,
        ProxyScheme::Socks5 => 1080,
    });
    if port == 0 {
        return Err(bad("proxy.server's port cannot be 0".into()));
    }
    Ok((scheme, host, port))
}

/// A username or password: 1 to 255 bytes, no control characters.
fn check_secret_text(field: &str, text: &str) -> Result<()> {
    if text.is_empty() || text.len() > MAX_SECRET || text.chars().any(char::is_control) {
        // The value itself is never echoed.
        return Err(field_error(field, format!("{field} must be 1 to {MAX_SECRET} bytes without control characters")));
    }
    Ok(())
}

/// Checks bypass entries; answers them lower-cased.
fn check_bypass(entries: &[String]) -> Result<Vec<String>> {
    if entries.len() > MAX_BYPASS {
        return Err(field_error("proxy.bypass", format!("at most {MAX_BYPASS} bypass entries")));
    }
    entries
        .iter()
        .map(|entry| {
            let lower = entry.trim().to_ascii_lowercase();
            if lower == LOOPBACK {
                return Ok(lower);
            }
            let name = lower.strip_prefix("*.").unwrap_or(&lower);
            let address = name.trim_start_matches('[').trim_end_matches(']');
            let valid_name = !name.is_empty()
                && name.len() <= 253
                && name.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
                });
            if valid_name || (!lower.starts_with("*.") && address.parse::<std::net::IpAddr>().is_ok()) {
                Ok(lower)
            } else {
                Err(field_error(
                    "proxy.bypass",
                    format!("{entry:?} is not a bypass entry: a host name, an address, *.example.com or {LOOPBACK}"),
                ))
            }
        })
        .collect()
}

/// `E_BAD_REQUEST` naming the field.
fn field_error(field: &str, message: impl Into<String>) -> Error {
    Error::bad_request(message).with_details(serde_json::json!({ "field": field }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(value: serde_json::Value) -> UpstreamProxyInput {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn servers_are_checked_and_normalized() {
        let config = input(serde_json::json!({ "server": "SOCKS5://Proxy.Example", "username": "u", "password": "p" })).check().unwrap();
        assert_eq!(config.server, "socks5://proxy.example:1080");
        assert_eq!(config.credential_origin(), "http://proxy.example:1080");
        assert_eq!(input(serde_json::json!({ "server": "127.0.0.1:3128" })).check().unwrap().server, "http://127.0.0.1:3128");
        assert_eq!(input(serde_json::json!({ "server": "https://[::1]" })).check().unwrap().server, "https://[::1]:443");
        for (server, field) in [
            ("ftp://proxy:21", "proxy.server"),
            ("http://", "proxy.server"),
            ("socks5://:1080", "proxy.server"),
            ("http://user:pw@proxy:3128", "proxy.server"),
            ("http://proxy:3128/path", "proxy.server"),
        ] {
            let error = input(serde_json::json!({ "server": server })).check().unwrap_err();
            assert_eq!(error.details["field"], field, "{server}");
        }
    }

    #[test]
    fn credentials_come_in_pairs_or_from_the_vault_and_are_never_shown() {
        let base = |extra: serde_json::Value| {
            let mut value = serde_json::json!({ "server": "http://proxy:3128" });
            value.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            input(value).check()
        };
        assert_eq!(base(serde_json::json!({ "password": "secret-pw" })).unwrap_err().details["field"], "proxy.password");
        assert_eq!(base(serde_json::json!({ "username": "u" })).unwrap_err().details["field"], "proxy.username");
        assert_eq!(base(serde_json::json!({ "username": "a:b", "password": "p" })).unwrap_err().details["field"], "proxy.username");
        let both = base(serde_json::json!({ "credential": "corp", "username": "u", "password": "p" })).unwrap_err();
        assert_eq!(both.details["field"], "proxy.credential");
        let bad_password = base(serde_json::json!({ "username": "u", "password": "line\nbreak-secret" })).unwrap_err();
        assert!(!bad_password.message.contains("break-secret"));
        let config = base(serde_json::json!({ "username": "u", "password": "secret-pw" })).unwrap();
        assert!(!format!("{config:?}").contains("secret-pw"));
        let remembered = serde_json::to_string(&config).unwrap();
        assert!(!remembered.contains("secret-pw") && remembered.contains("\"u\""), "{remembered}");
        let again: UpstreamProxyConfig = serde_json::from_str(&remembered).unwrap();
        assert!(again.lacks_password() && !config.lacks_password());
        assert!(!base(serde_json::json!({ "credential": "corp" })).unwrap().lacks_password());
    }

    #[test]
    fn bypass_names_hosts_subdomains_and_loopback() {
        let config = input(serde_json::json!({ "server": "http://proxy:3128", "bypass": ["Intranet.example", "*.corp.example", "10.0.0.1", "<loopback>"] }))
            .check()
            .unwrap();
        assert!(config.bypasses("intranet.example") && config.bypasses("INTRANET.example."));
        assert!(config.bypasses("a.corp.example") && !config.bypasses("corp.example") && !config.bypasses("xcorp.example"));
        assert!(config.bypasses("10.0.0.1") && !config.bypasses("10.0.0.2"));
        assert!(config.bypasses("localhost") && config.bypasses("127.0.0.5") && config.bypasses("::1") && config.bypasses("a.localhost"));
        assert!(!config.bypasses("example.com"));
        let plain = input(serde_json::json!({ "server": "http://proxy:3128" })).check().unwrap();
        assert!(!plain.bypasses("127.0.0.1"), "loopback goes through the proxy unless bypassed");
        for bad in ["", "*", "a b", "*.", "http://x", "*.10.0.0.1/8"] {
            let error = input(serde_json::json!({ "server": "http://proxy:3128", "bypass": [bad] })).check().unwrap_err();
            assert_eq!(error.details["field"], "proxy.bypass", "{bad:?}");
        }
    }
}
