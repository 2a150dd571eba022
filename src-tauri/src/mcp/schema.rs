//! The input schemas MCP lists, compacted from the registry's: every MCP client carries
//! the tool list in every turn, so what a schema says beyond what a model needs to choose
//! and fill a field costs every conversation. The registry's Rust types still validate
//! every call exactly (strict parsing, `deny_unknown_fields`); this only trims the text.
//!
//! What goes: titles, integer formats and the `minimum: 0` of unsigned ones, string
//! lengths and patterns, `default: null` and `false`, `additionalProperties: false` (an
//! unknown field is still refused, naming those accepted), empty `required`, the null
//! branch of an optional field, the `type` of an enum of strings; enums written as one
//! branch per value become one `enum`. A `$defs` entry used once is written in place; one
//! used more often stays, defined once and referenced. Only the input's own fields keep a
//! description, its first sentence, without a default it states (which becomes the
//! field's `default`) and, when long, without its asides in parentheses; maxima of 10,000
//! and more go; objects three
//! levels down are only `{"type": "object"}`. Output schemas stay in the HTTP catalogue
//! and OpenAPI.

use serde_json::{json, Map, Value};

/// Integer and float formats schemars writes for Rust's number types.
const NUMBER_FORMATS: [&str; 12] =
    ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "uint", "int", "float", "double"];

/// A `maximum` from this up is left out.
const FAR_MAXIMUM: f64 = 10_000.0;

/// `schema`, compacted (see the module's documentation).
pub(super) fn compact(schema: &Value) -> Value {
    let mut root = schema.clone();
    let Some(object) = root.as_object_mut() else { return root };
    let mut defs = object.remove("$defs").and_then(|defs| defs.as_object().cloned()).unwrap_or_default();
    let mut uses = Map::new();
    count_refs(&root, &mut uses);
    for def in defs.values() {
        count_refs(def, &mut uses);
    }
    let used = |name: &str| uses.get(name).and_then(Value::as_u64).unwrap_or(0);
    // Kept: used more than once (or by itself). Inlined: the others.
    let kept: Vec<String> = defs.keys().filter(|name| used(name) > 1).cloned().collect();
    let mut inline_defs = defs.clone();
    inline_defs.retain(|name, _| !kept.contains(name));
    inline(&mut root, &inline_defs, 0);
    let mut shared = Map::new();
    for name in kept {
        if let Some(mut def) = defs.remove(&name) {
            inline(&mut def, &inline_defs, 0);
            trim(&mut def);
            shared.insert(name, def);
        }
    }
    trim(&mut root);
    shape(&mut root, 0);
    for def in shared.values_mut() {
        shape(def, 2);
    }
    if let Some(object) = root.as_object_mut() {
        object.remove("description");
    }
    if !shared.is_empty() {
        root["$defs"] = Value::Object(shared);
    }
    root
}

/// Descriptions longer than this (in bytes) lose their asides in parentheses.
const LONG_FIELD_DESCRIPTION: usize = 40;
/// A tool's description longer than this (in bytes) loses its asides in parentheses.
const LONG_TOOL_DESCRIPTION: usize = 100;

/// A tool's description as MCP lists it: its first sentence, without asides when long.
pub(super) fn tool_description(text: &str) -> String {
    let first = first_sentence(text);
    if first.len() > LONG_TOOL_DESCRIPTION {
        without_asides(&first)
    } else {
        first
    }
}

/// Keeps descriptions at `depth` 1 (the input's own fields), shortened, and writes objects
/// at depth 3 and below as `{"type": "object"}`.
fn shape(node: &mut Value, depth: usize) {
    let Some(object) = node.as_object_mut() else { return };
    if depth >= 3 && object.get("type") == Some(&json!("object")) && object.contains_key("properties") {
        object.retain(|key, _| key == "type");
        return;
    }
    if depth == 1 {
        shorten_field(object);
    } else {
        object.remove("description");
    }
    for (key, value) in object.iter_mut() {
        match key.as_str() {
            "properties" => {
                if let Some(children) = value.as_object_mut() {
                    children.values_mut().for_each(|child| shape(child, depth + 1));
                }
            }
            "items" | "additionalProperties" => shape(value, depth + 1),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Some(branches) = value.as_array_mut() {
                    branches.iter_mut().for_each(|branch| shape(branch, depth + 1));
                }
            }
            _ => {}
        }
    }
}

