//! `transfer`: memories exported from one store and imported into another, SQLite to
//! PostgreSQL and back, arrive whole with their histories (counts, the content digest
//! and the history digest agree, every version as it was, clocks included), and a
//! second import changes nothing. A malformed file, or one whose versions do not read as
//! a history, is refused by line number, storing nothing.

use loci_memory::model::{CodeKey, EntityInput, LinkOrigin, NewCodeLink, RelationshipInput};
use loci_memory::transfer::{self, ImportReport, Line, Summary};
use loci_memory::{Edit, MemoryError, MemoryStore, NewMemory};

use crate::stores::{self, Fixture};

fn seed(s: &mut Fixture) {
    let mut a = NewMemory {
        name: "retry-policy".into(),
        body: "We retry `fetch` three times.".into(),
        description: "how fetch retries".into(),
        metadata: Some(serde_json::json!({"ticket": "T-7"})),
        entities: vec![
            EntityInput {
                name: "Fetch".into(),
                entity_type: "component".into(),
                aliases: vec!["fetcher".into()],
            },
            EntityInput {
                name: "Network".into(),
                entity_type: "system".into(),
                aliases: vec![],
            },
        ],
        ..NewMemory::default()
    };
    a.relationships = vec![RelationshipInput {
        source: "Fetch".into(),
        target: "Network".into(),
        relation: "uses".into(),
        weight: 0.5,
    }];
    let link = NewCodeLink {
        key: CodeKey {
            path: "src/net.rs".into(),
            qualified_name: "fetch".into(),
            kind: "function".into(),
        },
        hash: "h1".into(),
        line: 3,
        origin: LinkOrigin::Manual,
        mention: None,
    };
    s.create(&a, "default", &[link]).unwrap();
    s.edit(
        "default",
        "retry-policy",
        &Edit {
            body: Some("We retry `fetch` four times.".into()),
            ..Edit::default()
        },
        None,
    )
    .unwrap();
    let b = NewMemory {
        name: "old-note".into(),
        body: "Deprecated.".into(),
        ..NewMemory::default()
    };
    s.create(&b, "ops", &[]).unwrap();
    s.forget("ops", "old-note").unwrap();
}

fn export(s: &dyn MemoryStore) -> (Vec<String>, Summary) {
    let mut lines = Vec::new();
    let sum = transfer::export(s, &mut |l: &Line| {
        lines.push(serde_json::to_string(l).unwrap());
        Ok(())
    })
    .unwrap();
    (lines, sum)
}

fn import(s: &mut dyn MemoryStore, lines: &[String]) -> Result<ImportReport, MemoryError> {
    let mut it = lines
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, l)| Ok((i + 1, l)));
    transfer::import(s, &mut it)
}

