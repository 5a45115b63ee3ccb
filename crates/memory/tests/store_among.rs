//! More of the store conformance suite, run against SQLite and PostgreSQL: the
//! relationships among given entities (`MemoryStore::relationships_among`), what a
//! memory's page draws. Both ends must be in the set, the direction is kept, names
//! match case-insensitively and exactly (never as a pattern), and the input and the
//! answer are bounded.

use loci_memory::model::{EntityInput, RelationshipInput};
use loci_memory::{MAX_AMONG_ENTITIES, MemoryError, NewMemory};

use crate::stores::Fixture;

conformance!(
    relationships_among_keep_both_ends_in_the_set_and_their_direction,
    relationships_among_match_names_exactly_never_as_patterns,
    relationships_among_are_bounded_in_and_out,
);

/// Stores memory `name` in `ns` with `entities` and the relationships `(source,
/// target, relation)`, each of weight 0.5 when its relation ends in `~`.
fn store(s: &mut Fixture, ns: &str, name: &str, entities: &[&str], rels: &[(&str, &str, &str)]) {
    let m = NewMemory {
        name: name.into(),
        body: format!("about {name}"),
        entities: entities
            .iter()
            .map(|e| EntityInput {
                name: (*e).into(),
                entity_type: "component".into(),
                aliases: vec![],
            })
            .collect(),
        relationships: rels
            .iter()
            .map(|(source, target, relation)| RelationshipInput {
                source: (*source).into(),
                target: (*target).into(),
                relation: relation.trim_end_matches('~').into(),
                weight: if relation.ends_with('~') { 0.5 } else { 1.0 },
            })
            .collect(),
        ..NewMemory::default()
    };
    s.create(&m, ns, &[]).unwrap();
}

/// The relationships among `names` in `ns`, as `(source, target, relation)`.
fn among(s: &Fixture, ns: &str, names: &[&str], limit: usize) -> Vec<(String, String, String)> {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    s.relationships_among(ns, &names, limit)
        .unwrap()
        .into_iter()
        .map(|r| (r.source, r.target, r.relation))
        .collect()
}

