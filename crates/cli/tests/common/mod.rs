//! Running the real `loci` binary in tests, with its registry in a temp dir.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// A temp workspace plus a private LOCI_HOME, removed on drop.
pub struct Env {
    pub home: tempfile::TempDir,
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Runs real git in the workspace (a new repository's branch is `main`); a
    /// failure fails the test.
    pub fn git(&self, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(["-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(self.root())
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    pub fn write(&self, files: &[(&str, &str)]) {
        for (rel, content) in files {
            let path = self.root().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
    }

    /// A `loci` command with this env's LOCI_HOME, run from the workspace.
    pub fn cmd(&self) -> std::process::Command {
        self.cmd_of(&bin())
    }

    /// [`Env::cmd`] of another `loci` executable (a copy, say).
    pub fn cmd_of(&self, program: &Path) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        cmd.env("LOCI_HOME", self.home.path())
            .current_dir(self.root())
            .env_remove("LOCI_LOG");
        cmd
    }

    /// Runs `loci ARGS --json`, returning exit code and parsed stdout.
    pub fn json(&self, args: &[&str]) -> (i32, serde_json::Value) {
        let out = self.cmd().args(args).arg("--json").output().unwrap();
        (out.status.code().unwrap_or(-1), parse(&out))
    }
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loci"))
}

pub fn parse(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Polls `cond` until it holds, failing with `what` after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let until = Instant::now() + limit;
    while !cond() {
        assert!(
            Instant::now() < until,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
