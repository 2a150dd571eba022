//! What a live session shows pages, changed after creation (issue #28): `set_geolocation`,
//! `set_extra_http_headers` and `grant_permissions`. The fields at creation, and where
//! WebKitGTK keeps each, are `engine::identity`'s and docs/API.md's.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Tool, ToolContext};
use crate::engine::identity::{self, Geolocation, PermissionGrant};
use crate::engine::SessionRequest;

/// Input of `set_extra_http_headers`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExtraHeadersInput {
    /// Headers every request of the session's pages carries from now on, replacing the
    /// earlier set (`{}`: none). Not Host, framing or connection headers; at most 64.
    headers: BTreeMap<String, String>,
}

/// Output of `set_extra_http_headers`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ExtraHeadersOutput {
    /// The headers now added, by lower-cased name (an `Accept-Language` of the
    /// session's locale included).
    headers: BTreeMap<String, String>,
}

/// Output of `set_geolocation`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct GeolocationOutput {
    /// The position pages granted `geolocation` read from now on.
    geolocation: Geolocation,
}

/// Input of `grant_permissions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrantInput {
    /// Permissions to grant besides the session's earlier ones: a name (`geolocation`,
    /// `notifications`, `clipboard-read`, `clipboard-write`) for every origin, or
    /// `{name, origins}`.
    permissions: Vec<PermissionGrant>,
}

/// Output of `grant_permissions`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct GrantOutput {
    /// How many grants the session holds now.
    grants: usize,
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::session(
            "set_extra_http_headers",
            "Set headers every request of the session's pages carries from now on. Replaces the earlier set ({} for none), as extra_http_headers at session creation.",
            |context: ToolContext, input: ExtraHeadersInput| async move {
                let headers = identity::check_headers(&input.headers)?;
                let session = &context.session;
                let request_headers = {
                    let mut identity = session.identity.lock().expect("identity poisoned");
                    identity.extra_http_headers = headers;
                    identity.request_headers()
                };
                let headers = request_headers.iter().cloned().collect();
                session.tabs.set_request_headers(request_headers);
                Ok(ExtraHeadersOutput { headers })
            },
        ),
        Tool::session(
            "set_geolocation",
            "Set the position that pages granted geolocation read from now on ({latitude, longitude, accuracy?}). E_UNSUPPORTED when another open session shares this session's profile (one position per WebKit context).",
            |context: ToolContext, input: Geolocation| async move {
                identity::check_geolocation(&input)?;
                let session = &context.session;
                session.engine.session::<()>(&session.id, SessionRequest::SetGeolocation(input)).await?;
                session.identity.lock().expect("identity poisoned").geolocation = Some(input);
                Ok(GeolocationOutput { geolocation: input })
            },
        ),
        Tool::session(
            "grant_permissions",
            "Grant permissions to the session's pages from now on. Besides earlier grants: geolocation, notifications, clipboard-read, clipboard-write, for every origin or {name, origins}. Anything not granted stays denied.",
            |context: ToolContext, input: GrantInput| async move {
                let grants = identity::check_permissions(&input.permissions)?;
                let session = &context.session;
                session.engine.session::<()>(&session.id, SessionRequest::GrantPermissions(grants.clone())).await?;
                let mut identity = session.identity.lock().expect("identity poisoned");
                identity.permissions.extend(grants);
                Ok(GrantOutput { grants: identity.permissions.len() })
            },
        ),
    ]
}
