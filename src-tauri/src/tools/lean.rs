//! What MCP shows of an answer that a model reads whole in every turn after it: a
//! navigation's, an action's and the text beside a screenshot. Over MCP these answers leave
//! out what the agent already knows or rarely needs (what the call was and gave, `ok: true`,
//! nulls and empty lists, a quiet page's settle figures, the encoded size), and keep what
//! tells it how the call went (where the page is, its status, a failure, what the action
//! was aimed at, a navigation, downloads, popups, dialogs, a settle that ran out). HTTP
//! answers stay whole (seed 003); the CLI renders answers itself.

use serde_json::{Map, Value};

/// Which answers a tool gives, for the lean form MCP shows of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lean {
    /// `navigate`, `history`: `{url, title, navigated, navigation, downloads}`.
    Navigation,
    /// An action's outcome (`outcome::ActionOutcome`, with its tool's own fields).
    Action,
    /// A screenshot's answer beside the picture.
    Picture,
}

impl Lean {
    /// Leaves out of `result` (the answer to a call with `input`) what this kind of answer
    /// need not say over MCP.
    pub fn apply(self, result: &mut Value, input: &Map<String, Value>) {
        let Some(fields) = result.as_object_mut() else { return };
        match self {
            Lean::Navigation => navigation(fields),
            Lean::Action => action(fields, input),
            Lean::Picture => picture(fields),
        }
        drop_empty(fields);
        if fields.is_empty() {
            fields.insert("ok".into(), Value::Bool(true));
        }
    }
}

/// A navigation's answer: where the page is, its title, and of the report only what is not
/// the usual (a status, a failure, a redirect, a settle that ran out).
fn navigation(fields: &mut Map<String, Value>) {
    if fields.get("navigated") == Some(&Value::Bool(true)) {
        fields.remove("navigated");
    }
    if let Some(Value::Object(report)) = fields.remove("navigation") {
        let url = fields.get("url").cloned();
        merge_report(fields, report, url.as_ref());
    }
}

/// An action's answer: what it was aimed at (its role and name; the ref only when the
/// call did not give it), what it caused, and its tool's own fields unless they repeat
/// the call (`key`, the `value` filled, the characters typed).
fn action(fields: &mut Map<String, Value>, input: &Map<String, Value>) {
    fields.remove("action");
    if fields.get("ok") == Some(&Value::Bool(true)) {
        fields.remove("ok");
    }
    if let Some(Value::Object(target)) = fields.get_mut("target") {
        if target.get("ref").is_some_and(|given| input.get("ref") == Some(given) || input.get("target") == Some(given)) {
            target.remove("ref");
        }
    }
    if fields.get("navigated") == Some(&Value::Bool(false)) {
        fields.remove("navigated");
    }
    if let Some(Value::Object(report)) = fields.remove("navigation") {
        fields.remove("navigated");
        let mut navigation = Map::new();
        merge_report(&mut navigation, report, None);
        fields.insert("navigation".into(), Value::Object(navigation));
    }
    settle(fields);
    for (field, given) in [("key", "key"), ("value", "text")] {
        if fields.get(field).is_some_and(|value| input.get(given) == Some(value)) {
            fields.remove(field);
        }
    }
    let typed = input.get("text").and_then(Value::as_str).map(|text| text.chars().count() as u64);
    if typed.is_some() && fields.get("typed_chars").and_then(Value::as_u64) == typed {
        fields.remove("typed_chars");
    }
}

/// A screenshot's answer beside the picture: its size, and the scale and place of the
/// document it shows when they are not one image pixel per CSS pixel from the top left;
/// the MIME type is the image's own and its encoded size of no use to a model.
fn picture(fields: &mut Map<String, Value>) {
    fields.remove("mime_type");
    fields.remove("bytes");
    if fields.get("truncated") == Some(&Value::Bool(false)) {
        fields.remove("truncated");
    }
    let at_origin = fields.get("clip").is_some_and(|clip| clip["x"].as_f64() == Some(0.0) && clip["y"].as_f64() == Some(0.0));
    if fields.get("scale").and_then(Value::as_f64) == Some(1.0) && at_origin {
        fields.remove("scale");
        fields.remove("clip");
    }
}

/// A navigation report's fields into `fields`: the URL (unless it is `url` already), the
/// URL asked for when a redirect led elsewhere, the status, a failure, a settle that ran out.
fn merge_report(fields: &mut Map<String, Value>, mut report: Map<String, Value>, url: Option<&Value>) {
    let reached = report.remove("url");
    let asked = report.remove("requested_url");
    if asked.is_some() && asked != reached {
        fields.insert("requested_url".into(), asked.unwrap_or_default());
    }
    if let Some(reached) = reached.filter(|reached| Some(reached) != url) {
        fields.insert("url".into(), reached);
    }
    settle(&mut report);
    fields.extend(report);
}

/// The settle report only when the page was not quiet in time (then the wait and whether
/// the network was idle); a quiet page's figures say nothing to a model.
fn settle(fields: &mut Map<String, Value>) {
    let Some(Value::Object(report)) = fields.remove("settle") else { return };
    if report.get("timed_out") == Some(&Value::Bool(true)) {
        let kept: Map<String, Value> =
            report.into_iter().filter(|(name, _)| matches!(name.as_str(), "timed_out" | "waited_ms" | "network_idle")).collect();
        fields.insert("settle".into(), Value::Object(kept));
    }
}