/// A field's description: its first sentence; a default it states in words (`(default
/// 1500)`, `` `left` (default) ``) becomes the field's `default`; long, without asides.
fn shorten_field(field: &mut Map<String, Value>) {
    let Some(text) = field.get("description").and_then(Value::as_str) else { return };
    let mut text = first_sentence(text);
    if let Some((start, end, default)) = stated_default(&text, field.get("enum")) {
        if let Some(default) = default {
            field.entry("default").or_insert(default);
        }
        text.replace_range(start..end, "");
    }
    if text.len() > LONG_FIELD_DESCRIPTION {
        text = without_asides(&text);
    }
    if field.get("enum").is_some_and(|choices| only_lists(&text, choices)) {
        field.remove("description");
        return;
    }
    field.insert("description".into(), json!(text.trim()));
}

/// Whether `text` says little but the enum's values (`` `png`, `jpeg` or `webp`. ``, "The
/// type: Document, XHR or Other."), which the listed `enum` already says.
fn only_lists(text: &str, choices: &Value) -> bool {
    let Some(choices) = choices.as_array() else { return false };
    let choices: Vec<&str> = choices.iter().filter_map(Value::as_str).collect();
    let words: Vec<&str> = text
        .split(|character: char| !(character.is_alphanumeric() || matches!(character, '-' | '_')))
        .filter(|word| !word.is_empty())
        .collect();
    let named = choices.iter().all(|choice| words.contains(choice));
    let others = words.iter().filter(|word| !choices.contains(word) && !matches!(**word, "or" | "and")).count();
    named && others <= 3
}

/// Where `text` states a default (`(default 1500, max 30000)`, `(default: 5000)` or, of an
/// enum's value, `` `left` (default)``): the range to remove and the value, when it is a
/// number or one of the enum's values.
fn stated_default(text: &str, choices: Option<&Value>) -> Option<(usize, usize, Option<Value>)> {
    let open = text.find("(default")?;
    let close = open + text[open..].find(')')?;
    let start = text[..open].trim_end().len();
    let inner = text[open + "(default".len()..close].trim_start_matches([':', ' ']);
    if inner.is_empty() {
        // `` `left` (default)``: the value before it.
        let before = text[..start].trim_end_matches([',', ' ']);
        let value = before.strip_suffix('`').and_then(|rest| rest.rfind('`').map(|tick| &rest[tick + 1..]));
        let value =
            value.map(|value| json!(value)).filter(|value| choices.and_then(Value::as_array).is_some_and(|listed| listed.contains(value)));
        return Some((start, close + 1, value));
    }
    let number = inner.split([',', ' ', ';']).next().unwrap_or("");
    let value = number.parse::<i64>().ok().map(|number| json!(number));
    // Only a default that is a number, with at most a maximum beside it, is taken out.
    let rest = inner[number.len()..].trim_start_matches([',', ' ']);
    (value.is_some() && (rest.is_empty() || rest.starts_with("max "))).then_some((start, close + 1, value))
}

/// The first sentence of `text`, its whitespace made single spaces.
fn first_sentence(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let bytes = text.as_bytes();
    for (index, _) in text.match_indices(". ") {
        let next = bytes.get(index + 2).copied().unwrap_or(b' ');
        let abbreviated = ["e.g", "i.e", "etc", "vs"].iter().any(|short| text[..index].ends_with(short));
        if (next.is_ascii_uppercase() || next == b'`') && !abbreviated {
            return text[..=index].to_string();
        }
    }
    text
}

/// `text` without its asides in parentheses (nested ones included); unchanged when its
/// parentheses do not balance.
fn without_asides(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut depth = 0usize;
    for character in text.chars() {
        match character {
            '(' => {
                if depth == 0 {
                    kept.truncate(kept.trim_end().len());
                }
                depth += 1;
            }
            ')' if depth == 0 => return text.to_string(),
            ')' => depth -= 1,
            _ if depth == 0 => kept.push(character),
            _ => {}
        }
    }
    if depth == 0 {
        kept
    } else {
        text.to_string()
    }
}

