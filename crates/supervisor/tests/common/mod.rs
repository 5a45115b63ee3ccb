//! Shared by the integration tests and the harness binary: `/proc` checks and
//! deadline polling (never a sleep for luck).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Live (non-zombie) processes whose process group is `pgid`, as `(pid, comm)`.
/// Zombies are dead: they hold no locks and no pipes, and are only waiting
/// for a parent (or init) to collect them.
pub fn group_members(pgid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // comm may contain spaces and parens: split after the last ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_owned();
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        // fields: state ppid pgrp session ...
        if fields.len() < 3 || fields[0] == "Z" || fields[0] == "X" {
            continue;
        }
        if fields[2].parse::<u32>().ok() == Some(pgid) {
            out.push((pid, comm));
        }
    }
    out
}

/// Polls `cond` until it holds or `timeout` passes; returns whether it held.
pub fn wait_for(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until group `pgid` has at least `n` live members (the child and its
/// grandchildren are up), panicking after 10 s.
pub fn wait_group_size(pgid: u32, n: usize) {
    assert!(
        wait_for(Duration::from_secs(10), || group_members(pgid).len() >= n),
        "group {pgid} never reached {n} members: {:?}",
        group_members(pgid)
    );
}

/// Asserts that no live process is left in group `pgid` (allowing the kernel
/// a bounded moment to finish delivering a SIGKILL).
pub fn assert_group_gone(pgid: u32) {
    assert!(
        wait_for(Duration::from_secs(5), || group_members(pgid).is_empty()),
        "processes left behind in group {pgid}: {:?}",
        group_members(pgid)
    );
}

/// The shell command that leaves a grandchild behind.
pub const GRANDCHILD_SH: &str = "sleep 1000 & sleep 1000";

/// Writes an executable script.
pub fn write_script(path: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}
