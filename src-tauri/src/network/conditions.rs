//! A session's network conditions (issue #28): offline, added latency and throughput
//! limits, set at creation (`network_conditions`) or later (`set_network_conditions`),
//! applied by the session proxy (`proxy/throttle.rs`). All absent (`{}`): none.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Most latency accepted, in milliseconds.
pub const MAX_LATENCY_MS: u64 = 60_000;
/// Throughput limits accepted, in kilobits per second (1 kbps = 1000 bits/s).
pub const KBPS_RANGE: std::ops::RangeInclusive<u64> = 1..=10_000_000;

/// How the session's network behaves; every field optional (absent or null: as the
/// network is).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkConditions {
    /// Every request fails at once as a network error (`net_error: "internet_disconnected"`).
    #[serde(default)]
    pub offline: Option<bool>,
    /// Milliseconds added before each request and each new connection (0 to 60000).
    #[serde(default)]
    #[schemars(range(max = MAX_LATENCY_MS))]
    pub latency_ms: Option<u64>,
    /// Bytes from servers to the session, in kilobits per second (1 to 10000000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10_000_000))]
    pub download_kbps: Option<u64>,
    /// Bytes from the session to servers, in kilobits per second (1 to 10000000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10_000_000))]
    pub upload_kbps: Option<u64>,
}

impl NetworkConditions {
    /// Checks the ranges (`E_BAD_REQUEST` naming the field) and answers the conditions with
    /// `offline: false` left out.
    pub fn check(self) -> Result<NetworkConditions> {
        let field = |name: &str, message: String| {
            Error::bad_request(message).with_details(serde_json::json!({ "field": format!("network_conditions.{name}") }))
        };
        if self.latency_ms.is_some_and(|latency| latency > MAX_LATENCY_MS) {
            return Err(field("latency_ms", format!("latency_ms must be between 0 and {MAX_LATENCY_MS}")));
        }
        for (name, value) in [("download_kbps", self.download_kbps), ("upload_kbps", self.upload_kbps)] {
            if value.is_some_and(|kbps| !KBPS_RANGE.contains(&kbps)) {
                return Err(field(
                    name,
                    format!("{name} must be between {} and {} kilobits per second", KBPS_RANGE.start(), KBPS_RANGE.end()),
                ));
            }
        }
        Ok(NetworkConditions { offline: self.offline.filter(|offline| *offline), ..self })
    }

    /// Whether they change nothing.
    pub fn is_off(&self) -> bool {
        *self == NetworkConditions::default()
    }

    /// Whether every request fails.
    pub fn is_offline(&self) -> bool {
        self.offline == Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_are_checked_and_empty_means_off() {
        let off: NetworkConditions = serde_json::from_value(serde_json::json!({})).unwrap();
        assert!(off.check().unwrap().is_off());
        let nulls: NetworkConditions = serde_json::from_value(serde_json::json!({ "offline": null, "latency_ms": null })).unwrap();
        assert!(nulls.check().unwrap().is_off());
        let not_offline: NetworkConditions = serde_json::from_value(serde_json::json!({ "offline": false })).unwrap();
        assert!(not_offline.check().unwrap().is_off());
        let slow = NetworkConditions { download_kbps: Some(100), ..NetworkConditions::default() };
        assert!(!slow.check().unwrap().is_off());
        let error = NetworkConditions { download_kbps: Some(0), ..NetworkConditions::default() }.check().unwrap_err();
        assert_eq!(error.details["field"], "network_conditions.download_kbps");
        let error = NetworkConditions { latency_ms: Some(60_001), ..NetworkConditions::default() }.check().unwrap_err();
        assert_eq!(error.details["field"], "network_conditions.latency_ms");
        assert!(serde_json::from_value::<NetworkConditions>(serde_json::json!({ "bandwidth": 1 })).is_err());
    }
}
