//! The one error type of the product: a stable machine code (`E_*`), a message for
//! people, and structured details. Every subsystem returns it; only `http/` turns it
//! into a response, so the codes below are the whole error vocabulary of the API.

use serde_json::Value;

/// Stable error codes. Agents and scripts match on these strings: never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The request body or a parameter is malformed or out of range.
    BadRequest,
    /// A URL is not http/https, carries credentials, or does not parse.
    InvalidUrl,
    /// Missing or wrong broker, lease or session token.
    Unauthorized,
    /// The `Host` header is not `127.0.0.1:<port>` or `localhost:<port>`.
    ForbiddenHost,
    /// No such route.
    NoRoute,
    /// No element matches the selector (or the option, the text).
    NotFound,
    /// The ref's element is gone from the page.
    StaleRef,
    /// The element is not visible (hidden, zero-sized, or outside the page).
    NotVisible,
    /// The element is disabled.
    Disabled,
    /// Another element would receive the click.
    Covered,
    /// An assertion did not hold (reported inside an HTTP 200 result).
    AssertionFailed,
    /// The profile is used by an open session.
    ProfileLocked,
    /// No such profile.
    ProfileNotFound,
    /// There are already 64 profiles.
    ProfileLimit,
    /// No credential of that name in the vault.
    CredentialNotFound,
    /// The credential is for another origin than the page's.
    CredentialOrigin,
    /// No such lease.
    LeaseNotFound,
    /// No such session (or it was closed).
    SessionNotFound,
    /// No such tab in the session (or it was closed), or the session has no tab.
    TabNotFound,
    /// No such tool in the registry.
    UnknownTool,
    /// Method not allowed on this route.
    MethodNotAllowed,
    /// The body is not `application/json`.
    UnsupportedMediaType,
    /// The body is larger than 1 MB.
    PayloadTooLarge,
    /// The lease already has `--max-sessions` sessions.
    TooManySessions,
    /// Every port of the lease pool is taken.
    PoolExhausted,
    /// The page could not be loaded (DNS, refused connection, TLS, ...).
    NavigationFailed,
    /// An operation did not finish within its time limit.
    Timeout,
    /// The page's script threw, or returned something that is not JSON.
    ScriptError,
    /// The tab's web process died (crash or kill); the next navigate recovers it.
    PageCrashed,
    /// The engine's main thread did not get to the call in time (other sessions' work).
    Busy,
    /// Showing a window needs a screen a person sees; the daemon runs on a private one.
    NoDisplay,
    /// Network capture cannot work for this session (its proxy is not running).
    CaptureUnavailable,
    /// The browsing engine lost the session (web process crashed, engine stopped).
    EngineUnavailable,
    /// The feature is not supported (on this platform or in this form).
    Unsupported,
    /// The daemon is shutting down.
    ShuttingDown,
    /// A bug or an unexpected failure inside the daemon.
    Internal,
}

