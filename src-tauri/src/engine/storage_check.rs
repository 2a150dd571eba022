//! Reads untrusted cookies and storage states (a tool's input, a file, a session's
//! `storage_state`) into [`super::storage`]'s types, or refuses them whole: the first wrong
//! value is `E_BAD_REQUEST` with `details.field` naming it (`cookies[2].expires`), a field
//! of Playwright's that WebKitGTK cannot honour (`partitionKey`, `indexedDB`) is
//! `E_UNSUPPORTED` naming it. Nothing is applied before everything has passed.

use serde_json::{Map, Value};

use super::storage::{Cookie, OriginStorage, SameSite, StorageItem, StorageState};
use crate::error::{Error, ErrorCode, Result};

/// Most cookies one call or state may hold.
pub const MAX_COOKIES: usize = 10_000;
/// Most origins one state may hold.
pub const MAX_ORIGINS: usize = 1_000;
/// Most localStorage items of one origin.
pub const MAX_ITEMS: usize = 10_000;
/// Longest cookie name plus value, in bytes (browsers keep 4096).
const MAX_COOKIE_BYTES: usize = 4096;
/// Most localStorage one origin may hold, in UTF-16 bytes of names and values (WebKit's
/// quota per origin).
pub const MAX_ORIGIN_BYTES: usize = 5 << 20;

/// Playwright's fields that WebKitGTK has no way to set.
const UNSUPPORTED_COOKIE_FIELDS: &[&str] = &["partitionKey"];
const UNSUPPORTED_ORIGIN_FIELDS: &[&str] = &["indexedDB", "opfs"];

/// `E_BAD_REQUEST` naming `field`.
pub fn refused(field: &str, message: impl std::fmt::Display) -> Error {
    Error::bad_request(format!("{field}: {message}")).with_details(serde_json::json!({ "field": field }))
}

fn unsupported(field: &str, message: &str) -> Error {
    Error::new(ErrorCode::Unsupported, format!("{field}: {message}")).with_details(serde_json::json!({ "field": field }))
}

/// `prefix.key`, or `key` without a prefix.
fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// A storage state (`{cookies, origins}`, both optional) at `field` (empty: the top).
pub fn state(value: &Value, field: &str) -> Result<StorageState> {
    let shown = if field.is_empty() { "the storage state" } else { field };
    let object = value.as_object().ok_or_else(|| refused(shown, "must be an object {cookies, origins} (Playwright's storageState)"))?;
    for key in object.keys() {
        if !matches!(key.as_str(), "cookies" | "origins") {
            return Err(refused(&join(field, key), "is not a field of a storage state (cookies, origins)"));
        }
    }
    let cookies = match object.get("cookies") {
        None => Vec::new(),
        Some(list) => cookies(list, &join(field, "cookies"))?,
    };
    let origins = match object.get("origins") {
        None => Vec::new(),
        Some(list) => origins(list, &join(field, "origins"))?,
    };
    Ok(StorageState { cookies, origins })
}

/// A list of cookies at `field`.
pub fn cookies(value: &Value, field: &str) -> Result<Vec<Cookie>> {
    let list = value.as_array().ok_or_else(|| refused(field, "must be a list of cookies"))?;
    if list.len() > MAX_COOKIES {
        return Err(refused(field, format!("holds {} cookies, more than {MAX_COOKIES}", list.len())));
    }
    list.iter().enumerate().map(|(index, cookie)| one_cookie(cookie, &format!("{field}[{index}]"))).collect()
}

