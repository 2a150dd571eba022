//! Which URLs a session may load: the API accepts only http/https without embedded
//! credentials; inside a page, navigations to anything but web and inert document
//! schemes (file:, custom schemes, ...) are refused.

use url::Url;

use crate::error::{Error, ErrorCode, Result};

/// Checks a URL given to `navigate` (or typed by a person): http/https, no credentials.
pub fn check_navigation_url(raw: &str) -> Result<Url> {
    let url = Url::parse(raw.trim()).map_err(|error| {
        Error::new(ErrorCode::InvalidUrl, format!("not a valid absolute URL ({error})"))
            .with_details(serde_json::json!({ "reason": "unparsable" }))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::new(ErrorCode::InvalidUrl, format!("only http and https URLs can be opened, not {}:", url.scheme()))
            .with_details(serde_json::json!({ "reason": "scheme", "scheme": url.scheme() })));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::new(ErrorCode::InvalidUrl, "URLs with embedded credentials are refused")
            .with_details(serde_json::json!({ "reason": "credentials" })));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Error::new(ErrorCode::InvalidUrl, "the URL has no host").with_details(serde_json::json!({ "reason": "host" })));
    }
    Ok(url)
}

/// Whether a page may navigate a frame to `raw` by itself (links, forms, scripts, iframes).
pub fn allowed_in_page(raw: &str) -> bool {
    if matches!(raw, "about:blank" | "about:srcdoc") {
        return true;
    }
    match Url::parse(raw) {
        Ok(url) => match url.scheme() {
            "http" | "https" => url.username().is_empty() && url.password().is_none(),
            "data" | "blob" => true,
            _ => false,
        },
        Err(_) => false,
    }
}

/// Removes `user:password@` from a URL before it goes into an event.
pub fn redact_credentials(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
        }
        _ => raw.to_string(),
    }
}

/// Ports the fetch standard (and so WebKit) never loads over http(s).
const BLOCKED_PORTS: [u16; 84] = [
    0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115,
    117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601,
    636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697,
    10080, 65535,
];

/// The port of `raw` when it is one the browser refuses to load.
pub fn blocked_port(raw: &str) -> Option<u16> {
    let url = Url::parse(raw).ok()?;
    let port = url.port_or_known_default()?;
    BLOCKED_PORTS.contains(&port).then_some(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_urls() {
        assert!(check_navigation_url("http://127.0.0.1:8080/x?y#z").is_ok());
        assert!(check_navigation_url("https://example.com").is_ok());
        for (bad, reason) in [
            ("file:///etc/passwd", "scheme"),
            ("javascript:alert(1)", "scheme"),
            ("ftp://example.com/", "scheme"),
            ("about:blank", "scheme"),
            ("http://user:pw@example.com/", "credentials"),
            ("http://user@example.com/", "credentials"),
            ("example.com", "unparsable"),
            ("", "unparsable"),
        ] {
            let error = check_navigation_url(bad).unwrap_err();
            assert_eq!(error.code, ErrorCode::InvalidUrl, "{bad}");
            assert_eq!(error.details["reason"], reason, "{bad}");
        }
    }

    #[test]
    fn blocked_ports() {
        assert_eq!(blocked_port("http://127.0.0.1:25/"), Some(25));
        assert_eq!(blocked_port("http://a:6000/x"), Some(6000));
        assert_eq!(blocked_port("http://a/"), None);
        assert_eq!(blocked_port("https://a:8443/"), None);
    }

    #[test]
    fn in_page_navigations() {
        for good in ["http://a/", "https://a/", "about:blank", "about:srcdoc", "data:text/html,x", "blob:http://a/1"] {
            assert!(allowed_in_page(good), "{good}");
        }
        for bad in ["file:///etc/passwd", "ftp://a/", "http://u:p@a/", "custom:thing", "about:config"] {
            assert!(!allowed_in_page(bad), "{bad}");
        }
    }
}