/// Leaves out nulls and empty lists and objects, at every depth.
fn drop_empty(fields: &mut Map<String, Value>) {
    fields.retain(|_, value| {
        match value {
            Value::Object(inner) => drop_empty(inner),
            Value::Array(items) => items.iter_mut().filter_map(Value::as_object_mut).for_each(drop_empty),
            _ => {}
        }
        !matches!(value, Value::Null) && !value.as_array().is_some_and(Vec::is_empty) && !value.as_object().is_some_and(Map::is_empty)
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lean(kind: Lean, mut result: Value, input: Value) -> Value {
        kind.apply(&mut result, input.as_object().unwrap());
        result
    }

    fn settle(timed_out: bool) -> Value {
        json!({ "waited_ms": 35, "dom_elements": 40, "stable_samples": 2, "network_idle": !timed_out, "timed_out": timed_out })
    }

    #[test]
    fn a_navigation_says_where_the_page_is_and_what_was_unusual() {
        let url = "http://127.0.0.1:1/b/form.html";
        let report = |requested: &str, status: Value, error: Value, timed_out: bool| {
            json!({ "url": url, "title": "Form", "navigated": true, "navigation": {
                "requested_url": requested, "url": url, "http_status": status, "net_error": error,
                "net_error_description": null, "settle": settle(timed_out) } })
        };
        let quiet = lean(Lean::Navigation, report(url, json!(200), Value::Null, false), json!({ "url": url }));
        assert_eq!(quiet, json!({ "url": url, "title": "Form", "http_status": 200 }));
        let redirected = lean(Lean::Navigation, report("http://127.0.0.1:1/go", json!(200), Value::Null, true), json!({}));
        assert_eq!(redirected["requested_url"], "http://127.0.0.1:1/go");
        assert_eq!(redirected["settle"], json!({ "waited_ms": 35, "network_idle": false, "timed_out": true }));
        let failed = lean(Lean::Navigation, report(url, Value::Null, json!("connection_refused"), false), json!({}));
        assert_eq!(failed, json!({ "url": url, "title": "Form", "net_error": "connection_refused" }));
        let download = json!({ "url": url, "title": "", "navigated": false, "navigation": { "url": url, "settle": settle(false) },
            "downloads": [{ "download_id": "d1", "url": url, "suggested_filename": null }] });
        let download = lean(Lean::Navigation, download, json!({}));
        assert_eq!(download["navigated"], false, "a URL that became a download did not navigate");
        assert_eq!(download["downloads"], json!([{ "download_id": "d1", "url": url }]));
    }

    #[test]
    fn an_action_says_what_it_was_aimed_at_and_what_it_caused() {
        let outcome = |extra: Value| {
            let mut outcome = json!({ "action": "fill", "ok": true, "target": { "ref": "e7", "role": "textbox", "name": "Full name" },
                "navigated": false, "settle": settle(false) });
            outcome.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            outcome
        };
        let filled = lean(Lean::Action, outcome(json!({ "value": "Agent 1" })), json!({ "ref": "e7", "text": "Agent 1" }));
        assert_eq!(filled, json!({ "target": { "role": "textbox", "name": "Full name" } }));
        let clipped = lean(Lean::Action, outcome(json!({ "value": "Agent" })), json!({ "selector": "#name", "text": "Agent 1" }));
        assert_eq!(clipped["value"], "Agent", "a field that kept less than was given says so");
        assert_eq!(clipped["target"]["ref"], "e7", "a ref the call did not give");
        let typed = lean(Lean::Action, outcome(json!({ "typed_chars": 3 })), json!({ "text": "abc" }));
        assert!(typed.get("typed_chars").is_none());
        let pressed = json!({ "action": "press", "ok": true, "navigated": true, "key": "Enter", "settle": settle(false),
            "navigation": { "requested_url": "http://a.test/next", "url": "http://a.test/next", "http_status": 200,
                "net_error": null, "net_error_description": null, "settle": settle(false) } });
        let pressed = lean(Lean::Action, pressed, json!({ "key": "Enter" }));
        assert_eq!(pressed, json!({ "navigation": { "url": "http://a.test/next", "http_status": 200 } }));
        let nothing = lean(
            Lean::Action,
            json!({ "action": "press", "ok": true, "navigated": false, "key": "a", "settle": settle(false) }),
            json!({ "key": "a" }),
        );
        assert_eq!(nothing, json!({ "ok": true }));
    }

    #[test]
    fn a_picture_says_its_size_and_where_it_is_when_that_is_not_plain() {
        let shot = |scale: f64, y: f64| {
            json!({ "mime_type": "image/png", "width": 1280, "height": 720, "bytes": 52311, "scale": scale,
                "clip": { "x": 0.0, "y": y, "width": 1280.0, "height": 720.0 }, "truncated": false })
        };
        assert_eq!(lean(Lean::Picture, shot(1.0, 0.0), json!({})), json!({ "width": 1280, "height": 720 }));
        let scrolled = lean(Lean::Picture, shot(1.0, 400.0), json!({}));
        assert_eq!(scrolled["clip"]["y"], 400.0);
        assert_eq!(scrolled["scale"], 1.0);
        assert_eq!(lean(Lean::Picture, shot(0.5, 0.0), json!({}))["scale"], 0.5);
    }
}
