//! Domain patterns of a policy: `example.com` (that host only), `*.example.com` (its
//! subdomains, at any depth, not the name itself), an IP literal (`127.0.0.1`, `::1`).
//! Hosts are compared without their port, case-insensitively, without a trailing dot.

use std::net::IpAddr;

/// One entry of `allow_domains` or `block_domains`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainPattern {
    /// A host name, matched exactly (lowercase, no trailing dot).
    Exact(String),
    /// `*.name`: any subdomain of `name`.
    Subdomains(String),
    /// An IP address, matched exactly.
    Address(IpAddr),
}

impl DomainPattern {
    /// Parses one entry as the person wrote it; the error says what is wrong in plain words.
    pub fn parse(written: &str) -> Result<DomainPattern, String> {
        let trimmed = written.trim();
        if trimmed.is_empty() {
            return Err("an empty domain".into());
        }
        if trimmed.contains("://") || trimmed.contains('/') {
            return Err(format!("{written:?} is a URL or a path: write a host name only (example.com)"));
        }
        let unbracketed = trimmed.strip_prefix('[').and_then(|inner| inner.strip_suffix(']')).unwrap_or(trimmed);
        if let Ok(address) = unbracketed.parse::<IpAddr>() {
            return Ok(DomainPattern::Address(address));
        }
        if trimmed.contains(':') {
            return Err(format!("{written:?} has a port: domains are matched on every port, write the host only"));
        }
        let lower = trimmed.trim_end_matches('.').to_ascii_lowercase();
        let (wildcard, name) = match lower.strip_prefix("*.") {
            Some(rest) => (true, rest.to_string()),
            None => (false, lower.clone()),
        };
        let label_ok = |label: &str| {
            !label.is_empty()
                && label.len() <= 63
                && label.chars().all(|character| character.is_ascii_alphanumeric() || character == '-' || character == '_')
        };
        if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
            let hint = if name.contains('*') { " (a wildcard is only `*.` at the start)" } else { "" };
            return Err(format!("{written:?} is not a host name{hint}"));
        }
        Ok(if wildcard { DomainPattern::Subdomains(name) } else { DomainPattern::Exact(name) })
    }

    /// Whether `host` (a URL's host, with or without brackets, any case) matches.
    pub fn matches(&self, host: &str) -> bool {
        let host = normal_host(host);
        // An address is matched by address patterns only (`*.0.0.1` names no address).
        let address = host.parse::<IpAddr>().ok();
        match self {
            DomainPattern::Exact(_) | DomainPattern::Subdomains(_) if address.is_some() => false,
            DomainPattern::Exact(name) => host == *name,
            DomainPattern::Subdomains(name) => {
                host.len() > name.len() + 1 && host.ends_with(name.as_str()) && {
                    let cut = host.len() - name.len();
                    host.as_bytes()[cut - 1] == b'.'
                }
            }
            DomainPattern::Address(pattern) => address == Some(*pattern),
        }
    }
}

impl std::fmt::Display for DomainPattern {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DomainPattern::Exact(name) => formatter.write_str(name),
            DomainPattern::Subdomains(name) => write!(formatter, "*.{name}"),
            DomainPattern::Address(address) => write!(formatter, "{address}"),
        }
    }
}

/// A host as patterns compare it: lowercase, without brackets or a trailing dot.
fn normal_host(host: &str) -> String {
    let unbracketed = host.strip_prefix('[').and_then(|inner| inner.strip_suffix(']')).unwrap_or(host);
    unbracketed.trim_end_matches('.').to_ascii_lowercase()
}

/// The host of `url`, as patterns compare it (`None` for a URL without one).
pub fn host_of(url: &str) -> Option<String> {
    url::Url::parse(url).ok()?.host_str().map(normal_host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(written: &str) -> DomainPattern {
        DomainPattern::parse(written).unwrap()
    }

    #[test]
    fn exact_names_match_only_themselves_in_any_case() {
        let exact = pattern("Example.COM");
        assert_eq!(exact, DomainPattern::Exact("example.com".into()));
        for host in ["example.com", "EXAMPLE.com", "example.com."] {
            assert!(exact.matches(host), "{host}");
        }
        for host in ["www.example.com", "notexample.com", "example.com.evil", "example.co", ""] {
            assert!(!exact.matches(host), "{host}");
        }
    }

    #[test]
    fn a_wildcard_matches_subdomains_at_any_depth_but_not_the_name_itself() {
        let wildcard = pattern("*.example.com");
        for host in ["a.example.com", "a.b.example.com", "WWW.Example.Com"] {
            assert!(wildcard.matches(host), "{host}");
        }
        for host in ["example.com", "badexample.com", "a.example.com.evil.net", ".example.com"] {
            assert!(!wildcard.matches(host), "{host}");
        }
        assert_eq!(wildcard.to_string(), "*.example.com");
    }

    #[test]
    fn ip_literals_match_the_same_address_only() {
        let v4 = pattern("127.0.0.1");
        assert!(v4.matches("127.0.0.1"));
        assert!(!v4.matches("127.0.0.2") && !v4.matches("localhost"));
        let v6 = pattern("[::1]");
        assert!(v6.matches("[::1]") && v6.matches("::1") && v6.matches("[0:0:0:0:0:0:0:1]"));
        assert!(!v6.matches("127.0.0.1"));
        // A name pattern never matches an address that merely looks alike.
        assert!(!pattern("*.0.0.1").matches("127.0.0.1"));
    }

    #[test]
    fn ports_are_ignored_in_urls_and_refused_in_patterns() {
        let exact = pattern("localhost");
        assert!(exact.matches(&host_of("http://LOCALHOST:8080/a").unwrap()));
        assert_eq!(host_of("https://[::1]:9/x").as_deref(), Some("::1"));
        assert!(pattern("::1").matches(&host_of("https://[::1]:9/x").unwrap()));
        assert!(DomainPattern::parse("example.com:8080").unwrap_err().contains("port"));
    }

    #[test]
    fn malformed_patterns_are_refused_with_a_reason() {
        for (written, said) in [
            ("", "empty"),
            ("https://example.com", "URL"),
            ("example.com/path", "URL"),
            ("a.*.example.com", "wildcard"),
            ("*example.com", "wildcard"),
            ("exa mple.com", "not a host name"),
            ("a..b", "not a host name"),
        ] {
            let error = DomainPattern::parse(written).unwrap_err();
            assert!(error.contains(said), "{written:?}: {error}");
        }
    }
}
