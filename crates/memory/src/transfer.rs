//! Moving memories between stores (`loci memory export` / `import`): one JSON document
//! per line, so a file streams and diffs, from any [`MemoryStore`] to any other (SQLite
//! to PostgreSQL and back).
//!
//! The lines: a `header` (format and version), then per namespace its `entity` lines
//! (type and aliases), its `relationship` lines, and one `memory` line per memory
//! (forgotten ones too) with its entities, code links and every version, and last an
//! `end` line with the counts and a digest. The digest is BLAKE3 over the canonical
//! content (namespace, name, type, description, body, metadata, forgotten, entity names,
//! link keys and hashes; relationships), sorted, so two stores holding the same
//! memories have the same digest whatever their row ids, clocks or histories; the
//! `history_digest` is BLAKE3 over every memory's versions as they are (number,
//! operation, content, clock), so it also says whether the histories arrived.
//!
//! Import is idempotent: a memory whose name is taken is left alone (`unchanged` when
//! its content is the file's, `conflicts` otherwise, never overwritten), so importing a
//! file twice adds nothing. A memory it creates gets the file's history back (every
//! version with its clock, [`MemoryStore::replace_history`]); a file whose versions do
//! not read as a history (not numbered 1, 2, 3..., a clock running backwards, the last
//! one not the memory's content) is refused by line before anything is stored.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::MemoryError;
use crate::model::{
    EntityInput, LinkOrigin, Memory, MemoryType, NewCodeLink, NewMemory, Relationship,
    RelationshipInput, Version, check_body, check_description, check_metadata, check_name,
};
use crate::store::{Filter, MemoryStore};

/// The `format` of a header line.
pub const FORMAT: &str = "loci-memory-export";
/// The version of the line format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Memories read per page while exporting.
const PAGE: usize = 500;

/// One line of an export file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    /// The first line.
    Header {
        /// Always [`FORMAT`].
        format: String,
        /// [`FORMAT_VERSION`].
        version: u32,
    },
    /// An entity of a namespace.
    Entity {
        /// Its namespace.
        namespace: String,
        /// The entity.
        #[serde(flatten)]
        entity: EntityInput,
    },
    /// A relationship of a namespace.
    Relationship {
        /// Its namespace.
        namespace: String,
        /// The relationship.
        #[serde(flatten)]
        relationship: Relationship,
    },
    /// A memory, its links and its history.
    Memory(Box<MemoryRecord>),
    /// The last line: what the file holds.
    End(Summary),
}

/// A memory as exported.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
    /// The type.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// The description.
    pub description: String,
    /// The body.
    pub body: String,
    /// Who wrote it.
    #[serde(default)]
    pub source: Option<String>,
    /// The session it came from.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Its metadata.
    pub metadata: serde_json::Value,
    /// Whether it is forgotten.
    pub forgotten: bool,
    /// Its entities' names.
    pub entities: Vec<String>,
    /// Its code links.
    pub links: Vec<NewCodeLink>,
    /// Every version, oldest first.
    pub versions: Vec<Version>,
}

/// Counts and the content digest of an export (its `end` line), or of what a store
/// holds of an imported file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    /// Memories.
    pub memories: u64,
    /// Versions carried.
    pub versions: u64,
    /// Entities.
    pub entities: u64,
    /// Relationships.
    pub relationships: u64,
    /// BLAKE3 of the canonical content (see the module doc), hex.
    pub digest: String,
    /// BLAKE3 of every memory's versions (see the module doc), hex; empty in a file
    /// written before histories were imported.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub history_digest: String,
}

/// What an import did.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct ImportReport {
    /// What the file said it holds (its `end` line).
    pub file: Summary,
    /// Memories created.
    pub created: u64,
    /// Memories already there with the same content.
    pub unchanged: u64,
    /// Memories whose name is taken by different content (left alone), by
    /// `namespace/name`.
    pub conflicts: Vec<String>,
    /// Relationships added.
    pub relationships_added: u64,
    /// Versions restored: the file's histories of the memories created.
    pub versions_restored: u64,
    /// The digest of what the store now holds of the file's memories and
    /// relationships: the file's digest when every one arrived.
    pub digest: String,
    /// The digest of the histories the store now holds of the file's memories: the
    /// file's `history_digest` when every one arrived whole.
    pub history_digest: String,
    /// Whether `digest` is the file's, and `history_digest` too when the file has one.
    pub verified: bool,
}

