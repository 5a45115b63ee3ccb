//! More of the store conformance suite, run against SQLite and PostgreSQL: merging two
//! memories, unlinking and following moved code, the extraction record, listing with
//! filters and pages, the counts, the code-link lookups recall makes, and the vectors'
//! bookkeeping.

use loci_memory::extract::{Extracted, Extraction, ExtractionState};
use loci_memory::model::{
    CodeKey, EntityInput, LinkOrigin, NewCodeLink, Operation, RelationshipInput,
};
use loci_memory::{Edit, Filter, MERGED_INTO, MemoryError, MemoryType, NewMemory};

use crate::stores::Fixture;

conformance!(
    a_merge_unions_two_memories_and_restore_undoes_it,
    a_merge_is_refused_for_itself_a_missing_name_and_a_forgotten_memory,
    unlink_removes_only_what_it_names_and_move_link_follows_code,
    a_failed_extraction_is_counted_until_an_enrichment_succeeds,
    list_pages_filters_and_counts_by_namespace_and_type,
    code_link_lookups_find_memories_by_key_and_by_file,
    vectors_are_kept_per_chunk_and_a_wrong_length_stores_nothing,
);

fn filter(ns: &str) -> Filter {
    Filter {
        namespace: ns.into(),
        ..Filter::default()
    }
}

fn code(path: &str, name: &str, origin: LinkOrigin) -> NewCodeLink {
    NewCodeLink {
        key: CodeKey {
            path: path.into(),
            qualified_name: name.into(),
            kind: "function".into(),
        },
        hash: format!("hash-of-{name}"),
        line: 7,
        origin,
        mention: None,
    }
}

fn entity(name: &str) -> EntityInput {
    EntityInput {
        name: name.into(),
        entity_type: "component".into(),
        aliases: vec![],
    }
}

fn memory(name: &str, body: &str) -> NewMemory {
    NewMemory {
        name: name.into(),
        body: body.into(),
        ..NewMemory::default()
    }
}

fn a_merge_unions_two_memories_and_restore_undoes_it(s: &mut Fixture) {
    let mut from = memory("from", "Retries back off exponentially.");
    from.metadata = Some(serde_json::json!({"ticket": "T-1", "owner": "ann"}));
    from.description = "how retries wait".into();
    from.entities = vec![entity("Retry"), entity("Fetch")];
    from.relationships = vec![RelationshipInput {
        source: "Fetch".into(),
        target: "Retry".into(),
        relation: "uses".into(),
        weight: 0.5,
    }];
    s.create(
        &from,
        "default",
        &[
            code("src/net.rs", "fetch", LinkOrigin::Manual),
            code("src/retry.rs", "backoff", LinkOrigin::Auto),
        ],
    )
    .unwrap();
    let mut into = memory("into", "Fetch retries three times.");
    into.metadata = Some(serde_json::json!({"owner": "bob"}));
    into.entities = vec![entity("Fetch")];
    s.create(
        &into,
        "default",
        &[code("src/net.rs", "fetch", LinkOrigin::Auto)],
    )
    .unwrap();

    let (kept, gone) = s.merge("default", "from", "into").unwrap();
    assert_eq!(
        kept.body,
        "Fetch retries three times.\n\nRetries back off exponentially."
    );
    assert_eq!(kept.description, "how retries wait", "into had none");
    assert_eq!(
        kept.metadata,
        serde_json::json!({"owner": "bob", "ticket": "T-1"}),
        "into's keys win"
    );
    assert_eq!(kept.entities, ["Fetch", "Retry"]);
    let links: Vec<(&str, LinkOrigin, &str)> = kept
        .links
        .iter()
        .map(|l| (l.key.qualified_name.as_str(), l.origin, l.hash.as_str()))
        .collect();
    assert_eq!(
        links,
        [
            ("fetch", LinkOrigin::Manual, "hash-of-fetch"),
            ("backoff", LinkOrigin::Auto, "hash-of-backoff")
        ],
        "a manual link stays manual"
    );
    assert!(gone.deleted_at.is_some());
    assert_eq!(gone.metadata[MERGED_INTO], "into");
    let ops = |name: &str| -> Vec<Operation> {
        s.history("default", name)
            .unwrap()
            .iter()
            .map(|v| v.op)
            .collect()
    };
    assert_eq!(ops("into"), [Operation::Create, Operation::Merge]);
    assert_eq!(ops("from"), [Operation::Create, Operation::Merge]);
    // The relationship is credited to the kept memory: purging `from` keeps it.
    s.purge("default", "from").unwrap();
    assert_eq!(s.relationships("default").unwrap().len(), 1);

    // A second merge, undone: `restore` brings the merged-away memory back without its
    // pointer, and an old version of the kept one.
    s.create(&memory("extra", "Timeouts are 5 s."), "default", &[])
        .unwrap();
    s.merge("default", "extra", "into").unwrap();
    let back = s.restore("default", "extra", None).unwrap();
    assert!(back.deleted_at.is_none());
    assert!(
        back.metadata.get(MERGED_INTO).is_none(),
        "{}",
        back.metadata
    );
    let old = s.restore("default", "into", Some(1)).unwrap();
    assert_eq!(old.body, "Fetch retries three times.");
    assert_eq!(old.metadata, serde_json::json!({"owner": "bob"}));
    assert_eq!(old.version, 4);
}

