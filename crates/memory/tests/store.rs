//! The store conformance suite: versions, atomic failures, concurrent writers, entities
//! and relationships, recall's three sources and their fusion, each written once against
//! [`Fixture`] and run against SQLite and PostgreSQL (`conformance!` below).

use loci_memory::model::{EntityInput, MAX_BODY_BYTES, Operation, RelationshipInput};
use loci_memory::recall::{RecallRequest, recall};
use loci_memory::vector::{EmbedError, Embedder, embed_pending};
use loci_memory::{Edit, Filter, MemoryError, MemoryStore, NewMemory, NoCode, graph, ops};

use crate::stores::Fixture;

conformance!(
    every_mutation_is_a_version_and_each_is_recoverable,
    a_relationship_to_a_missing_entity_stores_nothing_at_all,
    a_name_collision_is_refused_and_the_first_memory_is_kept,
    bodies_past_512_kib_descriptions_past_500_chars_and_bad_json_are_refused,
    two_connections_editing_at_once_never_lose_a_version,
    recall_reaches_through_entities_and_says_why_each_hit_ranked,
    vectors_are_filled_after_remember_and_join_the_fusion,
    entities_merge_and_rename_keep_every_memory_and_alias,
    related_walks_shared_entities_then_relationships,
    the_graph_exports_as_json_dot_and_mermaid,
    recall_filters_by_type_and_never_shows_forgotten_memories,
    each_hit_snippets_its_own_body_read_by_id,
    a_query_that_cannot_be_embedded_fails_the_recall,
);

fn new(name: &str, body: &str) -> NewMemory {
    NewMemory {
        name: name.into(),
        body: body.into(),
        ..Default::default()
    }
}

fn filter() -> Filter {
    Filter {
        namespace: "default".into(),
        ..Filter::default()
    }
}

fn remember(store: &mut dyn MemoryStore, m: &NewMemory) -> Result<i64, MemoryError> {
    ops::remember(store, &NoCode, false, m, &[]).map(|v| v.memory.id)
}

fn entity(name: &str) -> EntityInput {
    EntityInput {
        name: name.into(),
        entity_type: "component".into(),
        aliases: vec![],
    }
}

fn every_mutation_is_a_version_and_each_is_recoverable(s: &mut Fixture) {
    remember(&mut **s, &new("retry", "first body")).unwrap();
    s.edit(
        "default",
        "retry",
        &Edit {
            body: Some("second body".into()),
            ..Edit::default()
        },
        None,
    )
    .unwrap();
    s.rename("default", "retry", "retry-policy").unwrap();
    s.forget("default", "retry-policy").unwrap();
    assert!(
        s.list(&filter(), 10, 0).unwrap().0.is_empty(),
        "forgotten memories are not listed"
    );
    s.restore("default", "retry-policy", None).unwrap();
    let back = s.restore("default", "retry-policy", Some(1)).unwrap();
    assert_eq!(back.body, "first body");
    assert_eq!(back.version, 6);
    let h = s.history("default", "retry-policy").unwrap();
    let ops: Vec<Operation> = h.iter().map(|v| v.op).collect();
    assert_eq!(
        ops,
        [
            Operation::Create,
            Operation::Edit,
            Operation::Rename,
            Operation::Forget,
            Operation::Restore,
            Operation::Restore
        ]
    );
    assert_eq!(h[1].body, "second body");
    assert_eq!(h[2].name, "retry-policy");
    assert!(h[3].deleted && !h[4].deleted);
    assert_eq!(
        (1..=6).collect::<Vec<u32>>(),
        h.iter().map(|v| v.version).collect::<Vec<_>>()
    );
    s.purge("default", "retry-policy").unwrap();
    assert!(matches!(
        s.history("default", "retry-policy"),
        Err(MemoryError::NotFound(_))
    ));
    assert_eq!(
        s.stats(None).unwrap().versions,
        0,
        "purge removes every version"
    );
}

