//! Recall's full-text ranking over both stores: words are stemmed, a common word is
//! scored on every memory holding it (not just its most recent ones), a word too common
//! to score exactly still counts for the memories the rarer words found but is not
//! scored on every memory holding it, a rare word outranks a common one and a word in
//! the name outranks it in the body; and (SQLite only) a store made before stemming is
//! migrated with every memory still found.

use loci_memory::recall::{RecallRequest, Signals, query_terms, recall};
use loci_memory::{Filter, MemoryStore, NewMemory, NoCode, SqliteStore, ops};

use crate::stores::Fixture;

conformance!(
    query_words_find_memories_that_use_another_form_of_them,
    a_common_word_is_scored_on_every_memory_holding_it,
    a_word_too_common_to_score_exactly_still_counts_where_the_rare_words_are,
    a_rare_word_outranks_a_common_one,
    a_word_in_the_name_outranks_the_same_word_in_the_body,
    a_very_common_word_is_scored_on_its_newest_memories_only,
);

fn filter() -> Filter {
    Filter {
        namespace: "default".into(),
        ..Filter::default()
    }
}

fn remember(store: &mut dyn MemoryStore, name: &str, body: &str) {
    let m = NewMemory {
        name: name.into(),
        body: body.into(),
        ..Default::default()
    };
    ops::remember(store, &NoCode, false, &m, &[]).unwrap();
}

/// The names of the full-text hits for `query`, best first.
fn fts_names(store: &mut dyn MemoryStore, query: &str) -> Vec<String> {
    let req = RecallRequest {
        query: query.into(),
        filter: filter(),
        limit: 10,
        signals: Signals::FTS,
        ..RecallRequest::default()
    };
    recall(store, &NoCode, false, None, &req)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.memory.name)
        .collect()
}

fn query_words_find_memories_that_use_another_form_of_them(s: &mut Fixture) {
    // Named so that only the body can match.
    remember(
        &mut **s,
        "scope-note",
        "Define a module to control scope and privacy.",
    );
    remember(&mut **s, "lunch", "Lunch is at noon in the big room.");
    assert_eq!(fts_names(&mut **s, "Defining Modules"), ["scope-note"]);
}

fn a_common_word_is_scored_on_every_memory_holding_it(s: &mut Fixture) {
    // The oldest memory says "widget" most densely; 449 newer ones say it once in a
    // longer text. Scored only on its 200 most recent postings, the word would never
    // reach the oldest.
    remember(&mut **s, "dense", "widget widget widget widget");
    let filler = "and then some more words about other things entirely, said once";
    for i in 0..449 {
        remember(&mut **s, &format!("m{i}"), &format!("widget {filler} {i}"));
    }
    let hits = s.fts(&query_terms("widget"), &filter(), 5).unwrap();
    let top = s.summaries(&[hits[0].0]).unwrap();
    assert_eq!(top[0].name, "dense", "{hits:?}");
}

fn a_word_too_common_to_score_exactly_still_counts_where_the_rare_words_are(s: &mut Fixture) {
    // Two old memories with the rare word, the same length (names included); only the
    // first also has the common word, which 2,100 newer memories hold (past the exact
    // budget). Without the common word's credit they tie, and the newer one wins.
    remember(&mut **s, "note-a", "zephyrine everyday note");
    remember(&mut **s, "note-b", "zephyrine unusual note");
    for i in 0..2_100 {
        remember(
            &mut **s,
            &format!("m{i}"),
            &format!("everyday entry number {i}"),
        );
    }
    let names = fts_names(&mut **s, "zephyrine everyday");
    assert_eq!(
        names.first().map(String::as_str),
        Some("note-a"),
        "{names:?}"
    );
}

#[test]
fn a_store_made_before_stemming_is_migrated_and_finds_every_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    {
        let mut s = SqliteStore::open(&path).unwrap();
        remember(&mut s, "scope-note", "Define a module to control scope.");
        remember(&mut s, "lunch", "Lunch is at noon.");
    }
    // Put the file back as migration 3 left it: the unstemmed full-text table.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE memory_fts;
             CREATE VIRTUAL TABLE memory_fts USING fts5(
                 name, description, body, content='memories', content_rowid='id',
                 tokenize='unicode61 remove_diacritics 2');
             INSERT INTO memory_fts(memory_fts) VALUES ('rebuild');
             PRAGMA user_version = 3;",
        )
        .unwrap();
        let found: i64 = conn
            .query_row(
                "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH 'defining'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(found, 0, "the old table does not stem");
    }
    let mut s = SqliteStore::open(&path).unwrap();
    assert_eq!(fts_names(&mut s, "defining modules"), ["scope-note"]);
    assert_eq!(fts_names(&mut s, "lunch noon"), ["lunch"]);
    // Still kept up to date by the triggers after the migration.
    remember(&mut s, "later", "Noon lunches are taken outside.");
    assert_eq!(fts_names(&mut s, "lunches").len(), 2);
}