fn a_merge_is_refused_for_itself_a_missing_name_and_a_forgotten_memory(s: &mut Fixture) {
    s.create(&memory("a", "one"), "default", &[]).unwrap();
    s.create(&memory("b", "two"), "default", &[]).unwrap();
    s.create(&memory("c", "three"), "team", &[]).unwrap();
    assert!(matches!(
        s.merge("default", "a", "a"),
        Err(MemoryError::Invalid(_))
    ));
    let e = s.merge("default", "c", "a").unwrap_err();
    assert!(
        matches!(e, MemoryError::NotFound(_)) && e.to_string().contains("namespace team has one"),
        "{e}"
    );
    s.forget("default", "b").unwrap();
    assert!(matches!(
        s.merge("default", "a", "b"),
        Err(MemoryError::WrongState(_))
    ));
    let a = s.read("default", "a").unwrap();
    assert_eq!((a.version, a.body.as_str()), (1, "one"), "nothing changed");
}

fn unlink_removes_only_what_it_names_and_move_link_follows_code(s: &mut Fixture) {
    let mut m = memory("m", "body");
    m.entities = vec![entity("Ledger"), entity("Billing")];
    s.create(
        &m,
        "default",
        &[
            code("src/a.rs", "alpha", LinkOrigin::Manual),
            code("src/b.rs", "beta", LinkOrigin::Manual),
        ],
    )
    .unwrap();
    let after = s.unlink("default", "m", Some("ledger"), None).unwrap();
    assert_eq!(
        after.entities,
        ["Billing"],
        "entity names match in any case"
    );
    assert_eq!(after.version, 2);
    let key = CodeKey {
        path: "src/a.rs".into(),
        qualified_name: String::new(),
        kind: String::new(),
    };
    let after = s.unlink("default", "m", None, Some(&key)).unwrap();
    assert_eq!(after.links.len(), 1);
    assert!(matches!(
        s.unlink("default", "m", Some("Nowhere"), None),
        Err(MemoryError::NotFound(_))
    ));
    assert_eq!(
        s.read("default", "m").unwrap().version,
        3,
        "a refusal is no version"
    );

    // A link follows its code; one that would duplicate another link stays put.
    s.link(
        "default",
        "m",
        &[],
        &[],
        &[code("src/c.rs", "gamma", LinkOrigin::Manual)],
    )
    .unwrap();
    let links = s.read("default", "m").unwrap().links;
    let beta = links
        .iter()
        .find(|l| l.key.qualified_name == "beta")
        .unwrap();
    let to = CodeKey {
        path: "src/moved.rs".into(),
        qualified_name: "beta".into(),
        kind: "function".into(),
    };
    s.move_link(beta.id, &to, 42).unwrap();
    let gamma = links
        .iter()
        .find(|l| l.key.qualified_name == "gamma")
        .unwrap();
    s.move_link(gamma.id, &to, 1).unwrap();
    let now = s.read("default", "m").unwrap().links;
    let keys: Vec<(&str, &str, u32)> = now
        .iter()
        .map(|l| (l.key.path.as_str(), l.key.qualified_name.as_str(), l.line))
        .collect();
    assert_eq!(
        keys,
        [("src/c.rs", "gamma", 7), ("src/moved.rs", "beta", 42)]
    );
}

