//! The one error type of the product: a stable machine code (`E_*`), a message for
//! people, and structured details. Every subsystem returns it; only `http/` turns it
//! into a response, so the codes below are the whole error vocabulary of the API.

use serde_json::Value;

/// Defines [`ErrorCode`] from one table: each code's variant, wire string and HTTP status,
/// so that the list of every code ([`ErrorCode::ALL`]) cannot miss one.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident => $wire:literal, $status:literal;)*) => {
        /// Stable error codes. Agents and scripts match on these strings: never rename one.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in the table's order (the API document lists them in this order).
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The wire string, e.g. `E_INVALID_URL`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $wire,)*
                }
            }

            /// The HTTP status this code is answered with.
            pub fn http_status(self) -> u16 {
                match self {
                    $(ErrorCode::$variant => $status,)*
                }
            }
        }
    };
}

error_codes! {
    /// The request body or a parameter is malformed or out of range.
    BadRequest => "E_BAD_REQUEST", 400;
    /// A URL is not http/https, carries credentials, or does not parse.
    InvalidUrl => "E_INVALID_URL", 400;
    /// Missing or wrong broker, lease or session token.
    Unauthorized => "E_UNAUTHORIZED", 401;
    /// The `Host` header is not `127.0.0.1:<port>` or `localhost:<port>`.
    ForbiddenHost => "E_FORBIDDEN_HOST", 403;
    /// A request from a web page (with an `Origin`) to an endpoint pages must never reach.
    ForbiddenOrigin => "E_FORBIDDEN_ORIGIN", 403;
    /// No such route.
    NoRoute => "E_NO_ROUTE", 404;
    /// No element matches the selector (or the option, the text).
    NotFound => "E_NOT_FOUND", 404;
    /// A locator matched several elements where one is needed (`details.matches` lists them).
    Ambiguous => "E_AMBIGUOUS", 409;
    /// The ref's element is gone from the page.
    StaleRef => "E_STALE_REF", 409;
    /// The element is not visible (hidden, zero-sized, or outside the page).
    NotVisible => "E_NOT_VISIBLE", 409;
    /// The element is disabled.
    Disabled => "E_DISABLED", 409;
    /// Another element would receive the click.
    Covered => "E_COVERED", 409;
    /// An assertion did not hold (reported inside an HTTP 200 result).
    AssertionFailed => "E_ASSERTION_FAILED", 200;
    /// The profile is used by an open session.
    ProfileLocked => "E_PROFILE_LOCKED", 409;
    /// No such profile.
    ProfileNotFound => "E_PROFILE_NOT_FOUND", 404;
    /// There are already 64 profiles.
    ProfileLimit => "E_PROFILE_LIMIT", 409;
    /// No credential of that name in the vault.
    CredentialNotFound => "E_CREDENTIAL_NOT_FOUND", 404;
    /// The credential is for another origin than the page's.
    CredentialOrigin => "E_CREDENTIAL_ORIGIN", 403;
    /// The person's policy (`<data-dir>/policy.toml`) does not allow it; the message names the rule.
    PolicyDenied => "E_POLICY_DENIED", 403;
    /// The policy asked a person, who said no.
    DeniedByPerson => "E_DENIED_BY_PERSON", 403;
    /// The policy asked a person, and nobody answered in time.
    ApprovalTimeout => "E_APPROVAL_TIMEOUT", 504;
    /// No such lease.
    LeaseNotFound => "E_LEASE_NOT_FOUND", 404;
    /// No such session (or it was closed).
    SessionNotFound => "E_SESSION_NOT_FOUND", 404;
    /// No such tab in the session (or it was closed), or the session has no tab.
    TabNotFound => "E_TAB_NOT_FOUND", 404;
    /// No such tool in the registry.
    UnknownTool => "E_UNKNOWN_TOOL", 404;
    /// Method not allowed on this route.
    MethodNotAllowed => "E_METHOD_NOT_ALLOWED", 405;
    /// The body is not `application/json`.
    UnsupportedMediaType => "E_UNSUPPORTED_MEDIA_TYPE", 415;
    /// The body is larger than 1 MB.
    PayloadTooLarge => "E_PAYLOAD_TOO_LARGE", 413;
    /// The lease already has `--max-sessions` sessions.
    TooManySessions => "E_TOO_MANY_SESSIONS", 429;
    /// Every port of the lease pool is taken.
    PoolExhausted => "E_POOL_EXHAUSTED", 503;
    /// The page could not be loaded (DNS, refused connection, TLS, ...).
    NavigationFailed => "E_NAVIGATION_FAILED", 502;
    /// An operation did not finish within its time limit.
    Timeout => "E_TIMEOUT", 504;
    /// The page's script threw, or returned something that is not JSON.
    ScriptError => "E_SCRIPT_ERROR", 422;
    /// The tab's web process died (crash or kill); the next navigate recovers it.
    PageCrashed => "E_PAGE_CRASHED", 503;
    /// The engine's main thread did not get to the call in time (other sessions' work).
    Busy => "E_BUSY", 503;
    /// Showing a window needs a screen a person sees; the daemon runs on a private one.
    NoDisplay => "E_NO_DISPLAY", 503;
    /// Network capture cannot work for this session (its proxy is not running).
    CaptureUnavailable => "E_CAPTURE_UNAVAILABLE", 503;
    /// The browsing engine lost the session (web process crashed, engine stopped).
    EngineUnavailable => "E_ENGINE_UNAVAILABLE", 503;
    /// The feature is not supported (on this platform or in this form).
    Unsupported => "E_UNSUPPORTED", 422;
    /// The daemon is shutting down.
    ShuttingDown => "E_SHUTTING_DOWN", 503;
    /// A bug or an unexpected failure inside the daemon.
    Internal => "E_INTERNAL", 500;
}

