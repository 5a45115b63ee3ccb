//! Team memory through the real binary on a real PostgreSQL (the throwaway cluster of
//! `pg_cluster`): two clones of one repository (real `git`, separate folders and
//! separate `LOCI_HOME`s) pointed at one database by `LOCI_MEMORY_URL` share their
//! memories — through the CLI, `loci serve`'s HTTP API and `loci mcp` — each judging
//! staleness (`memory read`, `impact`) against its own index; `memory export` /
//! `import` move memories with their histories from SQLite to PostgreSQL and back,
//! idempotently; a wrong password, a malformed URL or a clone with no repository
//! identity is a clear error with the documented exit code and never shows the
//! password. Without PostgreSQL the tests skip, and fail when `CI` is set.
use crate::common;
use crate::mcp_support;
use crate::pg_cluster;
use crate::serve_support;

use common::Env;
use loci_api::ErrorKind;

const PASSWORD: &str = "Team-s3cret-pw";
const LIB: &str = "pub fn parse_args(x: u32) -> u32 {\n    x + 1\n}\n\npub fn run() -> u32 {\n    parse_args(1)\n}\n";

fn exit(kind: ErrorKind) -> i32 {
    i32::from(kind.exit().code())
}

/// A clone of the team's repository: a git repository whose `origin` is `remote`, the
/// library in it, indexed, its memory on `url` (its own SQLite file when empty).
struct Clone {
    env: Env,
    url: String,
}

impl Clone {
    fn new(remote: &str, url: &str) -> Clone {
        let env = Env::new();
        env.git(&["init", "-q"]);
        env.git(&["remote", "add", "origin", remote]);
        env.write(&[("src/lib.rs", LIB)]);
        let c = Clone {
            env,
            url: url.to_string(),
        };
        let (code, out) = c.json(&["index"]);
        assert_eq!(code, 0, "{out}");
        c
    }

    /// `loci ARGS --json` with the team's URL in the environment: exit code, stdout
    /// parsed, and stdout and stderr as text (to look for the password in).
    fn run(&self, args: &[&str]) -> (i32, serde_json::Value, String) {
        let mut cmd = self.env.cmd();
        if !self.url.is_empty() {
            cmd.env("LOCI_MEMORY_URL", &self.url);
        }
        let out = cmd.args(args).arg("--json").output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), common::parse(&out), text)
    }

    fn json(&self, args: &[&str]) -> (i32, serde_json::Value) {
        let (code, out, _) = self.run(args);
        (code, out)
    }
}

fn two_clones() -> Option<(Clone, Clone)> {
    let url = pg_cluster::database_with_password(PASSWORD)?;
    let a = Clone::new("https://git.example.com/team/app.git", &url);
    let b = Clone::new("git@git.example.com:team/app.git", &url);
    Some((a, b))
}

#[test]
fn two_clones_share_memories_through_one_database() {
    let Some((a, b)) = two_clones() else { return };
    let (code, out) = a.json(&[
        "remember",
        "--name",
        "args-policy",
        "--type",
        "decision",
        "We decided that `parse_args` adds one.",
    ]);
    assert_eq!(code, 0, "{out}");

    let (code, out) = b.json(&["recall", "parse_args adds one"]);
    assert_eq!(code, 0, "{out}");
    let names: Vec<&str> = out["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{out}"))
        .iter()
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert!(names.contains(&"args-policy"), "{out}");

    for clone in [&a, &b] {
        let (code, stats) = clone.json(&["memory", "stats"]);
        assert_eq!(code, 0, "{stats}");
        assert_eq!(stats["store"]["kind"], "postgres", "{stats}");
        assert_eq!(stats["store"]["vector_search"], "exact", "{stats}");
        assert_eq!(
            stats["store"]["scope"], "git.example.com/team/app",
            "{stats}"
        );
        assert_eq!(stats["memories"], 1, "{stats}");
        assert!(
            !clone.env.root().join(".loci/memory.db").exists(),
            "no local memory file when memory.url is set"
        );
    }
}