fn a_failed_extraction_is_counted_until_an_enrichment_succeeds(s: &mut Fixture) {
    s.create(
        &memory("m", "The ledger writes to billing."),
        "default",
        &[],
    )
    .unwrap();
    let failed = Extraction {
        state: ExtractionState::Failed,
        tool: "claude".into(),
        at: 1,
        reason: Some("timed out".into()),
        kind: Some("llm_timed_out".into()),
        entities: 0,
        relationships: 0,
    };
    let m = s.set_extraction("default", "m", &failed).unwrap();
    assert_eq!(m.extraction.as_ref(), Some(&failed));
    assert_eq!(m.version, 1, "no new version: the content did not change");
    assert_eq!(s.stats(None).unwrap().extraction_failed, 1);
    let listed = s.list(&filter("default"), 10, 0).unwrap().0;
    assert_eq!(listed[0].extraction.as_ref(), Some(&failed));

    let extracted = Extracted {
        entities: vec![entity("Ledger"), entity("Billing")],
        relationships: vec![RelationshipInput {
            source: "Ledger".into(),
            target: "Billing".into(),
            relation: "writes_to".into(),
            weight: 1.0,
        }],
    };
    let done = Extraction {
        state: ExtractionState::Done,
        tool: "claude".into(),
        at: 2,
        reason: None,
        kind: None,
        entities: 2,
        relationships: 1,
    };
    let m = s.enrich("default", "m", &extracted, &done).unwrap();
    assert_eq!(m.entities, ["Billing", "Ledger"]);
    assert_eq!(m.extraction.as_ref(), Some(&done));
    assert_eq!(s.history("default", "m").unwrap()[1].op, Operation::Enrich);
    assert_eq!(s.stats(None).unwrap().extraction_failed, 0);
    s.forget("default", "m").unwrap();
    assert!(matches!(
        s.set_extraction("default", "m", &failed),
        Err(MemoryError::WrongState(_))
    ));
}

fn list_pages_filters_and_counts_by_namespace_and_type(s: &mut Fixture) {
    for (i, t) in [MemoryType::Decision, MemoryType::Note, MemoryType::Decision]
        .into_iter()
        .enumerate()
    {
        let mut m = memory(&format!("d{i}"), "word");
        m.memory_type = Some(t);
        s.create(&m, "default", &[]).unwrap();
    }
    s.create(&memory("other", "word"), "team", &[]).unwrap();
    // A later millisecond, so the forget is the latest change.
    std::thread::sleep(std::time::Duration::from_millis(5));
    s.forget("default", "d1").unwrap();
    // d1 changed last: it leads once forgotten memories are asked for.
    let (page, total) = s.list(&filter("default"), 1, 1).unwrap();
    assert_eq!(total, 2);
    assert_eq!(
        page.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
        ["d0"]
    );
    let mut f = filter("default");
    f.include_forgotten = true;
    let (all, total) = s.list(&f, 10, 0).unwrap();
    assert_eq!(total, 3);
    assert_eq!(
        all.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
        ["d1", "d2", "d0"]
    );
    f.types = vec![MemoryType::Note];
    assert_eq!(s.list(&f, 10, 0).unwrap().1, 1);
    f.types.clear();
    f.since = Some(all[0].updated_at + 1);
    assert_eq!(s.list(&f, 10, 0).unwrap().1, 0);
    f.since = None;
    f.until = Some(all[0].updated_at);
    assert_eq!(s.list(&f, 10, 0).unwrap().1, 3);

    let st = s.stats(Some("default")).unwrap();
    assert_eq!((st.memories, st.forgotten, st.versions), (2, 1, 4));
    assert_eq!(st.types.get("decision"), Some(&2));
    assert_eq!(
        st.types.get("note"),
        None,
        "forgotten memories are not counted by type"
    );
    assert_eq!(
        st.namespaces.get("team"),
        Some(&1),
        "every namespace is listed"
    );
    let all = s.stats(None).unwrap();
    assert_eq!((all.memories, all.chunks), (3, 4));
}

