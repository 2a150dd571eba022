//! Which tool calls a policy's `tools` rules concern: one line per tool (and, for a tool
//! that does several things, the input that makes a call the gated action). The registry
//! asks [`gated`] before a call runs; a tool not listed here is never gated by `tools`.

use serde_json::Value;

use super::Gated;

/// When a call of a listed tool is the gated action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Every call.
    Always,
    /// When this input field holds this string (`action` = `export`).
    Equals(&'static str, &'static str),
    /// When this input field is a non-empty list.
    NonEmpty(&'static str),
}

/// One line of the table.
#[derive(Debug, Clone, Copy)]
pub struct Gate {
    /// The tool.
    pub tool: &'static str,
    /// What its calls do, as the policy names it.
    pub gated: Gated,
    /// Which of its calls do it.
    pub when: When,
}

const fn gate(tool: &'static str, gated: Gated, when: When) -> Gate {
    Gate { tool, gated, when }
}

/// The table. A DevTools client can evaluate scripts, read response bodies, set files and
/// accept downloads, so handing out its endpoint needs what each of those needs.
pub const GATES: &[Gate] = &[
    gate("evaluate", Gated::Evaluate, When::Always),
    gate("add_intercept_rule", Gated::Intercept, When::Always),
    gate("network_capture", Gated::ResponseBodies, When::NonEmpty("url_prefixes")),
    gate("export_har", Gated::ExportHar, When::Always),
    gate("set_download_behavior", Gated::Downloads, When::Equals("behavior", "accept")),
    gate("set_file_input", Gated::Uploads, When::Always),
    gate("cdp_endpoint", Gated::Evaluate, When::Always),
    gate("cdp_endpoint", Gated::ResponseBodies, When::Always),
    gate("cdp_endpoint", Gated::Uploads, When::Always),
    gate("cdp_endpoint", Gated::Downloads, When::Always),
    gate("cdp_endpoint", Gated::StorageStateExport, When::Always),
    gate("storage_state", Gated::StorageStateExport, When::Equals("action", "export")),
    // Reading the cookies (httpOnly ones too) takes the login out as an export does.
    gate("cookies", Gated::StorageStateExport, When::Equals("action", "get")),
];

/// What a call of `tool` with `input` does that the policy gates (none, usually).
pub fn gated(tool: &str, input: &Value) -> Vec<Gated> {
    GATES
        .iter()
        .filter(|gate| gate.tool == tool)
        .filter(|gate| match gate.when {
            When::Always => true,
            When::Equals(field, value) => input.get(field).and_then(Value::as_str) == Some(value),
            When::NonEmpty(field) => input.get(field).and_then(Value::as_array).is_some_and(|list| !list.is_empty()),
        })
        .map(|gate| gate.gated)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn calls_are_gated_by_what_they_do() {
        assert_eq!(gated("evaluate", &json!({ "expression": "1" })), [Gated::Evaluate]);
        assert_eq!(gated("navigate", &json!({ "url": "http://x/" })), []);
        assert_eq!(gated("set_download_behavior", &json!({ "behavior": "accept" })), [Gated::Downloads]);
        assert_eq!(gated("set_download_behavior", &json!({ "behavior": "deny" })), []);
        assert_eq!(gated("network_capture", &json!({ "url_prefixes": ["http://x/"] })), [Gated::ResponseBodies]);
        assert_eq!(gated("network_capture", &json!({ "url_prefixes": [] })), []);
        assert_eq!(gated("network_capture", &json!({})), []);
        assert_eq!(gated("cdp_endpoint", &json!({})).len(), 5);
        assert_eq!(gated("storage_state", &json!({ "action": "export" })), [Gated::StorageStateExport]);
        assert_eq!(gated("storage_state", &json!({ "action": "import" })), []);
        assert_eq!(gated("cookies", &json!({ "action": "get" })), [Gated::StorageStateExport]);
        assert_eq!(gated("cookies", &json!({ "action": "set" })), []);
    }

    #[test]
    fn every_gated_action_has_a_tool_here() {
        for gated_action in Gated::ALL {
            assert!(GATES.iter().any(|gate| gate.gated == gated_action), "{gated_action:?}");
        }
    }
}