impl ErrorCode {
    /// The wire string, e.g. `E_INVALID_URL`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "E_BAD_REQUEST",
            ErrorCode::InvalidUrl => "E_INVALID_URL",
            ErrorCode::Unauthorized => "E_UNAUTHORIZED",
            ErrorCode::ForbiddenHost => "E_FORBIDDEN_HOST",
            ErrorCode::NoRoute => "E_NO_ROUTE",
            ErrorCode::NotFound => "E_NOT_FOUND",
            ErrorCode::StaleRef => "E_STALE_REF",
            ErrorCode::NotVisible => "E_NOT_VISIBLE",
            ErrorCode::Disabled => "E_DISABLED",
            ErrorCode::Covered => "E_COVERED",
            ErrorCode::AssertionFailed => "E_ASSERTION_FAILED",
            ErrorCode::ProfileLocked => "E_PROFILE_LOCKED",
            ErrorCode::ProfileNotFound => "E_PROFILE_NOT_FOUND",
            ErrorCode::ProfileLimit => "E_PROFILE_LIMIT",
            ErrorCode::CredentialNotFound => "E_CREDENTIAL_NOT_FOUND",
            ErrorCode::CredentialOrigin => "E_CREDENTIAL_ORIGIN",
            ErrorCode::LeaseNotFound => "E_LEASE_NOT_FOUND",
            ErrorCode::SessionNotFound => "E_SESSION_NOT_FOUND",
            ErrorCode::TabNotFound => "E_TAB_NOT_FOUND",
            ErrorCode::UnknownTool => "E_UNKNOWN_TOOL",
            ErrorCode::MethodNotAllowed => "E_METHOD_NOT_ALLOWED",
            ErrorCode::UnsupportedMediaType => "E_UNSUPPORTED_MEDIA_TYPE",
            ErrorCode::PayloadTooLarge => "E_PAYLOAD_TOO_LARGE",
            ErrorCode::TooManySessions => "E_TOO_MANY_SESSIONS",
            ErrorCode::PoolExhausted => "E_POOL_EXHAUSTED",
            ErrorCode::NavigationFailed => "E_NAVIGATION_FAILED",
            ErrorCode::Timeout => "E_TIMEOUT",
            ErrorCode::ScriptError => "E_SCRIPT_ERROR",
            ErrorCode::EngineUnavailable => "E_ENGINE_UNAVAILABLE",
            ErrorCode::CaptureUnavailable => "E_CAPTURE_UNAVAILABLE",
            ErrorCode::PageCrashed => "E_PAGE_CRASHED",
            ErrorCode::Busy => "E_BUSY",
            ErrorCode::NoDisplay => "E_NO_DISPLAY",
            ErrorCode::Unsupported => "E_UNSUPPORTED",
            ErrorCode::ShuttingDown => "E_SHUTTING_DOWN",
            ErrorCode::Internal => "E_INTERNAL",
        }
    }

    /// The HTTP status this code is answered with.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::BadRequest | ErrorCode::InvalidUrl => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::ForbiddenHost | ErrorCode::CredentialOrigin => 403,
            ErrorCode::NoRoute
            | ErrorCode::NotFound
            | ErrorCode::LeaseNotFound
            | ErrorCode::SessionNotFound
            | ErrorCode::TabNotFound
            | ErrorCode::UnknownTool
            | ErrorCode::ProfileNotFound
            | ErrorCode::CredentialNotFound => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::ScriptError => 422,
            ErrorCode::StaleRef
            | ErrorCode::NotVisible
            | ErrorCode::Disabled
            | ErrorCode::Covered
            | ErrorCode::ProfileLocked
            | ErrorCode::ProfileLimit => 409,
            ErrorCode::AssertionFailed => 200,
            ErrorCode::TooManySessions => 429,
            ErrorCode::Unsupported => 422,
            ErrorCode::NavigationFailed => 502,
            ErrorCode::PoolExhausted
            | ErrorCode::EngineUnavailable
            | ErrorCode::ShuttingDown
            | ErrorCode::CaptureUnavailable
            | ErrorCode::PageCrashed
            | ErrorCode::Busy
            | ErrorCode::NoDisplay => 503,
            ErrorCode::Timeout => 504,
            ErrorCode::Internal => 500,
        }
    }

    /// The code with this wire string.
    pub fn from_wire(text: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|code| code.as_str() == text)
    }

    /// Every code, for documentation and tests.
    pub const ALL: [ErrorCode; 36] = [
        ErrorCode::CredentialNotFound,
        ErrorCode::CredentialOrigin,
        ErrorCode::ProfileLocked,
        ErrorCode::ProfileNotFound,
        ErrorCode::ProfileLimit,
        ErrorCode::NoRoute,
        ErrorCode::StaleRef,
        ErrorCode::NotVisible,
        ErrorCode::Disabled,
        ErrorCode::Covered,
        ErrorCode::AssertionFailed,
        ErrorCode::BadRequest,
        ErrorCode::InvalidUrl,
        ErrorCode::Unauthorized,
        ErrorCode::ForbiddenHost,
        ErrorCode::NotFound,
        ErrorCode::LeaseNotFound,
        ErrorCode::SessionNotFound,
        ErrorCode::TabNotFound,
        ErrorCode::UnknownTool,
        ErrorCode::MethodNotAllowed,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::PayloadTooLarge,
        ErrorCode::TooManySessions,
        ErrorCode::PoolExhausted,
        ErrorCode::NavigationFailed,
        ErrorCode::Timeout,
        ErrorCode::ScriptError,
        ErrorCode::EngineUnavailable,
        ErrorCode::CaptureUnavailable,
        ErrorCode::PageCrashed,
        ErrorCode::Busy,
        ErrorCode::NoDisplay,
        ErrorCode::Unsupported,
        ErrorCode::ShuttingDown,
        ErrorCode::Internal,
    ];
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
        for code in ErrorCode::ALL {
            assert!(code.as_str().starts_with("E_"), "{}", code.as_str());
            assert!(seen.insert(code.as_str()), "duplicate {}", code.as_str());
            assert!((400..600).contains(&code.http_status()) || code == ErrorCode::AssertionFailed);
            assert_eq!(ErrorCode::from_wire(code.as_str()), Some(code));
        }
    }

    #[test]
    fn display_starts_with_code() {
        let error = Error::new(ErrorCode::InvalidUrl, "only http and https");
        assert_eq!(error.to_string(), "E_INVALID_URL: only http and https");
    }
}
