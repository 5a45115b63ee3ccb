//! `LOCI_SKIP_PREFLIGHT=1` skips the gate and logs `preflight_skipped`. In its
//! own test binary, because it sets a process-wide variable.

use std::ffi::OsString;
use std::path::Path;

use loci_supervisor::{PreflightArgs, SKIP_VAR, preflight_check};

#[test]
fn skip_variable_bypasses_the_gate_with_a_warning() {
    let argv: Vec<OsString> = vec!["-p".into()];
    let args = PreflightArgs::new(
        "memory_extract",
        Path::new("/nonexistent/claude"),
        &argv,
        Path::new("/"),
    );
    assert_eq!(
        preflight_check(&args).unwrap_err().kind(),
        "binary_not_found"
    );

    // Other values do not skip.
    // SAFETY: this binary has a single test, so no other thread reads the
    // environment concurrently.
    unsafe { std::env::set_var(SKIP_VAR, "yes") };
    assert!(preflight_check(&args).is_err());

    unsafe { std::env::set_var(SKIP_VAR, "1") };
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let sink = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || Writer(sink.clone()))
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || preflight_check(&args)).unwrap();
    let log = String::from_utf8(log.lock().unwrap().clone()).unwrap();
    assert!(
        log.contains("WARN") && log.contains("preflight_skipped"),
        "{log}"
    );
    assert!(
        log.contains("memory_extract") && log.contains("argv_bytes="),
        "{log}"
    );
}

struct Writer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Writer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
