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
    fn in_page_navigations() {
        for good in ["http://a/", "https://a/", "about:blank", "about:srcdoc", "data:text/html,x", "blob:http://a/1"] {
            assert!(allowed_in_page(good), "{good}");
        }
        for bad in ["file:///etc/passwd", "ftp://a/", "http://u:p@a/", "custom:thing", "about:config"] {
            assert!(!allowed_in_page(bad), "{bad}");
        }
    }
}
