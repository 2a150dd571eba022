//! Tools over a scripted page, in milliseconds: the real registry and handlers over the
//! fake engine's [`FakePage`] (its page agent answers what each test scripts), on tokio's
//! paused clock. What lies between the agent and a tool's answer is tested here:
//! actionability and its retries, frame merging, snapshot parts, key chords. That the
//! page agent and WebKit do their part is proven by the end-to-end tests.

mod actionability;
// Key values are X keysyms: the engine's keys are GDK's.
#[cfg(target_os = "linux")]
mod chords;
mod frames;
mod parts;
mod pdf;

use std::sync::Arc;

use serde_json::{json, Value};

use super::{ToolContext, ToolRegistry};
use crate::engine::fake::{fake_engine_with, FakePage};
use crate::error::Result;
use crate::session::{CreateSession, Owner, Session, SessionLimits, SessionServices, SessionTable};
use crate::testing::TempDir;

/// A session with one tab over a [`FakePage`], and the registry to call tools on it.
struct Bench {
    page: FakePage,
    registry: Arc<ToolRegistry>,
    sessions: Arc<SessionTable>,
    session: Arc<Session>,
    _dir: TempDir,
}

impl Bench {
    async fn new() -> Bench {
        let dir = TempDir::new("malo-page-tests");
        let page = FakePage::new();
        let engine = fake_engine_with(page.clone());
        let services = SessionServices::new(engine, Arc::default(), Arc::default(), dir.path(), None);
        let owner = Owner { lease_id: "lease-test".into(), agent_id: "agent".into(), lease_dir: dir.path().join("lease-test"), port: 0 };
        let limits = SessionLimits { max_sessions: 1, max_download_bytes: 1 << 20 };
        let sessions = Arc::new(SessionTable::new(owner, limits, services));
        let session = sessions.create(CreateSession::default()).await.expect("a session opens over the fake engine");
        Bench { page, registry: Arc::new(ToolRegistry::standard()), sessions, session, _dir: dir }
    }

    /// Calls a tool on the session's selected tab, as every surface does; its own result.
    async fn call(&self, tool: &str, input: Value) -> Result<Value> {
        let context = ToolContext::new(self.session.clone(), self.sessions.clone(), self.registry.clone());
        self.registry.call(tool, context, input).await.map(|output| output.result)
    }
}

/// What `locate` answers for an actionable element: ref `number`, a button named `name`
/// centred at (x, y), visible, enabled, uncovered, in the viewport.
fn element(number: u64, name: &str, x: f64, y: f64) -> Value {
    json!({ "ref": number, "role": "button", "name": name, "tag": "button", "x": x, "y": y, "w": 80, "h": 20,
        "visible": true, "disabled": false, "editable": false, "in_viewport": true })
}

/// `value` with the fields of `changes` set.
fn with(mut value: Value, changes: Value) -> Value {
    for (key, field) in changes.as_object().expect("changes are an object") {
        value[key] = field.clone();
    }
    value
}
