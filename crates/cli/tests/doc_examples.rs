//! Every `loci ...` example in README.md and docs/*.md runs as written on loci's own
//! tree. The examples are the lines starting with `loci ` in ```` ```sh ```` blocks
//! (synopses with placeholders go in plain ```` ``` ```` blocks); each runs with
//! `--json` from the root of a copy of the repository's `crates/`, indexed once, and
//! must exit 0, or the code its comment gives as `# exits N`. The few an offline test
//! cannot run are in [`SKIPPED`], each with the reason.

use crate::common;

use std::path::{Path, PathBuf};

use common::Env;

/// Examples this test cannot run, by their command (the line without its comment).
const SKIPPED: &[(&str, &str)] = &[
    ("loci watch", "runs until it is stopped"),
    (
        "loci gate --session \"$SESSION_ID\"",
        "needs an agent host's session id, and starts background work",
    ),
    (
        "loci workspace create --mounted team/app --clone URL",
        "needs LOCI_PROJECTS_BASE set to a root and a repository URL to clone",
    ),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One example: where it is, the command as written, and the exit it must give.
struct Example {
    at: String,
    command: String,
    exit: i32,
}

fn examples() -> Vec<Example> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file
            .strip_prefix(repo())
            .unwrap_or(&file)
            .display()
            .to_string();
        let mut in_sh = false;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if let Some(info) = trimmed.strip_prefix("```") {
                in_sh = !in_sh && info.trim() == "sh";
                continue;
            }
            if !in_sh || !trimmed.starts_with("loci ") {
                continue;
            }
            let (command, comment) = match trimmed.split_once(" # ") {
                Some((c, comment)) => (c.trim_end(), comment),
                None => (trimmed.trim_end(), ""),
            };
            let exit = comment
                .split_once("exits ")
                .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            found.push(Example {
                at: format!("{shown}:{}", n + 1),
                command: command.to_string(),
                exit,
            });
        }
    }
    found
}

/// Splits a shell line into words: whitespace separates, `'...'` is literal, `"..."`
/// keeps `\"` and `\\` escapes. (No expansion: an example that needs one is skipped.)
/// Hand-written because a crate for this would change the feature set of `shlex`, which
/// `cc` builds every C grammar with, and rebuild them all.
fn split_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        ch => w.push(ch),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            ch @ ('"' | '\\') => w.push(ch),
                            ch => {
                                w.push('\\');
                                w.push(ch);
                            }
                        },
                        ch => w.push(ch),
                    }
                }
            }
            ch => word.get_or_insert_with(String::new).push(ch),
        }
    }
    words.extend(word);
    Some(words)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".loci" {
            continue;
        }
        let ty = entry.file_type().unwrap();
        if ty.is_dir() {
            copy_tree(&entry.path(), &to.join(&name));
        } else if ty.is_file() {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

#[test]
fn every_loci_example_in_the_docs_runs_on_locis_own_tree() {
    let env = Env::new();
    copy_tree(&repo().join("crates"), &env.root().join("crates"));
    let (code, out) = env.json(&["index", "."]);
    assert_eq!(code, 0, "{out}");

    let all = examples();
    assert!(all.len() > 10, "too few examples found: {}", all.len());
    let mut ran = 0;
    let mut failures = Vec::new();
    for ex in &all {
        if SKIPPED.iter().any(|(c, _)| *c == ex.command) {
            continue;
        }
        let words = split_words(&ex.command)
            .unwrap_or_else(|| panic!("{}: unbalanced quotes in `{}`", ex.at, ex.command));
        let out = env.cmd().args(&words[1..]).arg("--json").output().unwrap();
        ran += 1;
        let code = out.status.code().unwrap_or(-1);
        let json: Result<serde_json::Value, _> = serde_json::from_slice(&out.stdout);
        if code != ex.exit || json.is_err() {
            failures.push(format!(
                "{}: `{}` exited {code} (want {}){}\n{}{}",
                ex.at,
                ex.command,
                ex.exit,
                if json.is_err() {
                    ", stdout is not JSON"
                } else {
                    ""
                },
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every skip still names an example in the docs.
    for (command, _) in SKIPPED {
        assert!(
            all.iter().any(|e| e.command == *command),
            "skip-list entry `{command}` matches no example any more"
        );
    }
    assert!(ran >= all.len() - SKIPPED.len());
}

/// The README's quick start asks who calls `resolve_selector`; on loci's own tree the
/// answer is exactly the three functions of `loci_index::graph` that call it.
#[test]
fn the_readme_quick_start_query_answers_correctly() {
    let env = Env::new();
    copy_tree(&repo().join("crates"), &env.root().join("crates"));
    let (code, out) = env.json(&["index", "."]);
    assert_eq!(code, 0, "{out}");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.contains("loci callers resolve_selector\n"),
        "the README's quick start changed: update this test"
    );
    let (code, out) = env.json(&["callers", "resolve_selector"]);
    assert_eq!(code, 0, "{out}");
    let mut callers: Vec<&str> = out["reached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["symbol"]["qualified_name"].as_str().unwrap())
        .collect();
    callers.sort();
    assert_eq!(callers, ["Graph::def", "refs", "traverse_enough"], "{out}");
}
