//! A test that needs a process of its own — its environment set before any thread
//! starts, process-wide hooks installed once — runs this binary again for itself
//! alone, with that environment, and passes when that run passes.

use std::ffi::OsStr;
use std::process::Command;

/// Set in the process a test runs alone in: the test's name.
const ALONE_VAR: &str = "LOCI_MCP_TEST_ALONE";

/// The libtest name of `test` in the module `module` (`module_path!()`).
fn name(module: &str, test: &str) -> String {
    let module = module.split_once("::").map_or("", |(_, m)| m);
    format!("{module}::{test}")
}

/// Whether this process is the one that `test` (of `module`) runs alone in.
pub fn here(module: &str, test: &str) -> bool {
    std::env::var_os(ALONE_VAR).is_some_and(|v| v == OsStr::new(&name(module, test)))
}

/// Runs `test` (of `module`) alone in a new process of this binary with `env` set,
/// and fails unless it ran and passed.
pub fn run(module: &str, test: &str, env: &[(&str, &OsStr)]) {
    let name = name(module, test);
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args([name.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(ALONE_VAR, &name)
        .envs(env.iter().copied())
        .output()
        .expect("running the test alone");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} alone failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}
