//! The broker: leases per agent, reuse, heartbeat, release, expiry, pool exhaustion.

use std::time::Duration;

use serde_json::json;

use crate::harness::*;

#[test]
fn two_agents_get_different_ports_and_the_same_agent_gets_its_lease_back() {
    let daemon = Daemon::start();
    let a = daemon.lease("agent-a");
    let b = daemon.lease("agent-b");
    assert_ne!(a.port, b.port);
    assert_ne!(a.token, b.token);
    assert_ne!(a.id, b.id);
    for lease in [&a, &b] {
        assert!((daemon.port_range.0..=daemon.port_range.1).contains(&lease.port));
        assert!(lease.id.starts_with("lease-"));
        assert!(lease.expires_at.ends_with('Z') && lease.expires_at.contains('.'), "{}", lease.expires_at);
        assert!(port_open(lease.port));
    }
    let again = daemon.lease("agent-a");
    assert_eq!((again.id.as_str(), again.port, again.token.as_str()), (a.id.as_str(), a.port, a.token.as_str()));

    let listed = request(daemon.port, "GET", "/v1/leases", &daemon.broker_headers(), None);
    assert_eq!(listed.body["leases"].as_array().unwrap().len(), 2);
    assert!(!listed.text.contains(&a.token), "listing never shows lease tokens");
}

#[test]
fn heartbeat_renews_and_release_returns_the_port() {
    let daemon = Daemon::start();
    let lease = daemon.lease("agent-a");
    std::thread::sleep(Duration::from_millis(20));
    let renewed = request(daemon.port, "POST", &format!("/v1/leases/{}/heartbeat", lease.id), &daemon.broker_headers(), None);
    assert_eq!(renewed.status, 200, "{}", renewed.body);
    assert!(renewed.body["expires_at"].as_str().unwrap() > lease.expires_at.as_str());

    let session = lease.session();
    let released = request(daemon.port, "DELETE", &format!("/v1/leases/{}", lease.id), &daemon.broker_headers(), None);
    assert_eq!(released.status, 200, "{}", released.body);
    assert_eq!(released.body["closed_sessions"], 1);
    assert!(!port_open(lease.port), "the lease port is closed after release");
    assert!(!daemon.data_dir.join("leases").join(&lease.id).exists());
    let _ = session;

    let gone = request(daemon.port, "POST", &format!("/v1/leases/{}/heartbeat", lease.id), &daemon.broker_headers(), None);
    assert_eq!((gone.status, gone.code()), (404, "E_LEASE_NOT_FOUND"));
    let gone = request(daemon.port, "DELETE", &format!("/v1/leases/{}", lease.id), &daemon.broker_headers(), None);
    assert_eq!((gone.status, gone.code()), (404, "E_LEASE_NOT_FOUND"));

    // The freed port goes back to the pool: a new agent can get it.
    let mut ports = Vec::new();
    for index in 0..daemon.port_range.1 - daemon.port_range.0 + 1 {
        ports.push(daemon.lease(&format!("filler-{index}")).port);
    }
    assert!(ports.contains(&lease.port));
}

#[test]
fn an_exhausted_pool_is_a_clear_error() {
    let daemon = Daemon::start_with(DaemonOptions { pool_size: 2, ..DaemonOptions::default() });
    daemon.lease("agent-a");
    daemon.lease("agent-b");
    let begun = std::time::Instant::now();
    let refused = request(daemon.port, "POST", "/v1/leases", &daemon.broker_headers(), Some(json!({ "agent_id": "agent-c" })));
    assert_eq!((refused.status, refused.code()), (503, "E_POOL_EXHAUSTED"), "{}", refused.body);
    assert!(refused.body["error"]["message"].as_str().unwrap().contains("port"));
    assert!(begun.elapsed() < Duration::from_secs(2), "no hang");
}