/// Writes every memory of `store` (all namespaces, forgotten ones too) as lines
/// through `out`, and answers the `end` line's summary.
pub fn export(
    store: &dyn MemoryStore,
    out: &mut dyn FnMut(&Line) -> Result<(), MemoryError>,
) -> Result<Summary, MemoryError> {
    out(&Line::Header {
        format: FORMAT.into(),
        version: FORMAT_VERSION,
    })?;
    let mut digest = Digest::default();
    let mut history = Digest::default();
    let mut sum = Summary::default();
    for ns in store.namespaces()? {
        for e in store.entities(&ns)? {
            sum.entities += 1;
            out(&Line::Entity {
                namespace: ns.clone(),
                entity: EntityInput {
                    name: e.name,
                    entity_type: e.entity_type,
                    aliases: e.aliases,
                },
            })?;
        }
        for r in store.relationships(&ns)? {
            sum.relationships += 1;
            digest.relationship(&ns, &r);
            out(&Line::Relationship {
                namespace: ns.clone(),
                relationship: r,
            })?;
        }
        let filter = Filter {
            namespace: ns.clone(),
            include_forgotten: true,
            ..Filter::default()
        };
        let mut offset = 0;
        loop {
            let (page, _) = store.list(&filter, PAGE, offset)?;
            if page.is_empty() {
                break;
            }
            offset += page.len();
            for s in page {
                let m = store.read(&ns, &s.name)?;
                let versions = store.history(&ns, &s.name)?;
                let record = record_of(m, versions);
                sum.memories += 1;
                sum.versions += record.versions.len() as u64;
                digest.memory(&record);
                history.history(&record.namespace, &record.name, &record.versions);
                out(&Line::Memory(Box::new(record)))?;
            }
        }
    }
    sum.digest = digest.finish();
    sum.history_digest = history.finish();
    out(&Line::End(sum.clone()))?;
    Ok(sum)
}