/// The name a `$ref` points to in `$defs`.
fn ref_name(node: &Value) -> Option<&str> {
    node.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

fn count_refs(node: &Value, uses: &mut Map<String, Value>) {
    match node {
        Value::Object(object) => {
            if let Some(name) = ref_name(node) {
                let count = uses.get(name).and_then(Value::as_u64).unwrap_or(0);
                uses.insert(name.to_string(), json!(count + 1));
            }
            object.values().for_each(|value| count_refs(value, uses));
        }
        Value::Array(items) => items.iter().for_each(|item| count_refs(item, uses)),
        _ => {}
    }
}

/// Writes the definitions in `defs` where they are referenced (the reference's own keys,
/// such as its description, win).
fn inline(node: &mut Value, defs: &Map<String, Value>, depth: usize) {
    if depth > 16 {
        return;
    }
    if let Some(def) = ref_name(node).and_then(|name| defs.get(name)).cloned() {
        let mut merged = def.as_object().cloned().unwrap_or_default();
        if let Some(object) = node.as_object() {
            for (key, value) in object {
                if key != "$ref" {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
        *node = Value::Object(merged);
    }
    match node {
        Value::Object(object) => object.values_mut().for_each(|value| inline(value, defs, depth + 1)),
        Value::Array(items) => items.iter_mut().for_each(|item| inline(item, defs, depth + 1)),
        _ => {}
    }
}

/// Trims one schema node and everything under it.
fn trim(node: &mut Value) {
    let Some(object) = node.as_object_mut() else { return };
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = object.remove(key) else { continue };
        let branches: Vec<Value> = branches.into_iter().filter(|branch| !is_null(branch)).collect();
        if branches.len() == 1 {
            // An optional field: its one other branch, under the field's own keys.
            if let Value::Object(branch) = &branches[0] {
                for (field, value) in branch {
                    object.entry(field.clone()).or_insert_with(|| value.clone());
                }
            }
        } else if let Some(values) = enum_values(&branches) {
            object.insert("enum".into(), Value::Array(values));
            if let Some(kind) = branches[0].get("type").filter(|kind| branches.iter().all(|branch| branch.get("type") == Some(*kind))) {
                object.insert("type".into(), kind.clone());
            }
        } else {
            object.insert(key.into(), Value::Array(branches));
        }
    }
    object.remove("title");
    object.remove("examples");
    object.remove("maxLength");
    object.remove("minLength");
    object.remove("pattern");
    if object.get("default") == Some(&Value::Bool(false)) {
        object.remove("default");
    }
    if object.get("additionalProperties") == Some(&Value::Bool(false)) {
        object.remove("additionalProperties");
    }
    if object.get("default") == Some(&Value::Null) {
        object.remove("default");
    }
    if object.get("required").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        object.remove("required");
    }
    if let Some(format) = object.get("format").and_then(Value::as_str) {
        if NUMBER_FORMATS.contains(&format) {
            if format.starts_with("uint") && object.get("minimum").and_then(Value::as_f64) == Some(0.0) {
                object.remove("minimum");
            }
            object.remove("format");
        }
    }
    // `["string", "null"]` -> `"string"`: an absent field is the null.
    if let Some(types) = object.get("type").and_then(Value::as_array) {
        let kept: Vec<Value> = types.iter().filter(|kind| *kind != "null").cloned().collect();
        if kept.len() == 1 {
            object.insert("type".into(), kept[0].clone());
        } else if kept == [json!("integer"), json!("string")] {
            // A count also taken as a string of digits: a model sends the integer.
            object.insert("type".into(), json!("integer"));
        } else if kept.len() < types.len() {
            object.insert("type".into(), Value::Array(kept));
        }
    }
    // A bound no call comes near (a time limit of minutes, a rate of gigabits) says nothing
    // a model needs; a call past it is still refused.
    if object.get("maximum").and_then(Value::as_f64).is_some_and(|maximum| maximum >= FAR_MAXIMUM) {
        object.remove("maximum");
    }
    if object.contains_key("enum") && object.get("type") == Some(&json!("string")) {
        object.remove("type");
    }
    // `const` alone (a one-valued enum's branch written in place) stays as it is.
    for (key, value) in object.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "patternProperties" => {
                if let Some(children) = value.as_object_mut() {
                    children.values_mut().for_each(trim);
                }
            }
            "items" | "additionalProperties" | "not" | "contains" => trim(value),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Some(branches) = value.as_array_mut() {
                    branches.iter_mut().for_each(trim);
                }
            }
            _ => {}
        }
    }
}