#[test]
fn an_expired_lease_is_reclaimed_with_its_sessions_and_port() {
    let daemon = Daemon::start_with(DaemonOptions { lease_ttl_seconds: 2, ..DaemonOptions::default() });
    // Every deadline below counts from the last thing the agent did, never from a fixed
    // start: opening a session may take longer than the TTL on a loaded machine (a call
    // in flight keeps its lease alive).
    let expiring = daemon.lease("expiring");
    let session = expiring.session();
    let last_use = std::time::Instant::now();
    let session_dir = daemon.data_dir.join("leases").join(&expiring.id).join("sessions").join(&session.id);
    assert!(session_dir.exists());
    assert!(!webkit_children(daemon.pid).is_empty());
    let kept = daemon.lease("kept");
    let kept_session = kept.session();
    let beat = || {
        let beat = request(daemon.port, "POST", &format!("/v1/leases/{}/heartbeat", kept.id), &daemon.broker_headers(), None);
        assert_eq!(beat.status, 200, "the renewed lease must survive: {}", beat.body);
    };
    beat();

    // Keep one lease alive with heartbeats while the other expires.
    let reclaimed = eventually(Duration::from_secs(8), || {
        beat();
        !port_open(expiring.port)
    });
    assert!(reclaimed, "the expired lease's port is still open");
    assert!(last_use.elapsed() >= Duration::from_millis(1900), "reclaimed before its 2 s TTL ran out");
    assert!(
        eventually(Duration::from_secs(5), || {
            beat();
            !session_dir.exists()
        }),
        "the session directory outlived its lease"
    );
    assert_eq!(kept_session.observe()["url"], "about:blank", "the other lease's session still works");
    let listed = request(daemon.port, "GET", "/v1/leases", &daemon.broker_headers(), None);
    let agents: Vec<&str> = listed.body["leases"].as_array().unwrap().iter().map(|lease| lease["agent_id"].as_str().unwrap()).collect();
    assert_eq!(agents, ["kept"]);
    // A new lease for the same agent is a new lease.
    let renewed = daemon.lease("expiring");
    assert_ne!(renewed.id, expiring.id);
}

#[test]
fn a_call_in_flight_keeps_its_lease_alive_past_the_ttl() {
    let daemon = Daemon::start_with(DaemonOptions { lease_ttl_seconds: 2, ..DaemonOptions::default() });
    let lease = daemon.lease("waiting-agent");
    let session = lease.session();
    // No heartbeat: the agent waits on one long call (a person logging in, say).
    let answer = session.tool("sleep", json!({ "ms": 3500 }));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(session.observe()["url"], "about:blank", "the lease expired under a running call");
    // Without calls or heartbeats it expires as usual.
    assert!(eventually(Duration::from_secs(6), || !port_open(lease.port)), "the lease outlived its TTL");
}

#[test]
fn idle_sessions_are_closed() {
    let daemon = Daemon::start_with(DaemonOptions { session_idle_seconds: 2, ..DaemonOptions::default() });
    let lease = daemon.lease("agent-a");
    let idle = lease.session();
    // A call that runs longer than the idle limit (a login waiting for a person, say)
    // keeps its session open. Each session is put to use as soon as it is open: opening
    // the next may take longer than the idle limit on a loaded machine.
    let long_call = lease.session();
    let sleeping = {
        let long_call = long_call.clone();
        std::thread::spawn(move || long_call.tool("sleep", serde_json::json!({ "ms": 3500 })))
    };
    let busy = lease.session();
    let begun = std::time::Instant::now();
    while begun.elapsed() < Duration::from_millis(3500) {
        assert_eq!(busy.get("/observe").status, 200, "a used session stays open");
        std::thread::sleep(Duration::from_millis(300));
    }
    // Listing is lease-level and does not count as using a session.
    let ids = || -> Vec<String> {
        let listed = request(lease.port, "GET", "/v1/sessions", &lease.headers(), None);
        listed.body["sessions"].as_array().unwrap().iter().map(|session| session["session_id"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(sleeping.join().unwrap().status, 200, "the long call was cut short");
    assert!(ids().contains(&busy.id) && ids().contains(&long_call.id), "a used session was reclaimed: {:?}", ids());
    assert!(eventually(Duration::from_secs(5), || !ids().contains(&idle.id)), "idle session not reclaimed: {:?}", ids());
    assert_eq!(idle.get("/observe").code(), "E_SESSION_NOT_FOUND");
}
