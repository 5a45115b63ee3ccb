//! TLS to a real PostgreSQL: a cluster of each test's own listening on a free TCP port
//! of 127.0.0.1 with `ssl=on` and a certificate for `localhost` signed by a CA made
//! for the run (rcgen), its `pg_hba.conf` taking TCP connections only over TLS
//! (`hostssl`). Every `sslmode` is tried against it: what must connect does (and,
//! the server taking nothing else, that proves the connection encrypted), and what
//! must not fails with a [`MemoryError::PgTls`] naming the host and the cause.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use loci_memory::{MemoryError, MemoryStore, PgOptions, PgStore};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

use crate::pg_cluster::{self, SUPERUSER};
use crate::pg_store::memory;

/// How long the server may take to accept connections.
const READY_DEADLINE: Duration = Duration::from_secs(60);

/// A CA made for the run: its certificate's PEM and what signs with it.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let pem = params.self_signed(&key).unwrap().pem();
        Ca {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `names` and its key, both PEM.
    fn sign(&self, names: &[&str]) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &self.issuer)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// A cluster of the test's own on 127.0.0.1:`port`, stopped and removed on drop.
struct TlsCluster {
    dir: PathBuf,
    port: u16,
    server: Child,
    /// The PEM of the CA that signed the server's certificate.
    ca: PathBuf,
    /// The PEM of another CA, which signed nothing of this server.
    wrong_ca: PathBuf,
}

impl TlsCluster {
    /// A running cluster with `ssl=on` (TCP only over TLS) or `ssl=off` (TCP without);
    /// `None` without PostgreSQL outside CI, as the other store tests.
    fn start(ssl: bool) -> Option<TlsCluster> {
        let Some(bin) = pg_cluster::binaries() else {
            pg_cluster::start()?;
            unreachable!("start() returns None without PostgreSQL")
        };
        let layout =
            pg_cluster::initialise(&bin, pg_cluster::new_dir("loci-pg-tls-").unwrap()).unwrap();
        let ca = Ca::new("loci test CA");
        let (cert, key) = ca.sign(&["localhost"]);
        let write = |name: &str, text: &str| {
            let path = layout.dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let ca_file = write("ca.pem", &ca.pem);
        let wrong_ca = write("wrong-ca.pem", &Ca::new("another CA").pem);
        let cert_file = write("server.crt", &cert);
        let key_file = write("server.key", &key);
        // PostgreSQL takes a key only its own user can read.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        if let Some((uid, gid)) = pg_cluster::unprivileged() {
            for f in [&cert_file, &key_file] {
                std::os::unix::fs::chown(f, Some(uid), Some(gid)).unwrap();
            }
        }
        let tcp = if ssl { "hostssl" } else { "host" };
        std::fs::write(
            layout.data.join("pg_hba.conf"),
            format!(
                "local all {SUPERUSER} trust\n{tcp} all {SUPERUSER} 127.0.0.1/32 trust\n{tcp} all all 127.0.0.1/32 scram-sha-256\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let mut command = pg_cluster::server_command(&bin, &layout).unwrap();
        command
            .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
            .args(["-c", if ssl { "ssl=on" } else { "ssl=off" }])
            .arg("-c")
            .arg(format!("ssl_cert_file={}", cert_file.display()))
            .arg("-c")
            .arg(format!("ssl_key_file={}", key_file.display()));
        let server = command.spawn().expect("postgres starts");
        let mut cluster = TlsCluster {
            dir: layout.dir,
            port,
            server,
            ca: ca_file,
            wrong_ca,
        };
        cluster.wait_ready(&layout.socket, &layout.log);
        Some(cluster)
    }

    /// Waits until the superuser connects over the socket, failing with the server's
    /// log if it exits or the deadline passes.
    fn wait_ready(&mut self, socket: &Path, log: &Path) {
        let deadline = Instant::now() + READY_DEADLINE;
        let url = format!(
            "host={} port={} user={SUPERUSER} dbname=postgres",
            socket.display(),
            self.port
        );
        loop {
            let failed = match postgres::Client::connect(&url, postgres::NoTls) {
                Ok(_) => return,
                Err(e) => e,
            };
            let log = || std::fs::read_to_string(log).unwrap_or_default();
            if let Ok(Some(status)) = self.server.try_wait() {
                panic!("postgres exited ({status}):\n{}", log());
            }
            if Instant::now() > deadline {
                panic!(
                    "postgres did not accept connections within {READY_DEADLINE:?} ({failed}):\n{}",
                    log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The superuser's URL to database `postgres` at `host` (which the TCP connection
    /// reaches at 127.0.0.1 whatever it is), with `params` as its query.
    fn url(&self, host: &str, params: &str) -> String {
        format!(
            "postgres://{SUPERUSER}@{host}:{}/postgres?hostaddr=127.0.0.1&{params}",
            self.port
        )
    }

    /// Runs `sql` as the superuser, over the socket.
    fn admin(&self, sql: &str) {
        let mut client = postgres::Client::connect(
            &format!(
                "host={} port={} user={SUPERUSER} dbname=postgres",
                self.dir.join("sock").display(),
                self.port
            ),
            postgres::NoTls,
        )
        .unwrap();
        client.batch_execute(sql).unwrap();
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        pg_cluster::quit(&mut self.server);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A TCP port of 127.0.0.1 free now (the server takes it right after).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

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
