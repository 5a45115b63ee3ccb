//! Shared set-up for the lifecycle tests: a real workspace, a private LOCI_HOME and
//! config dir, the real `loci` binary, and stand-in executables written as scripts.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const SOURCES: &[(&str, &str)] = &[
    (
        "src/app.py",
        "from lib import helper\n\ndef main():\n    helper()\n",
    ),
    ("src/lib.py", "def helper():\n    return 1\n"),
];

/// Variables the tests control; removed from the inherited environment.
const CONTROLLED: &[&str] = &[
    "LOCI_SESSION_ID",
    "LOCI_AUTO_WATCH",
    "LOCI_LOG",
    "LOCI_LIFECYCLE_AUTO_CREATE",
    "LOCI_LIFECYCLE_SYNC_ON_START",
    "LOCI_LIFECYCLE_LIVENESS_CACHE_MS",
    "LOCI_LIFECYCLE_GATE_BUDGET_MS",
    "LOCI_LIFECYCLE_EXECUTABLE",
    "LOCI_LIFECYCLE_WATCH_DEBOUNCE_MS",
    "LOCI_INDEX_PROBE_TIMEOUT_MS",
    "LOCI_INDEX_MAINTENANCE_TIMEOUT_MS",
    "LOCI_INDEX_MAX_FILE_BYTES",
    "LOCI_API_ENABLED",
    "LOCI_API_PORT",
    "LOCI_API_PROBE_DEADLINE_MS",
    "LOCI_API_KEY",
];

pub struct Ws {
    pub home: tempfile::TempDir,
    pub dir: tempfile::TempDir,
    pub scratch: tempfile::TempDir,
}

impl Ws {
    pub fn new(files: &[(&str, &str)]) -> Ws {
        let ws = Ws {
            home: tempfile::tempdir().unwrap(),
            dir: tempfile::tempdir().unwrap(),
            scratch: tempfile::tempdir().unwrap(),
        };
        ws.write(files);
        ws
    }

    /// A workspace with an index built by `loci index`.
    pub fn indexed() -> Ws {
        let ws = Ws::new(SOURCES);
        let out = ws.cmd().args(["index", "--json"]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ws
    }

    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    pub fn index_db(&self) -> PathBuf {
        self.root().join(".loci/index.db")
    }

    pub fn write(&self, files: &[(&str, &str)]) {
        for (rel, text) in files {
            let p = self.dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    /// `loci` with this test's LOCI_HOME and config dir, run from the workspace.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(bin());
        for var in CONTROLLED {
            cmd.env_remove(var);
        }
        // The 50 ms answer is measured by the bench; here a loaded test machine must not
        // turn a scenario into the over-budget path.
        cmd.env("LOCI_HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join("xdg"))
            .env("LOCI_LIFECYCLE_GATE_BUDGET_MS", "10000")
            // The CLI path, as before the API probe chain (tests/gate_api_probe.rs turns
            // it on, on ports of its own): no test here asks or starts a server on 8000.
            .env("LOCI_API_ENABLED", "0")
            .current_dir(self.dir.path());
        cmd
    }

    /// `loci gate --json ARGS` with extra variables; returns the answer and the output
    /// once any run the gate handed off has ended (its owner outlives the gate).
    pub fn gate(&self, args: &[&str], envs: &[(&str, &str)]) -> (Value, Output) {
        let answered = self.gate_no_wait(args, envs);
        self.wait_for_owners();
        answered
    }

    /// `loci gate --json ARGS` without waiting for the run it hands off.
    pub fn gate_no_wait(&self, args: &[&str], envs: &[(&str, &str)]) -> (Value, Output) {
        let mut cmd = self.cmd();
        cmd.arg("gate").arg("--json").args(args);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "the gate always exits 0: {out:?}"
        );
        (parse(&out), out)
    }

    /// Waits (at most two minutes) until no run recorded in this LOCI_HOME has a live
    /// owner: every handed-off run has ended and recorded its outcome.
    pub fn wait_for_owners(&self) {
        let settled = wait_for(Duration::from_secs(120), || {
            self.owner_pids().iter().all(|&p| !alive(p)).then_some(())
        });
        assert!(settled.is_some(), "a handed-off run never ended");
    }

    /// The owners of the runs recorded as in flight.
    pub fn owner_pids(&self) -> Vec<i32> {
        let Ok(dir) = std::fs::read_dir(self.home.path().join("lifecycle")) else {
            return Vec::new();
        };
        dir.flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| std::fs::read(e.path()).ok())
            .filter_map(|b| serde_json::from_slice::<Value>(&b).ok())
            .filter_map(|r| r["running"]["owner_pid"].as_i64())
            .map(|p| p as i32)
            .collect()
    }

    pub fn status(&self) -> Value {
        let out = self.cmd().args(["status", "--json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        parse(&out)
    }

    /// A stand-in executable: `/bin/sh` running `body`. `$LOCI` is the real binary and
    /// `$SCRATCH` this test's scratch dir.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.scratch.path().join(name);
        let text = format!(
            "#!/bin/sh\nLOCI='{}'\nSCRATCH='{}'\n{body}\n",
            bin().display(),
            self.scratch.path().display()
        );
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A real loci that logs each start to `$SCRATCH/spawns.log` first.
    pub fn logging_loci(&self) -> PathBuf {
        self.script(
            "loci-logged",
            "echo \"$@\" >> \"$SCRATCH/spawns.log\"\nexec \"$LOCI\" \"$@\"",
        )
    }

    /// Lines of the spawn log (none if nothing was spawned).
    pub fn spawns(&self) -> Vec<String> {
        std::fs::read_to_string(self.scratch.path().join("spawns.log"))
            .map(|t| t.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    pub fn scratch_file(&self, name: &str) -> PathBuf {
        self.scratch.path().join(name)
    }
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loci"))
}

pub fn parse(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Polls `f` until it returns Some, for at most `limit`.
pub fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a process exists (a zombie counts as gone).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

pub fn notice_ids(answer: &Value) -> Vec<String> {
    answer["notices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect()
}

pub fn state(v: &Value) -> &str {
    v["state"].as_str().unwrap()
}

pub fn assert_shape(v: &Value) {
    const STATES: [&str; 9] = [
        "unavailable",
        "unindexed",
        "busy",
        "indexing",
        "rebuilding",
        "drift",
        "syncing",
        "clean",
        "corrupt",
    ];
    assert!(STATES.contains(&state(v)), "{v}");
    assert!(v["reason"].is_string() && v["workspace"].is_string(), "{v}");
    assert!(v["notices"].is_array(), "{v}");
}

pub fn touch_source(ws: &Ws) {
    ws.write(&[(
        "src/lib.py",
        "def helper():\n    return 2\n\ndef extra():\n    pass\n",
    )]);
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}
