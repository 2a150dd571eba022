//! What a session shows pages about itself, as asked at creation (issue #28): its user
//! agent, locale, time zone, color scheme, position, scale, extra headers and the
//! permissions it grants (and the upstream proxy it goes through, `network::upstream_proxy`).
//! This file holds the fields' types and their validation; the engine applies them (per
//! view, per context, or process-wide: docs/API.md says which) and the session proxy sends
//! the headers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};

/// Longest user agent accepted.
const MAX_USER_AGENT: usize = 512;
/// Most extra headers accepted.
const MAX_HEADERS: usize = 64;
/// Longest extra header value accepted.
const MAX_HEADER_VALUE: usize = 8192;
/// Headers the proxy decides itself (framing, routing, the connection).
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
    "proxy-connection",
];

/// `prefers-color-scheme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColorScheme {
    Light,
    Dark,
}

/// A position the page's geolocation reads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Geolocation {
    /// Degrees, -90 to 90.
    pub latitude: f64,
    /// Degrees, -180 to 180.
    pub longitude: f64,
    /// Meters (default 0).
    #[serde(default)]
    pub accuracy: Option<f64>,
}

/// A permission a page may be granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Permission {
    Geolocation,
    Notifications,
    ClipboardRead,
    ClipboardWrite,
}

/// A grant: a permission for every origin (a plain name) or for the listed origins.
/// Read by hand (not as an untagged enum, whose refusal names neither the field nor the
/// choices): a wrong name is refused listing the permissions, at its own path
/// (`permissions[0]`, `permissions[1].name`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum PermissionGrant {
    /// Granted to every origin.
    Everywhere(Permission),
    /// Granted to these origins only (`https://example.com`, `http://127.0.0.1:8080`).
    Origins {
        /// The permission.
        name: Permission,
        /// Origins (scheme, host and port; no path).
        origins: Vec<String>,
    },
}

impl<'de> Deserialize<'de> for PermissionGrant {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<PermissionGrant, D::Error> {
        use serde::de::value::{MapAccessDeserializer, StrDeserializer};

        /// `{name, origins}`.
        #[derive(Deserialize)]
        struct Origins {
            name: Permission,
            origins: Vec<String>,
        }

        struct Grant;
        impl<'de> serde::de::Visitor<'de> for Grant {
            type Value = PermissionGrant;

            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str(
                    "a permission (geolocation, notifications, clipboard-read, clipboard-write) or {\"name\": <permission>, \"origins\": [..]}",
                )
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> std::result::Result<PermissionGrant, E> {
                Permission::deserialize(StrDeserializer::<E>::new(name)).map(PermissionGrant::Everywhere)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<PermissionGrant, A::Error> {
                // The map as given: a wrong field inside is named by its own path.
                let Origins { name, origins } = Origins::deserialize(MapAccessDeserializer::new(map))?;
                Ok(PermissionGrant::Origins { name, origins })
            }
        }

        deserializer.deserialize_any(Grant)
    }
}

/// What a session shows pages about itself; every field optional (WebKit's own otherwise).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Identity {
    pub user_agent: Option<String>,
    pub locale: Option<String>,
    pub timezone: Option<String>,
    pub color_scheme: Option<ColorScheme>,
    pub geolocation: Option<Geolocation>,
    pub device_scale_factor: Option<f64>,
    /// Header names lower-cased.
    pub extra_http_headers: Vec<(String, String)>,
    /// Origins normalized (`None`: every origin).
    pub permissions: Vec<(Permission, Option<Vec<String>>)>,
    /// The upstream proxy the session proxy goes through (its password never serialized:
    /// a profile remembers the rest).
    pub proxy: Option<Box<crate::network::upstream_proxy::UpstreamProxyConfig>>,
}

