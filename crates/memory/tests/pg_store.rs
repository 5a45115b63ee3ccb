//! What the PostgreSQL store must do beyond the conformance suite, as the team store
//! (issue #31) needs it: two connections behave as two machines sharing one database;
//! racing writers on both lose nothing and duplicate no version; scopes do not see each
//! other; a statement past the timeout fails instead of hanging; a newer schema, or
//! processes connecting at once, are handled on connect; no error shows the password;
//! a dropped connection is reopened.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use loci_memory::{Edit, Filter, MemoryError, MemoryStore, NewMemory, PgOptions, PgStore};

use crate::pg_cluster::database;

pub(crate) fn memory(name: &str, body: &str) -> NewMemory {
    NewMemory {
        name: name.into(),
        body: body.into(),
        ..NewMemory::default()
    }
}

fn body(b: &str) -> Edit {
    Edit {
        body: Some(b.into()),
        ..Edit::default()
    }
}

fn filter() -> Filter {
    Filter {
        namespace: "default".into(),
        ..Filter::default()
    }
}

fn admin(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}

#[test]
fn a_write_through_one_node_is_read_through_the_other_at_once() {
    let Some(url) = database() else { return };
    let mut a = PgStore::connect(&url, "github.com/team/repo").unwrap();
    let mut b = PgStore::connect(&url, "github.com/team/repo").unwrap();
    a.create(
        &memory("deploys", "Deploys go out on Tuesdays."),
        "default",
        &[],
    )
    .unwrap();
    assert_eq!(
        b.read("default", "deploys").unwrap().body,
        "Deploys go out on Tuesdays."
    );
    b.edit(
        "default",
        "deploys",
        &body("Deploys go out on Wednesdays."),
        None,
    )
    .unwrap();
    let h = a.history("default", "deploys").unwrap();
    assert_eq!(h.iter().map(|v| v.version).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(
        a.read("default", "deploys").unwrap().body,
        "Deploys go out on Wednesdays."
    );
    a.forget("default", "deploys").unwrap();
    assert!(b.list(&filter(), 10, 0).unwrap().0.is_empty());
    let terms = loci_memory::recall::query_terms("wednesday deploys");
    assert!(
        b.fts(&terms, &filter(), 10).unwrap().is_empty(),
        "forgotten: not recalled"
    );
    b.restore("default", "deploys", None).unwrap();
    assert_eq!(a.fts(&terms, &filter(), 10).unwrap().len(), 1);
}

/// What one writer thread did: each write it was told succeeded, and each refused one.
#[derive(Default)]
struct Outcome {
    shared_ok: Vec<String>,
    shared_failed: Vec<String>,
    own_edits: u32,
    contested_won: Vec<u32>,
}

#[test]
fn racing_writers_on_two_nodes_lose_nothing_and_duplicate_no_version() {
    const WRITERS: usize = 8;
    const ROUNDS: u32 = 20;
    let Some(url) = database() else { return };
    let url = Arc::new(url);
    let mut first = PgStore::connect(&url, "repo").unwrap();
    first
        .create(&memory("shared", "v0"), "default", &[])
        .unwrap();
    let started = Instant::now();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let url = url.clone();
            std::thread::spawn(move || {
                // Each writer its own connection: eight processes on two machines.
                let mut s = PgStore::connect(&url, "repo").unwrap();
                let mut out = Outcome::default();
                let own = format!("own-{w}");
                s.create(&memory(&own, "start"), "default", &[]).unwrap();
                for i in 0..ROUNDS {
                    // The same name for every writer...
                    let text = format!("w{w}-{i}");
                    match s.edit("default", "shared", &body(&text), None) {
                        Ok(_) => out.shared_ok.push(text),
                        Err(e) if e.is_busy() => out.shared_failed.push(text),
                        Err(e) => panic!("{e}"),
                    }
                    // ...a name of its own...
                    match s.edit("default", &own, &body(&format!("{own}-{i}")), None) {
                        Ok(_) => out.own_edits += 1,
                        Err(e) if e.is_busy() => {}
                        Err(e) => panic!("{e}"),
                    }
                    // ...and a new name every writer tries to create.
                    match s.create(
                        &memory(&format!("contested-{i}"), &format!("by {w}")),
                        "default",
                        &[],
                    ) {
                        Ok(_) => out.contested_won.push(i),
                        Err(MemoryError::NameTaken { .. }) => {}
                        Err(e) if e.is_busy() => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                out
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let elapsed = started.elapsed();

    let h = first.history("default", "shared").unwrap();
    let acked: usize = outcomes.iter().map(|o| o.shared_ok.len()).sum();
    assert_eq!(
        h.iter().map(|v| v.version as usize).collect::<Vec<_>>(),
        (1..=acked + 1).collect::<Vec<_>>(),
        "one version per acknowledged edit, no gap, no duplicate"
    );
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &h {
        *seen.entry(v.body.as_str()).or_default() += 1;
    }
    for o in &outcomes {
        for text in &o.shared_ok {
            assert_eq!(
                seen.get(text.as_str()),
                Some(&1),
                "{text}: acknowledged, so there once"
            );
        }
        for text in &o.shared_failed {
            assert_eq!(seen.get(text.as_str()), None, "{text}: refused, so absent");
        }
    }
    for (w, o) in outcomes.iter().enumerate() {
        let versions: Vec<u32> = first
            .history("default", &format!("own-{w}"))
            .unwrap()
            .iter()
            .map(|v| v.version)
            .collect();
        assert_eq!(
            versions,
            (1..=o.own_edits + 1).collect::<Vec<_>>(),
            "own-{w}"
        );
    }
    for i in 0..ROUNDS {
        let winners: Vec<usize> = outcomes
            .iter()
            .enumerate()
            .filter(|(_, o)| o.contested_won.contains(&i))
            .map(|(w, _)| w)
            .collect();
        let m = first.read("default", &format!("contested-{i}")).unwrap();
        assert_eq!(winners.len(), 1, "contested-{i}: {winners:?}");
        assert_eq!(m.body, format!("by {}", winners[0]));
        assert_eq!(m.version, 1);
    }
    let refused: usize = outcomes.iter().map(|o| o.shared_failed.len()).sum();
    // Transactions rolled back: the retried conflicts, and the refused creations.
    let rolled_back: i64 = admin(&url)
        .query_one(
            "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .unwrap()
        .get(0);
    eprintln!(
        "{WRITERS} writers x {ROUNDS} rounds: {acked} shared edits acknowledged, {refused} refused as busy, \
         {rolled_back} transactions rolled back (conflicts retried, names taken), in {elapsed:?}"
    );
    assert_eq!(
        first.stats(None).unwrap().memories as usize,
        1 + WRITERS + ROUNDS as usize
    );
    assert_totals_agree(&url);
}

/// Each scope's full-text totals (`scope_totals`, kept by a trigger) equal a count of
/// its memories and their lengths.
fn assert_totals_agree(url: &str) {
    let rows = |sql: &str| -> BTreeMap<String, (i64, i64)> {
        admin(url)
            .query(sql, &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), (r.get(1), r.get(2))))
            .collect()
    };
    let kept = rows(
        "SELECT scope, sum(docs)::bigint, sum(words)::bigint FROM loci_memory.scope_totals
         GROUP BY scope HAVING sum(docs) <> 0 OR sum(words) <> 0",
    );
    let counted = rows(
        "SELECT scope, count(*), coalesce(sum(fts_len), 0)::bigint FROM loci_memory.memories
         GROUP BY scope",
    );
    assert_eq!(kept, counted);
}

#[test]
fn the_full_text_totals_follow_every_write() {
    let Some(url) = database() else { return };
    let mut a = PgStore::connect(&url, "github.com/team/alpha").unwrap();
    let mut b = PgStore::connect(&url, "github.com/team/beta").unwrap();
    a.create(
        &memory("one", "The ledger writes invoices."),
        "default",
        &[],
    )
    .unwrap();
    a.create(&memory("two", "Kestrels hover."), "default", &[])
        .unwrap();
    b.create(
        &memory("one", "Other scope, other words entirely."),
        "default",
        &[],
    )
    .unwrap();
    assert_totals_agree(&url);
    a.edit(
        "default",
        "one",
        &body("The ledger now writes invoices twice a month."),
        None,
    )
    .unwrap();
    assert_totals_agree(&url);
    a.forget("default", "two").unwrap();
    assert_totals_agree(&url);
    a.restore("default", "two", None).unwrap();
    a.merge("default", "two", "one").unwrap();
    assert_totals_agree(&url);
    a.purge("default", "one").unwrap();
    b.purge("default", "one").unwrap();
    assert_totals_agree(&url);
    // Words a scope no longer holds are gone from its average as well.
    let left: i64 = admin(&url)
        .query_one(
            "SELECT coalesce(sum(words), 0)::bigint FROM loci_memory.scope_totals
             WHERE scope = 'github.com/team/beta'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0);
}

#[test]
fn a_memory_in_one_scope_is_invisible_in_another() {
    let Some(url) = database() else { return };
    let mut a = PgStore::connect(&url, "github.com/team/alpha").unwrap();
    let mut b = PgStore::connect(&url, "github.com/team/beta").unwrap();
    let mut m = memory("shared-name", "The ledger writes invoices.");
    m.entities = vec![loci_memory::EntityInput {
        name: "Ledger".into(),
        entity_type: "service".into(),
        aliases: vec![],
    }];
    let link = loci_memory::NewCodeLink {
        key: loci_memory::CodeKey::file("src/ledger.rs"),
        hash: "h".into(),
        line: 1,
        origin: loci_memory::model::LinkOrigin::Manual,
        mention: None,
    };
    let in_a = a.create(&m, "default", &[link]).unwrap();
    assert!(matches!(
        b.read("default", "shared-name"),
        Err(MemoryError::NotFound(_))
    ));
    assert!(b.list(&filter(), 10, 0).unwrap().0.is_empty());
    assert_eq!(b.stats(None).unwrap().memories, 0);
    assert!(b.entities("default").unwrap().is_empty());
    assert!(
        b.summaries(&[in_a.id]).unwrap().is_empty(),
        "not even by id"
    );
    assert!(b.links_of(&[in_a.id]).unwrap().is_empty());
    assert!(b.entities_of_memories(&[in_a.id]).unwrap().is_empty());
    let terms = loci_memory::recall::query_terms("ledger invoices");
    assert!(b.fts(&terms, &filter(), 10).unwrap().is_empty());
    assert!(
        b.memories_linked_to(&filter(), &[], &["src/ledger.rs".into()])
            .unwrap()
            .is_empty()
    );
    // The same name is free in the other scope, and each side changes only its own.
    b.create(&memory("shared-name", "Beta's note."), "default", &[])
        .unwrap();
    b.move_link(
        in_a.links[0].id,
        &loci_memory::CodeKey::file("elsewhere.rs"),
        9,
    )
    .unwrap();
    b.purge("default", "shared-name").unwrap();
    let still = a.read("default", "shared-name").unwrap();
    assert_eq!(still.body, "The ledger writes invoices.");
    assert_eq!(
        still.links[0].key.path, "src/ledger.rs",
        "another scope's link is not moved"
    );
    assert_eq!(a.fts(&terms, &filter(), 10).unwrap().len(), 1);
}

#[test]
fn a_statement_past_the_timeout_is_cancelled_instead_of_hanging() {
    let Some(url) = database() else { return };
    let options = PgOptions {
        statement_timeout: Duration::from_millis(300),
        ..PgOptions::default()
    };
    let mut s = PgStore::connect_with(&url, "repo", options).unwrap();
    s.create(&memory("kept", "body"), "default", &[]).unwrap();
    let mut admin = admin(&url);
    // A write whose statement sleeps (a trigger calling pg_sleep) far past the timeout.
    admin
        .batch_execute(
            "CREATE FUNCTION loci_memory.slow() RETURNS trigger LANGUAGE plpgsql AS
                 $$ BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$;
             CREATE TRIGGER slow BEFORE INSERT ON loci_memory.memories
                 FOR EACH ROW EXECUTE FUNCTION loci_memory.slow();",
        )
        .unwrap();
    let t = Instant::now();
    let e = s
        .create(&memory("slow", "body"), "default", &[])
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(
        matches!(e, MemoryError::PgTimeout { limit_ms: 300, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("300 ms"), "{e}");
    admin
        .batch_execute("DROP TRIGGER slow ON loci_memory.memories")
        .unwrap();
    // A read waiting on a lock another connection holds.
    let mut locker = admin.transaction().unwrap();
    locker
        .batch_execute("LOCK TABLE loci_memory.memories IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let t = Instant::now();
    let e = s.read("default", "kept").unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(matches!(e, MemoryError::PgTimeout { .. }), "{e}");
    locker.rollback().unwrap();
    // The connection serves the next call; the cancelled write stored nothing.
    assert_eq!(s.read("default", "kept").unwrap().version, 1);
    assert!(matches!(
        s.read("default", "slow"),
        Err(MemoryError::NotFound(_))
    ));
}

#[test]
fn a_schema_newer_than_this_build_is_refused() {
    let Some(url) = database() else { return };
    drop(PgStore::connect(&url, "repo").unwrap());
    let newer = PgStore::SCHEMA_VERSION + 1;
    admin(&url)
        .execute(
            "INSERT INTO loci_memory.schema_version (version) VALUES ($1)",
            &[&newer],
        )
        .unwrap();
    // Another process (a pool of its own: the same database, another connection
    // string) finds the newer schema; this one trusts what its pool checked.
    drop(PgStore::connect(&url, "repo").unwrap());
    let e = PgStore::connect(&format!("{url} connect_timeout=30"), "repo").unwrap_err();
    match &e {
        MemoryError::PgSchemaTooNew { found, known, .. } => {
            assert_eq!((*found, *known), (newer, PgStore::SCHEMA_VERSION));
        }
        other => panic!("{other}"),
    }
    let text = e.to_string();
    assert!(
        text.contains(&format!("version {newer}"))
            && text.contains(&format!("version {}", PgStore::SCHEMA_VERSION)),
        "{text}"
    );
}

#[test]
fn a_database_of_schema_1_gets_the_full_text_statistics_of_its_memories() {
    let Some(url) = database() else { return };
    {
        let mut s = PgStore::connect(&url, "repo").unwrap();
        s.create(
            &memory("kestrel-note", "The kestrel hovers over the field."),
            "default",
            &[],
        )
        .unwrap();
    }
    // Put the database back as migration 1 left it.
    admin(&url)
        .batch_execute(
            "DROP FUNCTION loci_memory.scope_totals_count CASCADE;
             DROP FUNCTION loci_memory.scope_totals_add;
             DROP TABLE loci_memory.scope_totals;
             ALTER TABLE loci_memory.memories DROP COLUMN fts_len;
             DROP FUNCTION loci_memory.fts_length;
             DELETE FROM loci_memory.schema_version WHERE version > 1;",
        )
        .unwrap();
    // Another process (a pool of its own) connects and migrates.
    let s = PgStore::connect(&format!("{url} connect_timeout=30"), "repo").unwrap();
    let len: i32 = admin(&url)
        .query_one("SELECT fts_len FROM loci_memory.memories", &[])
        .unwrap()
        .get(0);
    // Six positions: the name gives "kestrel-not", "kestrel" and "note", the body
    // "kestrel", "hover" and "field" ("the" and "over" are stop words).
    assert_eq!(len, 6);
    assert_totals_agree(&url);
    let hits = s.fts(&["kestrel".into()], &filter(), 10).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
}

#[test]
fn processes_connecting_at_once_migrate_the_database_once() {
    let Some(url) = database() else { return };
    let url = Arc::new(url);
    let connecting: Vec<_> = (0..6)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || PgStore::connect(&url, &format!("repo-{i}")).map(drop))
        })
        .collect();
    for c in connecting {
        c.join().unwrap().unwrap();
    }
    let versions: Vec<i32> = admin(&url)
        .query(
            "SELECT version FROM loci_memory.schema_version ORDER BY version",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, (1..=PgStore::SCHEMA_VERSION).collect::<Vec<_>>());
}

#[test]
fn no_error_shows_the_password() {
    let Some(url) = database() else { return };
    let wrong_db = format!(
        "{} password=s3cret-pw",
        url.replace("dbname=", "dbname=missing_")
    );
    let refused_port = "postgres://loci:s3cret-pw@127.0.0.1:1/team?connect_timeout=2";
    for bad in [wrong_db.as_str(), refused_port] {
        let e = PgStore::connect(bad, "repo").unwrap_err();
        let text = format!("{e} | {e:?}");
        assert!(matches!(e, MemoryError::Postgres { .. }), "{text}");
        assert!(!text.contains("s3cret-pw"), "{text}");
        assert!(text.contains("***"), "{text}");
    }
}

#[test]
fn a_nul_character_is_refused_before_anything_is_stored() {
    let Some(url) = database() else { return };
    let mut s = PgStore::connect(&url, "repo").unwrap();
    let e = s.create(&memory("m", "a\0b"), "default", &[]).unwrap_err();
    assert!(
        matches!(e, MemoryError::Invalid(_)) && e.to_string().contains("U+0000"),
        "{e}"
    );
    let mut m = memory("m", "fine");
    m.metadata = Some(serde_json::json!({"k": ["x\u{0}"]}));
    assert!(matches!(
        s.create(&m, "default", &[]),
        Err(MemoryError::Invalid(_))
    ));
    s.create(&memory("m", "fine"), "default", &[]).unwrap();
    let e = s.edit("default", "m", &body("\0"), None).unwrap_err();
    assert!(matches!(e, MemoryError::Invalid(_)), "{e}");
    assert_eq!(s.stats(None).unwrap().versions, 1);
}

#[test]
fn missing_vectors_counts_the_chunks_a_model_has_not_embedded() {
    let Some(url) = database() else { return };
    let mut s = PgStore::connect(&url, "repo").unwrap();
    let a = s.create(&memory("a", "one"), "default", &[]).unwrap();
    s.create(&memory("b", "two"), "team", &[]).unwrap();
    s.store_vectors("m", 2, &[(a.id, 0, vec![1.0, 0.0])])
        .unwrap();
    assert_eq!(s.missing_vectors("m", None, None).unwrap(), 1);
    assert_eq!(s.missing_vectors("m", Some(a.id), None).unwrap(), 0);
    assert_eq!(s.missing_vectors("m", None, Some("team")).unwrap(), 1);
    assert_eq!(
        s.missing_vectors("other", None, Some("default")).unwrap(),
        1
    );
}

#[test]
fn a_store_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<PgStore>();
}

#[test]
fn a_dropped_connection_is_reopened_by_the_next_call() {
    let Some(url) = database() else { return };
    let mut s = PgStore::connect(&url, "repo").unwrap();
    s.create(&memory("m", "body"), "default", &[]).unwrap();
    let mut admin = admin(&url);
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE application_name = 'loci' AND datname = current_database()",
            &[],
        )
        .unwrap();
    // Termination is a signal: wait until the server has ended the session.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE application_name = 'loci' AND datname = current_database()",
                &[],
            )
            .unwrap()
            .get(0);
        if left == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the session was not ended");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The call that finds the connection gone fails (a write in flight may or may not
    // have committed, so it is not run again); the next one reconnects.
    if let Err(e) = s.read("default", "m") {
        assert!(matches!(e, MemoryError::Postgres { .. }), "{e}");
    }
    assert_eq!(s.read("default", "m").unwrap().body, "body");
}

#[test]
fn the_pool_makes_a_store_per_request_cheap() {
    let Some(url) = database() else { return };
    let mut seed = PgStore::connect(&url, "repo").unwrap();
    seed.create(&memory("m", "the pool keeps connections"), "default", &[])
        .unwrap();
    let terms = vec!["pool".to_string()];
    // What a long-lived host does per request: open the store, recall, drop it.
    let per_request = |options: PgOptions| {
        let started = Instant::now();
        for _ in 0..200 {
            let s = PgStore::connect_with(&url, "repo", options.clone()).unwrap();
            assert_eq!(s.fts(&terms, &filter(), 10).unwrap().len(), 1);
        }
        started.elapsed()
    };
    let unpooled = per_request(PgOptions {
        pool_size: 0,
        ..PgOptions::default()
    });
    let pooled = per_request(PgOptions::default());
    let ratio = unpooled.as_secs_f64() / pooled.as_secs_f64();
    eprintln!(
        "200 store-per-request recalls: unpooled {unpooled:?}, pooled {pooled:?}, {ratio:.1}x"
    );
    assert!(ratio > 2.0, "unpooled {unpooled:?}, pooled {pooled:?}");
    // No connection of the unpooled stores stays open (their sessions end shortly
    // after the client closes them); the pool keeps the one this thread used.
    let deadline = Instant::now() + Duration::from_secs(10);
    while admin_count(&url, "true") != 1 {
        assert!(
            Instant::now() < deadline,
            "{} connections open",
            admin_count(&url, "true")
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_call_that_finds_every_connection_busy_fails_at_the_checkout_timeout() {
    let Some(url) = database() else { return };
    let options = PgOptions {
        pool_size: 1,
        checkout_timeout: Duration::from_millis(300),
        ..PgOptions::default()
    };
    let s = Arc::new(PgStore::connect_with(&url, "repo", options).unwrap());
    with_the_only_connection_busy(&url, &s, || {
        let t = Instant::now();
        let e = s.namespaces().unwrap_err();
        assert!(
            t.elapsed() >= Duration::from_millis(300),
            "{:?}",
            t.elapsed()
        );
        assert!(
            matches!(e, MemoryError::PgPoolExhausted { size: 1, .. }),
            "{e}"
        );
    });
    // The connection came back: the next call gets it.
    assert!(s.namespaces().unwrap().is_empty());
}

#[test]
fn each_checkout_timeout_is_its_own_not_the_first_stores() {
    let Some(url) = database() else { return };
    let options = |ms| PgOptions {
        pool_size: 1,
        checkout_timeout: Duration::from_millis(ms),
        ..PgOptions::default()
    };
    // A first store on the database waits 20 s for a connection; a later one 300 ms.
    let patient = PgStore::connect_with(&url, "repo", options(20_000)).unwrap();
    let hasty = Arc::new(PgStore::connect_with(&url, "repo", options(300)).unwrap());
    with_the_only_connection_busy(&url, &hasty, || {
        let t = Instant::now();
        let e = hasty.namespaces().unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(
            matches!(e, MemoryError::PgPoolExhausted { waited_ms: 300, .. }),
            "{e}"
        );
    });
    assert!(patient.namespaces().unwrap().is_empty());
}

#[test]
fn a_store_starting_while_another_migrates_waits_past_its_statement_timeout() {
    let Some(url) = database() else { return };
    // Another process is migrating the database: it holds the migrations' lock
    // ("lociMEM1"), as it would while a step rewrites a big table.
    let mut other = admin(&url);
    let mut migrating = other.transaction().unwrap();
    migrating
        .execute(
            "SELECT pg_advisory_xact_lock($1)",
            &[&0x6c6f_6369_4d45_4d31_i64],
        )
        .unwrap();
    let starting = {
        let url = url.clone();
        std::thread::spawn(move || {
            let options = PgOptions {
                statement_timeout: Duration::from_millis(300),
                ..PgOptions::default()
            };
            PgStore::connect_with(&url, "repo", options).map(|s| s.namespaces())
        })
    };
    // The starting store has waited for the lock well past its 300 ms: a request's
    // budget does not cut a migration short.
    let deadline = Instant::now() + Duration::from_secs(20);
    while admin_count(
        &url,
        "wait_event_type = 'Lock' AND now() - query_start > interval '900 milliseconds'",
    ) < 1
    {
        assert!(
            Instant::now() < deadline,
            "the starting store stopped waiting: {:?}",
            starting.is_finished()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    migrating.rollback().unwrap();
    let namespaces = starting.join().unwrap().unwrap().unwrap();
    assert!(namespaces.is_empty());
}

/// Runs `f` while `s`'s only connection waits on a lock another session holds.
fn with_the_only_connection_busy(url: &str, s: &Arc<PgStore>, f: impl FnOnce()) {
    let mut admin = admin(url);
    let mut locker = admin.transaction().unwrap();
    locker
        .batch_execute("LOCK TABLE loci_memory.memories IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let holder = {
        let s = s.clone();
        std::thread::spawn(move || s.namespaces())
    };
    // Wait until the holder's statement is blocked on the lock.
    let deadline = Instant::now() + Duration::from_secs(10);
    while admin_count(url, "wait_event_type = 'Lock'") < 1 {
        assert!(Instant::now() < deadline, "the holder never waited");
        std::thread::sleep(Duration::from_millis(10));
    }
    f();
    locker.rollback().unwrap();
    holder.join().unwrap().unwrap();
}

/// Sessions of this database's `loci` connections matching `condition`.
fn admin_count(url: &str, condition: &str) -> i64 {
    admin(url)
        .query_one(
            &format!(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE application_name = 'loci' AND datname = current_database() AND {condition}"
            ),
            &[],
        )
        .unwrap()
        .get(0)
}