fn a_relationship_to_a_missing_entity_stores_nothing_at_all(s: &mut Fixture) {
    let mut m = new("ledger", "The ledger writes invoices");
    m.entities = vec![entity("Ledger")];
    m.relationships = vec![RelationshipInput {
        source: "Ledger".into(),
        target: "Nowhere".into(),
        relation: "writes_to".into(),
        weight: 0.5,
    }];
    let e = remember(&mut **s, &m).unwrap_err();
    assert!(e.to_string().contains("`Nowhere`"), "{e}");
    let st = s.stats(None).unwrap();
    assert_eq!(
        (st.memories, st.entities, st.versions, st.chunks),
        (0, 0, 0, 0),
        "{st:?}"
    );
}

fn a_name_collision_is_refused_and_the_first_memory_is_kept(s: &mut Fixture) {
    remember(&mut **s, &new("a", "one")).unwrap();
    let e = remember(&mut **s, &new("a", "two")).unwrap_err();
    assert!(
        matches!(
            e,
            MemoryError::NameTaken {
                forgotten: false,
                ..
            }
        ),
        "{e}"
    );
    s.forget("default", "a").unwrap();
    let e = remember(&mut **s, &new("a", "three")).unwrap_err();
    assert!(
        matches!(
            e,
            MemoryError::NameTaken {
                forgotten: true,
                ..
            }
        ),
        "{e}"
    );
    // Another namespace is another name.
    let mut other = new("a", "four");
    other.namespace = Some("team".into());
    remember(&mut **s, &other).unwrap();
    assert_eq!(s.read("default", "a").unwrap().body, "one");
}

fn bodies_past_512_kib_descriptions_past_500_chars_and_bad_json_are_refused(s: &mut Fixture) {
    remember(&mut **s, &new("max", &"x".repeat(MAX_BODY_BYTES))).unwrap();
    let e = remember(&mut **s, &new("over", &"x".repeat(MAX_BODY_BYTES + 1))).unwrap_err();
    assert!(
        matches!(
            e,
            MemoryError::TooLong {
                limit: MAX_BODY_BYTES,
                ..
            }
        ),
        "{e}"
    );
    let mut m = new("desc", "b");
    m.description = "é".repeat(501);
    assert!(matches!(
        remember(&mut **s, &m),
        Err(MemoryError::TooLong { .. })
    ));
    let e = loci_memory::model::body_from_bytes("stdin", vec![b'a', 0xff, b'b']).unwrap_err();
    assert!(e.to_string().contains("offset 1"), "{e}");
    for bad in [
        r#"[{"name": "A"}]"#,
        r#"[{"name": "A", "type": "t", "colour": "red"}]"#,
        r#"{"name": "A", "type": "t"}"#,
        r#"[{"name": "", "type": "t"}]"#,
    ] {
        let e = loci_memory::model::parse_entities(bad).unwrap_err();
        assert!(matches!(e, MemoryError::Invalid(_)), "{bad}: {e}");
    }
    let e = loci_memory::model::parse_relationships(
        r#"[{"source": "A", "target": "B", "relation": "r", "weight": 1.5}]"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("outside 0..=1"), "{e}");
    assert_eq!(s.stats(None).unwrap().memories, 1);
}

fn two_connections_editing_at_once_never_lose_a_version(s: &mut Fixture) {
    remember(&mut **s, &new("shared", "v0")).unwrap();
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let open = s.opener();
            std::thread::spawn(move || {
                let mut s = open();
                for i in 0..40 {
                    let edit = Edit {
                        body: Some(format!("w{w}-{i}")),
                        ..Edit::default()
                    };
                    s.edit("default", "shared", &edit, None).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let h = s.history("default", "shared").unwrap();
    assert_eq!(h.len(), 81);
    assert_eq!(
        h.iter().map(|v| v.version).collect::<Vec<_>>(),
        (1..=81).collect::<Vec<u32>>()
    );
    for w in 0..2 {
        for i in 0..40 {
            let body = format!("w{w}-{i}");
            assert!(h.iter().any(|v| v.body == body), "{body} lost");
        }
    }
}

/// A deterministic embedder: each word hashed into one of 64 buckets.
struct Buckets;

impl Embedder for Buckets {
    fn model_id(&self) -> &str {
        "test-buckets-64"
    }
    fn dim(&self) -> usize {
        64
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 64];
                for w in t
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    let h = blake3_like(&w.to_lowercase());
                    v[h % 64] += 1.0;
                }
                v
            })
            .collect())
    }
}

