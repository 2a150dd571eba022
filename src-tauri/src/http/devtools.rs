//! The DevTools endpoint's HTTP side: the discovery routes (`/json/version`, `/json/list`)
//! and the WebSocket, under `/devtools/<capability>/`. The capability is the session's
//! DevTools key (or its id, with the key as a Bearer token); a request with an `Origin`
//! is refused, so no web page can open the socket (browsers always send one). The
//! protocol itself is `cdp/`'s: this file only carries text frames both ways.

use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::header::{AUTHORIZATION, ORIGIN};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures_util::{SinkExt, StreamExt};

use super::error::ApiResult as Result;
use super::LeaseState;
use crate::error::{Error, ErrorCode};
use crate::session::Session;

/// Frames a client may send at most (Playwright's injected script is about 330 kB).
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// The routes, to be merged into a lease's router.
pub(super) fn routes() -> Router<LeaseState> {
    Router::new()
        .route("/devtools/{key}/json/version", get(version))
        .route("/devtools/{key}/json/version/", get(version))
        .route("/devtools/{key}/json", get(list))
        .route("/devtools/{key}/json/", get(list))
        .route("/devtools/{key}/json/list", get(list))
        .route("/devtools/{key}/json/list/", get(list))
        .route("/devtools/{key}/devtools/browser/{id}", get(socket))
}

/// The session a capability opens: its key in the path, or its id in the path and its
/// key as a Bearer token. Either way the key is compared in constant time.
fn session_of(state: &LeaseState, key: &str, headers: &HeaderMap) -> crate::error::Result<Arc<Session>> {
    if headers.contains_key(ORIGIN) {
        return Err(Error::new(
            ErrorCode::ForbiddenOrigin,
            "the DevTools endpoint refuses requests from web pages (an Origin header was sent)",
        ));
    }
    let bearer = headers.get(AUTHORIZATION).and_then(|value| value.to_str().ok()).and_then(|value| value.strip_prefix("Bearer "));
    for session in state.lease.sessions.list() {
        if session.devtools_key.matches(key) || (session.id == key && bearer.is_some_and(|token| session.devtools_key.matches(token))) {
            return Ok(session);
        }
    }
    Err(Error::new(ErrorCode::Unauthorized, "no DevTools endpoint at this address: the capability is wrong, or its session is closed"))
}

fn ws_url(state: &LeaseState, key: &str, session: &Session) -> String {
    format!("ws://127.0.0.1:{}/devtools/{key}/devtools/browser/{}", state.lease.port, session.id)
}

async fn version(State(state): State<LeaseState>, Path(key): Path<String>, headers: HeaderMap) -> Result<Json<serde_json::Value>> {
    let session = session_of(&state, &key, &headers)?;
    Ok(Json(crate::cdp::version(&session, &ws_url(&state, &key, &session))))
}

async fn list(State(state): State<LeaseState>, Path(key): Path<String>, headers: HeaderMap) -> Result<Json<serde_json::Value>> {
    let session = session_of(&state, &key, &headers)?;
    Ok(Json(crate::cdp::list(&session)))
}

async fn socket(
    State(state): State<LeaseState>,
    Path((key, _browser)): Path<(String, String)>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let session = match session_of(&state, &key, &headers) {
        Ok(session) => session,
        Err(error) => return super::error::ApiError(error).into_response(),
    };
    let sessions = state.lease.sessions.clone();
    let registry = state.registry.clone();
    upgrade.max_message_size(MAX_MESSAGE_BYTES).on_upgrade(move |socket| carry(socket, session, sessions, registry))
}

/// Carries text frames between the socket and the protocol until either side ends.
async fn carry(
    socket: WebSocket,
    session: Arc<Session>,
    sessions: Arc<crate::session::SessionTable>,
    registry: Arc<crate::tools::ToolRegistry>,
) {
    let (mut sink, mut stream) = socket.split();
    let (incoming, received) = tokio::sync::mpsc::channel::<String>(256);
    let (out, mut outgoing) = crate::cdp::wire::Outbox::new();
    let reader = tokio::spawn(async move {
        while let Some(Ok(message)) = stream.next().await {
            match message {
                Message::Text(text) if incoming.send(text.to_string()).await.is_err() => break,
                Message::Close(_) => break,
                _ => {}
            }
        }
    });
    let writer = tokio::spawn(async move {
        while let Some(text) = outgoing.recv().await {
            if sink.send(Message::Text(text.into())).await.is_err() {
                break;
            }
        }
        let _ = sink.send(Message::Close(None)).await;
    });
    crate::cdp::serve(session, sessions, registry, received, out).await;
    reader.abort();
    // The writer ends once every sender of the outbox is gone (the protocol has stopped).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
}
