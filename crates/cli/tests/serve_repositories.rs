//! The loopback-only repositories routes of `loci serve` (what the gate's probe chain
//! asks): absolute paths to loopback peers, the exact point lookup, `busy` while the
//! registry is locked, 403 `forbidden_peer` to any other peer. Real servers, real
//! sockets, a real registry.

use crate::lifecycle_support;
use crate::probe_support;

use lifecycle_support::{SOURCES, Ws};
use loci_api::ErrorKind;
use probe_support::*;

#[test]
fn the_repositories_routes_give_loopback_peers_absolute_paths() {
    let ws = Ws::new(SOURCES);
    let index = unmarked(&ws, ws.home.path());
    let root = std::fs::canonicalize(ws.root()).unwrap();
    let root = root.to_str().unwrap();
    let server = serve(&ws, ws.home.path(), Some(KEY), &[]);
    let (status, list) = http_get(server.port, "127.0.0.1", "/api/v1/repositories", Some(KEY));
    assert_eq!(status, 200, "{list}");
    let repos = list["repositories"].as_array().unwrap();
    assert_eq!(repos.len(), 1, "{list}");
    assert_eq!(repos[0]["root"], root);
    assert_eq!(repos[0]["index_path"], index.to_str().unwrap());
    assert_eq!(repos[0]["index_exists"], true);

    let lookup = |path: &str| {
        let q = format!(
            "/api/v1/repositories/lookup?path={}",
            path.replace('%', "%25").replace(' ', "%20")
        );
        http_get(server.port, "127.0.0.1", &q, Some(KEY))
    };
    let (status, found) = lookup(root);
    assert_eq!(
        (status, found["state"].as_str()),
        (200, Some("indexed")),
        "{found}"
    );
    assert_eq!(found["repository"]["index_path"], index.to_str().unwrap());
    let (status, absent) = lookup(&format!("{root}/src"));
    assert_eq!(
        (status, absent["state"].as_str()),
        (200, Some("not_indexed")),
        "exact match only: {absent}"
    );
    let (status, err) = lookup("relative/path");
    assert_eq!(status, ErrorKind::InvalidInput.http_status(), "{err}");
    assert_eq!(err["error"]["kind"], "invalid_input");
    let (status, err) = http_get(
        server.port,
        "127.0.0.1",
        "/api/v1/repositories/lookup",
        Some(KEY),
    );
    assert_eq!(status, ErrorKind::InvalidInput.http_status(), "{err}");
    // Authenticated like every route.
    let (status, _) = http_get(server.port, "127.0.0.1", "/api/v1/repositories", None);
    assert_eq!(status, ErrorKind::Unauthorized.http_status());
    // And documented.
    let (_, doc) = http_get(server.port, "127.0.0.1", "/api/v1/openapi.json", Some(KEY));
    let lookup_doc = &doc["paths"]["/api/v1/repositories/lookup"]["get"];
    assert_eq!(lookup_doc["parameters"][0]["name"], "path", "{lookup_doc}");
    assert!(
        doc["paths"]["/api/v1/repositories"]["get"]["summary"]
            .as_str()
            .unwrap()
            .contains("Loopback peers only")
    );
    assert!(doc["components"]["schemas"]["RepositoryLookup"].is_object());
}

#[test]
fn the_lookup_answers_busy_while_the_registry_is_locked() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let root = std::fs::canonicalize(ws.root()).unwrap();
    let server = serve(&ws, ws.home.path(), Some(KEY), &[]);
    let registry =
        loci_store::rusqlite::Connection::open(ws.home.path().join("registry.db")).unwrap();
    registry
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE workspaces SET files = files;")
        .unwrap();
    let (status, v) = http_get(
        server.port,
        "127.0.0.1",
        &format!("/api/v1/repositories/lookup?path={}", root.display()),
        Some(KEY),
    );
    drop(registry);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["state"], "busy", "{v}");
    assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
}

/// An address of this machine that is not loopback, if it has one.
fn non_loopback_address() -> Option<std::net::IpAddr> {
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    probe
        .connect("192.0.2.1:9")
        .or_else(|_| probe.connect("203.0.113.1:9"))
        .ok()?;
    let ip = probe.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn the_repositories_routes_refuse_a_peer_that_is_not_loopback() {
    let Some(ip) = non_loopback_address() else {
        eprintln!("skipped: this machine has no address beyond loopback to call from");
        return;
    };
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let server = serve(
        &ws,
        ws.home.path(),
        Some(KEY),
        &["--host", "0.0.0.0", "--allow-remote"],
    );
    let host = ip.to_string();
    let (status, v) = http_get(server.port, &host, "/api/v1/repositories", Some(KEY));
    assert_eq!(status, ErrorKind::ForbiddenPeer.http_status(), "{v}");
    assert_eq!(v["error"]["kind"], "forbidden_peer", "{v}");
    assert!(!v.to_string().contains(ws.root().to_str().unwrap()), "{v}");
    let (status, v) = http_get(
        server.port,
        &host,
        "/api/v1/repositories/lookup?path=/",
        Some(KEY),
    );
    assert_eq!(status, ErrorKind::ForbiddenPeer.http_status(), "{v}");
    // The same peer with the same key reaches the other routes: the peer decides.
    let (status, v) = http_get(server.port, &host, "/api/v1/workspaces", Some(KEY));
    assert_eq!(status, 200, "{v}");
    let (status, _) = http_get(server.port, "127.0.0.1", "/api/v1/repositories", Some(KEY));
    assert_eq!(status, 200);
}
