//! How an [`Error`] goes on the wire: its code's status and
//! `{"ok":false,"error":{"code","message","details"}}`. The error type lives in the core
//! crate, which knows nothing of HTTP: [`ApiError`] carries it to the response, and every
//! handler's `?` makes one.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::error::{Error, ErrorCode};

/// An [`Error`] on its way to the wire.
#[derive(Debug)]
pub(crate) struct ApiError(pub(crate) Error);

/// What the handlers answer.
pub(crate) type ApiResult<T> = std::result::Result<T, ApiError>;

impl From<Error> for ApiError {
    fn from(error: Error) -> ApiError {
        ApiError(error)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let ApiError(error) = self;
        let status = StatusCode::from_u16(error.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if error.code == ErrorCode::Internal {
            tracing::error!(error = %error, "internal error");
        }
        let body = json!({
            "ok": false,
            "error": { "code": error.code.as_str(), "message": error.to_string(), "details": error.details },
        });
        (status, Json(body)).into_response()
    }
}

/// The fallback for unknown routes.
pub(super) async fn not_found() -> ApiError {
    ApiError(Error::new(ErrorCode::NoRoute, "no such route; see docs/API.md, or GET /v1/tools on a lease endpoint"))
}

/// The fallback for a known route with the wrong method.
pub(super) async fn method_not_allowed() -> ApiError {
    ApiError(Error::new(ErrorCode::MethodNotAllowed, "this route does not accept that method"))
}
