//! The claude and codex runners against stand-in scripts that record their
//! argv, environment and stdin and print canned output.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use loci_supervisor::{
    AUTO_WATCH_VAR, EMPTY_MCP_CONFIG, EnvPolicy, LlmError, LlmRequest, LlmRunner, Supervisor,
};

/// A temp dir with a stand-in tool that records into the dir and prints
/// `canned`, then exits with `status`.
struct StandIn {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

const RECORDER: &str = r#"#!/bin/sh
d="$STANDIN_DIR"
for a in "$@"; do printf '%s\n' "$a" >> "$d/argv"; done
prev=""
for a in "$@"; do
  if [ "$prev" = "--mcp-config" ]; then cp "$a" "$d/mcp_seen"; printf '%s' "$a" > "$d/mcp_path"; fi
  prev="$a"
done
env -0 > "$d/env"
cfg="${CLAUDE_CONFIG_DIR:-$CODEX_HOME}"
printf '%s' "$cfg" > "$d/config_dir"
ls -A "$cfg" > "$d/config_listing"
cat > "$d/stdin"
cat "$d/canned"
cat "$d/canned_err" >&2 2>/dev/null
[ -e "$d/sleep" ] && sleep 1000
exit "$(cat "$d/status" 2>/dev/null || echo 0)"
"#;

impl StandIn {
    fn new(name: &str, canned: &[u8]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bin = common::write_script(&dir.path().join(name), RECORDER);
        std::fs::write(dir.path().join("canned"), canned).unwrap();
        StandIn { dir, bin }
    }

    fn path(&self, f: &str) -> PathBuf {
        self.dir.path().join(f)
    }

    fn read(&self, f: &str) -> Vec<u8> {
        std::fs::read(self.path(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
    }

    fn argv(&self) -> Vec<String> {
        String::from_utf8(self.read("argv"))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn env(&self) -> Vec<(String, String)> {
        self.read("env")
            .split(|&b| b == 0)
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let kv = String::from_utf8_lossy(kv);
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_owned(), v.to_owned())
            })
            .collect()
    }

    fn request(&self, prompt: impl Into<String>, cwd: &Path) -> LlmRequest {
        LlmRequest {
            env: EnvPolicy::loci_child().pin("STANDIN_DIR", self.dir.path()),
            budget: Duration::from_secs(60),
            ..LlmRequest::new(prompt, cwd)
        }
    }
}

fn claude_json(text: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "type": "result", "subtype": "success", "is_error": false,
        "result": text, "session_id": "s1", "usage": {"output_tokens": 42}
    }))
    .unwrap()
}

/// A 10 MB prompt that is not all one byte, so truncation or reordering shows.
fn big_prompt() -> String {
    (0..10_000_000u32)
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect()
}

#[test]
fn ten_mb_prompt_reaches_claude_intact_on_stdin_never_in_argv() {
    let s = StandIn::new("claude", &claude_json("extracted"));
    let cwd = tempfile::tempdir().unwrap();
    let prompt = big_prompt();
    let sup = Supervisor::new();
    let resp = LlmRunner::claude()
        .binary(&s.bin)
        .run(&sup, &s.request(prompt.clone(), cwd.path()))
        .unwrap();
    assert_eq!(resp.text, "extracted");
    assert_eq!(resp.details["usage"]["output_tokens"], 42);
    let stdin = s.read("stdin");
    assert_eq!(stdin.len(), prompt.len());
    assert!(stdin == prompt.as_bytes(), "stdin differs from the prompt");
    assert_eq!(resp.outcome.stdin_bytes_written, prompt.len() as u64);

    let argv = s.argv();
    assert_eq!(
        argv[..5],
        [
            "-p",
            "--output-format",
            "json",
            "--strict-mcp-config",
            "--mcp-config"
        ]
    );
    assert!(
        argv.iter().map(String::len).sum::<usize>() < 4096,
        "prompt leaked into argv"
    );
    // The MCP config the tool saw was the empty one, and it is gone now.
    assert_eq!(s.read("mcp_seen"), EMPTY_MCP_CONFIG.as_bytes());
    let mcp_path = PathBuf::from(String::from_utf8(s.read("mcp_path")).unwrap());
    assert!(
        !mcp_path.exists(),
        "{} outlived the run",
        mcp_path.display()
    );
    // An isolated, empty config dir, removed after the run.
    let env = s.env();
    let cfg = String::from_utf8(s.read("config_dir")).unwrap();
    assert!(env.contains(&("CLAUDE_CONFIG_DIR".into(), cfg.clone())));
    assert!(env.contains(&(AUTO_WATCH_VAR.into(), "0".into())));
    assert!(s.read("config_listing").is_empty());
    assert!(!Path::new(&cfg).exists());
}

#[test]
fn multi_megabyte_claude_result_is_parsed_whole() {
    let text: String = "entity ".repeat(1_000_000); // 7 MB, far past 64 KiB
    let s = StandIn::new("claude", &claude_json(&text));
    let cwd = tempfile::tempdir().unwrap();
    let resp = LlmRunner::claude()
        .binary(&s.bin)
        .run(&Supervisor::new(), &s.request("p", cwd.path()))
        .unwrap();
    assert_eq!(resp.text.len(), text.len());
    assert!(resp.text == text);
    // The outcome's capture stays bounded; the parser saw everything.
    assert!(resp.outcome.stdout.truncated);
    assert!(resp.outcome.stdout.total_bytes > 7_000_000);
}