/// Imports the lines of an export file (`lines` yields each with its 1-based number)
/// into `store`; see the module doc. A line that is not one of the file's kinds, a
/// missing header or end line, is refused with its number before anything is stored.
pub fn import(
    store: &mut dyn MemoryStore,
    lines: &mut dyn Iterator<Item = Result<(usize, String), MemoryError>>,
) -> Result<ImportReport, MemoryError> {
    let parsed = parse(lines)?;
    let mut report = ImportReport {
        file: parsed.end.clone(),
        ..ImportReport::default()
    };
    let mut created = Vec::new();
    for r in &parsed.memories {
        match store.read(&r.namespace, &r.name) {
            Ok(existing) => {
                if canonical(&record_of(existing, Vec::new())) == canonical(r) {
                    report.unchanged += 1;
                } else {
                    report.conflicts.push(format!("{}/{}", r.namespace, r.name));
                }
            }
            Err(MemoryError::NotFound(_)) => {
                create(store, r, &parsed.entities)?;
                report.created += 1;
                created.push(r);
            }
            Err(e) => return Err(e),
        }
    }
    for (ns, rels) in &parsed.relationships {
        let have = store.relationships(ns)?;
        for rel in rels {
            if have.iter().any(|h| same_relationship(h, rel)) {
                continue;
            }
            // A relationship is added through a memory naming one of its entities.
            let Some(holder) = parsed
                .memories
                .iter()
                .find(|m| &m.namespace == ns && !m.forgotten && m.entities.contains(&rel.source))
            else {
                continue;
            };
            let input = RelationshipInput {
                source: rel.source.clone(),
                target: rel.target.clone(),
                relation: rel.relation.clone(),
                weight: rel.weight,
            };
            match store.link(ns, &holder.name, &[], &[input], &[]) {
                Ok(_) => report.relationships_added += 1,
                // Its entities did not arrive (the holder's name was taken): left out,
                // and the digest says so.
                Err(MemoryError::Unresolved(_) | MemoryError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
    }
    // Last, over the versions the import wrote (its creates, forgets and the links of
    // relationships): the file's histories already hold what they did.
    for r in created {
        store.replace_history(&r.namespace, &r.name, &r.versions)?;
        report.versions_restored += r.versions.len() as u64;
    }
    (report.digest, report.history_digest) = digest_in_store(store, &parsed)?;
    report.verified = report.digest == parsed.end.digest
        && (parsed.end.history_digest.is_empty()
            || report.history_digest == parsed.end.history_digest);
    Ok(report)
}

/// An export file read whole and checked.
struct Parsed {
    entities: BTreeMap<(String, String), EntityInput>,
    relationships: BTreeMap<String, Vec<Relationship>>,
    memories: Vec<MemoryRecord>,
    end: Summary,
}

fn parse(
    lines: &mut dyn Iterator<Item = Result<(usize, String), MemoryError>>,
) -> Result<Parsed, MemoryError> {
    let mut out = Parsed {
        entities: BTreeMap::new(),
        relationships: BTreeMap::new(),
        memories: Vec::new(),
        end: Summary::default(),
    };
    let (mut header, mut end) = (false, false);
    for item in lines {
        let (n, text) = item?;
        if text.trim().is_empty() {
            continue;
        }
        let bad = |why: String| MemoryError::Invalid(format!("export line {n}: {why}"));
        if end {
            return Err(bad("a line after the `end` line".into()));
        }
        let line: Line = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        match line {
            Line::Header { format, version } => {
                if header || format != FORMAT || version != FORMAT_VERSION {
                    return Err(bad(format!(
                        "not a {FORMAT} version {FORMAT_VERSION} header (format {format:?}, version {version})"
                    )));
                }
                header = true;
                continue;
            }
            _ if !header => return Err(bad(format!("the first line must be the {FORMAT} header"))),
            Line::Entity { namespace, entity } => {
                out.entities
                    .insert((namespace, entity.name.to_lowercase()), entity);
            }
            Line::Relationship {
                namespace,
                relationship,
            } => out
                .relationships
                .entry(namespace)
                .or_default()
                .push(relationship),
            Line::Memory(m) => {
                check_history(&m).map_err(bad)?;
                out.memories.push(*m)
            }
            Line::End(s) => {
                out.end = s;
                end = true;
            }
        }
    }
    if !end {
        return Err(MemoryError::Invalid(
            "the export file has no `end` line: it was cut short".into(),
        ));
    }
    if out.end.memories != out.memories.len() as u64 {
        return Err(MemoryError::Invalid(format!(
            "the export file's `end` line counts {} memories but it holds {}",
            out.end.memories,
            out.memories.len()
        )));
    }
    Ok(out)
}

fn create(
    store: &mut dyn MemoryStore,
    r: &MemoryRecord,
    entities: &BTreeMap<(String, String), EntityInput>,
) -> Result<(), MemoryError> {
    let m = NewMemory {
        namespace: Some(r.namespace.clone()),
        name: r.name.clone(),
        memory_type: Some(r.memory_type),
        description: r.description.clone(),
        body: r.body.clone(),
        source: r.source.clone(),
        session_id: r.session_id.clone(),
        metadata: Some(r.metadata.clone()),
        entities: r
            .entities
            .iter()
            .map(|name| {
                entities
                    .get(&(r.namespace.clone(), name.to_lowercase()))
                    .cloned()
                    .unwrap_or_else(|| EntityInput {
                        name: name.clone(),
                        entity_type: "concept".into(),
                        aliases: Vec::new(),
                    })
            })
            .collect(),
        relationships: Vec::new(),
    };
    let ns = crate::ops::validate(&m)?;
    store.create(&m, &ns, &r.links)?;
    if r.forgotten {
        store.forget(&ns, &r.name)?;
    }
    Ok(())
}

/// Whether a memory line's versions read as its history: numbered 1, 2, 3..., clocks
/// that never run backwards (a store's never do), each within a memory's limits, the
/// last one the memory's content. None (a hand-written line) is a history too: the
/// import's own version 1 stays.
fn check_history(r: &MemoryRecord) -> Result<(), String> {
    let mut last_at = 0;
    for (i, v) in r.versions.iter().enumerate() {
        let what = format!("version {} of `{}`", v.version, r.name);
        if v.version as usize != i + 1 {
            return Err(format!(
                "{what} is at position {} of its history: versions are numbered 1, 2, 3...",
                i + 1
            ));
        }
        if v.at < last_at {
            return Err(format!(
                "{what} is dated {} ms, before the version preceding it ({last_at} ms)",
                v.at
            ));
        }
        last_at = v.at;
        check_name("memory", &v.name)
            .and_then(|()| check_description(&v.description))
            .and_then(|()| check_body(&v.body))
            .and_then(|()| check_metadata(&v.metadata))
            .map_err(|e| format!("{what}: {e}"))?;
    }
    match r.versions.last() {
        Some(v)
            if (
                &v.name,
                v.memory_type,
                &v.description,
                &v.body,
                &v.metadata,
                v.deleted,
            ) != (
                &r.name,
                r.memory_type,
                &r.description,
                &r.body,
                &r.metadata,
                r.forgotten,
            ) =>
        {
            Err(format!(
                "the last version of `{}` ({}) is not the memory's content",
                r.name, v.version
            ))
        }
        _ => Ok(()),
    }
}

fn record_of(m: Memory, versions: Vec<Version>) -> MemoryRecord {
    MemoryRecord {
        forgotten: m.deleted_at.is_some(),
        links: m
            .links
            .into_iter()
            .map(|l| NewCodeLink {
                key: l.key,
                hash: l.hash,
                line: l.line,
                origin: l.origin,
                mention: l.mention,
            })
            .collect(),
        namespace: m.namespace,
        name: m.name,
        memory_type: m.memory_type,
        description: m.description,
        body: m.body,
        source: m.source,
        session_id: m.session_id,
        metadata: m.metadata,
        entities: m.entities,
        versions,
    }
}

fn same_relationship(a: &Relationship, b: &Relationship) -> bool {
    a.source.eq_ignore_ascii_case(&b.source)
        && a.target.eq_ignore_ascii_case(&b.target)
        && a.relation == b.relation
}

/// The content of a memory that must survive a move, in one canonical string.
fn canonical(r: &MemoryRecord) -> String {
    let entities: BTreeSet<String> = r.entities.iter().map(|e| e.to_lowercase()).collect();
    let links: BTreeSet<[&str; 5]> = r
        .links
        .iter()
        .map(|l| {
            let origin = if l.origin == LinkOrigin::Auto {
                "auto"
            } else {
                "manual"
            };
            [
                l.key.path.as_str(),
                l.key.qualified_name.as_str(),
                l.key.kind.as_str(),
                l.hash.as_str(),
                origin,
            ]
        })
        .collect();
    serde_json::json!([
        r.namespace,
        r.name,
        r.memory_type,
        r.description,
        r.body,
        r.metadata,
        r.forgotten,
        entities,
        links,
    ])
    .to_string()
}

/// The digests of what `store` holds of the file's memories and relationships, and of
/// their histories.
fn digest_in_store(
    store: &dyn MemoryStore,
    parsed: &Parsed,
) -> Result<(String, String), MemoryError> {
    let mut d = Digest::default();
    let mut history = Digest::default();
    for r in &parsed.memories {
        match store.read(&r.namespace, &r.name) {
            Ok(m) => {
                let versions = store.history(&m.namespace, &m.name)?;
                history.history(&m.namespace, &m.name, &versions);
                d.memory(&record_of(m, Vec::new()));
            }
            Err(MemoryError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    for (ns, rels) in &parsed.relationships {
        let have = store.relationships(ns)?;
        for rel in rels {
            if let Some(h) = have.iter().find(|h| same_relationship(h, rel)) {
                d.relationship(ns, h);
            }
        }
    }
    Ok((d.finish(), history.finish()))
}

/// Canonical lines, sorted, then hashed: independent of the order a store lists them.
#[derive(Default)]
struct Digest(BTreeSet<String>);

impl Digest {
    fn memory(&mut self, r: &MemoryRecord) {
        self.0.insert(format!("m{}", canonical(r)));
    }

    fn history(&mut self, ns: &str, name: &str, versions: &[Version]) {
        let line = serde_json::json!([ns, name, versions]);
        self.0.insert(format!("h{line}"));
    }

    fn relationship(&mut self, ns: &str, r: &Relationship) {
        let line = serde_json::json!([
            ns,
            r.source.to_lowercase(),
            r.target.to_lowercase(),
            r.relation,
            r.weight
        ]);
        self.0.insert(format!("r{line}"));
    }

    fn finish(self) -> String {
        let mut h = blake3::Hasher::new();
        for line in &self.0 {
            h.update(line.as_bytes());
            h.update(b"\n");
        }
        h.finalize().to_hex().to_string()
    }
}