fn one_cookie(value: &Value, field: &str) -> Result<Cookie> {
    let object = value.as_object().ok_or_else(|| refused(field, "must be an object {name, value, domain, path, ...}"))?;
    for key in object.keys() {
        if UNSUPPORTED_COOKIE_FIELDS.contains(&key.as_str()) {
            return Err(unsupported(&join(field, key), "WebKitGTK has no partitioned cookies; leave it out"));
        }
        if !matches!(key.as_str(), "name" | "value" | "domain" | "path" | "url" | "expires" | "httpOnly" | "secure" | "sameSite") {
            return Err(refused(
                &join(field, key),
                "is not a cookie field (name, value, domain, path, url, expires, httpOnly, secure, sameSite)",
            ));
        }
    }
    // A value outside its list first, as the input's parser names one.
    let same_site = match object.get("sameSite") {
        None | Some(Value::Null) => SameSite::Lax,
        Some(Value::String(text)) if text == "Strict" => SameSite::Strict,
        Some(Value::String(text)) if text == "Lax" => SameSite::Lax,
        Some(Value::String(text)) if text == "None" => SameSite::None,
        Some(_) => return Err(refused(&join(field, "sameSite"), "must be \"Strict\", \"Lax\" or \"None\"")),
    };
    let name = text(object, field, "name")?.ok_or_else(|| refused(&join(field, "name"), "is missing"))?;
    let cookie_value = text(object, field, "value")?.ok_or_else(|| refused(&join(field, "value"), "is missing"))?;
    if name.is_empty() || name.contains(['=', ';', ',']) || name.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(refused(&join(field, "name"), "must be a token: not empty, no '=', ';', ',', spaces or control characters"));
    }
    if cookie_value.contains(';') || cookie_value.chars().any(char::is_control) {
        return Err(refused(&join(field, "value"), "may not contain ';' or control characters"));
    }
    if name.len() + cookie_value.len() > MAX_COOKIE_BYTES {
        return Err(refused(&join(field, "value"), format!("name and value together exceed {MAX_COOKIE_BYTES} bytes")));
    }
    let url = text(object, field, "url")?;
    let mut domain = text(object, field, "domain")?;
    let mut path = text(object, field, "path")?;
    let mut secure = flag(object, field, "secure")?;
    if let Some(url) = url {
        // As Playwright: the URL gives a host cookie, the URL's directory and its scheme's security.
        let url_field = join(field, "url");
        if domain.is_some() || path.is_some() {
            return Err(refused(&url_field, "give either url or domain and path, not both"));
        }
        let parsed = url::Url::parse(&url).map_err(|_| refused(&url_field, "is not a URL"))?;
        let host = parsed.host_str().filter(|_| matches!(parsed.scheme(), "http" | "https"));
        let host = host.ok_or_else(|| refused(&url_field, "must be an http or https URL"))?;
        let full_path = parsed.path();
        domain = Some(host.to_string());
        path = Some(full_path[..full_path.rfind('/').map_or(1, |slash| slash + 1)].to_string());
        secure = Some(secure.unwrap_or(false) || parsed.scheme() == "https");
    }
    let domain = domain.ok_or_else(|| refused(&join(field, "domain"), "is missing: give domain (and path), or url"))?;
    let domain = check_domain(&domain, &join(field, "domain"))?;
    let path = path.unwrap_or_else(|| "/".to_string());
    if !path.starts_with('/') || path.chars().any(|c| c.is_control() || c == ';') || path.len() > 1024 {
        return Err(refused(&join(field, "path"), "must start with '/' (at most 1024 characters, no ';')"));
    }
    let expires = match object.get("expires") {
        None | Some(Value::Null) => -1.0,
        Some(Value::Number(number)) => {
            let seconds = number.as_f64().unwrap_or(f64::NAN);
            if seconds != -1.0 && !(seconds > 0.0 && seconds < 253_402_300_800.0) {
                return Err(refused(
                    &join(field, "expires"),
                    "must be Unix seconds after 1970 and before 10000, or -1 for a session cookie",
                ));
            }
            seconds
        }
        Some(other) => {
            return Err(refused(
                &join(field, "expires"),
                format!("must be a number of Unix seconds (or -1 for a session cookie), not {}", kind(other)),
            ))
        }
    };
    Ok(Cookie {
        name,
        value: cookie_value,
        domain,
        path,
        expires,
        http_only: flag(object, field, "httpOnly")?.unwrap_or(false),
        secure: secure.unwrap_or(false),
        same_site,
    })
}

/// A cookie domain: a host name (letters, digits, `-`, `_`, dots), an IPv4 address or a
/// bracketed IPv6 one, with a leading dot for a domain cookie; lower-cased.
fn check_domain(domain: &str, field: &str) -> Result<String> {
    let domain = domain.to_ascii_lowercase();
    let bare = domain.strip_prefix('.').unwrap_or(&domain);
    let host_name = !bare.is_empty()
        && bare.len() <= 253
        && !bare.starts_with('.')
        && !bare.ends_with('.')
        && !bare.contains("..")
        && bare.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let ipv6 = bare.starts_with('[') && bare.ends_with(']') && bare[1..bare.len() - 1].parse::<std::net::Ipv6Addr>().is_ok();
    if !(host_name || ipv6) {
        return Err(refused(field, format!("{domain:?} is not a cookie domain (example.com, or .example.com for its subdomains too)")));
    }
    Ok(domain)
}

