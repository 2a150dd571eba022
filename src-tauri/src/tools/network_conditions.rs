//! `set_network_conditions`: a live session's network conditions (issue #28), as
//! `network_conditions` at creation; the session proxy applies them (`proxy/throttle.rs`).

use schemars::JsonSchema;
use serde::Serialize;

use super::{Tool, ToolContext};
use crate::error::{Error, ErrorCode};
use crate::network::conditions::NetworkConditions;

/// Output of `set_network_conditions`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ConditionsOutput {
    /// The conditions now, or null when none apply (`{}` switched them off).
    network_conditions: Option<NetworkConditions>,
}

pub(super) fn tool() -> Tool {
    Tool::session(
        "set_network_conditions",
        "Throttle the session's traffic or take it offline, from now on. Replaces the earlier conditions: {offline?, latency_ms?, download_kbps?, upload_kbps?} ({} or all null: none). offline fails every request at once (net_error internet_disconnected); latency_ms is added before each request and each new connection; the kbps limits ration the bytes relayed each way for the whole session.",
        |context: ToolContext, input: NetworkConditions| async move {
            let conditions = input.check()?;
            let proxy = context.session.proxy.lock().expect("proxy poisoned");
            let Some(proxy) = proxy.as_ref() else {
                return Err(Error::new(ErrorCode::Unsupported, "network conditions need the session proxy, which this session runs without")
                    .with_details(serde_json::json!({ "field": "network_conditions" })));
            };
            proxy.set_conditions(conditions);
            Ok(ConditionsOutput { network_conditions: Some(conditions).filter(|conditions| !conditions.is_off()) })
        },
    )
}
