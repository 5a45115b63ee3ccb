//! LLM extraction through the real binary with stand-in `claude` and `codex` programs
//! (a Python script that records exactly what loci sent it — argv, the stdin prompt,
//! its environment, its working directory, whether the MCP config file exists while it
//! runs — then answers as told: good JSON, prose, the wrong schema, more than 64 KiB, a
//! hang past the budget, a non-zero exit). Every preflight guard refuses before any
//! spawn with its own name and exit 16; the memory survives every failure marked
//! `extraction: failed`, and `memory enrich` clears the mark.

use crate::common;

use std::path::{Path, PathBuf};

use common::Env;
use loci_api::ErrorKind;
use serde_json::Value;

const STAND_IN: &str = r#"#!/usr/bin/env python3
import json, os, sys, time
REC = __REC__
tool = os.path.basename(sys.argv[0])
mode = open(os.path.join(REC, "mode")).read().strip()
argv = sys.argv[1:]
prompt = sys.stdin.read()
mcp = argv[argv.index("--mcp-config") + 1] if "--mcp-config" in argv else None
cfg = os.environ.get("CLAUDE_CONFIG_DIR" if tool == "claude" else "CODEX_HOME")
rec = {
    "tool": tool, "argv": argv, "stdin": prompt, "env": dict(os.environ), "cwd": os.getcwd(),
    "mcp_config": mcp, "mcp_config_exists": bool(mcp and os.path.isfile(mcp)),
    "mcp_config_text": open(mcp).read() if mcp and os.path.isfile(mcp) else None,
    "config_dir": cfg,
    "config_dir_empty": bool(cfg and os.path.isdir(cfg) and not os.listdir(cfg)),
}
n = len([f for f in os.listdir(REC) if f.startswith("call-")])
with open(os.path.join(REC, "call-%d.json" % n), "w") as f:
    json.dump(rec, f)