#[test]
fn each_clone_judges_staleness_against_its_own_index() {
    let Some((a, b)) = two_clones() else { return };
    let (code, out) = a.json(&["remember", "--name", "args", "`parse_args` adds one."]);
    assert_eq!(code, 0, "{out}");

    // The second clone changes the function and reindexes; the first does not.
    b.env
        .write(&[("src/lib.rs", &LIB.replace("x + 1", "x + 2 // now two"))]);
    let (code, out) = b.json(&["index"]);
    assert_eq!(code, 0, "{out}");

    let state = |c: &Clone| {
        let (code, view) = c.json(&["memory", "read", "args"]);
        assert_eq!(code, 0, "{view}");
        view["checked_links"][0]["status"]["state"]
            .as_str()
            .unwrap_or_else(|| panic!("{view}"))
            .to_string()
    };
    assert_eq!(state(&a), "fresh");
    assert_ne!(state(&b), "fresh");

    // `impact` finds the team's memory too, stale only where the code changed.
    for (c, stale) in [(&a, false), (&b, true)] {
        let (code, impact) = c.json(&["impact", "parse_args"]);
        assert_eq!(code, 0, "{impact}");
        assert_eq!(impact["memories"][0]["name"], "args", "{impact}");
        assert_eq!(impact["memories"][0]["stale"], stale, "{impact}");
    }
}

