//! No leaks: closing sessions, releasing leases and quitting leave no WebKit process,
//! no open port and no directory behind.

use std::time::Duration;

use serde_json::json;

use crate::harness::*;

#[test]
fn process_port_and_directory_counts_return_to_baseline() {
    let mut daemon = Daemon::start();
    let fixtures = Fixtures::start();
    // No WebKit process before any session (a probe of the engine, had one run, leaves
    // none behind).
    assert!(
        eventually(Duration::from_secs(5), || webkit_children(daemon.pid).is_empty()),
        "no WebKit process before any session: {:?}",
        webkit_children(daemon.pid)
    );

    let lease = daemon.lease("agent-a");
    let one = lease.session();
    let two = lease.session();
    one.navigate(&fixtures.url("/f/hello.html"));
    two.navigate(&fixtures.url("/f/storage.html?set=x"));
    let running = webkit_children(daemon.pid);
    assert!(running.len() >= 2, "each session has its own web process: {running:?}");
    let sessions_dir = daemon.data_dir.join("leases").join(&lease.id).join("sessions");
    assert!(sessions_dir.join(&one.id).join("downloads").is_dir());
    assert!(sessions_dir.join(&one.id).join("artifacts").is_dir());

    // Close one through DELETE, the other through the close tool.
    assert_eq!(one.close().status, 200);
    assert_eq!(two.tool("close", json!({})).status, 200);
    assert!(
        eventually(Duration::from_secs(5), || webkit_children(daemon.pid).is_empty()),
        "WebKit processes left: {:?}",
        webkit_children(daemon.pid)
    );
    assert!(
        eventually(Duration::from_secs(4), || !sessions_dir.join(&one.id).exists() && !sessions_dir.join(&two.id).exists()),
        "session directories left behind"
    );

    // Open again, with more tabs and a popup, then release the lease with a live session.
    let three = lease.session();
    three.navigate(&fixtures.url("/f/hello.html"));
    three.ok("tab_new", json!({ "url": fixtures.url("/f/hello.html") }));
    three.ok("set_popup_policy", json!({ "policy": "tab" }));
    three.navigate(&fixtures.url("/f/tabs.html"));
    assert_eq!(three.ok("click", json!({ "selector": "#blank" }))["popups"].as_array().map(Vec::len), Some(1));
    // A tab closed by the agent takes its web process along when it had its own.
    let before_close = webkit_children(daemon.pid).len();
    let extra = three.ok("tab_new", json!({ "url": fixtures.url("/f/hello.html") }))["tab"].as_str().unwrap().to_string();
    three.ok("tab_close", json!({ "tab": extra }));
    assert!(
        eventually(Duration::from_secs(5), || webkit_children(daemon.pid).len() <= before_close),
        "a closed tab left its process: {:?}",
        webkit_children(daemon.pid)
    );
    assert!(!webkit_children(daemon.pid).is_empty());
    request(daemon.port, "DELETE", &format!("/v1/leases/{}", lease.id), &daemon.broker_headers(), None);
    assert!(!port_open(lease.port));
    assert!(eventually(Duration::from_secs(5), || webkit_children(daemon.pid).is_empty()));
    assert!(eventually(Duration::from_secs(4), || !daemon.data_dir.join("leases").join(&lease.id).exists()));

    // Quit with a live session: everything goes with the daemon.
    let lease = daemon.lease("agent-b");
    let four = lease.session();
    four.navigate(&fixtures.url("/f/hello.html"));
    let children = webkit_children(daemon.pid);
    assert!(!children.is_empty());
    assert_eq!(daemon.stop(), 0);
    assert!(eventually(Duration::from_secs(5), || children.iter().all(|pid| !process_alive(*pid))));
    assert!(!port_open(lease.port));
    assert!(!port_open(daemon.port));
    let leftovers: Vec<_> =
        std::fs::read_dir(daemon.data_dir.join("leases")).map(|dir| dir.flatten().map(|entry| entry.path()).collect()).unwrap_or_default();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