impl ErrorCode {
    /// The code with this wire string.
    pub fn from_wire(text: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|code| code.as_str() == text)
    }
}

/// An error with its code, a message and structured details (`{}` when none).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}: {message}", code.as_str())]
pub struct Error {
    /// The stable code.
    pub code: ErrorCode,
    /// A sentence for a person; never contains a token or a secret.
    pub message: String,
    /// Machine-readable context (e.g. `navigation` for a failed navigate).
    pub details: Value,
}

impl Error {
    /// An error with empty details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error { code, message: message.into(), details: Value::Object(Default::default()) }
    }

    /// Replaces the details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// Shorthand for [`ErrorCode::BadRequest`].
    pub fn bad_request(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::BadRequest, message)
    }

    /// Shorthand for [`ErrorCode::Internal`].
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::Internal, message)
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_prefixed() {
        let mut seen = std::collections::HashSet::new();
        for &code in ErrorCode::ALL {
            assert!(code.as_str().starts_with("E_"), "{}", code.as_str());
            assert!(seen.insert(code.as_str()), "duplicate {}", code.as_str());
            assert!((400..600).contains(&code.http_status()) || code == ErrorCode::AssertionFailed);
            assert_eq!(ErrorCode::from_wire(code.as_str()), Some(code));
        }
    }

    #[test]
    fn the_api_document_lists_exactly_the_codes_with_their_statuses() {
        let document = include_str!("../../../docs/API.md");
        let table = &document[document.find("## Error codes").expect("docs/API.md has an error code table")..];
        let listed: Vec<(String, u16)> = table
            .lines()
            .skip_while(|line| !line.starts_with("| `E_"))
            .take_while(|line| line.starts_with("| `E_"))
            .map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                (cells[1].trim_matches('`').to_string(), cells[2].parse().expect("a status"))
            })
            .collect();
        let defined: Vec<(String, u16)> = ErrorCode::ALL.iter().map(|code| (code.as_str().to_string(), code.http_status())).collect();
        let mut listed_sorted = listed.clone();
        listed_sorted.sort();
        let mut defined_sorted = defined.clone();
        defined_sorted.sort();
        assert_eq!(listed_sorted, defined_sorted, "docs/API.md's error table and ErrorCode differ");
    }

    #[test]
    fn display_starts_with_code() {
        let error = Error::new(ErrorCode::InvalidUrl, "only http and https");
        assert_eq!(error.to_string(), "E_INVALID_URL: only http and https");
    }
}
