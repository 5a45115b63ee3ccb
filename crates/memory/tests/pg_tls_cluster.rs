//! A PostgreSQL cluster that speaks TLS, for the TLS tests of both crates (the CLI's
//! include this file with `#[path]`, as `pg_cluster.rs`): each test's own, started
//! through `pg_cluster`'s pieces, listening on a free TCP port of 127.0.0.1 with
//! `ssl=on` (or `off`) and a certificate for `localhost` signed by a CA made for the
//! run (rcgen), its `pg_hba.conf` taking TCP connections only over TLS (`hostssl`)
//! when `ssl=on`. Another CA, which signed nothing of it, is there for the tests of a
//! wrong one.

// Two test crates include this file and each uses a part of it.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

use crate::pg_cluster::{self, SUPERUSER};

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
pub struct TlsCluster {
    dir: PathBuf,
    /// The TCP port it listens on.
    pub port: u16,
    server: Child,
    /// The PEM of the CA that signed the server's certificate.
    pub ca: PathBuf,
    /// The PEM of another CA, which signed nothing of this server.
    pub wrong_ca: PathBuf,
}

impl TlsCluster {
    /// A running cluster with `ssl=on` (TCP only over TLS) or `ssl=off` (TCP without);
    /// `None` without PostgreSQL outside CI, as the other store tests.
    pub fn start(ssl: bool) -> Option<TlsCluster> {
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
        // Another process may take the free port before the server does: then again.
        for attempt in 1.. {
            let port = free_port();
            let mut command = pg_cluster::server_command(&bin, &layout).unwrap();
            command
                .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
                .args(["-c", if ssl { "ssl=on" } else { "ssl=off" }])
                .arg("-c")
                .arg(format!("ssl_cert_file={}", cert_file.display()))
                .arg("-c")
                .arg(format!("ssl_key_file={}", key_file.display()));
            let mut server = command.spawn().expect("postgres starts");
            match wait_ready(&mut server, port, &layout.socket, &layout.log) {
                Ok(()) => {
                    return Some(TlsCluster {
                        dir: layout.dir,
                        port,
                        server,
                        ca: ca_file,
                        wrong_ca,
                    });
                }
                Err(why) => {
                    pg_cluster::quit(&mut server);
                    if attempt < 5 && why.contains("could not bind") {
                        continue;
                    }
                    let _ = std::fs::remove_dir_all(&layout.dir);
                    panic!("{why}");
                }
            }
        }
        unreachable!("the loop returns or panics")
    }

    /// The superuser's URL to database `postgres` at `host` (which the TCP connection
    /// reaches at 127.0.0.1 whatever it is), with `params` as its query.
    pub fn url(&self, host: &str, params: &str) -> String {
        format!(
            "postgres://{SUPERUSER}@{host}:{}/postgres?hostaddr=127.0.0.1&{params}",
            self.port
        )
    }

    /// Runs `sql` as the superuser, over the socket.
    pub fn admin(&self, sql: &str) {
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

/// Waits until the superuser connects to `server` over its socket; the server's log
/// when it exits or the deadline passes.
fn wait_ready(server: &mut Child, port: u16, socket: &Path, log: &Path) -> Result<(), String> {
    let deadline = Instant::now() + READY_DEADLINE;
    let url = format!(
        "host={} port={} user={SUPERUSER} dbname=postgres",
        socket.display(),
        port
    );
    loop {
        let failed = match postgres::Client::connect(&url, postgres::NoTls) {
            Ok(_) => return Ok(()),
            Err(e) => e,
        };
        let log = || std::fs::read_to_string(log).unwrap_or_default();
        if let Ok(Some(status)) = server.try_wait() {
            return Err(format!("postgres exited ({status}):\n{}", log()));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "postgres did not accept connections within {READY_DEADLINE:?} ({failed}):\n{}",
                log()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
