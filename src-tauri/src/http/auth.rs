//! Token extractors. Three separate layers: the broker token (broker endpoint), the lease
//! token (its lease endpoint) and the session token (with the lease token, on that
//! session's routes). Comparisons are constant-time; rejections are `E_UNAUTHORIZED`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use axum::http::HeaderMap;

use super::error::ApiError;
use super::{BrokerState, LeaseState};
use crate::error::{Error, ErrorCode};
use crate::secret::Token;
use crate::session::Session;

/// Current and legacy header names of each token.
const BROKER_HEADERS: [&str; 2] = ["x-malo-broker-token", "x-pagehand-broker-token"];
const LEASE_HEADERS: [&str; 2] = ["x-malo-lease-token", "x-pagehand-lease-token"];
const SESSION_HEADERS: [&str; 2] = ["x-malo-session-token", "x-pagehand-session-token"];

fn presented<'a>(headers: &'a HeaderMap, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|name| headers.get(*name)?.to_str().ok())
}

fn verify(headers: &HeaderMap, names: &[&str], token: &Token, what: &str) -> Result<(), Error> {
    match presented(headers, names) {
        Some(candidate) if token.matches(candidate) => Ok(()),
        Some(_) => Err(Error::new(ErrorCode::Unauthorized, format!("wrong {what} token ({})", names[0]))),
        None => Err(Error::new(ErrorCode::Unauthorized, format!("missing {what} token: send {}", names[0]))),
    }
}

/// Proof that the request carries the broker token.
#[derive(Debug)]
pub(crate) struct BrokerAuth;

impl FromRequestParts<BrokerState> for BrokerAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &BrokerState) -> Result<Self, ApiError> {
        verify(&parts.headers, &BROKER_HEADERS, &state.broker.token, "broker")?;
        Ok(BrokerAuth)
    }
}

/// Proof that the request carries this lease's token.
#[derive(Debug)]
pub(crate) struct LeaseAuth;

impl FromRequestParts<LeaseState> for LeaseAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &LeaseState) -> Result<Self, ApiError> {
        verify(&parts.headers, &LEASE_HEADERS, &state.lease.token, "lease")?;
        Ok(LeaseAuth)
    }
}

/// Middleware form of [`LeaseAuth`], for services that are not axum handlers (`/mcp`).
pub(super) async fn require_lease_token(
    axum::extract::State(lease): axum::extract::State<Arc<crate::broker::Lease>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    match verify(request.headers(), &LEASE_HEADERS, &lease.token, "lease") {
        Ok(()) => next.run(request).await,
        Err(error) => ApiError(error).into_response(),
    }
}

/// The session addressed by `{id}`, after checking the lease token and that session's
/// own token (another session's token gets 401).
#[derive(Debug)]
pub(crate) struct SessionAuth(pub Arc<Session>);

impl FromRequestParts<LeaseState> for SessionAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &LeaseState) -> Result<Self, ApiError> {
        verify(&parts.headers, &LEASE_HEADERS, &state.lease.token, "lease")?;
        let Path(params) = Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map_err(|_| Error::new(ErrorCode::NotFound, "no session id in the path"))?;
        let session_id = params.get("id").map(String::as_str).unwrap_or("");
        let session = state.lease.sessions.get(session_id)?;
        verify(&parts.headers, &SESSION_HEADERS, &session.token, "session")?;
        session.touch();
        Ok(SessionAuth(session))
    }
}
