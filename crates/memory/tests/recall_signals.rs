//! Recall's signals one at a time and fused, over both stores: each signal alone
//! answers only what that signal finds (how the quality harness measures them), and the
//! fusion (full text and vectors by score, the graph by rank) keeps a text hit above
//! memories that merely share an entity the query names.

use loci_memory::model::EntityInput;
use loci_memory::recall::{RecallRequest, Signals, recall};
use loci_memory::vector::{EmbedError, Embedder, embed_pending};
use loci_memory::{Filter, MemoryStore, NewMemory, NoCode, ops};

use crate::stores::Fixture;

conformance!(
    each_signal_alone_answers_only_what_it_finds,
    a_text_hit_outranks_memories_that_only_share_a_common_entity,
);

fn remember(store: &mut dyn MemoryStore, name: &str, body: &str, entities: &[&str]) {
    let m = NewMemory {
        name: name.into(),
        body: body.into(),
        entities: entities
            .iter()
            .map(|e| EntityInput {
                name: (*e).into(),
                entity_type: "component".into(),
                aliases: vec![],
            })
            .collect(),
        ..Default::default()
    };
    ops::remember(store, &NoCode, false, &m, &[]).unwrap();
}

fn ask(store: &mut dyn MemoryStore, query: &str, signals: Signals) -> Vec<(String, [bool; 3])> {
    let req = RecallRequest {
        query: query.into(),
        filter: Filter {
            namespace: "default".into(),
            ..Filter::default()
        },
        signals,
        ..RecallRequest::default()
    };
    recall(store, &NoCode, false, Some(&Letters), &req)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| {
            let w = [
                h.why.fts.is_some(),
                h.why.vector.is_some(),
                h.why.graph.is_some(),
            ];
            (h.memory.name, w)
        })
        .collect()
}

/// A deterministic embedder: a text's vector counts its letters a..z.
struct Letters;

impl Embedder for Letters {
    fn model_id(&self) -> &str {
        "test-letters-26"
    }
    fn dim(&self) -> usize {
        26
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 26];
                for c in t
                    .to_ascii_lowercase()
                    .bytes()
                    .filter(u8::is_ascii_lowercase)
                {
                    v[usize::from(c - b'a')] += 1.0;
                }
                v
            })
            .collect())
    }
}

fn each_signal_alone_answers_only_what_it_finds(s: &mut Fixture) {
    remember(&mut **s, "retry", "Fetch retries three times", &["Ledger"]);
    remember(&mut **s, "billing", "Invoices go out hourly", &["Billing"]);
    embed_pending(&mut **s, &Letters, 8, 100).unwrap();

    let fts = ask(&mut **s, "fetch", Signals::FTS);
    assert_eq!(fts, [("retry".to_string(), [true, false, false])]);

    // Vectors alone: every memory has a vector, each hit says only `vector`.
    let vectors = ask(&mut **s, "fetch", Signals::VECTORS);
    assert_eq!(vectors.len(), 2, "{vectors:?}");
    assert!(
        vectors.iter().all(|(_, w)| *w == [false, true, false]),
        "{vectors:?}"
    );

    // Graph alone: the entity the query names; no text hit seeds it.
    let graph = ask(&mut **s, "billing fetch", Signals::GRAPH);
    assert_eq!(graph, [("billing".to_string(), [false, false, true])]);

    // Hybrid: all three take part.
    let hybrid = ask(&mut **s, "billing fetch", Signals::ALL);
    let billing = hybrid.iter().find(|(n, _)| n == "billing").unwrap();
    assert_eq!(billing.1, [true, true, true], "{hybrid:?}");
}

fn a_text_hit_outranks_memories_that_only_share_a_common_entity(s: &mut Fixture) {
    // Thirty notes about Cargo (the query names the entity), stored first so the old
    // tie-break by id favoured them; none says anything about build scripts.
    for i in 0..30 {
        remember(
            &mut **s,
            &format!("ws-{i:02}"),
            &format!("Note {i} about workspaces"),
            &["Cargo"],
        );
    }
    remember(
        &mut **s,
        "scripts",
        "A build script runs before the crate compiles",
        &[],
    );
    let req = RecallRequest {
        query: "cargo build script".into(),
        filter: Filter {
            namespace: "default".into(),
            ..Filter::default()
        },
        ..RecallRequest::default()
    };
    let a = recall(&mut **s, &NoCode, false, None, &req).unwrap();
    let top = &a.hits[0];
    assert_eq!(
        top.memory.name,
        "scripts",
        "{:?}",
        a.hits.iter().map(|h| &h.memory.name).collect::<Vec<_>>()
    );
    // They are still recalled, through the entity, below it.
    let cargo = a.hits.iter().find(|h| h.memory.name == "ws-00").unwrap();
    let g = cargo.why.graph.as_ref().unwrap();
    assert_eq!(g.path, ["entity:Cargo"]);
    assert!(top.score > cargo.score, "{} {}", top.score, cargo.score);
}
