//! Strict parsing of what callers send (a tool's input, a request body) into its Rust
//! type, in one place: a refusal names the JSON path of the field it is about
//! (`details.field`, e.g. `permissions[0]`, `proxy.server`), and its message starts with
//! that path. A body that is wrong as a whole (not an object) names no field.

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::error::{Error, Result};

/// Parses `value` into `T`; `what` says what was parsed (`invalid input for navigate`,
/// `invalid request body`) and ends the message.
pub fn parse_strict<T: DeserializeOwned>(value: Value, what: &str) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let message = error.inner().to_string();
        let field = field_path(error.path(), &message);
        refusal(field, &message, what)
    })
}

/// `error` about a field of a value that sits at `prefix` of what the caller sent (a
/// tool's input inside `action` of the action route): its field's path, and the message
/// that starts with it, get the prefix. Other errors are left as they are.
pub fn nested_error(mut error: Error, prefix: &str) -> Error {
    let Some(field) = error.details.get("field").and_then(Value::as_str).map(str::to_string) else { return error };
    let Some(rest) = error.message.strip_prefix(field.as_str()).filter(|rest| rest.starts_with([':', ' '])) else { return error };
    let nested = format!("{prefix}.{field}");
    error.message = format!("{nested}{rest}");
    error.details["field"] = json!(nested);
    error
}

/// The refusal of a value wrong at `field` (`None`: the value as a whole).
fn refusal(field: Option<String>, message: &str, what: &str) -> Error {
    match field {
        Some(field) => Error::bad_request(format!("{field}: {message} ({what})")).with_details(json!({ "field": field })),
        None => Error::bad_request(format!("{what}: {message}")),
    }
}

/// The JSON path of the field an error is about: where the parser was, and for a missing
/// field (which serde reports on the object that lacks it) that field's name beneath.
fn field_path(path: &serde_path_to_error::Path, message: &str) -> Option<String> {
    use serde_path_to_error::Segment;
    let mut written = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => written.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !written.is_empty() {
                    written.push('.');
                }
                written.push_str(key);
            }
            // A key that is not a string: nothing in JSON, but say where it stopped.
            Segment::Unknown => break,
        }
    }
    if let Some(missing) = message.strip_prefix("missing field `").and_then(|rest| rest.split('`').next()) {
        if !written.is_empty() {
            written.push('.');
        }
        written.push_str(missing);
    }
    (!written.is_empty()).then_some(written)
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        #[serde(default)]
        mode: Option<Mode>,
        #[serde(default)]
        inner: Vec<Inner>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        name: String,
        #[serde(default)]
        mode: Option<Mode>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Light,
        Dark,
    }

    fn refused(value: Value) -> Error {
        parse_strict::<Outer>(value, "invalid input for test").unwrap_err()
    }

    #[test]
    fn a_refusal_names_the_path_of_its_field_and_starts_with_it() {
        for (value, field) in [
            (json!({ "mode": "purple" }), "mode"),
            (json!({ "inner": [{ "name": "a" }, { "name": "b", "mode": 3 }] }), "inner[1].mode"),
            (json!({ "inner": [{}] }), "inner[0].name"),
            (json!({ "inner": [{ "name": "a", "extra": 1 }] }), "inner[0].extra"),
            (json!({ "surprise": true }), "surprise"),
        ] {
            let error = refused(value.clone());
            assert_eq!(error.details["field"], field, "{value}: {}", error.message);
            assert!(error.message.starts_with(&format!("{field}: ")), "{value}: {}", error.message);
            assert!(error.message.ends_with("(invalid input for test)"), "{}", error.message);
        }
        let purple = refused(json!({ "mode": "purple" }));
        assert!(purple.message.contains("expected `light` or `dark`"), "{}", purple.message);
    }

    #[test]
    fn a_nested_input_s_refusal_names_the_whole_path() {
        let error = nested_error(refused(json!({ "inner": [{ "name": "a", "mode": "purple" }] })), "action");
        assert_eq!(error.details["field"], "action.inner[0].mode");
        assert!(error.message.starts_with("action.inner[0].mode: unknown variant `purple`"), "{}", error.message);
        let other = Error::bad_request("latency_ms must be small").with_details(json!({ "field": "conditions.latency_ms" }));
        assert_eq!(nested_error(other, "action").details["field"], "conditions.latency_ms");
    }

    #[test]
    fn a_value_wrong_as_a_whole_names_no_field() {
        let error = refused(json!("text"));
        assert!(error.message.starts_with("invalid input for test: invalid type"), "{}", error.message);
        assert_eq!(error.details, json!({}));
    }
}
