//! Token extractors. Three separate layers: the broker token (broker endpoint), the lease
//! token (its lease endpoint) and the session token (with the lease token, on that
//! session's routes). Comparisons are constant-time; rejections are `E_UNAUTHORIZED`.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;

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

/// A router's state whose every request carries one token: the broker's or a lease's.
pub(crate) trait TokenGuarded: Send + Sync {
    /// The headers that carry the token (current, then legacy).
    const HEADERS: [&'static str; 2];
    /// The token's name in errors.
    const WHAT: &'static str;
    /// The token a request must carry.
    fn token(&self) -> &Token;
}

impl TokenGuarded for BrokerState {
    const HEADERS: [&'static str; 2] = BROKER_HEADERS;
    const WHAT: &'static str = "broker";
    fn token(&self) -> &Token {
        &self.broker.token
    }
}

impl TokenGuarded for LeaseState {
    const HEADERS: [&'static str; 2] = LEASE_HEADERS;
    const WHAT: &'static str = "lease";
    fn token(&self) -> &Token {
        &self.lease.token
    }
}

/// Proof that the request carries the token of the router whose state is `S`: a
/// [`BrokerAuth`] or a [`LeaseAuth`].
pub(crate) struct TokenAuth<S>(PhantomData<fn() -> S>);

/// Proof that the request carries the broker token.
pub(crate) type BrokerAuth = TokenAuth<BrokerState>;

/// Proof that the request carries this lease's token.
pub(crate) type LeaseAuth = TokenAuth<LeaseState>;

impl<S: TokenGuarded> FromRequestParts<S> for TokenAuth<S> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        verify(&parts.headers, &S::HEADERS, state.token(), S::WHAT)?;
        Ok(TokenAuth(PhantomData))
    }
}

/// Middleware form of [`LeaseAuth`], for services that are not axum handlers (`/mcp`):
/// a request without the token gets the extractor's rejection.
pub(super) async fn require_lease_token(_auth: LeaseAuth, request: Request, next: Next) -> Response {
    next.run(request).await
}

/// The session addressed by `{id}`, after checking the lease token and that session's
/// own token (another session's token gets 401).
#[derive(Debug)]
pub(crate) struct SessionAuth(pub Arc<Session>);

impl FromRequestParts<LeaseState> for SessionAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &LeaseState) -> Result<Self, ApiError> {
        LeaseAuth::from_request_parts(parts, state).await?;
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
