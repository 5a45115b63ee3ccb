//! `transfer`: memories exported from one store and imported into another, SQLite to
//! PostgreSQL and back, arrive whole (counts and the content digest agree), and a second
//! import adds nothing. A malformed file is refused by line number, storing nothing.

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
    assert_eq!(first.relationships_added, 1);

    let again = import(&mut **to, &lines).unwrap();
    assert_eq!((again.created, again.unchanged), (0, 2), "{again:?}");
    assert_eq!(again.relationships_added, 0);
    assert!(again.verified);
    assert_eq!(to.stats(None).unwrap().memories, 1);
    assert_eq!(to.stats(None).unwrap().forgotten, 1);

    // The copy exports to the same content.
    let (_, back) = export(&**to);
    assert_eq!(back.digest, sum.digest);
    let m = to.read("default", "retry-policy").unwrap();
    assert_eq!(m.body, "We retry `fetch` four times.");
    assert_eq!(m.links[0].key.path, "src/net.rs");
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
