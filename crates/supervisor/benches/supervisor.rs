//! Targets (issue 3): `preflight_check` ≤ 100 µs median on a typical argv;
//! supervisor spawn-to-exit of `true` ≤ 1 ms over a bare
//! `std::process::Command` (measured in the same run, as a ratio).

use std::ffi::OsString;
use std::hint::black_box;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use loci_supervisor::{
    PreflightArgs, SpawnSpec, Supervisor, preflight_check, write_empty_mcp_config_tempfile,
};

fn preflight(c: &mut Criterion) {
    let mcp = write_empty_mcp_config_tempfile().unwrap();
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path().join("workspace/crates/memory");
    std::fs::create_dir_all(&cwd).unwrap();
    let config = tempfile::tempdir().unwrap();
    let binary = std::path::PathBuf::from("/bin/sh");
    // What the claude runner passes: its own flags, no prompt.
    let argv: Vec<OsString> = [
        "-p",
        "--output-format",
        "json",
        "--strict-mcp-config",
        "--mcp-config",
        mcp.path().to_str().unwrap(),
        "--model",
        "sonnet",
    ]
    .into_iter()
    .map(Into::into)
    .collect();
    let args = PreflightArgs {
        expected_output_bytes: 65_536,
        output_cap_bytes: 256 << 20,
        claude_config_dir: Some(config.path()),
        ..PreflightArgs::new("memory_extract", &binary, &argv, &cwd)
    };
    preflight_check(&args).expect("the bench case passes");
    c.bench_function("preflight_check/typical_claude_argv", |b| {
        b.iter(|| preflight_check(black_box(&args)).unwrap())
    });
}

fn spawn_to_exit(c: &mut Criterion) {
    let mut g = c.benchmark_group("spawn_to_exit_true");
    g.sample_size(200).measurement_time(Duration::from_secs(8));
    g.bench_function("std_command_status", |b| {
        b.iter(|| Command::new("true").stdin(Stdio::null()).status().unwrap())
    });
    g.bench_function("std_command_output", |b| {
        b.iter(|| Command::new("true").stdin(Stdio::null()).output().unwrap())
    });
    let sup = Supervisor::new();
    g.bench_function("supervisor_run", |b| {
        b.iter(|| {
            let out = sup.run(SpawnSpec::new("true")).unwrap();
            assert!(out.success());
            out
        })
    });
    g.finish();
}

criterion_group!(benches, preflight, spawn_to_exit);
criterion_main!(benches);
