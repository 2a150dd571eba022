//! Request guards shared by every endpoint: the `Host` check against DNS rebinding, and
//! the body rules (JSON only, at most 1 MB) with an extractor whose rejections speak the
//! API's error shape.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, TRANSFER_ENCODING};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::ApiError;
use crate::error::{Error, ErrorCode};

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Rejects requests whose `Host` is not `127.0.0.1:<port>` or `localhost:<port>`, and
/// bodies that are too large or not JSON, before any route runs.
pub(super) async fn guard(State(port): State<u16>, request: Request<Body>, next: Next) -> Response {
    if let Err(error) = check(port, &request) {
        return ApiError(error).into_response();
    }
    next.run(request).await
}

fn check(port: u16, request: &Request<Body>) -> Result<(), Error> {
    unambiguous(request)?;
    let host = request.headers().get(HOST).and_then(|value| value.to_str().ok()).unwrap_or("");
    if host != format!("127.0.0.1:{port}") && host != format!("localhost:{port}") {
        return Err(Error::new(ErrorCode::ForbiddenHost, format!("Host must be 127.0.0.1:{port} or localhost:{port}")));
    }
    let headers = request.headers();
    let length = headers.get(CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if length.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    let has_body = length.is_some_and(|length| length > 0) || headers.contains_key(TRANSFER_ENCODING);
    if has_body {
        let content_type = headers.get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
        let essence = content_type.split(';').next().unwrap_or("").trim();
        if !essence.eq_ignore_ascii_case("application/json") {
            return Err(Error::new(ErrorCode::UnsupportedMediaType, "request bodies must be application/json"));
        }
    }
    Ok(())
}

/// Refuses a request that two HTTP parsers could read differently (RFC 9110/9112): two
/// `Host` headers, or an absolute-form target naming another host than `Host`. (hyper
/// itself answers 400 to differing `Content-Length` values, keeps one of equal ones, and
/// closes the connection after a request with both `Content-Length` and
/// `Transfer-Encoding`; the checks for those here hold whatever server runs the router.)
fn unambiguous(request: &Request<Body>) -> Result<(), Error> {
    let headers = request.headers();
    if headers.get_all(HOST).iter().count() > 1 {
        return Err(Error::bad_request("a request carries exactly one Host header"));
    }
    if headers.get_all(CONTENT_LENGTH).iter().count() > 1 {
        return Err(Error::bad_request("a request carries at most one Content-Length header"));
    }
    if headers.contains_key(CONTENT_LENGTH) && headers.contains_key(TRANSFER_ENCODING) {
        return Err(Error::bad_request("a request carries Content-Length or Transfer-Encoding, not both"));
    }
    if let Some(authority) = request.uri().authority() {
        let host = headers.get(HOST).and_then(|value| value.to_str().ok()).unwrap_or("");
        if !authority.as_str().eq_ignore_ascii_case(host) {
            return Err(Error::bad_request("an absolute-form request target must name the Host it is sent to"));
        }
    }
    Ok(())
}

fn too_large() -> Error {
    Error::new(ErrorCode::PayloadTooLarge, format!("request bodies are limited to {MAX_BODY_BYTES} bytes"))
        .with_details(serde_json::json!({ "max_bytes": MAX_BODY_BYTES }))
}

/// A JSON body parsed into `T`; an empty body counts as `{}`.
#[derive(Debug)]
pub(crate) struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request<Body>, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state).await.map_err(|rejection| {
            if rejection.status().as_u16() == 413 {
                too_large()
            } else {
                Error::bad_request(format!("could not read the request body: {rejection}"))
            }
        })?;
        let mut value: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
            Value::Object(Default::default())
        } else {
            serde_json::from_slice(&bytes).map_err(|error| Error::bad_request(format!("the body is not valid JSON: {error}")))?
        };
        crate::tools::whole_floats_to_integers(&mut value);
        // A refusal names the field's JSON path, as a tool's input does.
        crate::tools::parse_strict(value, "invalid request body").map(ApiJson).map_err(ApiError)
    }
}
