//! The MCP tool list: its size in o200k tokens with the core set and with every group,
//! what the compact schemas keep, and the answer to a tool not listed.

use std::io::Write;

use serde_json::{json, Value};

use super::*;

/// A backend that answers nothing (listing needs none).
struct Nothing;

impl Backend for Nothing {
    async fn session_new(&self, _spec: Value) -> Result<Value> {
        Err(Error::internal("no backend"))
    }
    async fn session_list(&self) -> Result<Value> {
        Err(Error::internal("no backend"))
    }
    async fn session_close(&self, _session: &str) -> Result<Value> {
        Err(Error::internal("no backend"))
    }
    async fn call(&self, _session: &str, _tool: &str, _input: Value) -> Result<Value> {
        Err(Error::internal("no backend"))
    }
}

fn server(caps: Caps) -> McpServer<Nothing> {
    McpServer::new(Arc::new(Nothing), crate::tools::ToolRegistry::standard().catalogue(), SessionOptions::default()).with_caps(caps)
}

/// JSON as Python's `json.dumps` writes it (`, ` and `: `): the tools as the official SDK
/// hands them on, which the e2e test counts.
struct PythonStyle;

impl serde_json::ser::Formatter for PythonStyle {
    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        self.begin_array_value(writer, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

fn python_json(value: &impl serde::Serialize) -> String {
    let mut out = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, PythonStyle)).unwrap();
    String::from_utf8(out).unwrap()
}

fn tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base().unwrap().encode_with_special_tokens(text).len()
}

#[test]
fn the_core_set_and_every_group_fit_their_token_budgets() {
    let core = server(Caps::default()).tools();
    let all = server(Caps::all()).tools();
    let (core_tokens, all_tokens) = (tokens(&python_json(&core)), tokens(&python_json(&all)));
    let mut costs: Vec<(usize, String)> = all.iter().map(|tool| (tokens(&python_json(tool)), tool.name.to_string())).collect();
    costs.sort();
    println!(
        "core: {} tools, {core_tokens} tokens; all: {} tools, {all_tokens} tokens; dearest: {:?}",
        core.len(),
        all.len(),
        &costs[costs.len().saturating_sub(8)..]
    );
    assert!(core_tokens <= 4_000, "the core set: {core_tokens} tokens");
    assert!(all_tokens <= 12_000, "every tool: {all_tokens} tokens");
    assert_eq!(all.len(), crate::tools::ToolRegistry::standard().catalogue().len() + 4 - super::caps::CLI_ONLY.len());
}

#[test]
fn compact_schemas_keep_every_field_and_what_is_required() {
    let listed = server(Caps::all()).tools();
    for tool in crate::tools::ToolRegistry::standard().catalogue().into_iter().filter(|tool| !super::caps::CLI_ONLY.contains(&tool.name)) {
        let exposed = listed.iter().find(|listed| listed.name == format!("browser_{}", tool.name)).unwrap();
        let schema = Value::Object((*exposed.input_schema).clone());
        let fields =
            |schema: &Value| schema["properties"].as_object().map(|fields| fields.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
        let mut expected = fields(&tool.input_schema);
        expected.push("session".into());
        // A page tool's `tab` is left out (browser_tab_select); a tool's own `tab` stays.
        if tool.input_schema["properties"]["tab"]["description"].as_str().is_some_and(|said| said.starts_with("The tab to act on")) {
            expected.retain(|field| field != "tab");
        }
        // So is an action's `locator` (browser_find's description says actions take one).
        if tool.input_schema["properties"]["locator"]["description"].as_str().is_some_and(|said| said.starts_with("The element: a locator"))
        {
            expected.retain(|field| field != "locator");
        }
        // So are an action's waits (the server's instructions give them).
        for wait in ["settle_ms", "timeout_ms"] {
            if tool.input_schema["properties"][wait]["description"].as_str().is_some_and(|said| {
                said.starts_with("Upper bound in ms for waiting for what the action caused")
                    || said.starts_with("How long to wait for the element to be actionable")
            }) {
                expected.retain(|field| field != wait);
            }
        }
        let mut have = fields(&schema);
        expected.sort();
        have.sort();
        assert_eq!(have, expected, "{}", tool.name);
        assert_eq!(schema.get("required"), tool.input_schema.get("required").filter(|required| required != &&json!([])), "{}", tool.name);
        for (field, value) in tool.presentation.mcp_defaults {
            assert_eq!(schema["properties"][*field]["default"], crate::tools::default_value(value), "{}", tool.name);
        }
        // Every `$ref` points at a definition the schema holds.
        let text = schema.to_string();
        for reference in text.split("\"#/$defs/").skip(1) {
            let name = &reference[..reference.find('"').unwrap()];
            assert!(schema["$defs"].get(name).is_some(), "{}: {name}", tool.name);
        }
    }
    // Without the `sessions` group, tools take no `session`: there is no other to name.
    let core = server(Caps::default()).tools();
    let click = core.iter().find(|tool| tool.name == "browser_click").unwrap();
    assert!(click.input_schema["properties"].get("session").is_none());
}

#[test]
fn a_tool_not_listed_is_refused_naming_its_group() {
    let server = server(Caps::parse("network").unwrap());
    let message = server.not_listed("browser_pdf").message;
    assert!(message.contains("`pdf`") && message.contains("browser_enable_caps"), "{message}");
    assert_eq!(server.not_listed("browser_teleport").message, "there is no tool named \"browser_teleport\"");
    assert!(server.not_listed("browser_session_new").message.contains("`sessions`"));
}
