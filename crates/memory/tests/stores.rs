//! The stores the conformance suite runs against, behind one fixture: a SQLite file in a
//! temporary directory, and a PostgreSQL database of the test cluster (`pg_cluster.rs`)
//! under one scope, on a cluster without pgvector and on one with it. `conformance!`
//! turns one list of test functions, each written once against the fixture, into a
//! `sqlite`, a `postgres` and a `pgvector` test per function.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use loci_memory::{MemoryStore, PgStore, SqliteStore};

/// A store of either kind, movable to another thread.
pub type Store = Box<dyn MemoryStore + Send>;
/// Opens another connection to the fixture's store.
pub type Opener = Arc<dyn Fn() -> Store + Send + Sync>;

/// The scope the PostgreSQL fixtures write under.
pub const SCOPE: &str = "github.com/loci/conformance";

/// One store under test, with a way to open it again (another process, another machine).
pub struct Fixture {
    store: Store,
    open: Opener,
    _dir: Option<tempfile::TempDir>,
}

impl Fixture {
    /// What opens another connection to the same store (another process, another
    /// machine), for a thread.
    pub fn opener(&self) -> Opener {
        self.open.clone()
    }
}

impl Deref for Fixture {
    type Target = dyn MemoryStore + Send;
    fn deref(&self) -> &Self::Target {
        &*self.store
    }
}

impl DerefMut for Fixture {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut *self.store
    }
}

/// A new SQLite store in a temporary directory.
pub fn sqlite() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".loci/memory.db");
    let open: Opener = Arc::new(move || Box::new(SqliteStore::open(&path).unwrap()) as Store);
    Fixture {
        store: open(),
        open,
        _dir: Some(dir),
    }
}

/// A new PostgreSQL store in its own database; `None` when the cluster is skipped.
pub fn postgres() -> Option<Fixture> {
    pg_fixture(crate::pg_cluster::database()?)
}

/// A new PostgreSQL store on the cluster with pgvector (the k-NN answered by its HNSW
/// index); `None` when that cluster is skipped.
pub fn pgvector() -> Option<Fixture> {
    pg_fixture(crate::pg_cluster::database_pgvector()?)
}

fn pg_fixture(url: String) -> Option<Fixture> {
    let open: Opener = Arc::new(move || Box::new(PgStore::connect(&url, SCOPE).unwrap()) as Store);
    Some(Fixture {
        store: open(),
        open,
        _dir: None,
    })
}

/// One `#[test]` per named function for each store: `sqlite::NAME`, `postgres::NAME`
/// (exact vector recall) and `pgvector::NAME`,
/// each calling `NAME(&mut Fixture)` of the module that invokes it.
macro_rules! conformance {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $test() {
                    super::$test(&mut crate::stores::sqlite());
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $test() {
                    if let Some(mut fixture) = crate::stores::postgres() {
                        super::$test(&mut fixture);
                    }
                }
            )*
        }
        mod pgvector {
            $(
                #[test]
                fn $test() {
                    if let Some(mut fixture) = crate::stores::pgvector() {
                        super::$test(&mut fixture);
                    }
                }
            )*
        }
    };
}
