//! Clients of the daemon's HTTP API as an agent uses it: a granted lease and the sessions
//! it opens (tools, navigation, observe, events).

use serde_json::{json, Value};

use super::{request, Response};

/// A granted lease.
#[derive(Clone, Debug)]
pub struct Lease {
    pub id: String,
    pub endpoint: String,
    pub port: u16,
    pub token: String,
    pub expires_at: String,
}

impl Lease {
    pub fn from_grant(grant: &Value) -> Lease {
        let endpoint = grant["endpoint"].as_str().unwrap().to_string();
        Lease {
            id: grant["lease_id"].as_str().unwrap().to_string(),
            port: endpoint.rsplit(':').next().unwrap().parse().unwrap(),
            endpoint,
            token: grant["token"].as_str().unwrap().to_string(),
            expires_at: grant["expires_at"].as_str().unwrap().to_string(),
        }
    }

    pub fn headers(&self) -> Vec<(&'static str, String)> {
        vec![("x-malo-lease-token", self.token.clone())]
    }

    pub fn try_session(&self, body: Value) -> Response {
        request(self.port, "POST", "/v1/sessions", &self.headers(), Some(body))
    }

    /// Opens a session of the given viewport.
    pub fn session_sized(&self, width: u32, height: u32) -> Session {
        let response = self.try_session(json!({ "name": "test", "width": width, "height": height }));
        assert_eq!(response.status, 200, "create session: {}", response.body);
        Session {
            id: response.body["session_id"].as_str().unwrap().to_string(),
            token: response.body["session_token"].as_str().unwrap().to_string(),
            lease: self.clone(),
            summary: response.body,
        }
    }

    pub fn session(&self) -> Session {
        self.session_sized(1024, 768)
    }
}

/// An open session.
#[derive(Clone, Debug)]
pub struct Session {
    pub id: String,
    pub token: String,
    pub lease: Lease,
    pub summary: Value,
}

impl Session {
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        vec![("x-malo-lease-token", self.lease.token.clone()), ("x-malo-session-token", self.token.clone())]
    }

    pub fn get(&self, path_and_query: &str) -> Response {
        request(self.lease.port, "GET", &format!("/v1/sessions/{}{path_and_query}", self.id), &self.headers(), None)
    }

    pub fn post(&self, path: &str, body: Value) -> Response {
        request(self.lease.port, "POST", &format!("/v1/sessions/{}{path}", self.id), &self.headers(), Some(body))
    }

    /// Calls a registry tool; returns the raw response.
    pub fn tool(&self, name: &str, body: Value) -> Response {
        self.post(&format!("/tools/{name}"), body)
    }

    /// Calls a tool that must succeed; returns its result.
    pub fn ok(&self, tool: &str, input: Value) -> Value {
        let response = self.tool(tool, input.clone());
        assert_eq!(response.status, 200, "{tool} {input}: {}", response.body);
        response.body["result"].clone()
    }

    /// Calls a tool that must fail with `code` (and HTTP `status`); returns the error.
    pub fn fails(&self, tool: &str, input: Value, status: u16, code: &str) -> Value {
        let response = self.tool(tool, input.clone());
        assert_eq!((response.status, response.code()), (status, code), "{tool} {input}: {}", response.body);
        response.body["error"].clone()
    }

    /// The value of an expression in the page's own world (of `tab`, default selected).
    pub fn page_value(&self, expression: &str) -> Value {
        self.ok("evaluate", json!({ "expression": expression }))["value"].clone()
    }

    /// Navigates and asserts success.
    pub fn navigate(&self, url: &str) -> Value {
        let response = self.post("/navigate", json!({ "url": url }));
        assert_eq!(response.status, 200, "navigate {url}: {}", response.body);
        response.body
    }

    pub fn observe(&self) -> Value {
        let response = self.get("/observe?mode=light&max_chars=4000");
        assert_eq!(response.status, 200, "observe: {}", response.body);
        response.body
    }

    /// Evaluates nothing: reads the page title through observe (tests read page state
    /// the way an agent would).
    pub fn title(&self) -> String {
        self.observe()["title"].as_str().unwrap_or_default().to_string()
    }

    pub fn events(&self, after: u64) -> Value {
        let response = self.get(&format!("/events?after={after}"));
        assert_eq!(response.status, 200, "events: {}", response.body);
        response.body
    }

    pub fn close(&self) -> Response {
        request(self.lease.port, "DELETE", &format!("/v1/sessions/{}", self.id), &self.headers(), None)
    }
}
