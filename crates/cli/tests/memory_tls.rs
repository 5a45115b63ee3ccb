//! `memory.caFile` end to end: `loci remember` against a team PostgreSQL that takes
//! TCP only over TLS (`pg_tls_cluster`), `memory.url` asking `sslmode=verify-full`.
//! With the CA that signed the server's certificate the memory is stored; with another
//! CA the call is a `storage` error (exit 10) naming the host and why, and the hint
//! names `memory.caFile`.

use std::path::Path;

use loci_api::ErrorKind;

use crate::common::{self, Env};
use crate::pg_tls_cluster::TlsCluster;

#[test]
fn memory_ca_file_checks_the_team_database_certificate() {
    let Some(server) = TlsCluster::start(true) else {
        return;
    };
    let env = Env::new();
    let url = server.url("localhost", "sslmode=verify-full");
    let remember = |ca: &Path, name: &str| {
        let out = env
            .cmd()
            .env("LOCI_MEMORY_URL", &url)
            .env("LOCI_MEMORY_REPOSITORY_ID", "team/tls")
            .env("LOCI_MEMORY_CA_FILE", ca)
            .args(["remember", "--name", name, "A note over TLS.", "--json"])
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), common::parse(&out))
    };
    let (code, out) = remember(&server.wrong_ca, "refused");
    assert_eq!(code, i32::from(ErrorKind::Storage.exit().code()), "{out}");
    let message = out["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("localhost") && message.contains("not signed by the configured CA"),
        "{out}"
    );
    let hint = out["error"]["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("memory.caFile"), "{out}");

    let (code, out) = remember(&server.ca, "stored");
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["name"], "stored", "{out}");
}
