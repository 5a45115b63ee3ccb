//! How `loci serve` runs graph reads: on a bounded pool, a long read answered in full,
//! short ones and `/health` answering beside long ones, and a read past its deadline
//! answered `timeout` naming the configured deadline.

use crate::common;
use crate::serve_support;

use common::Env;
use serde_json::{Value, json};
use serve_support::*;

/// Levels of the layered call graph, and functions per level: every function calls
/// every function of the next level, so the callers of the last level reach them all.
const LEVELS: usize = 30;
const WIDTH: usize = 30;

/// A Python tree whose `callers --depth 30` walks ~900 functions and ~26,000 edges:
/// milliseconds even in a release build.
fn layered() -> Env {
    let env = Env::new();
    let files: Vec<(String, String)> = (0..LEVELS)
        .map(|level| {
            let mut text = String::new();
            if level + 1 < LEVELS {
                text.push_str(&format!("from l{} import *\n", level + 1));
            }
            for f in 0..WIDTH {
                text.push_str(&format!("def f_{level}_{f}():\n"));
                if level + 1 < LEVELS {
                    for g in 0..WIDTH {
                        text.push_str(&format!("    f_{}_{g}()\n", level + 1));
                    }
                } else {
                    text.push_str("    return 1\n");
                }
            }
            (format!("l{level}.py"), text)
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    env.write(&refs);
    let (code, out) = env.json(&["index"]);
    assert_eq!(code, 0, "{out}");
    env
}

fn deep_callers() -> Value {
    json!({"target": format!("f_{}_0", LEVELS - 1), "depth": 32, "limit": 1000})
}

#[test]
fn a_long_read_answers_in_full_as_the_cli_does() {
    let env = layered();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let path = format!("/api/v1/workspaces/{id}/callers");
    // Twice: the first read opens the workspace, the second uses its pooled handle.
    for _ in 0..2 {
        let (status, text) = call(&server, "post", &path, Some(&deep_callers()), bearer());
        assert_eq!(status, 200, "{text}");
        let http: Value = serde_json::from_str(&text).unwrap();
        let (code, cli) = env.json(&[
            "callers",
            &format!("f_{}_0", LEVELS - 1),
            "--depth",
            "32",
            "--limit",
            "1000",
        ]);
        assert_eq!(code, 0, "{cli}");
        let reached = http["reached"].as_array().expect("reached");
        assert_eq!(reached.len(), (LEVELS - 1) * WIDTH, "{text:.400}");
        assert_eq!(http["reached"], cli["reached"]);
    }
}

#[test]
fn short_reads_keep_answering_while_long_ones_run() {
    let env = layered();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let addr = server.addr.clone();
    let long: Vec<_> = (0..4)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let url = format!("http://{addr}/api/v1/workspaces/{id}/callers");
                let resp = agent()
                    .post(&url)
                    .header("Authorization", "Bearer test-key-0123456789")
                    .send_json(deep_callers())
                    .unwrap();
                resp.status().as_u16()
            })
        })
        .collect();
    // While the long reads hold the pool, short reads and /health still answer.
    for _ in 0..20 {
        let (status, text) = call(
            &server,
            "post",
            &format!("/api/v1/workspaces/{id}/find"),
            Some(&json!({"pattern": "f_3_*", "limit": 5})),
            bearer(),
        );
        assert_eq!(status, 200, "{text}");
        let found: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(found["symbols"].as_array().map(Vec::len), Some(5), "{text}");
        let (status, _) = call(&server, "get", "/health", None, None);
        assert_eq!(status, 200);
    }
    for t in long {
        assert_eq!(t.join().unwrap(), 200);
    }
}

#[test]
fn a_read_past_its_deadline_is_a_timeout_naming_the_configured_deadline() {
    let env = layered();
    // 3 ms: a tenth of what the deep walk takes in a release build.
    let server = start(&env, &[], &[("LOCI_LIMITS_READ_DEADLINE_MS", "3")]);
    let id = workspace_id(&server);
    let path = format!("/api/v1/workspaces/{id}/callers");
    for _ in 0..2 {
        let (status, text) = call(&server, "post", &path, Some(&deep_callers()), bearer());
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(body["error"]["kind"], "timeout", "{status} {text:.300}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("(3 ms)"), "{text}");
    }
}
