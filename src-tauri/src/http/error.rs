//! How an [`Error`] goes on the wire: its code's status and
//! `{"ok":false,"error":{"code","message","details"}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::error::{Error, ErrorCode};

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if self.code == ErrorCode::Internal {
            tracing::error!(error = %self, "internal error");
        }
        let body = json!({
            "ok": false,
            "error": { "code": self.code.as_str(), "message": self.to_string(), "details": self.details },
        });
        (status, Json(body)).into_response()
    }
}

/// The fallback for unknown routes.
pub(super) async fn not_found() -> Error {
    Error::new(ErrorCode::NoRoute, "no such route; see docs/API.md, or GET /v1/tools on a lease endpoint")
}

/// The fallback for a known route with the wrong method.
pub(super) async fn method_not_allowed() -> Error {
    Error::new(ErrorCode::MethodNotAllowed, "this route does not accept that method")
}