impl Identity {
    /// Takes from `remembered` every field this identity leaves out.
    pub fn fill_from(&mut self, remembered: &Identity) {
        fn fill<T: Clone>(field: &mut Option<T>, remembered: &Option<T>) {
            if field.is_none() {
                field.clone_from(remembered);
            }
        }
        fill(&mut self.user_agent, &remembered.user_agent);
        fill(&mut self.locale, &remembered.locale);
        fill(&mut self.timezone, &remembered.timezone);
        fill(&mut self.color_scheme, &remembered.color_scheme);
        fill(&mut self.geolocation, &remembered.geolocation);
        fill(&mut self.device_scale_factor, &remembered.device_scale_factor);
        fill(&mut self.proxy, &remembered.proxy);
        if self.extra_http_headers.is_empty() {
            self.extra_http_headers.clone_from(&remembered.extra_http_headers);
        }
        if self.permissions.is_empty() {
            self.permissions.clone_from(&remembered.permissions);
        }
    }

    /// Whether `permission` is granted to a page of `origin` (`scheme://host[:port]`).
    pub fn grants(&self, permission: Permission, origin: &str) -> bool {
        self.permissions.iter().any(|(granted, origins)| {
            *granted == permission && origins.as_ref().is_none_or(|origins| origins.iter().any(|listed| listed == origin))
        })
    }

    /// The headers the session proxy adds to every request: the extra headers, and an
    /// `Accept-Language` of the locale unless they name one.
    pub fn request_headers(&self) -> Vec<(String, String)> {
        let mut headers = self.extra_http_headers.clone();
        if let Some(locale) = &self.locale {
            if !headers.iter().any(|(name, _)| name == "accept-language") {
                headers.push(("accept-language".into(), accept_language(locale)));
            }
        }
        headers
    }
}

/// `de-DE` -> `de-DE,de;q=0.9`; `de` -> `de`.
pub fn accept_language(locale: &str) -> String {
    match locale.split_once('-') {
        Some((language, _)) => format!("{locale},{language};q=0.9"),
        None => locale.to_string(),
    }
}

/// Checks a user agent: 1 to 512 printable ASCII characters (it is a header value).
pub fn check_user_agent(user_agent: &str) -> Result<()> {
    if user_agent.is_empty() || user_agent.len() > MAX_USER_AGENT || !user_agent.bytes().all(|byte| (0x20..0x7f).contains(&byte)) {
        return Err(field_error("user_agent", format!("user_agent must be 1 to {MAX_USER_AGENT} printable ASCII characters")));
    }
    Ok(())
}

/// Checks a BCP 47 language tag (`en`, `de-DE`, `zh-Hant-TW`).
pub fn check_locale(locale: &str) -> Result<()> {
    let mut parts = locale.split('-');
    let language_ok =
        parts.next().is_some_and(|language| (2..=3).contains(&language.len()) && language.bytes().all(|b| b.is_ascii_alphabetic()));
    let rest_ok = parts.all(|part| (2..=8).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_alphanumeric()));
    if !language_ok || !rest_ok || locale.len() > 35 {
        return Err(field_error("locale", format!("locale must be a BCP 47 language tag such as en-US or de-DE, not {locale:?}")));
    }
    Ok(())
}

/// Checks an IANA time zone name (`Europe/Berlin`, `UTC`) against the system's database.
pub fn check_timezone(timezone: &str) -> Result<()> {
    let well_formed = !timezone.is_empty()
        && timezone.len() <= 64
        && timezone.split('/').all(|part| {
            !part.is_empty() && part != "." && part != ".." && part.bytes().all(|b| b.is_ascii_alphanumeric() || b"_+-".contains(&b))
        });
    let database = std::path::Path::new("/usr/share/zoneinfo");
    let known = !database.is_dir() || database.join(timezone).is_file();
    if !well_formed || !known {
        return Err(field_error("timezone", format!("timezone must be an IANA time zone name such as Europe/Berlin, not {timezone:?}")));
    }
    Ok(())
}