def answer(text):
    if tool == "claude":
        print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                          "result": text, "usage": {"input_tokens": 10, "output_tokens": 5}}))
    else:
        print(json.dumps({"type": "thread.started", "thread_id": "t1"}))
        print(json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": text}}))
        print(json.dumps({"type": "turn.completed", "usage": {"input_tokens": 10}}))

good = {"entities": [{"name": "Ledger", "type": "service"}, {"name": "Billing", "type": "service"}],
        "relationships": [{"source": "Ledger", "target": "Billing", "relation": "writes_to", "weight": 0.8}]}
if mode == "good":
    answer(json.dumps(good))
elif mode == "fenced":
    answer("```json\n" + json.dumps(good) + "\n```")
elif mode == "prose":
    answer("Sure! The note mentions Ledger and Billing.")
elif mode == "schema":
    answer(json.dumps({"entities": [{"name": "Ledger", "kind": "service"}]}))
elif mode == "unknown_end":
    answer(json.dumps({"entities": [{"name": "Ledger", "type": "service"}],
                       "relationships": [{"source": "Ledger", "target": "Nowhere", "relation": "uses"}]}))
elif mode == "big":
    ents = [{"name": "Entity%05d" % i, "type": "concept", "aliases": ["alias-%05d-%s" % (i, "x" * 24)]}
            for i in range(1500)]
    answer(json.dumps({"entities": ents, "relationships": []}))
elif mode == "hang":
    time.sleep(60)
elif mode == "fail":
    sys.stderr.write("stand-in: authentication failed\n")
    sys.exit(3)
"#;

/// A workspace, a private config home and a bin dir holding the stand-ins.
struct Llm {
    env: Env,
    bin: tempfile::TempDir,
    rec: tempfile::TempDir,
    xdg: tempfile::TempDir,
}

impl Llm {
    fn new() -> Llm {
        let llm = Llm {
            env: Env::new(),
            bin: tempfile::tempdir().unwrap(),
            rec: tempfile::tempdir().unwrap(),
            xdg: tempfile::tempdir().unwrap(),
        };
        let script = STAND_IN.replace(
            "__REC__",
            &format!("{:?}", llm.rec.path().display().to_string()),
        );
        for tool in ["claude", "codex"] {
            let p = llm.bin.path().join(tool);
            std::fs::write(&p, &script).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        llm.mode("good");
        llm.config("");
        llm
    }

    fn mode(&self, mode: &str) {
        std::fs::write(self.rec.path().join("mode"), mode).unwrap();
    }

    /// Writes the user config's `[llm]` section.
    fn config(&self, llm: &str) {
        let dir = self.xdg.path().join("loci");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), format!("[llm]\n{llm}\n")).unwrap();
    }

    fn cmd(&self) -> std::process::Command {
        let mut c = self.env.cmd();
        let path = format!(
            "{}:{}",
            self.bin.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        c.env("PATH", path)
            .env("XDG_CONFIG_HOME", self.xdg.path())
            .env("LOCI_API_KEY", "secret-api-key")
            .env("LOCI_TEST_SECRET", "do-not-pass")
            .env_remove("LOCI_SKIP_PREFLIGHT")
            .env_remove("CLAUDE_CONFIG_DIR");
        c
    }

    fn run(&self, args: &[&str]) -> (i32, Value, String) {
        let out = self.cmd().args(args).arg("--json").output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            common::parse(&out),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn remember(&self, name: &str, extra: &[&str]) -> (i32, Value, String) {
        let mut args = vec![
            "remember",
            "--name",
            name,
            "-d",
            "ledger notes",
            "The Ledger service writes every charge to Billing before it answers.",
            "--extract",
            "llm",
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    /// What the stand-in recorded, one per call.
    fn calls(&self) -> Vec<Value> {
        let mut calls = Vec::new();
        for n in 0.. {
            let p = self.rec.path().join(format!("call-{n}.json"));
            let Ok(text) = std::fs::read_to_string(&p) else {
                break;
            };
            calls.push(serde_json::from_str(&text).unwrap());
        }
        calls
    }

    fn read(&self, name: &str) -> Value {
        let (code, out, err) = self.run(&["memory", "read", name]);
        assert_eq!(code, 0, "{out} {err}");
        out
    }
}

fn exit(kind: ErrorKind) -> i32 {
    i32::from(kind.exit().code())
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap()
}

/// A failed extraction: the memory is kept, body and all, marked failed with `kind`.
fn assert_kept_and_failed(llm: &Llm, name: &str, kind: &str) {
    let m = llm.read(name);
    assert!(
        m["body"].as_str().unwrap().contains("Ledger service"),
        "{m}"
    );
    assert_eq!(m["extraction"]["state"], "failed", "{m}");
    assert_eq!(m["extraction"]["kind"], kind, "{m}");
    assert!(
        !m["extraction"]["reason"].as_str().unwrap().is_empty(),
        "{m}"
    );
    assert_eq!(m["entities"].as_array().unwrap().len(), 0, "{m}");
}

#[test]
fn claude_extraction_sends_the_prompt_on_stdin_and_attaches_what_it_answers() {
    let llm = Llm::new();
    let (code, out, err) = llm.remember("ledger", &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["extraction"]["state"], "done", "{out}");
    assert_eq!(out["extraction"]["tool"], "claude");
    assert_eq!(out["extraction"]["entities"], 2);
    assert_eq!(out["extraction"]["relationships"], 1);
    assert_eq!(out["entities"], serde_json::json!(["Billing", "Ledger"]));
    // create, then enrich: the history records the enrichment.
    assert_eq!(out["version"], 2);
    let (_, h, _) = llm.run(&["memory", "history", "ledger"]);
    let ops: Vec<&str> = h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["op"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["create", "enrich"]);

    let calls = llm.calls();
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    let argv: Vec<&str> = c["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        &argv[..5],
        [
            "-p",
            "--output-format",
            "json",
            "--strict-mcp-config",
            "--mcp-config"
        ]
    );
    // The prompt travels on stdin, never in argv.
    let prompt = c["stdin"].as_str().unwrap();
    assert!(
        prompt.contains("The Ledger service writes every charge"),
        "{prompt}"
    );
    assert!(prompt.contains("\"entities\""), "{prompt}");
    assert!(
        !argv.iter().any(|a| a.contains("Ledger service")),
        "{argv:?}"
    );
    // The empty MCP config existed during the run and is gone after.
    assert_eq!(c["mcp_config_exists"], true);
    assert_eq!(c["mcp_config_text"], r#"{"mcpServers":{}}"#);
    assert!(!Path::new(c["mcp_config"].as_str().unwrap()).exists());
    // An isolated, empty config dir, removed after.
    assert_eq!(c["config_dir_empty"], true, "{c}");
    assert!(!Path::new(c["config_dir"].as_str().unwrap()).exists());
    // The workspace root is its cwd; secrets stay behind.
    assert_eq!(
        canonical(Path::new(c["cwd"].as_str().unwrap())),
        canonical(llm.env.root())
    );
    let env = c["env"].as_object().unwrap();
    assert!(env.contains_key("PATH"));
    assert!(!env.contains_key("LOCI_API_KEY"), "{env:?}");
    assert!(!env.contains_key("LOCI_TEST_SECRET"), "{env:?}");
    assert_eq!(env["LOCI_AUTO_WATCH"], "0");
}

#[test]
fn codex_extraction_reads_the_prompt_from_stdin_and_parses_its_event_stream() {
    let llm = Llm::new();
    llm.mode("fenced");
    let (code, out, err) = llm.remember("ledger", &["--llm", "codex"]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["extraction"]["tool"], "codex");
    assert_eq!(out["extraction"]["entities"], 2);
    let c = &llm.calls()[0];
    let argv: Vec<&str> = c["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(argv, ["exec", "--json", "--skip-git-repo-check", "-"]);
    assert!(c["stdin"].as_str().unwrap().contains("Ledger service"));
    assert_eq!(c["config_dir_empty"], true, "{c}");
}

#[test]
fn an_answer_over_64_kib_is_parsed_whole() {
    let llm = Llm::new();
    llm.mode("big");
    let (code, out, err) = llm.remember("big", &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["extraction"]["entities"], 1500, "{}", out["extraction"]);
    assert_eq!(out["entities"].as_array().unwrap().len(), 1500);
}

#[test]
fn bad_answers_keep_the_memory_marked_failed_and_exit_non_zero() {
    for (mode, kind, reason) in [
        ("prose", ErrorKind::ExtractionFailed, "invalid_output"),
        ("schema", ErrorKind::ExtractionFailed, "invalid_output"),
        ("unknown_end", ErrorKind::ExtractionFailed, "invalid_output"),
        ("fail", ErrorKind::ExtractionFailed, "llm_failed"),
    ] {
        let llm = Llm::new();
        llm.mode(mode);
        let (code, out, err) = llm.remember("ledger", &[]);
        assert_eq!(code, exit(kind), "{mode}: {out} {err}");
        assert_eq!(out["error"]["kind"], kind.name(), "{mode}: {out}");
        assert_eq!(out["error"]["detail"]["reason"], reason, "{mode}: {out}");
        assert_eq!(
            out["error"]["detail"]["memory"]["stored"], true,
            "{mode}: {out}"
        );
        assert_eq!(llm.calls().len(), 1, "{mode}");
        assert_kept_and_failed(&llm, "ledger", reason);
    }
}

#[test]
fn a_hang_past_the_budget_is_killed_and_the_memory_kept() {
    let llm = Llm::new();
    llm.mode("hang");
    llm.config("timeoutMs = 1500");
    let started = std::time::Instant::now();
    let (code, out, err) = llm.remember("ledger", &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(code, exit(ErrorKind::LimitExceeded), "{out} {err}");
    assert_eq!(out["error"]["detail"]["reason"], "llm_timed_out", "{out}");
    assert_kept_and_failed(&llm, "ledger", "llm_timed_out");
}

#[test]
fn a_failed_extraction_shows_in_list_recall_and_stats_and_enrich_clears_it() {
    let llm = Llm::new();
    llm.mode("fail");
    let (code, _, _) = llm.remember("ledger", &[]);
    assert_ne!(code, 0);

    let (_, list, _) = llm.run(&["memory", "list"]);
    assert_eq!(
        list["memories"][0]["extraction"]["state"], "failed",
        "{list}"
    );
    let (_, hits, _) = llm.run(&["recall", "ledger", "charge"]);
    assert_eq!(hits["hits"][0]["extraction"]["state"], "failed", "{hits}");
    let (_, stats, _) = llm.run(&["memory", "stats"]);
    assert_eq!(stats["extraction_failed"], 1, "{stats}");

    llm.mode("good");
    let (code, out, err) = llm.run(&["memory", "enrich", "ledger"]);
    assert_eq!(code, 0, "{out} {err}");
    assert!(err.contains("estimate: 1 claude calls"), "{err}");
    assert_eq!(out["done"], 1, "{out}");
    assert_eq!(out["results"][0]["entities"], 2);
    let m = llm.read("ledger");
    assert_eq!(m["extraction"]["state"], "done", "{m}");
    assert!(m["extraction"].get("reason").is_none(), "{m}");
    let (_, stats, _) = llm.run(&["memory", "stats"]);
    assert_eq!(stats["extraction_failed"], 0, "{stats}");
    let (_, h, _) = llm.run(&["memory", "history", "ledger"]);
    assert_eq!(h["versions"][1]["op"], "enrich", "{h}");
}

#[test]
fn enrich_all_estimates_first_and_needs_yes_above_the_threshold() {
    let llm = Llm::new();
    for name in ["a", "b", "c"] {
        let (code, out, _) = llm.run(&["remember", "--name", name, "Ledger writes to Billing."]);
        assert_eq!(code, 0, "{out}");
    }
    llm.config("confirmTokens = 10");
    // Non-interactive without --yes: refused before any spawn, the estimate in detail.
    let (code, out, err) = llm.run(&["memory", "enrich", "--all"]);
    assert_eq!(code, exit(ErrorKind::ConsentRequired), "{out} {err}");
    assert_eq!(out["error"]["detail"]["calls"], 3, "{out}");
    assert!(
        out["error"]["detail"]["tokens"].as_u64().unwrap() > 10,
        "{out}"
    );
    assert!(err.contains("estimate: 3 claude calls"), "{err}");
    assert_eq!(llm.calls().len(), 0);

    // Over llm.maxCalls: refused before any spawn.
    llm.config("confirmTokens = 10\nmaxCalls = 2");
    let (code, out, _) = llm.run(&["memory", "enrich", "--all", "--yes"]);
    assert_eq!(code, exit(ErrorKind::LimitExceeded), "{out}");
    assert_eq!(llm.calls().len(), 0);

    llm.config("confirmTokens = 10");
    let (code, out, err) = llm.run(&["memory", "enrich", "--all", "--yes"]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["done"], 3, "{out}");
    assert_eq!(llm.calls().len(), 3);
    // Done memories are not in the next --all.
    let (code, out, _) = llm.run(&["memory", "enrich", "--all", "--yes"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["estimate"]["calls"], 0, "{out}");
}

/// One failing guard per row: the config (or workspace file) that trips it and its name.
#[test]
fn each_preflight_guard_refuses_before_any_spawn_with_exit_16() {
    let arg_max: usize = {
        let out = std::process::Command::new("getconf")
            .arg("ARG_MAX")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    let big_args = {
        let token = "a".repeat(100 * 1024);
        vec![token; arg_max / (100 * 1024) + 2].join(" ")
    };
    let full = tempfile::tempdir().unwrap();
    std::fs::write(full.path().join("settings.json"), "{}").unwrap();
    let cases: Vec<(&str, String, Option<&str>)> = vec![
        ("argv_too_large", format!("args = \"{big_args}\""), None),
        (
            "argument_too_large",
            format!("args = \"{}\"", "b".repeat(200 * 1024)),
            None,
        ),
        (
            "binary_not_found",
            "claude = \"/nonexistent/claude\"".into(),
            None,
        ),
        ("output_cap_too_small", "maxOutputBytes = 100".into(), None),
        (
            "mcp_config_inline_json",
            "args = \"--mcp-config {}\"".into(),
            None,
        ),
        (
            "mcp_config_path_missing",
            "args = \"--mcp-config /nonexistent/mcp.json\"".into(),
            None,
        ),
        ("walk_up_mcp_json_invalid", String::new(), Some("{not json")),
        (
            "claude_config_dir_not_empty",
            format!("configDir = {:?}", full.path().display().to_string()),
            None,
        ),
    ];
    for (guard, config, mcp_json) in cases {
        let llm = Llm::new();
        llm.config(&config);
        if let Some(text) = mcp_json {
            llm.env.write(&[(".mcp.json", text)]);
        }
        let (code, out, err) = llm.remember("ledger", &[]);
        assert_eq!(code, exit(ErrorKind::Preflight), "{guard}: {out} {err}");
        assert_eq!(code, 16, "{guard}");
        assert_eq!(out["error"]["kind"], "preflight", "{guard}: {out}");
        assert_eq!(out["error"]["detail"]["guard"], guard, "{guard}: {out}");
        assert!(err.contains("preflight_failed"), "{guard}: {err}");
        assert_eq!(llm.calls().len(), 0, "{guard}: the stand-in ran");
        assert_kept_and_failed(&llm, "ledger", guard);

        // enrich runs the gate too.
        let (code, out, _) = llm.run(&["memory", "enrich", "ledger"]);
        assert_eq!(code, 16, "{guard}: {out}");
        assert_eq!(out["error"]["detail"]["guard"], guard, "{guard}: {out}");
        assert_eq!(llm.calls().len(), 0, "{guard}: the stand-in ran on enrich");
    }
}

#[test]
fn the_preflight_opt_out_warns_and_spawns() {
    let llm = Llm::new();
    llm.env.write(&[(".mcp.json", "{not json")]);
    let out = llm
        .cmd()
        .env("LOCI_SKIP_PREFLIGHT", "1")
        .args([
            "remember",
            "--name",
            "x",
            "Ledger writes to Billing.",
            "--extract",
            "llm",
            "--json",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("preflight_skipped"), "{err}");
    assert_eq!(llm.calls().len(), 1);
}

#[test]
fn a_passed_preflight_is_a_tracing_event() {
    let llm = Llm::new();
    let out = llm
        .cmd()
        .env("LOCI_LOG", "info")
        .args([
            "remember",
            "--name",
            "x",
            "Ledger writes to Billing.",
            "--extract",
            "llm",
            "--json",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("preflight_passed"), "{err}");
    assert!(err.contains("extraction_done"), "{err}");
}

#[test]
fn an_unknown_extract_mode_or_tool_is_refused_before_storing() {
    let llm = Llm::new();
    let (code, out, _) = llm.run(&["remember", "--name", "x", "body", "--extract", "magic"]);
    assert_eq!(code, exit(ErrorKind::Usage), "{out}");
    let (code, out, _) = llm.run(&[
        "remember",
        "--name",
        "x",
        "body",
        "--extract",
        "llm",
        "--llm",
        "gpt",
    ]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{out}");
    assert!(out["error"]["message"].as_str().unwrap().contains("`gpt`"));
    let (code, _, _) = llm.run(&["memory", "read", "x"]);
    assert_eq!(code, exit(ErrorKind::NotFound));
}

/// Runs loci with stdin and stderr on a real pseudo-terminal (python3's `pty`), stdout
/// on a pipe; waits for the `[y/N]` prompt (deadline 60 s), answers `answer`, and
/// returns the exit code, stdout (JSON) and everything the terminal showed.
const PTY_DRIVER: &str = r#"
import json, os, select, subprocess, sys, time
answer, argv = sys.argv[1], sys.argv[2:]
master, slave = os.openpty()
p = subprocess.Popen(argv, stdin=slave, stderr=slave, stdout=subprocess.PIPE)
os.close(slave)
seen, deadline = b"", time.time() + 60
while b"[y/N]" not in seen:
    left = deadline - time.time()
    r = select.select([master], [], [], max(0, left))[0] if left > 0 else []
    if not r:
        p.kill()
        sys.exit("no [y/N] prompt within 60 s; the terminal showed: %r" % seen)
    try:
        chunk = os.read(master, 4096)
    except OSError:
        chunk = b""
    if not chunk:
        sys.exit("loci closed the terminal before prompting: %r" % seen)
    seen += chunk
os.write(master, (answer + "\n").encode())
out = p.stdout.read()
code = p.wait()
while True:
    try:
        r = select.select([master], [], [], 0)[0]
        chunk = os.read(master, 4096) if r else b""
    except OSError:
        chunk = b""
    if not chunk:
        break
    seen += chunk
print(json.dumps({"code": code, "stdout": out.decode(), "terminal": seen.decode(errors="replace")}))
"#;

impl Llm {
    /// `loci ARGS --json` on a pseudo-terminal, answering the consent prompt.
    fn run_on_terminal(&self, answer: &str, args: &[&str]) -> (i32, Value, String) {
        let c = self.cmd();
        let loci = c.get_program().to_owned();
        let mut driver = std::process::Command::new("python3");
        driver
            .arg("-c")
            .arg(PTY_DRIVER)
            .arg(answer)
            .arg(loci)
            .args(args)
            .arg("--json");
        // The same environment and directory as `cmd()` gives loci.
        for (k, v) in c.get_envs() {
            match v {
                Some(v) => driver.env(k, v),
                None => driver.env_remove(k),
            };
        }
        if let Some(dir) = c.get_current_dir() {
            driver.current_dir(dir);
        }
        let out = driver.output().unwrap();
        assert!(
            out.status.success(),
            "the pty driver failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        let stdout: Value = serde_json::from_str(r["stdout"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {r}"));
        (
            r["code"].as_i64().unwrap() as i32,
            stdout,
            r["terminal"].as_str().unwrap().to_string(),
        )
    }
}

#[test]
fn on_a_terminal_the_batch_above_confirm_tokens_runs_after_y_and_not_after_n() {
    let llm = Llm::new();
    for name in ["a", "b", "c"] {
        let (code, out, _) = llm.run(&[
            "remember",
            "--name",
            name,
            "The Ledger service writes every charge to Billing.",
        ]);
        assert_eq!(code, 0, "{out}");
    }
    llm.config("confirmTokens = 10");

    // "n": declined at the prompt, nothing spawned, nothing stored changed.
    let (code, out, terminal) = llm.run_on_terminal("n", &["memory", "enrich", "--all"]);
    assert!(terminal.contains("estimate: 3 claude calls"), "{terminal}");
    assert!(terminal.contains("run it? [y/N]"), "{terminal}");
    assert_eq!(code, exit(ErrorKind::ConsentRequired), "{out} {terminal}");
    assert_eq!(llm.calls().len(), 0, "declined, yet the tool ran");
    for name in ["a", "b", "c"] {
        let m = llm.read(name);
        assert!(
            m["body"].as_str().unwrap().contains("Ledger service"),
            "{m}"
        );
        assert_eq!(m["version"], 1, "{m}");
        assert_eq!(m["entities"].as_array().unwrap().len(), 0, "{m}");
    }

    // "y": the batch runs, one call per memory, each enriched.
    let (code, out, terminal) = llm.run_on_terminal("y", &["memory", "enrich", "--all"]);
    assert_eq!(code, 0, "{out} {terminal}");
    assert_eq!(out["done"], 3, "{out}");
    assert_eq!(llm.calls().len(), 3);
    for name in ["a", "b", "c"] {
        let m = llm.read(name);
        assert!(
            m["body"].as_str().unwrap().contains("Ledger service"),
            "{m}"
        );
        assert_eq!(m["extraction"]["state"], "done", "{m}");
        assert_eq!(m["entities"].as_array().unwrap().len(), 2, "{m}");
    }
}

#[test]
fn user_store_extraction_runs_in_the_user_folder_and_stores_there() {
    let llm = Llm::new();
    let (code, out, err) = llm.run(&[
        "remember",
        "--user",
        "--name",
        "ledger-across",
        "-d",
        "spans workspaces",
        "The Ledger service writes every charge to Billing in every repository.",
        "--extract",
        "llm",
    ]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["extraction"]["state"], "done", "{out}");
    assert_eq!(out["entities"], serde_json::json!(["Billing", "Ledger"]));

    // What the stand-in got: the memory in the prompt on stdin, run in the user
    // store's folder (LOCI_HOME), not the workspace.
    let calls = llm.calls();
    assert_eq!(calls.len(), 1);
    let prompt = calls[0]["stdin"].as_str().unwrap();
    assert!(prompt.contains("ledger-across"), "{prompt}");
    assert!(prompt.contains("spans workspaces"), "{prompt}");
    assert!(prompt.contains("in every repository"), "{prompt}");
    assert_eq!(
        canonical(Path::new(calls[0]["cwd"].as_str().unwrap())),
        canonical(llm.env.home.path())
    );

    // Stored in the user store, with its entities and relationship; the workspace
    // store has no such memory.
    let (code, m, err) = llm.run(&["memory", "read", "--user", "ledger-across"]);
    assert_eq!(code, 0, "{m} {err}");
    assert_eq!(m["extraction"]["state"], "done", "{m}");
    assert_eq!(m["extraction"]["relationships"], 1, "{m}");
    let (_, h, _) = llm.run(&["memory", "history", "--user", "ledger-across"]);
    let ops: Vec<&str> = h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["op"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["create", "enrich"]);
    let (_, graph, _) = llm.run(&["memory", "graph-export", "--user", "--format", "json"]);
    let text = graph["text"].as_str().unwrap();
    assert!(text.contains("writes_to"), "{text}");
    let (code, w, _) = llm.run(&["memory", "read", "ledger-across"]);
    assert_eq!(code, exit(ErrorKind::NotFound), "{w}");
    assert!(
        llm.env.home.path().join("memory.db").is_file(),
        "the user store is beside the registry"
    );

    // enrich --user redoes it there.
    let (code, out, err) = llm.run(&["memory", "enrich", "--user", "ledger-across"]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["done"], 1, "{out}");
    assert_eq!(llm.calls().len(), 2);
}