fn codex_events(answer: &str, filler_events: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut push = |v: serde_json::Value| {
        out.extend(serde_json::to_vec(&v).unwrap());
        out.push(b'\n');
    };
    push(serde_json::json!({"type": "thread.started", "thread_id": "th-1"}));
    for i in 0..filler_events {
        push(
            serde_json::json!({"type": "item.completed", "item": {"type": "reasoning", "text": format!("step {i}")}}),
        );
    }
    push(
        serde_json::json!({"type": "item.completed", "item": {"type": "agent_message", "text": answer}}),
    );
    push(
        serde_json::json!({"type": "turn.completed", "usage": {"input_tokens": 7, "output_tokens": 9}}),
    );
    out
}

#[test]
fn codex_streams_multi_megabyte_jsonl_and_reads_the_prompt_from_stdin() {
    let answer: String = "relation ".repeat(400_000); // 3.6 MB in one event line
    let s = StandIn::new("codex", &codex_events(&answer, 50_000));
    let cwd = tempfile::tempdir().unwrap();
    let prompt = big_prompt();
    let resp = LlmRunner::codex()
        .binary(&s.bin)
        .run(&Supervisor::new(), &s.request(prompt.clone(), cwd.path()))
        .unwrap();
    assert!(resp.text == answer);
    assert_eq!(resp.details["usage"]["output_tokens"], 9);
    assert_eq!(resp.details["thread_id"], "th-1");
    assert_eq!(resp.details["events"], 50_003);
    assert!(s.read("stdin") == prompt.as_bytes());
    let argv = s.argv();
    assert_eq!(argv.first().map(String::as_str), Some("exec"));
    assert!(argv.contains(&"--json".to_owned()));
    assert_eq!(argv.last().map(String::as_str), Some("-"));
    let cfg = String::from_utf8(s.read("config_dir")).unwrap();
    assert!(s.env().contains(&("CODEX_HOME".into(), cfg.clone())));
    assert!(s.read("config_listing").is_empty());
    assert!(!Path::new(&cfg).exists());
}

#[test]
fn claude_is_error_result_is_a_tool_error() {
    let body = serde_json::to_vec(&serde_json::json!({
        "type": "result", "subtype": "success", "is_error": true, "result": "Credit balance is too low"
    }))
    .unwrap();
    let s = StandIn::new("claude", &body);
    std::fs::write(s.path("status"), "1").unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let err = LlmRunner::claude()
        .binary(&s.bin)
        .run(&Supervisor::new(), &s.request("p", cwd.path()))
        .unwrap_err();
    assert_eq!(err.kind(), "llm_tool_error");
    assert!(err.to_string().contains("Credit balance"), "{err}");
}

#[test]
fn failing_tool_without_output_reports_exit_and_stderr() {
    let s = StandIn::new("codex", b"");
    std::fs::write(s.path("status"), "3").unwrap();
    std::fs::write(s.path("canned_err"), "fatal: not logged in\n").unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let err = LlmRunner::codex()
        .binary(&s.bin)
        .run(&Supervisor::new(), &s.request("p", cwd.path()))
        .unwrap_err();
    match &err {
        LlmError::Failed { exit, stderr, .. } => {
            assert_eq!(exit.shell_status(), Some(3));
            assert!(stderr.contains("not logged in"));
        }
        e => panic!("{e}"),
    }
    assert_eq!(err.kind(), "llm_failed");
}

#[test]
fn output_over_the_limit_stops_the_run() {
    let s = StandIn::new("claude", &claude_json(&"x".repeat(2_000_000)));
    std::fs::write(s.path("sleep"), "").unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let req = LlmRequest {
        max_output_bytes: 1_000_000,
        ..s.request("p", cwd.path())
    };
    let err = LlmRunner::claude()
        .binary(&s.bin)
        .run(&Supervisor::new(), &req)
        .unwrap_err();
    assert_eq!(err.kind(), "llm_output_too_large");
}

#[test]
fn budget_expiry_is_a_timeout() {
    let s = StandIn::new("claude", b"");
    std::fs::write(s.path("sleep"), "").unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let req = LlmRequest {
        budget: Duration::from_millis(300),
        kill_grace: Duration::from_millis(200),
        ..s.request("p", cwd.path())
    };
    let err = LlmRunner::claude()
        .binary(&s.bin)
        .run(&Supervisor::new(), &req)
        .unwrap_err();
    assert_eq!(err.kind(), "llm_timed_out");
}

#[test]
fn preflight_failure_stops_the_spawn_with_exit_code_16() {
    let s = StandIn::new("claude", &claude_json("never"));
    // An invalid .mcp.json above the child's working directory.
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join(".mcp.json"), "{").unwrap();
    let cwd = root.path().join("repo/sub");
    std::fs::create_dir_all(&cwd).unwrap();
    let err = LlmRunner::claude()
        .binary(&s.bin)
        .run(&Supervisor::new(), &s.request("p", &cwd))
        .unwrap_err();
    assert_eq!(err.kind(), "walk_up_mcp_json_invalid");
    assert!(!s.path("argv").exists(), "the tool must not have run");

    let err = LlmRunner::claude()
        .binary(s.dir.path().join("missing-claude"))
        .run(&Supervisor::new(), &s.request("p", root.path()))
        .unwrap_err();
    assert_eq!(err.kind(), "binary_not_found");
}

#[test]
fn a_non_empty_configured_claude_dir_is_refused_by_preflight() {
    let s = StandIn::new("claude", &claude_json("never"));
    let cfg = tempfile::tempdir().unwrap();
    std::fs::write(cfg.path().join("settings.json"), "{}").unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let err = LlmRunner::claude()
        .binary(&s.bin)
        .config_dir(cfg.path())
        .run(&Supervisor::new(), &s.request("p", cwd.path()))
        .unwrap_err();
    assert_eq!(err.kind(), "claude_config_dir_not_empty");
}