fn code_link_lookups_find_memories_by_key_and_by_file(s: &mut Fixture) {
    let a = s
        .create(
            &memory("a", "x"),
            "default",
            &[
                code("src/lib.rs", "parse", LinkOrigin::Manual),
                code("src/lib.rs", "Args", LinkOrigin::Auto),
            ],
        )
        .unwrap();
    let b = s
        .create(
            &memory("b", "y"),
            "default",
            &[code("src/main.rs", "main", LinkOrigin::Manual)],
        )
        .unwrap();
    s.create(
        &memory("c", "z"),
        "team",
        &[code("src/lib.rs", "parse", LinkOrigin::Manual)],
    )
    .unwrap();
    let key = CodeKey {
        path: "src/lib.rs".into(),
        qualified_name: "parse".into(),
        kind: "function".into(),
    };
    let by_key = s
        .memories_linked_to(&filter("default"), std::slice::from_ref(&key), &[])
        .unwrap();
    assert_eq!(
        by_key,
        [(a.id, key.clone())],
        "the other namespace is left out"
    );
    let mut by_file = s
        .memories_linked_to(
            &filter("default"),
            &[],
            &["src/main.rs".into(), "src/lib.rs".into()],
        )
        .unwrap();
    by_file.sort();
    assert_eq!(
        by_file
            .iter()
            .map(|(id, k)| (*id, k.qualified_name.as_str()))
            .collect::<Vec<_>>(),
        [(a.id, "Args"), (a.id, "parse"), (b.id, "main")]
    );
    let links = s.links_of(&[a.id, b.id]).unwrap();
    let names: Vec<(i64, &str)> = links
        .iter()
        .map(|(id, l)| (*id, l.key.qualified_name.as_str()))
        .collect();
    assert_eq!(names, [(a.id, "Args"), (a.id, "parse"), (b.id, "main")]);
    let mut summaries = s.summaries(&[b.id, a.id]).unwrap();
    summaries.sort_by_key(|m| m.id);
    assert_eq!(
        summaries
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
}

fn vectors_are_kept_per_chunk_and_a_wrong_length_stores_nothing(s: &mut Fixture) {
    // Two chunks (paragraphs packed up to 1,000 bytes), one holding multi-byte text.
    let first = "é".repeat(400);
    let second = "ß".repeat(400);
    let m = s
        .create(
            &memory("m", &format!("{first}\n\n{second}")),
            "default",
            &[],
        )
        .unwrap();
    let pending = s.pending_chunks("model-a", 10).unwrap();
    let texts: Vec<(u32, &str)> = pending.iter().map(|c| (c.seq, c.text.trim())).collect();
    assert_eq!(texts, [(0, first.as_str()), (1, second.as_str())]);
    let e = s
        .store_vectors(
            "model-a",
            3,
            &[(m.id, 0, vec![1.0, 0.0, 0.0]), (m.id, 1, vec![1.0])],
        )
        .unwrap_err();
    assert!(matches!(e, MemoryError::Embed(_)), "{e}");
    assert_eq!(s.stats(None).unwrap().embedded_chunks, 0, "nothing stored");
    s.store_vectors("model-a", 3, &[(m.id, 0, vec![1.0, 0.0, 0.0])])
        .unwrap();
    assert_eq!(s.pending_chunks("model-a", 10).unwrap().len(), 1);
    assert_eq!(
        s.pending_chunks("model-b", 10).unwrap().len(),
        2,
        "per model"
    );
    let mut seen = Vec::new();
    s.scan_vectors("model-a", &filter("default"), &mut |id, seq, v| {
        seen.push((id, seq, v.to_vec()))
    })
    .unwrap();
    assert_eq!(seen, [(m.id, 0, vec![1.0, 0.0, 0.0])]);
    // A new body drops the old chunks' vectors.
    s.edit(
        "default",
        "m",
        &Edit {
            body: Some("short".into()),
            ..Edit::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(s.stats(None).unwrap().embedded_chunks, 0);
    assert_eq!(s.pending_chunks("model-a", 10).unwrap()[0].text, "short");
}