fn blake3_like(s: &str) -> usize {
    s.bytes().fold(1469598103934665603u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(1099511628211)
    }) as usize
}

fn ledger_store(s: &mut Fixture) {
    let mut a = new("ledger", "The ledger service writes invoices every hour");
    a.entities = vec![entity("Ledger"), entity("Billing")];
    a.relationships = vec![RelationshipInput {
        source: "Ledger".into(),
        target: "Billing".into(),
        relation: "writes_to".into(),
        weight: 0.8,
    }];
    remember(&mut **s, &a).unwrap();
    let mut b = new("compaction", "A nightly job compacts the tables");
    b.entities = vec![entity("Billing")];
    remember(&mut **s, &b).unwrap();
    remember(&mut **s, &new("unrelated", "Lunch is at noon")).unwrap();
}

fn recall_reaches_through_entities_and_says_why_each_hit_ranked(s: &mut Fixture) {
    ledger_store(s);
    let req = RecallRequest {
        query: "ledger".into(),
        filter: filter(),
        ..RecallRequest::default()
    };
    let a = recall(&mut **s, &NoCode, false, None, &req).unwrap();
    assert_eq!(a.vectors.state, loci_memory::recall::Vectors::Off);
    assert!(
        a.vectors
            .hint
            .as_deref()
            .unwrap()
            .contains("docs/memory.md")
    );
    let names: Vec<&str> = a.hits.iter().map(|h| h.memory.name.as_str()).collect();
    assert_eq!(names, ["ledger", "compaction"], "{names:?}");
    let top = &a.hits[0];
    assert_eq!(top.why.fts.as_ref().unwrap().rank, 1);
    assert!(top.why.graph.is_some());
    let second = &a.hits[1];
    assert!(
        second.why.fts.is_none(),
        "compaction has no word of the query"
    );
    let path = &second.why.graph.as_ref().unwrap().path;
    assert!(path.iter().any(|p| p == "entity:Billing"), "{path:?}");
}