fn origins(value: &Value, field: &str) -> Result<Vec<OriginStorage>> {
    let list = value.as_array().ok_or_else(|| refused(field, "must be a list of {origin, localStorage}"))?;
    if list.len() > MAX_ORIGINS {
        return Err(refused(field, format!("holds {} origins, more than {MAX_ORIGINS}", list.len())));
    }
    let mut merged: Vec<OriginStorage> = Vec::new();
    for (index, entry) in list.iter().enumerate() {
        let entry_field = format!("{field}[{index}]");
        let object = entry.as_object().ok_or_else(|| refused(&entry_field, "must be an object {origin, localStorage}"))?;
        for key in object.keys() {
            if UNSUPPORTED_ORIGIN_FIELDS.contains(&key.as_str()) {
                return Err(unsupported(&join(&entry_field, key), "only localStorage is imported and exported; leave it out"));
            }
            if !matches!(key.as_str(), "origin" | "localStorage") {
                return Err(refused(&join(&entry_field, key), "is not a field of an origin (origin, localStorage)"));
            }
        }
        let origin_field = join(&entry_field, "origin");
        let origin = text(object, &entry_field, "origin")?.ok_or_else(|| refused(&origin_field, "is missing"))?;
        let origin = check_origin(&origin, &origin_field)?;
        let items_field = join(&entry_field, "localStorage");
        let items = match object.get("localStorage") {
            None => Vec::new(),
            Some(items) => storage_items(items, &items_field)?,
        };
        match merged.iter_mut().find(|known| known.origin == origin) {
            Some(known) => {
                known.local_storage.retain(|earlier| items.iter().all(|item| item.name != earlier.name));
                known.local_storage.extend(items);
            }
            None => merged.push(OriginStorage { origin, local_storage: items }),
        }
    }
    Ok(merged)
}

fn storage_items(value: &Value, field: &str) -> Result<Vec<StorageItem>> {
    let list = value.as_array().ok_or_else(|| refused(field, "must be a list of {name, value}"))?;
    if list.len() > MAX_ITEMS {
        return Err(refused(field, format!("holds {} items, more than {MAX_ITEMS}", list.len())));
    }
    let mut items = Vec::with_capacity(list.len());
    for (index, item) in list.iter().enumerate() {
        let item_field = format!("{field}[{index}]");
        let object = item.as_object().ok_or_else(|| refused(&item_field, "must be an object {name, value}"))?;
        if let Some(key) = object.keys().find(|key| !matches!(key.as_str(), "name" | "value")) {
            return Err(refused(&join(&item_field, key), "is not a field of a localStorage item (name, value)"));
        }
        let name = text(object, &item_field, "name")?.ok_or_else(|| refused(&join(&item_field, "name"), "is missing"))?;
        let value = text(object, &item_field, "value")?.ok_or_else(|| refused(&join(&item_field, "value"), "is missing"))?;
        // As setItem does: a later item of the same name replaces an earlier one.
        items.retain(|earlier: &StorageItem| earlier.name != name);
        items.push(StorageItem { name, value });
    }
    let bytes: usize = items.iter().map(|item| 2 * (item.name.encode_utf16().count() + item.value.encode_utf16().count())).sum();
    if bytes > MAX_ORIGIN_BYTES {
        return Err(refused(field, format!("holds {bytes} bytes, more than the {} MiB WebKit keeps per origin", MAX_ORIGIN_BYTES >> 20)));
    }
    Ok(items)
}

/// An http(s) origin (`https://example.com:8443`, no path), as the browser writes it.
pub fn check_origin(origin: &str, field: &str) -> Result<String> {
    let bad = || refused(field, format!("{origin:?} is not an origin such as https://example.com"));
    let url = url::Url::parse(origin).map_err(|_| bad())?;
    let plain = url.path() == "/" && url.query().is_none() && url.fragment().is_none() && url.username().is_empty();
    if !matches!(url.scheme(), "http" | "https") || !plain || url.password().is_some() {
        return Err(bad());
    }
    Ok(url.origin().ascii_serialization())
}

/// http(s) URLs (`urls` of `cookies`), each refused naming `field[i]`.
pub fn urls(list: &[String], field: &str) -> Result<Vec<url::Url>> {
    list.iter()
        .enumerate()
        .map(|(index, text)| {
            let url = url::Url::parse(text).ok().filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some());
            url.ok_or_else(|| refused(&format!("{field}[{index}]"), format!("{text:?} is not an http or https URL")))
        })
        .collect()
}

