//! `index`, `sync` and `rebuild` draw the same progress bar when stderr is a terminal
//! (run under a pseudo-terminal with util-linux's `script`), and never with `--json`.

use crate::common;

use std::process::Command;

use common::Env;

/// Runs `loci ARGS` under a pseudo-terminal; returns its exit code and everything it
/// wrote to the terminal (stdout and stderr together).
fn on_a_terminal(env: &Env, args: &[&str]) -> (i32, String) {
    let line = std::iter::once(common::bin().display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("LOCI_HOME", env.home.path())
        .env_remove("LOCI_LOG")
        .current_dir(env.root())
        .output()
        .expect("util-linux `script` runs (it gives the test a pseudo-terminal)");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn write_sources(env: &Env, body: &str) {
    let files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("src/m{i}.rs"),
                format!("pub fn f{i}() {{ {body} }}\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    env.write(&refs);
}

fn draws_the_bar(screen: &str) -> bool {
    screen.contains("parsing ") && screen.contains(" files [")
}

#[test]
fn sync_and_rebuild_draw_the_index_bar_on_a_terminal_but_never_with_json() {
    let env = Env::new();
    write_sources(&env, "");
    let (code, screen) = on_a_terminal(&env, &["index", "."]);
    assert_eq!(code, 0, "{screen}");
    assert!(draws_the_bar(&screen), "index drew no bar:\n{screen}");

    write_sources(&env, "let _x = 1;");
    let (code, screen) = on_a_terminal(&env, &["sync", "."]);
    assert_eq!(code, 0, "{screen}");
    assert!(draws_the_bar(&screen), "sync drew no bar:\n{screen}");
    assert!(screen.contains("synced "), "{screen}");

    let (code, screen) = on_a_terminal(&env, &["rebuild", ".", "--yes"]);
    assert_eq!(code, 0, "{screen}");
    assert!(draws_the_bar(&screen), "rebuild drew no bar:\n{screen}");
    assert!(screen.contains("rebuilt "), "{screen}");

    // With --json the terminal gets one JSON document and no bar.
    let runs: [&[&str]; 3] = [
        &["index", ".", "--json"],
        &["sync", ".", "--json"],
        &["rebuild", ".", "--yes", "--json"],
    ];
    for (i, args) in runs.iter().enumerate() {
        // Each run has files to parse: the sources change before it.
        write_sources(&env, &format!("let _v{i} = {i};"));
        let (code, screen) = on_a_terminal(&env, args);
        assert_eq!(code, 0, "{args:?}: {screen}");
        assert!(!draws_the_bar(&screen), "{args:?} drew a bar:\n{screen}");
        let doc: serde_json::Value = serde_json::from_str(screen.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON document ({e}):\n{screen}"));
        assert!(doc["files_indexed"].as_u64().is_some(), "{doc}");
    }

    // A rebuild refused for want of consent parses nothing and draws nothing.
    let (code, screen) = on_a_terminal(&env, &["rebuild", "."]);
    assert_eq!(
        code,
        i32::from(loci_api::ErrorKind::ConsentRequired.exit().code()),
        "{screen}"
    );
    assert!(!draws_the_bar(&screen), "{screen}");
}