#[test]
fn a_clone_without_origin_or_repository_id_is_refused_not_given_a_private_scope() {
    let Some(url) = pg_cluster::database_with_password(PASSWORD) else {
        return;
    };
    let env = Env::new();
    env.git(&["init", "-q"]);
    let run = |extra: &[(&str, &str)]| {
        let mut cmd = env.cmd();
        cmd.env("LOCI_MEMORY_URL", &url);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd
            .args(["remember", "--name", "n", "A note.", "--json"])
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), common::parse(&out))
    };
    let (code, out) = run(&[]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{out}");
    assert!(
        out["error"]["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("memory.repositoryId"),
        "{out}"
    );
    let (code, out) = run(&[("LOCI_MEMORY_REPOSITORY_ID", "team/app")]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_wrong_password_is_a_storage_error_that_never_shows_a_password() {
    let Some(url) = pg_cluster::database_with_password(PASSWORD) else {
        return;
    };
    let wrong = url.replace(PASSWORD, "Not-the-pw-9");
    let c = Clone::new("https://git.example.com/team/wrong.git", &wrong);
    let (code, out, text) = c.run(&["recall", "anything"]);
    assert_eq!(code, exit(ErrorKind::Storage), "{text}");
    assert_eq!(out["error"]["kind"], "storage", "{out}");
    let message = out["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("password authentication failed"), "{out}");
    assert!(!text.contains("Not-the-pw-9"), "{text}");
    assert!(!text.contains(PASSWORD), "{text}");
}

#[test]
fn a_url_that_is_not_postgres_is_invalid_input_without_its_password() {
    let c = Clone::new(
        "https://git.example.com/team/bad.git",
        "mysql://team:Bad-pw-7@db/app",
    );
    let (code, out, text) = c.run(&["memory", "list"]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{text}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("memory.url"),
        "{out}"
    );
    assert!(!text.contains("Bad-pw-7"), "{text}");

    let (code, shown, text) = c.run(&["config", "show"]);
    assert_eq!(code, 0, "{shown}");
    assert!(!text.contains("Bad-pw-7"), "{text}");

    // A postgres:// URL the client cannot read (a port that is not a number).
    let c = Clone::new(
        "https://git.example.com/team/bad.git",
        "postgres://team:Bad-pw-8@db:notaport/app",
    );
    let (code, out, text) = c.run(&["memory", "list"]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{text}");
    assert!(!text.contains("Bad-pw-8"), "{text}");
    assert!(text.contains("team:***@db"), "{text}");
    assert_eq!(out["error"]["kind"], "invalid_input", "{out}");
}

#[test]
fn config_shows_the_team_url_with_its_password_masked() {
    let c = Clone::new(
        "https://git.example.com/team/cfg.git",
        "postgres://team:Cfg-pw-5@db.example/app",
    );
    let (code, shown, text) = c.run(&["config", "show"]);
    assert_eq!(code, 0, "{shown}");
    assert!(
        text.contains("postgres://team:***@db.example/app"),
        "{text}"
    );
    assert!(!text.contains("Cfg-pw-5"), "{text}");
}

#[test]
fn export_and_import_move_memories_from_sqlite_to_postgres_and_back_idempotently() {
    let Some(url) = pg_cluster::database_with_password(PASSWORD) else {
        return;
    };
    let files = tempfile::tempdir().unwrap();
    let file = |name: &str| files.path().join(name).to_string_lossy().into_owned();
    // A workspace on its own SQLite file.
    let local = Clone::new("https://git.example.com/team/move.git", "");
    let plain = |c: &Clone, args: &[&str]| {
        let (code, out) = c.env.json(args);
        assert_eq!(code, 0, "{args:?}: {out}");
        out
    };
    plain(
        &local,
        &["remember", "--name", "args", "`parse_args` adds one."],
    );
    plain(&local, &["remember", "--name", "old", "Deprecated note."]);
    plain(
        &local,
        &["memory", "edit", "args", "`parse_args` adds one, always."],
    );
    plain(&local, &["memory", "forget", "old"]);
    let from_sqlite = plain(&local, &["memory", "export", "-o", &file("a.jsonl")]);
    assert_eq!(from_sqlite["memories"], 2, "{from_sqlite}");
    assert_eq!(from_sqlite["versions"], 4, "{from_sqlite}");

    // Into the team's database, twice: the second adds nothing.
    let team = Clone::new("https://git.example.com/team/move.git", &url);
    let (code, first) = team.json(&["memory", "import", &file("a.jsonl")]);
    assert_eq!(code, 0, "{first}");
    assert_eq!(first["created"], 2, "{first}");
    assert_eq!(first["verified"], true, "{first}");
    assert_eq!(first["digest"], from_sqlite["digest"], "{first}");
    // Each memory with its history, not a fresh version 1.
    assert_eq!(first["versions_restored"], 4, "{first}");
    assert_eq!(
        first["history_digest"], from_sqlite["history_digest"],
        "{first}"
    );
    let (code, again) = team.json(&["memory", "import", &file("a.jsonl")]);
    assert_eq!(code, 0, "{again}");
    assert_eq!(
        (again["created"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(2)),
        "{again}"
    );
    let (_, stats) = team.json(&["memory", "stats"]);
    assert_eq!(
        (stats["memories"].as_u64(), stats["forgotten"].as_u64()),
        (Some(1), Some(1)),
        "{stats}"
    );

    // And back out to another SQLite workspace: the same content, by digest.
    let (code, from_pg) = team.json(&["memory", "export", "-o", &file("b.jsonl")]);
    assert_eq!(code, 0, "{from_pg}");
    assert_eq!(from_pg["digest"], from_sqlite["digest"], "{from_pg}");
    assert_eq!(from_pg["history_digest"], from_sqlite["history_digest"]);
    let back = Clone::new("https://git.example.com/team/back.git", "");
    let into_sqlite = plain(&back, &["memory", "import", &file("b.jsonl")]);
    assert_eq!(into_sqlite["created"], 2, "{into_sqlite}");
    assert_eq!(into_sqlite["verified"], true, "{into_sqlite}");
    let (_, read) = back.env.json(&["memory", "read", "args"]);
    assert_eq!(read["body"], "`parse_args` adds one, always.", "{read}");
    let history = |c: &Clone| plain(c, &["memory", "history", "args"]);
    assert_eq!(
        history(&back),
        history(&local),
        "the same versions, times included"
    );

    // A file cut short is refused by name, and nothing is stored.
    let text = std::fs::read_to_string(file("a.jsonl")).unwrap();
    let cut: Vec<&str> = text.lines().collect();
    std::fs::write(file("cut.jsonl"), cut[..cut.len() - 1].join("\n")).unwrap();
    let empty = Clone::new("https://git.example.com/team/cut.git", "");
    let (code, out) = empty.env.json(&["memory", "import", &file("cut.jsonl")]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("end"),
        "{out}"
    );
    // Bytes that are not UTF-8 are refused by line number.
    let mut bad = cut[0].as_bytes().to_vec();
    bad.extend_from_slice(b"\n{\"kind\": \"\xff\"}\n");
    std::fs::write(file("bad.jsonl"), bad).unwrap();
    let (code, out) = empty.env.json(&["memory", "import", &file("bad.jsonl")]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{out}");
    let message = out["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("export line 2 is not UTF-8"), "{out}");
    let (_, stats) = empty.env.json(&["memory", "stats"]);
    assert_eq!(stats["memories"], 0, "{stats}");
}

#[test]
fn the_http_api_of_one_clone_and_the_cli_of_another_share_one_database() {
    let Some((cli, served)) = two_clones() else {
        return;
    };
    let server = serve_support::start(&served.env, &[], &[("LOCI_MEMORY_URL", &served.url)]);
    let id = serve_support::workspace_id(&server);
    let post = |op: &str, body: serde_json::Value| {
        let path = format!("/api/v1/workspaces/{id}/memory/{op}");
        let (status, text) =
            serve_support::call(&server, "post", &path, Some(&body), serve_support::bearer());
        assert!(!text.contains(PASSWORD), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(status, 200, "{op}: {v}");
        v
    };
    post(
        "remember",
        serde_json::json!({"name": "from-http", "body": "Over HTTP: `run` calls `parse_args`."}),
    );
    let (code, out) = cli.json(&["memory", "read", "from-http"]);
    assert_eq!(code, 0, "{out}");

    let (code, out) = cli.json(&["remember", "--name", "from-cli", "The CLI wrote this."]);
    assert_eq!(code, 0, "{out}");
    let hits = post("recall", serde_json::json!({"query": "CLI wrote"}));
    assert_eq!(hits["hits"][0]["name"], "from-cli", "{hits}");

    let stats = post("stats", serde_json::json!({}));
    assert_eq!(stats["store"]["kind"], "postgres", "{stats}");
    assert_eq!(stats["memories"], 2, "{stats}");
    assert!(stats.get("path").is_none(), "{stats}");
}

#[test]
fn the_mcp_tools_of_one_clone_recall_what_another_remembered() {
    let Some((cli, agent)) = two_clones() else {
        return;
    };
    let (code, out) = cli.json(&[
        "remember",
        "--name",
        "cache-rule",
        "The cache keeps ten entries.",
    ]);
    assert_eq!(code, 0, "{out}");
    let mut cmd = mcp_support::loci(agent.env.home.path());
    cmd.env("LOCI_MEMORY_URL", &agent.url)
        .arg("mcp")
        .arg("--workspace")
        .arg(agent.env.root());
    let mut s = mcp_support::Stdio_::start(cmd);
    s.initialize();
    let r = s.call("recall", serde_json::json!({"query": "cache entries"}));
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(
        r["structuredContent"]["hits"][0]["name"], "cache-rule",
        "{r}"
    );
    let r = s.call(
        "remember",
        serde_json::json!({"name": "from-agent", "body": "The agent wrote this."}),
    );
    assert_ne!(r["isError"], true, "{r}");
    assert!(!r.to_string().contains(PASSWORD), "{r}");
    let (code, out) = cli.json(&["memory", "read", "from-agent"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn impact_answers_without_memories_when_the_team_database_is_down() {
    let Some(mut cluster) = pg_cluster::Stoppable::start() else {
        return;
    };
    let c = Clone::new(
        "https://git.example.com/team/app.git",
        &cluster.memory_url(),
    );
    let (code, out) = c.json(&["remember", "--name", "args", "`parse_args` adds one."]);
    assert_eq!(code, 0, "{out}");
    let (code, up) = c.json(&["impact", "parse_args"]);
    assert_eq!(code, 0, "{up}");
    assert_eq!(up["memories"][0]["name"], "args", "{up}");
    assert!(up.get("memories_unavailable").is_none(), "{up}");

    cluster.stop();
    // The code graph still answers, the same traversal, saying why no memory is shown.
    let (code, down, text) = c.run(&["impact", "parse_args"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(down["memories"], serde_json::json!([]), "{down}");
    let why = down["memories_unavailable"].as_str().unwrap_or_default();
    assert!(why.starts_with("memories unavailable: "), "{down}");
    assert_eq!(down["reached"], up["reached"], "{down}");
    assert_eq!(down["targets"], up["targets"], "{down}");
    // A memory command itself still fails: storage, exit 10.
    let (code, out) = c.json(&["recall", "parse"]);
    assert_eq!(code, exit(ErrorKind::Storage), "{out}");
}

#[test]
fn stats_and_health_say_pgvector_when_the_database_has_it() {
    let Some(url) = pg_cluster::database_pgvector_url() else {
        return;
    };
    let clone = Clone::new("https://git.example.com/team/vectors.git", &url);
    let (code, stats) = clone.json(&["memory", "stats"]);
    assert_eq!(code, 0, "{stats}");
    assert_eq!(stats["store"]["kind"], "postgres", "{stats}");
    assert_eq!(stats["store"]["vector_search"], "pgvector", "{stats}");
    let server = serve_support::start(&clone.env, &[], &[("LOCI_MEMORY_URL", &url)]);
    let (status, text) = serve_support::call(&server, "get", "/health", None, None);
    assert_eq!(status, 200, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["memory"]["reachable"], true, "{v}");
    assert_eq!(v["memory"]["vector_search"], "pgvector", "{v}");
}

#[test]
fn health_reports_the_team_database_and_a_down_one_as_degraded() {
    let Some((_, served)) = two_clones() else {
        return;
    };
    let server = serve_support::start(&served.env, &[], &[("LOCI_MEMORY_URL", &served.url)]);
    let (status, text) = serve_support::call(&server, "get", "/health", None, None);
    assert_eq!(status, 200, "{text}");
    assert!(!text.contains(PASSWORD), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["memory"]["kind"], "postgres", "{v}");
    assert_eq!(v["memory"]["reachable"], true, "{v}");
    assert_eq!(v["memory"]["vector_search"], "exact", "{v}");
    assert!(
        v["memory"]["target"].as_str().unwrap().contains("***"),
        "{v}"
    );

    let Some(mut cluster) = pg_cluster::Stoppable::start() else {
        return;
    };
    let own = Clone::new(
        "https://git.example.com/team/other.git",
        &cluster.memory_url(),
    );
    let server = serve_support::start(&own.env, &[], &[("LOCI_MEMORY_URL", &own.url)]);
    let id = serve_support::workspace_id(&server);
    let health = || {
        let (status, text) = serve_support::call(&server, "get", "/health", None, None);
        assert_eq!(status, 200, "{text}");
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    assert_eq!(health()["memory"]["reachable"], true);
    cluster.stop();
    let v = health();
    assert_eq!(v["status"], "degraded", "{v}");
    assert_eq!(v["memory"]["reachable"], false, "{v}");
    assert!(v["memory"]["error"].is_string(), "{v}");
    // The code graph is still served.
    let path = format!("/api/v1/workspaces/{id}/impact");
    let body = serde_json::json!({"target": "parse_args"});
    let (status, text) =
        serve_support::call(&server, "post", &path, Some(&body), serve_support::bearer());
    assert_eq!(status, 200, "{text}");
    let impact: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(impact["reached"][0]["symbol"]["name"], "run", "{impact}");
}
