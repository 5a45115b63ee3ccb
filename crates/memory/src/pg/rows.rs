//! Rows of the PostgreSQL memory schema as the model's values, and the small pieces of
//! SQL every query shares: below the store and its operations.

use postgres::Row;
use postgres::types::ToSql;

use crate::model::{
    CodeKey, CodeLink, Extraction, LinkOrigin, Memory, MemorySummary, MemoryType, Operation,
    Version,
};
use crate::store::Filter;

/// Now, in unix milliseconds, by the database's clock: one clock for every machine
/// writing the store, so `updated_at` orders their writes whatever their own clocks say.
pub(super) const NOW_MS: &str = "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

pub(super) const LINK_COLUMNS: &str =
    "id, path, qualified_name, kind, hash, line, origin, mention, linked_at";

/// A code link read from [`LINK_COLUMNS`] starting at column `at`.
pub(super) fn link_at(r: &Row, at: usize) -> Result<CodeLink, postgres::Error> {
    Ok(CodeLink {
        id: r.try_get(at)?,
        key: CodeKey {
            path: r.try_get(at + 1)?,
            qualified_name: r.try_get(at + 2)?,
            kind: r.try_get(at + 3)?,
        },
        hash: r.try_get(at + 4)?,
        line: r.try_get::<_, i64>(at + 5)? as u32,
        origin: if r.try_get::<_, &str>(at + 6)? == "auto" {
            LinkOrigin::Auto
        } else {
            LinkOrigin::Manual
        },
        mention: r.try_get(at + 7)?,
        linked_at: r.try_get(at + 8)?,
    })
}

/// A memory's stored origin of a link.
pub(super) fn origin_name(o: LinkOrigin) -> &'static str {
    match o {
        LinkOrigin::Auto => "auto",
        LinkOrigin::Manual => "manual",
    }
}

/// A memory from `id, namespace, name, type, description, body, body_hash, source,
/// session_id, metadata, version, created_at, updated_at, deleted_at, extraction`
/// (entities and links left empty).
pub(super) fn memory_at(r: &Row) -> Result<Memory, postgres::Error> {
    Ok(Memory {
        id: r.try_get(0)?,
        namespace: r.try_get(1)?,
        name: r.try_get(2)?,
        memory_type: parse_type(r.try_get(3)?),
        description: r.try_get(4)?,
        body: r.try_get(5)?,
        body_hash: r.try_get(6)?,
        source: r.try_get(7)?,
        session_id: r.try_get(8)?,
        metadata: r.try_get(9)?,
        version: r.try_get::<_, i32>(10)? as u32,
        created_at: r.try_get(11)?,
        updated_at: r.try_get(12)?,
        deleted_at: r.try_get(13)?,
        entities: Vec::new(),
        links: Vec::new(),
        extraction: extraction(r.try_get(14)?),
    })
}

pub(super) const SUMMARY_COLUMNS: &str = "m.id, m.namespace, m.name, m.type, m.description, m.version, m.updated_at, m.deleted_at, m.extraction";

/// A summary from [`SUMMARY_COLUMNS`].
pub(super) fn summary_at(r: &Row) -> Result<MemorySummary, postgres::Error> {
    Ok(MemorySummary {
        id: r.try_get(0)?,
        namespace: r.try_get(1)?,
        name: r.try_get(2)?,
        memory_type: parse_type(r.try_get(3)?),
        description: r.try_get(4)?,
        version: r.try_get::<_, i32>(5)? as u32,
        updated_at: r.try_get(6)?,
        deleted_at: r.try_get(7)?,
        extraction: extraction(r.try_get(8)?),
    })
}

/// A version from `version, op, name, type, description, body, metadata, at, deleted`.
pub(super) fn version_at(r: &Row) -> Result<Version, postgres::Error> {
    Ok(Version {
        version: r.try_get::<_, i32>(0)? as u32,
        op: Operation::parse(r.try_get(1)?).unwrap_or(Operation::Edit),
        name: r.try_get(2)?,
        memory_type: parse_type(r.try_get(3)?),
        description: r.try_get(4)?,
        body: r.try_get(5)?,
        metadata: r.try_get(6)?,
        at: r.try_get(7)?,
        deleted: r.try_get(8)?,
    })
}

/// A stored type (written by this crate, so always known; `note` if not).
fn parse_type(text: &str) -> MemoryType {
    MemoryType::parse(text).unwrap_or(MemoryType::Note)
}

/// The stored extraction record (one this build cannot read is shown as absent rather
/// than failing the read).
fn extraction(v: Option<serde_json::Value>) -> Option<Extraction> {
    v.and_then(|v| serde_json::from_value(v).ok())
}

/// The values of one statement, numbered as they are added (`$1`, `$2`...).
#[derive(Default)]
pub(super) struct Args(Vec<Box<dyn ToSql + Sync>>);

impl Args {
    /// Adds a value; answers its placeholder.
    pub(super) fn add(&mut self, v: impl ToSql + Sync + 'static) -> String {
        self.0.push(Box::new(v));
        format!("${}", self.0.len())
    }

    /// The values as the client takes them.
    pub(super) fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.0.iter().map(|b| &**b as &(dyn ToSql + Sync)).collect()
    }
}

/// The `WHERE` conditions of a filter over `memories` aliased `m`, in the store's scope.
pub(super) fn filter_sql(scope: &str, f: &Filter, a: &mut Args) -> String {
    let mut sql = format!(
        "m.scope = {} AND m.namespace = {}",
        a.add(scope.to_string()),
        a.add(f.namespace.clone())
    );
    if !f.include_forgotten {
        sql.push_str(" AND m.deleted_at IS NULL");
    }
    if !f.types.is_empty() {
        let types: Vec<String> = f.types.iter().map(|t| t.name().to_string()).collect();
        sql.push_str(&format!(" AND m.type = ANY({})", a.add(types)));
    }
    if let Some(s) = f.since {
        sql.push_str(&format!(" AND m.updated_at >= {}", a.add(s)));
    }
    if let Some(u) = f.until {
        sql.push_str(&format!(" AND m.updated_at <= {}", a.add(u)));
    }
    sql
}

/// The error of a name the namespace does not hold.
pub(super) fn not_found(ns: &str, name: &str) -> crate::MemoryError {
    crate::MemoryError::NotFound(format!("no memory named `{name}` in namespace `{ns}`"))
}