fn round_trip(from: &mut Fixture, to: &mut Fixture) {
    seed(from);
    let (lines, sum) = export(&**from);
    assert_eq!((sum.memories, sum.versions, sum.relationships), (2, 4, 1));
    assert!(lines[0].contains("\"header\""), "{}", lines[0]);

    let first = import(&mut **to, &lines).unwrap();
    assert_eq!(first.created, 2);
    assert!(first.verified, "{first:?}");
    assert_eq!(first.digest, sum.digest);
    assert_eq!(first.history_digest, sum.history_digest);
    assert_eq!((first.relationships_added, first.versions_restored), (1, 4));
    let histories = |s: &Fixture| {
        [("default", "retry-policy"), ("ops", "old-note")].map(|(ns, n)| s.history(ns, n).unwrap())
    };
    let restored = histories(to);
    assert_eq!(
        restored,
        histories(from),
        "every version as it was, clocks included"
    );

    let again = import(&mut **to, &lines).unwrap();
    assert_eq!((again.created, again.unchanged), (0, 2), "{again:?}");
    assert_eq!((again.relationships_added, again.versions_restored), (0, 0));
    assert!(again.verified);
    assert_eq!(histories(to), restored);
    assert_eq!(to.stats(None).unwrap().memories, 1);
    assert_eq!(to.stats(None).unwrap().forgotten, 1);

    // The copy exports to the same content.
    let (_, back) = export(&**to);
    assert_eq!(back.digest, sum.digest);
    assert_eq!(back.history_digest, sum.history_digest);
    let m = to.read("default", "retry-policy").unwrap();
    assert_eq!(m.body, "We retry `fetch` four times.");
    assert_eq!(m.links[0].key.path, "src/net.rs");
    // The history goes on from where the file left it.
    assert_eq!(m.version, 2);
    let m = to
        .edit("default", "retry-policy", &body("five"), None)
        .unwrap();
    assert_eq!(m.version, 3);
    let h = to.history("default", "retry-policy").unwrap();
    assert_eq!(h.iter().map(|v| v.version).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(h[2].at >= h[1].at, "{h:?}");
}

fn body(text: &str) -> Edit {
    Edit {
        body: Some(text.into()),
        ..Edit::default()
    }
}

#[test]
fn sqlite_to_postgres_and_back() {
    let Some(mut pg) = stores::postgres() else {
        return;
    };
    round_trip(&mut stores::sqlite(), &mut pg);
    let Some(mut pg2) = stores::postgres() else {
        return;
    };
    round_trip(&mut pg2, &mut stores::sqlite());
}

#[test]
fn sqlite_to_postgres_to_sqlite_gives_the_same_digests_and_histories() {
    let Some(mut pg) = stores::postgres() else {
        return;
    };
    let mut first = stores::sqlite();
    seed(&mut first);
    let (lines, sum) = export(&*first);
    assert!(import(&mut *pg, &lines).unwrap().verified);
    let (through_pg, via_pg) = export(&*pg);
    let mut last = stores::sqlite();
    assert!(import(&mut *last, &through_pg).unwrap().verified);
    let (_, back) = export(&*last);
    assert_eq!(via_pg, sum);
    assert_eq!(back, sum);
    assert!(!sum.history_digest.is_empty());
    assert_eq!(
        last.history("default", "retry-policy").unwrap(),
        first.history("default", "retry-policy").unwrap()
    );
}

/// A change to a memory line's `versions`.
type Bend = dyn Fn(&mut serde_json::Value);

#[test]
fn versions_that_are_not_a_history_are_refused_by_line_and_store_nothing() {
    let mut from = stores::sqlite();
    seed(&mut from);
    let (lines, _) = export(&*from);
    let at = lines
        .iter()
        .position(|l| l.contains("\"retry-policy\"") && l.contains("\"versions\""))
        .unwrap();
    let bend = |f: &Bend| {
        let mut line: serde_json::Value = serde_json::from_str(&lines[at]).unwrap();
        f(&mut line["versions"]);
        let mut bent = lines.clone();
        bent[at] = line.to_string();
        bent
    };
    let cases: [(&Bend, &str); 6] = [
        (&|v| v[1]["version"] = 3.into(), "numbered 1, 2, 3"),
        (&|v| v[0]["version"] = 0.into(), "numbered 1, 2, 3"),
        (
            &|v| v[1]["at"] = (-1).into(),
            "before the version preceding it",
        ),
        (
            &|v| v[1]["body"] = "not what it says".into(),
            "is not the memory's content",
        ),
        (&|v| v[0]["name"] = " ".into(), "name"),
        (
            &|v| v[0]["body"] = "x".repeat(600 * 1024).into(),
            "over the limit",
        ),
    ];
    for (f, want) in cases {
        let mut to = stores::sqlite();
        let e = import(&mut *to, &bend(f)).unwrap_err().to_string();
        assert!(e.contains(&format!("export line {}", at + 1)), "{e}");
        assert!(e.contains(want), "{want}: {e}");
        assert_eq!(to.stats(None).unwrap().memories, 0);
    }
    // No versions at all: the import's own stay (its create, and the link of the
    // relationship it adds).
    let mut to = stores::sqlite();
    let r = import(&mut *to, &bend(&|v| *v = serde_json::json!([]))).unwrap();
    assert!(
        !r.verified,
        "the history digest tells the history did not arrive"
    );
    let h = to.history("default", "retry-policy").unwrap();
    let ops: Vec<&str> = h.iter().map(|v| v.op_name()).collect();
    assert_eq!(ops, ["create", "link"]);
}

#[test]
fn a_changed_memory_is_a_conflict_and_is_not_overwritten() {
    let mut from = stores::sqlite();
    seed(&mut from);
    let (lines, _) = export(&*from);
    let mut to = stores::sqlite();
    to.create(
        &NewMemory {
            name: "retry-policy".into(),
            body: "Something else.".into(),
            ..NewMemory::default()
        },
        "default",
        &[],
    )
    .unwrap();
    let r = import(&mut *to, &lines).unwrap();
    assert_eq!(r.conflicts, vec!["default/retry-policy".to_string()]);
    assert!(!r.verified);
    assert_eq!(
        to.read("default", "retry-policy").unwrap().body,
        "Something else."
    );
}

#[test]
fn a_malformed_file_is_refused_by_line_and_stores_nothing() {
    let mut from = stores::sqlite();
    seed(&mut from);
    let (mut lines, _) = export(&*from);
    let mut to = stores::sqlite();
    let cut: Vec<String> = lines[..lines.len() - 1].to_vec();
    let e = import(&mut *to, &cut).unwrap_err().to_string();
    assert!(e.contains("no `end` line"), "{e}");
    lines[2] = "{not json".into();
    let e = import(&mut *to, &lines).unwrap_err().to_string();
    assert!(e.contains("export line 3"), "{e}");
    let e = import(&mut *to, &lines[1..]).unwrap_err().to_string();
    assert!(e.contains("header"), "{e}");
    assert_eq!(to.stats(None).unwrap().memories, 0);
}
