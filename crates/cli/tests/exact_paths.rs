//! File names that are not UTF-8, through the binary: two names that show as the same
//! text are two files for `loci index`, `search`, `sync` and `status`, and later runs
//! keep working (they used to fail on a constraint, forever).

use crate::common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use common::Env;

#[test]
fn colliding_lossy_names_are_indexed_searched_and_synced_through_the_binary() {
    let env = Env::new();
    env.write(&[("lib.rs", "fn gamma_fn() {}\n")]);
    let root = env.root();
    std::fs::write(
        root.join(OsStr::from_bytes(b"x\xff.rs")),
        "fn alpha_fn() {}\n",
    )
    .unwrap();
    std::fs::write(
        root.join(OsStr::from_bytes(b"x\xfe.rs")),
        "fn beta_fn() {}\n",
    )
    .unwrap();

    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["files_indexed"], 3, "{report}");
    for (pattern, name) in [("alpha_fn", "alpha_fn"), ("beta_fn", "beta_fn")] {
        let (code, found) = env.json(&["find", pattern]);
        assert_eq!(code, 0, "{found}");
        assert_eq!(found["symbols"][0]["name"], name, "{found}");
        assert_eq!(found["symbols"][0]["path"], "x\u{fffd}.rs", "{found}");
        let (code, hits) = env.json(&["search", pattern]);
        assert_eq!(code, 0, "{hits}");
        assert_eq!(hits["hits"].as_array().unwrap().len(), 1, "{hits}");
    }

    // A change elsewhere: sync brings it in, and the index is clean again.
    env.write(&[("lib.rs", "fn delta_fn() {}\n")]);
    let out = env.cmd().args(["sync", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let (code, found) = env.json(&["find", "delta_fn"]);
    assert_eq!(code, 0, "{found}");
    let (code, status) = env.json(&["status"]);
    assert_eq!(code, 0, "{status}");
    assert_eq!(status["state"], "clean", "{status}");
}
