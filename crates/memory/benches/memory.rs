//! `remember` without embedding, in the library: one memory with a realistic body (a
//! few paragraphs, entities, a relationship) into a store that already holds some.

use criterion::{Criterion, criterion_group, criterion_main};
use loci_memory::model::{EntityInput, RelationshipInput};
use loci_memory::{NewMemory, NoCode, SqliteStore, ops};

const BODY: &str = "We decided to keep the retry budget per request rather than per connection. \
The old policy retried every idempotent call three times with exponential backoff, which \
multiplied load during incidents: a slow dependency saw four times its normal traffic exactly \
when it could least afford it.\n\nThe new policy gives each request a budget of 10% extra \
attempts across all its calls, shared through the context. `fetch_with_retry` reads the \
budget; `RetryBudget::spend` decrements it. See src/net/retry.rs:40 for the implementation.\n\n\
Alternatives considered: circuit breakers per host (too coarse for our fan-out), and no \
retries at all (the error rate during deploys was unacceptable).";

fn bench_remember(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("memory.db")).unwrap();
    let mut n = 0u64;
    for _ in 0..1_000 {
        n += 1;
        ops::remember(&mut store, &NoCode, false, &memory(n), &[]).unwrap();
    }
    c.bench_function("remember (no embedding, 1 KB body, 2 entities)", |b| {
        b.iter(|| {
            n += 1;
            ops::remember(&mut store, &NoCode, false, &memory(n), &[]).unwrap();
        })
    });
}

fn memory(n: u64) -> NewMemory {
    NewMemory {
        name: format!("retry-budget-{n}"),
        memory_type: Some(loci_memory::MemoryType::Decision),
        description: "retry budgets are per request".into(),
        body: BODY.into(),
        entities: vec![
            EntityInput {
                name: "RetryBudget".into(),
                entity_type: "type".into(),
                aliases: vec![],
            },
            EntityInput {
                name: format!("service-{}", n % 50),
                entity_type: "service".into(),
                aliases: vec![],
            },
        ],
        relationships: vec![RelationshipInput {
            source: format!("service-{}", n % 50),
            target: "RetryBudget".into(),
            relation: "uses".into(),
            weight: 0.7,
        }],
        ..Default::default()
    }
}

criterion_group!(benches, bench_remember);
criterion_main!(benches);
