//! `loci query` on statements of few, heavy steps and deep recursion,
//! through the real binary: the deadline holds on both engines, a limit is
//! `limit_exceeded` (exit 1) naming it, and nothing crashes.

use crate::common;

use std::time::{Duration, Instant};

use common::Env;

const ENGINES: [&str; 2] = ["in-process", "worker"];

fn indexed() -> Env {
    let env = Env::new();
    env.write(&[("src/a.rs", "pub fn alpha() {}\n")]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    env
}

fn columns(n: usize, expr: &str) -> String {
    format!("SELECT {}", vec![expr; n].join(", "))
}

#[test]
fn sixteen_huge_randomblobs_fail_limit_exceeded_at_once_on_both_engines() {
    let env = indexed();
    let sql = columns(16, "length(randomblob(5e8))");
    for engine in ENGINES {
        let t0 = Instant::now();
        let (code, v) = env.json(&["query", &sql, "--timeout", "200ms", "--engine", engine]);
        let took = t0.elapsed();
        assert_eq!(
            code,
            i32::from(loci_api::ErrorKind::LimitExceeded.exit().code()),
            "{engine}: {v}"
        );
        assert_eq!(v["error"]["kind"], "limit_exceeded", "{engine}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains("SQLITE_LIMIT_LENGTH"), "{message}");
        assert!(took < Duration::from_secs(2), "{engine}: {took:?}");
    }
}

#[test]
fn many_heavy_steps_stop_within_twice_the_timeout_on_both_engines() {
    let env = indexed();
    // 40 steps of about 20-100 ms each, one instruction apiece: no progress
    // tick comes between them.
    let sql = format!(
        "SELECT {}",
        vec!["length(randomblob(16000000))"; 40].join(" + ")
    );
    for engine in ENGINES {
        let t0 = Instant::now();
        let (code, v) = env.json(&["query", &sql, "--timeout", "500ms", "--engine", engine]);
        let took = t0.elapsed();
        assert_eq!(
            code,
            i32::from(loci_api::ErrorKind::Timeout.exit().code()),
            "{engine}: {v}"
        );
        assert_eq!(v["error"]["kind"], "timeout", "{engine}: {v}");
        assert!(took < Duration::from_secs(1), "{engine}: {took:?}");
    }
}

#[test]
fn a_glob_of_20000_wildcards_is_limit_exceeded_and_crashes_no_engine() {
    let env = indexed();
    let sql =
        "SELECT printf('%.*c',50000,'a') GLOB (replace(printf('%.*c',20000,'x'),'x','*a')||'b')";
    for engine in ENGINES {
        let (code, v) = env.json(&["query", sql, "--engine", engine]);
        assert_eq!(
            code,
            i32::from(loci_api::ErrorKind::LimitExceeded.exit().code()),
            "{engine}: {v}"
        );
        assert_eq!(v["error"]["kind"], "limit_exceeded", "{engine}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("SQLITE_LIMIT_LIKE_PATTERN_LENGTH"),
            "{message}"
        );
    }
}