/// A string field of `object`, if present (null counts as absent).
fn text(object: &Map<String, Value>, field: &str, key: &str) -> Result<Option<String>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(refused(&join(field, key), format!("must be a string, not {}", kind(other)))),
    }
}

/// A boolean field of `object`, if present.
fn flag(object: &Map<String, Value>, field: &str, key: &str) -> Result<Option<bool>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(other) => Err(refused(&join(field, key), format!("must be true or false, not {}", kind(other)))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn field_of(error: Error) -> String {
        error.details["field"].as_str().unwrap_or_default().to_string()
    }

    #[test]
    fn a_playwright_state_reads_whole() {
        let state = state(
            &json!({
                "cookies": [
                    {"name": "sid", "value": "abc", "domain": "127.0.0.1", "path": "/", "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"},
                    {"name": "pref", "value": "dark", "domain": ".example.com", "path": "/app", "expires": 1893456000.25, "httpOnly": false, "secure": true, "sameSite": "None"}
                ],
                "origins": [{"origin": "http://127.0.0.1:8080", "localStorage": [{"name": "greeting", "value": "hi"}]}]
            }),
            "",
        )
        .unwrap();
        assert_eq!(state.cookies.len(), 2);
        assert!(state.cookies[0].http_only && state.cookies[0].expires == -1.0);
        assert_eq!((state.cookies[1].same_site, state.cookies[1].expires), (SameSite::None, 1893456000.25));
        assert_eq!(state.origins[0].origin, "http://127.0.0.1:8080");
        assert_eq!(state.origins[0].local_storage[0], StorageItem { name: "greeting".into(), value: "hi".into() });
    }

    #[test]
    fn a_cookie_by_url_is_a_host_cookie_of_its_directory() {
        let cookies = cookies(&json!([{"name": "a", "value": "1", "url": "https://Example.com/app/page"}]), "cookies").unwrap();
        assert_eq!((cookies[0].domain.as_str(), cookies[0].path.as_str(), cookies[0].secure), ("example.com", "/app/", true));
        assert_eq!(cookies[0].expires, -1.0);
    }

    #[test]
    fn every_wrong_value_is_refused_naming_its_field() {
        let good = json!({"name": "a", "value": "1", "domain": "example.com", "path": "/"});
        let with = |key: &str, value: Value| {
            let mut cookie = good.clone();
            cookie[key] = value;
            json!({ "cookies": [good.clone(), cookie] })
        };
        let cases = [
            (with("expires", json!("2030-01-01")), "state.cookies[1].expires"),
            (with("expires", json!(-5)), "state.cookies[1].expires"),
            (with("domain", Value::Null), "state.cookies[1].domain"),
            (with("domain", json!("exa mple.com")), "state.cookies[1].domain"),
            (with("sameSite", json!("lax")), "state.cookies[1].sameSite"),
            (with("httpOnly", json!("yes")), "state.cookies[1].httpOnly"),
            (with("colour", json!("red")), "state.cookies[1].colour"),
            (with("name", json!("a=b")), "state.cookies[1].name"),
            (with("path", json!("app")), "state.cookies[1].path"),
            (json!({"cookies": [], "extra": 1}), "state.extra"),
            (json!({"origins": [{"origin": "http://a.test/path", "localStorage": []}]}), "state.origins[0].origin"),
            (
                json!({"origins": [{"origin": "http://a.test", "localStorage": [{"name": "k", "value": 3}]}]}),
                "state.origins[0].localStorage[0].value",
            ),
        ];
        for (input, field) in cases {
            let error = state(&input, "state").unwrap_err();
            assert_eq!(error.code, ErrorCode::BadRequest, "{input}");
            assert_eq!(field_of(error), field, "{input}");
        }
        let partitioned = json!({"cookies": [{"name": "a", "value": "1", "domain": "a.test", "path": "/", "partitionKey": "x"}]});
        let error = state(&partitioned, "").unwrap_err();
        assert_eq!((error.code, field_of(error)), (ErrorCode::Unsupported, "cookies[0].partitionKey".to_string()));
        assert_eq!(field_of(state(&json!([1]), "").unwrap_err()), "the storage state");
    }

    #[test]
    fn urls_must_be_web_urls() {
        assert!(urls(&["https://a.test/x".into()], "urls").is_ok());
        assert_eq!(field_of(urls(&["https://a.test/".into(), "file:///etc".into()], "urls").unwrap_err()), "urls[1]");
    }
}