fn vectors_are_filled_after_remember_and_join_the_fusion(s: &mut Fixture) {
    ledger_store(s);
    assert_eq!(
        s.stats(None).unwrap().embedded_chunks,
        0,
        "remember never embeds"
    );
    assert_eq!(embed_pending(&mut **s, &Buckets, 2, 100).unwrap(), 3);
    assert_eq!(
        embed_pending(&mut **s, &Buckets, 2, 100).unwrap(),
        0,
        "nothing left"
    );
    let req = RecallRequest {
        query: "invoices hourly".into(),
        filter: filter(),
        ..RecallRequest::default()
    };
    let a = recall(&mut **s, &NoCode, false, Some(&Buckets), &req).unwrap();
    assert_eq!(a.vectors.state, loci_memory::recall::Vectors::On);
    let top = &a.hits[0];
    assert_eq!(top.memory.name, "ledger");
    let v = top.why.vector.as_ref().unwrap();
    assert_eq!(v.rank, 1);
    assert!(v.score < 1.0, "{v:?}");
    // An edited body's chunks wait for new vectors.
    s.edit(
        "default",
        "unrelated",
        &Edit {
            body: Some("Dinner".into()),
            ..Edit::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(embed_pending(&mut **s, &Buckets, 8, 100).unwrap(), 1);
}

fn entities_merge_and_rename_keep_every_memory_and_alias(s: &mut Fixture) {
    ledger_store(s);
    let mut c = new("billing-notes", "notes");
    c.entities = vec![EntityInput {
        name: "billing system".into(),
        entity_type: "service".into(),
        aliases: vec!["bill".into()],
    }];
    remember(&mut **s, &c).unwrap();
    let merged = s
        .merge_entities("default", "billing system", "Billing")
        .unwrap();
    assert!(
        merged.aliases.contains(&"billing system".to_string())
            && merged.aliases.contains(&"bill".to_string())
    );
    assert_eq!(merged.degree, 4, "three memories and one relationship");
    assert_eq!(
        s.history("default", "billing-notes").unwrap().len(),
        2,
        "the merge is a version"
    );
    let renamed = s.rename_entity("default", "Billing", "Payments").unwrap();
    assert!(renamed.aliases.contains(&"Billing".to_string()));
    assert_eq!(
        s.read("default", "compaction").unwrap().entities,
        ["Payments"]
    );
    let e = s
        .rename_entity("default", "Payments", "ledger")
        .unwrap_err();
    assert!(e.to_string().contains("merge them"), "{e}");
}

fn related_walks_shared_entities_then_relationships(s: &mut Fixture) {
    let mut a = new("a", "a");
    a.entities = vec![entity("X")];
    remember(&mut **s, &a).unwrap();
    let mut b = new("b", "b");
    b.entities = vec![entity("X"), entity("Y")];
    b.relationships = vec![RelationshipInput {
        source: "Y".into(),
        target: "Z".into(),
        relation: "uses".into(),
        weight: 1.0,
    }];
    b.entities.push(entity("Z"));
    remember(&mut **s, &b).unwrap();
    let mut c = new("c", "c");
    c.entities = vec![entity("Z")];
    remember(&mut **s, &c).unwrap();
    let id = s.read("default", "a").unwrap().id;
    let one = graph::related(&**s, &filter(), id, 1).unwrap();
    assert_eq!(
        one.iter()
            .map(|r| r.memory.name.as_str())
            .collect::<Vec<_>>(),
        ["b"]
    );
    let two = graph::related(&**s, &filter(), id, 2).unwrap();
    let got: Vec<(&str, u32)> = two
        .iter()
        .map(|r| (r.memory.name.as_str(), r.depth))
        .collect();
    assert_eq!(got, [("b", 1), ("c", 2)]);
    assert_eq!(
        two[1].path.first().map(String::as_str),
        Some("X"),
        "{:?}",
        two[1].path
    );
    assert_eq!(
        two[1].path.last().map(String::as_str),
        Some("Z"),
        "{:?}",
        two[1].path
    );
    let m = remember(&mut **s, &new("lonely", "l")).unwrap();
    assert!(graph::related(&**s, &filter(), m, 3).unwrap().is_empty());
    assert!(
        graph::related(&**s, &filter(), id, 9).is_err(),
        "depth is bounded"
    );
}

fn the_graph_exports_as_json_dot_and_mermaid(s: &mut Fixture) {
    ledger_store(s);
    let dump = graph::dump(&**s, &filter()).unwrap();
    assert_eq!(dump.memories.len(), 3);
    let dot = graph::render(&dump, graph::ExportFormat::Dot);
    assert!(dot.starts_with("digraph memory {"));
    assert!(
        dot.contains("\"entity:Ledger\" -> \"entity:Billing\" [label=\"writes_to 0.80\"]"),
        "{dot}"
    );
    let mermaid = graph::render(&dump, graph::ExportFormat::Mermaid);
    assert!(mermaid.starts_with("flowchart LR"));
    assert!(mermaid.contains("-->|writes_to 0.80|"), "{mermaid}");
    let json: serde_json::Value =
        serde_json::from_str(&graph::render(&dump, graph::ExportFormat::Json)).unwrap();
    assert_eq!(json["relationships"][0]["relation"], "writes_to");
}

fn recall_filters_by_type_and_never_shows_forgotten_memories(s: &mut Fixture) {
    let mut d = new("d", "deploys happen on friday");
    d.memory_type = Some(loci_memory::MemoryType::Decision);
    remember(&mut **s, &d).unwrap();
    remember(&mut **s, &new("n", "deploys are scary")).unwrap();
    let mut req = RecallRequest {
        query: "deploys".into(),
        filter: filter(),
        ..RecallRequest::default()
    };
    assert_eq!(
        recall(&mut **s, &NoCode, false, None, &req)
            .unwrap()
            .hits
            .len(),
        2
    );
    req.filter.types = vec![loci_memory::MemoryType::Decision];
    let a = recall(&mut **s, &NoCode, false, None, &req).unwrap();
    assert_eq!(
        a.hits
            .iter()
            .map(|h| h.memory.name.as_str())
            .collect::<Vec<_>>(),
        ["d"]
    );
    req.filter.types.clear();
    s.forget("default", "d").unwrap();
    let a = recall(&mut **s, &NoCode, false, None, &req).unwrap();
    assert_eq!(
        a.hits
            .iter()
            .map(|h| h.memory.name.as_str())
            .collect::<Vec<_>>(),
        ["n"]
    );
}

fn each_hit_snippets_its_own_body_read_by_id(s: &mut Fixture) {
    let bodies = [
        (
            "harbour",
            "Opening line.\nThe harbour crane lifts containers at dawn.",
        ),
        (
            "crane",
            "Cranes are birds.\nA crane nests near the harbour.",
        ),
        ("unrelated", "Nothing here about ports."),
    ];
    let mut ids = Vec::new();
    for (name, body) in bodies {
        ids.push(remember(&mut **s, &new(name, body)).unwrap());
    }
    // Read in one go, in any order, each with its own body; none for no ids.
    let mut read = s.bodies(&ids).unwrap();
    read.sort();
    let want: Vec<(i64, String)> = ids
        .iter()
        .zip(bodies)
        .map(|(id, (_, body))| (*id, body.to_string()))
        .collect();
    assert_eq!(read, want);
    assert!(s.bodies(&[]).unwrap().is_empty());
    // Each hit's snippet is the line of its own body holding the query's words.
    let req = RecallRequest {
        query: "harbour crane".into(),
        filter: filter(),
        ..RecallRequest::default()
    };
    let a = recall(&mut **s, &NoCode, false, None, &req).unwrap();
    let snippets: Vec<(&str, Option<&str>)> = a
        .hits
        .iter()
        .map(|h| (h.memory.name.as_str(), h.snippet.as_deref()))
        .collect();
    assert_eq!(snippets.len(), 2, "{snippets:?}");
    assert!(
        snippets.contains(&(
            "harbour",
            Some("The harbour crane lifts containers at dawn.")
        )),
        "{snippets:?}"
    );
    assert!(
        snippets.contains(&("crane", Some("A crane nests near the harbour."))),
        "{snippets:?}"
    );
}

/// An embedder whose every call fails.
struct Broken;

impl Embedder for Broken {
    fn model_id(&self) -> &str {
        "test-broken"
    }
    fn dim(&self) -> usize {
        64
    }
    fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError("the model is gone".into()))
    }
}

fn a_query_that_cannot_be_embedded_fails_the_recall(s: &mut Fixture) {
    // The failure is the recall's error (the host then answers with full text and
    // graph, saying vectors failed), not a recall without vectors.
    remember(
        &mut **s,
        &new("harbour", "The harbour crane lifts containers."),
    )
    .unwrap();
    let req = RecallRequest {
        query: "harbour crane".into(),
        filter: filter(),
        ..RecallRequest::default()
    };
    match recall(&mut **s, &NoCode, false, Some(&Broken), &req) {
        Err(MemoryError::Embed(why)) => assert!(why.contains("the model is gone"), "{why}"),
        other => panic!("expected an embedding error, got {other:?}"),
    }
    // Without an embedder the same recall answers from full text.
    let a = recall(&mut **s, &NoCode, false, None, &req).unwrap();
    assert_eq!(a.hits.len(), 1);
}
