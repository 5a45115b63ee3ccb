//! A stand-in for `loci worker` so this crate's tests can drive the worker
//! protocol through the supervisor without building the whole CLI. It parses
//! the same arguments (`worker --db PATH`) and calls the
//! same function, `loci_query::run_worker`; the CLI's tests run the same
//! cases against the real `loci` binary.

use std::path::PathBuf;

fn main() {
    // SAFETY: at start-up, before any thread exists; as `loci` does.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let mut args = std::env::args_os().skip(1);
    let mut db = None;
    assert_eq!(
        args.next().as_deref(),
        Some("worker".as_ref()),
        "usage: worker --db PATH"
    );
    while let Some(a) = args.next() {
        match a.to_str() {
            Some("--db") => db = args.next().map(PathBuf::from),
            _ => panic!("unknown argument {a:?}"),
        }
    }
    let db = db.expect("--db is required");
    if loci_query::run_worker(&db).is_err() {
        std::process::exit(10);
    }
}