fn a_rare_word_outranks_a_common_one(s: &mut Fixture) {
    // Each memory holds one word of the query once, in bodies of one length; "quokka" is
    // in one memory, "service" in twenty. The rare word's memory ranks first.
    remember(&mut **s, "rare", "the quokka lives on an island far away");
    for i in 0..20 {
        remember(
            &mut **s,
            &format!("common-{i:02}"),
            &format!("the service lives on host number {i}"),
        );
    }
    let names = fts_names(&mut **s, "service quokka");
    assert_eq!(names.first().map(String::as_str), Some("rare"), "{names:?}");
    assert_eq!(names.len(), 10, "{names:?}");
}

fn a_word_in_the_name_outranks_the_same_word_in_the_body(s: &mut Fixture) {
    // The same words in each, the query word once: in the older one's name, in the
    // newer one's body. Weighted alike they would tie, and the newer one would win.
    remember(
        &mut **s,
        "kestrel",
        "a small note about hovering birds of prey",
    );
    remember(
        &mut **s,
        "birds",
        "a small note about hovering kestrel of prey",
    );
    assert_eq!(fts_names(&mut **s, "kestrel"), ["kestrel", "birds"]);
}

fn a_very_common_word_is_scored_on_its_newest_memories_only(s: &mut Fixture) {
    // 2,100 memories hold the word, past the exact budget: asked for all of them, full
    // text answers at most the 200 newest (what it read), the newest among them.
    for i in 0..2_100 {
        remember(
            &mut **s,
            &format!("m{i}"),
            &format!("everyday entry number {i}"),
        );
    }
    let hits = s.fts(&query_terms("everyday"), &filter(), 5_000).unwrap();
    assert!(!hits.is_empty() && hits.len() <= 200, "{}", hits.len());
    let ids: Vec<i64> = hits.iter().map(|h| h.0).collect();
    let names: Vec<String> = s
        .summaries(&ids)
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert!(names.iter().any(|n| n == "m2099"), "{names:?}");
    assert!(!names.iter().any(|n| n == "m0"), "{names:?}");
}

#[test]
fn exact_words_score_what_each_words_own_bm25_adds_up_to() {
    // Three words of distinct frequency (rarest first: quokka in 6 memories, lantern in
    // 9, pebble in 10), in bodies of different lengths, some holding two or all three;
    // the full-text score of each memory is, bit for bit, the sum of FTS5's bm25() of
    // each word's own query, rarest word first.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let mut s = SqliteStore::open(&path).unwrap();
    let words = ["quokka", "lantern", "pebble"];
    let mut n = 0;
    for (w, count) in words.iter().zip([2, 7, 10]) {
        for i in 0..count {
            n += 1;
            let mut body = format!("{w} note {i} with {} filler words", "more ".repeat(n % 5));
            if w == &"pebble" && (i % 3 == 1 || i == 2) {
                body.push_str(" and a quokka");
            }
            if w == &"pebble" && i % 4 == 2 {
                body.push_str(" lantern lantern");
            }
            remember(&mut s, &format!("{w}-{i}"), &body);
        }
    }
    let terms = query_terms("pebble lantern quokka");
    let got = s.fts(&terms, &filter(), 100).unwrap();

    let conn = rusqlite::Connection::open(&path).unwrap();
    let df = |w: &str| -> i64 {
        conn.query_row(
            "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?1",
            [format!("\"{w}\"")],
            |r| r.get(0),
        )
        .unwrap()
    };
    let mut by_rarity: Vec<&str> = words.to_vec();
    by_rarity.sort_by_key(|w| df(w));
    let dfs: Vec<i64> = by_rarity.iter().map(|w| df(w)).collect();
    assert!(dfs.windows(2).all(|p| p[0] < p[1]), "distinct: {dfs:?}");
    let mut want: std::collections::HashMap<i64, f64> = Default::default();
    for w in by_rarity {
        let mut stmt = conn
            .prepare("SELECT rowid, bm25(memory_fts, 10.0, 4.0, 1.0) FROM memory_fts WHERE memory_fts MATCH ?1")
            .unwrap();
        let rows = stmt
            .query_map([format!("\"{w}\"")], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
            })
            .unwrap();
        for row in rows {
            let (id, score) = row.unwrap();
            *want.entry(id).or_default() += score;
        }
    }
    assert_eq!(got.len(), want.len());
    for (id, score) in got {
        assert_eq!(
            score.to_bits(),
            want[&id].to_bits(),
            "memory {id}: {score} != {}",
            want[&id]
        );
    }
}