/// Checks a position.
pub fn check_geolocation(position: &Geolocation) -> Result<()> {
    let accuracy = position.accuracy.unwrap_or(0.0);
    if !(position.latitude.is_finite() && (-90.0..=90.0).contains(&position.latitude)) {
        return Err(field_error("geolocation", "geolocation.latitude must be between -90 and 90"));
    }
    if !(position.longitude.is_finite() && (-180.0..=180.0).contains(&position.longitude)) {
        return Err(field_error("geolocation", "geolocation.longitude must be between -180 and 180"));
    }
    if !(accuracy.is_finite() && accuracy >= 0.0) {
        return Err(field_error("geolocation", "geolocation.accuracy must be a number of meters, 0 or more"));
    }
    Ok(())
}

/// Checks a scale factor (0.25 to 4).
pub fn check_device_scale_factor(factor: f64) -> Result<()> {
    if !(factor.is_finite() && (0.25..=4.0).contains(&factor)) {
        return Err(field_error("device_scale_factor", "device_scale_factor must be between 0.25 and 4"));
    }
    Ok(())
}

/// Checks extra headers and answers them with lower-case names, in name order.
pub fn check_headers(headers: &BTreeMap<String, String>) -> Result<Vec<(String, String)>> {
    if headers.len() > MAX_HEADERS {
        return Err(field_error("extra_http_headers", format!("at most {MAX_HEADERS} extra headers")));
    }
    let mut checked = Vec::new();
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if hyper::header::HeaderName::from_bytes(lower.as_bytes()).is_err() {
            return Err(field_error("extra_http_headers", format!("{name:?} is not a header name")));
        }
        if RESERVED_HEADERS.contains(&lower.as_str()) {
            return Err(field_error("extra_http_headers", format!("{name} is set by the browser, not by extra_http_headers")));
        }
        if value.len() > MAX_HEADER_VALUE || hyper::header::HeaderValue::from_str(value).is_err() {
            return Err(field_error(
                "extra_http_headers",
                format!("the value of {name} is not a header value (printable, at most {MAX_HEADER_VALUE} bytes)"),
            ));
        }
        if checked.iter().any(|(seen, _): &(String, String)| *seen == lower) {
            return Err(field_error("extra_http_headers", format!("{name} is named twice")));
        }
        checked.push((lower, value.clone()));
    }
    Ok(checked)
}

/// Checks grants and answers them with normalized origins.
pub fn check_permissions(grants: &[PermissionGrant]) -> Result<Vec<(Permission, Option<Vec<String>>)>> {
    grants
        .iter()
        .map(|grant| match grant {
            PermissionGrant::Everywhere(permission) => Ok((*permission, None)),
            PermissionGrant::Origins { name, origins } => {
                if origins.is_empty() {
                    return Err(field_error("permissions", "a grant's origins list is empty (leave it out to grant every origin)"));
                }
                let normalized = origins.iter().map(|origin| normalize_origin(origin)).collect::<Result<Vec<_>>>()?;
                Ok((*name, Some(normalized)))
            }
        })
        .collect()
}

/// `https://Example.com:443/` -> `https://example.com`.
fn normalize_origin(origin: &str) -> Result<String> {
    let bad = || field_error("permissions", format!("{origin:?} is not an origin such as https://example.com"));
    let url = url::Url::parse(origin).map_err(|_| bad())?;
    if !matches!(url.scheme(), "http" | "https") || url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(bad());
    }
    Ok(url.origin().ascii_serialization())
}

/// `E_BAD_REQUEST` naming the field.
fn field_error(field: &str, message: impl Into<String>) -> Error {
    Error::bad_request(message).with_details(serde_json::json!({ "field": field }))
}