fn triples(t: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    t.iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

fn relationships_among_keep_both_ends_in_the_set_and_their_direction(s: &mut Fixture) {
    let rels = [
        ("Ledger", "Billing", "writes_to~"),
        ("Billing", "Ledger", "pays"),
        ("Billing", "Queue", "reads"),
        ("Mailer", "Ledger", "notifies"),
        ("Ledger", "Mailer", "logs_to"),
        ("Ledger", "Ledger", "audits"),
        ("Mailer", "Mailer", "retries"),
    ];
    let entities = ["Ledger", "Billing", "Queue", "Mailer"];
    store(s, "default", "billing", &entities, &rels);
    // The same names in another namespace, related otherwise: never seen from `default`.
    store(
        s,
        "other",
        "billing",
        &entities,
        &[("Queue", "Billing", "elsewhere")],
    );

    // Mixed case, a name that is no entity, and one given twice.
    let got = among(
        s,
        "default",
        &["ledger", "BILLING", "Queue", "nobody", "LEDGER"],
        100,
    );
    assert_eq!(
        got,
        triples(&[
            ("Billing", "Ledger", "pays"),
            ("Billing", "Queue", "reads"),
            ("Ledger", "Billing", "writes_to"),
            ("Ledger", "Ledger", "audits"),
        ]),
        "both ends in the set, each direction its own row, names as stored"
    );
    let weights: Vec<f64> = s
        .relationships_among("default", &["Ledger".into(), "Billing".into()], 100)
        .unwrap()
        .iter()
        .map(|r| r.weight)
        .collect();
    assert_eq!(weights, [1.0, 0.5, 1.0]);

    // What the namespace's whole list, filtered, says.
    let set = ["ledger", "billing", "queue"];
    let filtered: Vec<(String, String, String)> = s
        .relationships("default")
        .unwrap()
        .into_iter()
        .filter(|r| {
            set.contains(&r.source.to_lowercase().as_str())
                && set.contains(&r.target.to_lowercase().as_str())
        })
        .map(|r| (r.source, r.target, r.relation))
        .collect();
    assert_eq!(got, filtered);

    // One entity: only its relationships to itself.
    assert_eq!(
        among(s, "default", &["Ledger"], 100),
        triples(&[("Ledger", "Ledger", "audits")])
    );
    assert_eq!(
        among(s, "default", &["Queue", "Mailer"], 100),
        triples(&[("Mailer", "Mailer", "retries")])
    );
    assert_eq!(
        among(s, "other", &["queue", "billing"], 100),
        triples(&[("Queue", "Billing", "elsewhere")])
    );
    assert!(among(s, "default", &[], 100).is_empty(), "no names, none");
    assert!(among(s, "nowhere", &["Ledger"], 100).is_empty());
}

fn relationships_among_match_names_exactly_never_as_patterns(s: &mut Fixture) {
    let entities = [
        "a_c",
        "abc",
        "a%",
        "aXYZ",
        "O'Brien",
        "say \"hi\"",
        "back\\slash",
        "back_slash",
    ];
    let rels = [
        ("a_c", "a%", "under_to_percent"),
        ("abc", "aXYZ", "wild"),
        ("a_c", "abc", "half"),
        ("O'Brien", "say \"hi\"", "quotes"),
        ("back\\slash", "O'Brien", "escape"),
        ("back_slash", "back_slash", "self"),
    ];
    store(s, "default", "patterns", &entities, &rels);
    let got = among(
        s,
        "default",
        &["a_c", "A%", "o'brien", "SAY \"HI\"", "back\\slash"],
        100,
    );
    assert_eq!(
        got,
        triples(&[
            ("O'Brien", "say \"hi\"", "quotes"),
            ("a_c", "a%", "under_to_percent"),
            ("back\\slash", "O'Brien", "escape"),
        ]),
        "`_` and `%` are characters, not wildcards; quotes and backslashes are text"
    );
    for wild in [
        &["%"][..],
        &["_"],
        &["a%", "%"],
        &["a_", "a%"],
        &["abc", "a%"],
        &["back%"],
    ] {
        assert!(among(s, "default", wild, 100).is_empty(), "{wild:?}");
    }
    assert_eq!(
        among(s, "default", &["a_c", "abc"], 100),
        triples(&[("a_c", "abc", "half")])
    );
}

fn relationships_among_are_bounded_in_and_out(s: &mut Fixture) {
    let rels = [
        ("A", "B", "one"),
        ("A", "C", "two"),
        ("B", "C", "three"),
        ("C", "A", "four"),
    ];
    store(s, "default", "bounded", &["A", "B", "C"], &rels);
    // The answer: at most `limit`, the first in its order.
    assert_eq!(
        among(s, "default", &["A", "B", "C"], 2),
        triples(&[("A", "B", "one"), ("A", "C", "two")])
    );
    assert!(among(s, "default", &["A", "B", "C"], 0).is_empty());
    assert_eq!(among(s, "default", &["A", "B", "C"], 4).len(), 4);

    // The input: at most MAX_AMONG_ENTITIES names, the cap itself taken.
    let mut names: Vec<String> = (0..MAX_AMONG_ENTITIES - 3)
        .map(|i| format!("nobody-{i}"))
        .collect();
    names.extend(["c", "b", "a"].map(String::from));
    assert_eq!(names.len(), MAX_AMONG_ENTITIES);
    assert_eq!(
        s.relationships_among("default", &names, 100).unwrap().len(),
        4
    );
    names.push("one too many".into());
    match s.relationships_among("default", &names, 100) {
        Err(MemoryError::Invalid(why)) => assert!(why.contains("at most 1000"), "{why}"),
        other => panic!("{} names must be refused: {other:?}", names.len()),
    }
}
