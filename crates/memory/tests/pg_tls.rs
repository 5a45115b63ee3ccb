//! TLS to a real PostgreSQL: a cluster of each test's own (`pg_tls_cluster.rs`)
//! listening on a free TCP port of 127.0.0.1 with `ssl=on` and a certificate for
//! `localhost` signed by a CA made for the run, its `pg_hba.conf` taking TCP
//! connections only over TLS (`hostssl`). Every `sslmode` is tried against it: what must connect does (and,
//! the server taking nothing else, that proves the connection encrypted), and what
//! must not fails with a [`MemoryError::PgTls`] naming the host and the cause.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use loci_memory::{MemoryError, MemoryStore, PgOptions, PgStore};

use crate::pg_store::memory;
use crate::pg_tls_cluster::TlsCluster;

/// The default options with `ca` as `memory.caFile`.
fn with_ca(ca: Option<&Path>) -> PgOptions {
    PgOptions {
        ca_file: ca.map(Path::to_path_buf),
        ..PgOptions::default()
    }
}

/// A store on `url` (the CA file `ca` as `memory.caFile`) that wrote and read back a
/// memory, under a scope of its own.
fn works(url: &str, ca: Option<&Path>) {
    static SCOPES: AtomicU32 = AtomicU32::new(0);
    let scope = format!("repo-{}", SCOPES.fetch_add(1, Ordering::Relaxed));
    let options = PgOptions {
        ca_file: ca.map(Path::to_path_buf),
        ..PgOptions::default()
    };
    let mut s =
        PgStore::connect_with(url, &scope, options).unwrap_or_else(|e| panic!("{url}: {e}"));
    s.create(&memory("over-tls", "body"), "default", &[])
        .unwrap();
    assert_eq!(s.read("default", "over-tls").unwrap().body, "body");
}

/// The TLS error a store on `url` (CA file `ca`) fails with: its text.
fn refused(url: &str, ca: Option<&Path>) -> String {
    match PgStore::connect_with(url, "repo", with_ca(ca)) {
        Ok(_) => panic!("{url} connected"),
        Err(e @ MemoryError::PgTls { .. }) => e.to_string(),
        Err(e) => panic!("{url}: not a TLS error: {e:?}"),
    }
}

#[test]
fn every_sslmode_against_a_server_that_takes_only_tls() {
    let Some(server) = TlsCluster::start(true) else {
        return;
    };
    // Encrypted without checking who answers, as libpq's prefer and require.
    works(&server.url("localhost", "sslmode=require"), None);
    works(&server.url("127.0.0.1", "sslmode=prefer"), None);
    works(&server.url("localhost", ""), None);
    // The right CA: the name checked (verify-full), or only the chain (verify-ca, and
    // require once a CA is given), by the URL's sslrootcert or memory.caFile.
    let ca = server.ca.display().to_string();
    works(
        &server.url(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        None,
    );
    works(
        &server.url("localhost", "sslmode=verify-full"),
        Some(&server.ca),
    );
    works(
        &server.url("127.0.0.1", "sslmode=verify-ca"),
        Some(&server.ca),
    );
    works(
        &server.url("127.0.0.1", "sslmode=require"),
        Some(&server.ca),
    );

    // The certificate names localhost, not 127.0.0.1.
    let e = refused(
        &server.url("127.0.0.1", "sslmode=verify-full"),
        Some(&server.ca),
    );
    assert!(
        e.contains("127.0.0.1") && e.contains("not issued for the host name"),
        "{e}"
    );
    assert!(e.contains("sslmode=verify-full"), "{e}");
    // Another CA signed nothing of this server: whatever the mode that checks.
    for mode in ["verify-full", "verify-ca", "require"] {
        let e = refused(
            &server.url("localhost", &format!("sslmode={mode}")),
            Some(&server.wrong_ca),
        );
        assert!(
            e.contains("localhost") && e.contains("not signed by the configured CA"),
            "{mode}: {e}"
        );
    }
    // The URL's sslrootcert wins over memory.caFile.
    let e = refused(
        &server.url(
            "localhost",
            &format!(
                "sslmode=verify-full&sslrootcert={}",
                server.wrong_ca.display()
            ),
        ),
        Some(&server.ca),
    );
    assert!(e.contains("not signed by the configured CA"), "{e}");
    // pg_hba.conf has only hostssl lines.
    let e = refused(&server.url("localhost", "sslmode=disable"), None);
    assert!(
        e.contains("accepts only TLS") && e.contains("localhost"),
        "{e}"
    );
    assert!(e.contains("sslmode=disable"), "{e}");
}

#[test]
fn a_password_login_over_verified_tls_and_its_channel_binding() {
    let Some(server) = TlsCluster::start(true) else {
        return;
    };
    server.admin("CREATE ROLE member LOGIN PASSWORD 's3cret'");
    server.admin("CREATE DATABASE team OWNER member");
    let url = |password: &str, extra: &str| {
        format!(
            "postgres://member:{password}@localhost:{}/team?hostaddr=127.0.0.1&sslmode=verify-full{extra}",
            server.port
        )
    };
    // SCRAM bound to the TLS channel (the certificate's hash), which PostgreSQL checks.
    works(&url("s3cret", "&channel_binding=require"), Some(&server.ca));
    let e = PgStore::connect_with(&url("wrong", ""), "repo", with_ca(Some(&server.ca)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("password authentication failed"), "{e}");
    assert!(!e.contains("wrong") && !e.contains("s3cret"), "{e}");
}

#[test]
fn require_against_a_server_without_tls_says_so() {
    let Some(server) = TlsCluster::start(false) else {
        return;
    };
    works(&server.url("localhost", "sslmode=prefer"), None);
    works(&server.url("localhost", "sslmode=disable"), None);
    for mode in ["require", "verify-full"] {
        let e = refused(
            &server.url("localhost", &format!("sslmode={mode}")),
            Some(&server.ca),
        );
        assert!(
            e.contains("does not offer TLS") && e.contains("localhost"),
            "{mode}: {e}"
        );
    }
}

#[test]
fn a_bad_sslmode_or_ca_file_is_refused_before_connecting() {
    // Nothing listens on port 1: each must fail on its settings, not on the network.
    let url = |params: &str| format!("postgres://loci@localhost:1/db?{params}");
    let bad_mode = PgStore::connect(&url("sslmode=allow"), "repo").unwrap_err();
    assert!(
        matches!(bad_mode, MemoryError::PgUrl { .. }) && bad_mode.to_string().contains("\"allow\""),
        "{bad_mode}"
    );
    let e = refused(&url("sslmode=verify-full"), None);
    assert!(e.contains("memory.caFile"), "{e}");
    let missing = Path::new("/nonexistent/ca.pem");
    let e = refused(&url("sslmode=verify-ca"), Some(missing));
    assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let e = refused(&url("sslmode=verify-full"), Some(&empty));
    assert!(e.contains("holds no PEM certificate"), "{e}");
    // A Unix socket has no TLS (the server offers none there): any mode connects, as
    // with libpq, and no CA file is read.
    if let Some(socket_url) = crate::pg_cluster::database() {
        for mode in ["require", "verify-full"] {
            let url = format!(
                "{socket_url} sslmode={mode} sslrootcert='{}'",
                missing.display()
            );
            PgStore::connect(&url, "repo").unwrap_or_else(|e| panic!("{url}: {e}"));
        }
    }
}