/// `E_UNSUPPORTED` naming the field that the engine cannot give this session.
pub fn unsupported(field: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorCode::Unsupported, message).with_details(serde_json::json!({ "field": field }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_checked_with_the_field_named() {
        assert!(check_user_agent("Mozilla/5.0 Test").is_ok());
        for bad in ["", "a\nb", "é"] {
            assert_eq!(check_user_agent(bad).unwrap_err().details["field"], "user_agent");
        }
        assert!(check_locale("de-DE").is_ok() && check_locale("zh-Hant-TW").is_ok() && check_locale("en").is_ok());
        assert!(check_locale("de_DE").is_err() && check_locale("").is_err() && check_locale("x").is_err());
        assert!(check_timezone("Europe/Berlin").is_ok() && check_timezone("UTC").is_ok());
        assert!(check_timezone("Mars/Olympus").is_err() && check_timezone("../etc/passwd").is_err() && check_timezone("").is_err());
        assert!(check_geolocation(&Geolocation { latitude: 48.8, longitude: 2.3, accuracy: Some(10.0) }).is_ok());
        assert!(check_geolocation(&Geolocation { latitude: 91.0, longitude: 0.0, accuracy: None }).is_err());
        assert!(check_geolocation(&Geolocation { latitude: 0.0, longitude: 0.0, accuracy: Some(-1.0) }).is_err());
        assert!(check_device_scale_factor(1.0).is_ok() && check_device_scale_factor(0.0).is_err());
        let headers = BTreeMap::from([("X-Test".to_string(), "1".to_string())]);
        assert_eq!(check_headers(&headers).unwrap(), vec![("x-test".to_string(), "1".to_string())]);
        for (name, value) in [("Host", "a"), ("bad name", "a"), ("x-a", "line\nbreak")] {
            assert!(check_headers(&BTreeMap::from([(name.to_string(), value.to_string())])).is_err(), "{name}");
        }
    }

    #[test]
    fn grants_name_every_origin_or_the_listed_ones() {
        let grants: Vec<PermissionGrant> =
            serde_json::from_value(serde_json::json!(["notifications", { "name": "geolocation", "origins": ["HTTP://127.0.0.1:8080/"] }]))
                .unwrap();
        let identity = Identity { permissions: check_permissions(&grants).unwrap(), ..Identity::default() };
        assert!(identity.grants(Permission::Notifications, "https://anywhere.example"));
        assert!(identity.grants(Permission::Geolocation, "http://127.0.0.1:8080"));
        assert!(!identity.grants(Permission::Geolocation, "http://127.0.0.1:8081"));
        assert!(!identity.grants(Permission::ClipboardRead, "http://127.0.0.1:8080"));
        let bad: Vec<PermissionGrant> =
            serde_json::from_value(serde_json::json!([{ "name": "geolocation", "origins": ["https://a.example/path"] }])).unwrap();
        assert!(check_permissions(&bad).is_err());
        assert!(serde_json::from_value::<Vec<PermissionGrant>>(serde_json::json!(["camera"])).is_err());
        for (bad, field) in [
            (serde_json::json!(["teleport"]), "[0]"),
            (serde_json::json!(["geolocation", { "name": "teleport", "origins": [] }]), "[1].name"),
        ] {
            let error = serde_path_to_error::deserialize::<_, Vec<PermissionGrant>>(bad).unwrap_err();
            assert_eq!(error.path().to_string(), field);
            assert!(
                error.inner().to_string().contains("expected one of `geolocation`, `notifications`, `clipboard-read`, `clipboard-write`"),
                "{error}"
            );
        }
        let number = serde_json::from_value::<Vec<PermissionGrant>>(serde_json::json!([7])).unwrap_err().to_string();
        assert!(number.contains("expected a permission (geolocation, "), "{number}");
    }

    #[test]
    fn the_locale_becomes_an_accept_language_unless_one_is_given() {
        let identity = Identity { locale: Some("de-DE".into()), ..Identity::default() };
        assert_eq!(identity.request_headers(), vec![("accept-language".to_string(), "de-DE,de;q=0.9".to_string())]);
        let given = Identity { extra_http_headers: vec![("accept-language".into(), "fr".into())], ..identity };
        assert_eq!(given.request_headers(), vec![("accept-language".to_string(), "fr".to_string())]);
    }
}
