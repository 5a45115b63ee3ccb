//! The preflight gate's telemetry events. In a binary of its own: tracing caches each
//! event's interest process-wide, and a test on another thread that hits the same
//! callsite with no subscriber installed can cache "never" under this test's scoped
//! subscriber, dropping its events.

use crate::common;

use std::ffi::OsString;
use std::io::Write;
use std::sync::{Arc, Mutex};

use loci_supervisor::{PreflightArgs, preflight_check};

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn passed_and_failed_events_carry_the_spawner_and_argv_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let bin = common::write_script(&dir.path().join("tool"), "#!/bin/sh\n");
    let cwd = dir.path().join("good");
    std::fs::create_dir_all(&cwd).unwrap();
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let missing = dir.path().join("nope");
    let argv: Vec<OsString> = vec!["-p".into()];
    tracing::subscriber::with_default(subscriber, || {
        preflight_check(&PreflightArgs::new("memory_extract", &bin, &argv, &cwd)).unwrap();
        preflight_check(&PreflightArgs::new("memory_extract", &missing, &argv, &cwd)).unwrap_err();
    });
    let log = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let passed = log
        .lines()
        .find(|l| l.contains("preflight_passed"))
        .expect(&log);
    let failed = log
        .lines()
        .find(|l| l.contains("preflight_failed"))
        .expect(&log);
    let bin_bytes = bin.as_os_str().len() + 1 + 3;
    assert!(
        passed.contains("spawner=\"memory_extract\"") || passed.contains("spawner=memory_extract"),
        "{passed}"
    );
    assert!(
        passed.contains(&format!("argv_bytes={bin_bytes}")),
        "{passed}"
    );
    assert!(
        failed.contains("memory_extract") && failed.contains("binary_not_found"),
        "{failed}"
    );
}