fn is_null(branch: &Value) -> bool {
    branch.get("type") == Some(&json!("null")) || branch.get("const") == Some(&Value::Null)
}

/// The values of branches that each name one value or a few (`const`, `enum`) and nothing
/// but a type and a description.
fn enum_values(branches: &[Value]) -> Option<Vec<Value>> {
    let mut values = Vec::new();
    for branch in branches {
        let object = branch.as_object()?;
        if object.keys().any(|key| !matches!(key.as_str(), "const" | "enum" | "type" | "description")) {
            return None;
        }
        match (object.get("const"), object.get("enum").and_then(Value::as_array)) {
            (Some(value), None) => values.push(value.clone()),
            (None, Some(listed)) => values.extend(listed.iter().cloned()),
            _ => return None,
        }
    }
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_fields_enums_and_formats_are_written_compactly() {
        let schema = json!({
            "title": "Input", "type": "object", "additionalProperties": false,
            "properties": {
                "count": { "type": ["integer", "null"], "format": "uint32", "minimum": 0, "default": null, "description": "How many." },
                "mode": { "anyOf": [{ "$ref": "#/$defs/Mode" }, { "type": "null" }], "description": "Which." },
                "wait": { "$ref": "#/$defs/Wait" },
                "again": { "$ref": "#/$defs/Wait" }
            },
            "$defs": {
                "Mode": { "oneOf": [{ "const": "a", "type": "string", "description": "A." }, { "enum": ["b", "c"], "type": "string" }] },
                "Wait": { "type": "object", "properties": { "ms": { "type": "integer", "format": "int64", "minimum": -5 } }, "required": [] }
            }
        });
        assert_eq!(
            compact(&schema),
            json!({
                "type": "object",
                "properties": {
                    "count": { "type": "integer", "description": "How many." },
                    "mode": { "enum": ["a", "b", "c"], "description": "Which." },
                    "wait": { "$ref": "#/$defs/Wait" },
                    "again": { "$ref": "#/$defs/Wait" }
                },
                "$defs": { "Wait": { "type": "object", "properties": { "ms": { "type": "integer", "minimum": -5 } } } }
            })
        );
    }
}

#[cfg(test)]
mod description_tests {
    use super::*;

    #[test]
    fn descriptions_keep_their_first_sentence_and_stated_defaults_become_defaults() {
        assert_eq!(first_sentence("Click it, e.g. a button. Then more.\n Really."), "Click it, e.g. a button.");
        assert_eq!(without_asides("A (one (two)) b (c)."), "A b.");
        assert_eq!(without_asides("Unbalanced (a."), "Unbalanced (a.");
        let schema = json!({
            "type": "object",
            "properties": {
                "button": { "type": "string", "enum": ["left", "right"], "description": "`left` (default) or `right`." },
                "mode": { "type": "string", "enum": ["a", "b"], "description": "`a`: the first; `b`: the other." },
                "settle_ms": { "type": "integer", "description": "Upper bound in ms (default 1500, max 30000). More." },
                "limit": { "type": "integer", "description": "At most this many (1-500, default 100)." },
                "deep": { "type": "object", "description": "Deep.", "properties": {
                    "inner": { "type": "array", "items": { "type": "object", "properties": { "x": { "type": "number" } } } }
                } }
            }
        });
        assert_eq!(
            compact(&schema)["properties"],
            json!({
                "button": { "enum": ["left", "right"], "default": "left" },
                "mode": { "enum": ["a", "b"], "description": "`a`: the first; `b`: the other." },
                "settle_ms": { "type": "integer", "description": "Upper bound in ms.", "default": 1500 },
                "limit": { "type": "integer", "description": "At most this many (1-500, default 100)." },
                "deep": { "type": "object", "description": "Deep.", "properties": { "inner": { "type": "array", "items": { "type": "object" } } } }
            })
        );
    }
}
