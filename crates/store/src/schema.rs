//! The index schema and its migrations, keyed by `PRAGMA user_version`.

use rusqlite::Connection;

/// The schema version this build writes. Older files are migrated forward;
/// newer ones are refused (a newer loci wrote them).
pub const SCHEMA_VERSION: i64 = 9;

/// Migration `i` takes a database from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6, V7, V8, V9];

// One migration per version: a migration added without its version (or the reverse)
// does not build.
const _: () = assert!(MIGRATIONS.len() as i64 == SCHEMA_VERSION);

const V1: &str = r#"
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per indexed source file. The fingerprint decides whether it must be re-parsed;
-- `resolved = 0` marks a file whose outgoing edges must be recomputed (set in the same
-- transaction as the change that made them stale, so a crash never loses that work).
CREATE TABLE files (
    id        INTEGER PRIMARY KEY,
    path      TEXT NOT NULL UNIQUE,
    lang      TEXT NOT NULL,
    size      INTEGER NOT NULL,
    mtime_ns  INTEGER NOT NULL,
    inode     INTEGER NOT NULL,
    hash      BLOB NOT NULL,
    lossy     INTEGER NOT NULL DEFAULT 0,
    lines     INTEGER NOT NULL,
    resolved  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX files_unresolved ON files(id) WHERE resolved = 0;

CREATE TABLE symbols (
    id             INTEGER PRIMARY KEY,
    file_id        INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    kind           TEXT NOT NULL,
    signature      TEXT NOT NULL,
    doc            TEXT,
    start_line     INTEGER NOT NULL,
    start_col      INTEGER NOT NULL,
    end_line       INTEGER NOT NULL,
    start_byte     INTEGER NOT NULL,
    end_byte       INTEGER NOT NULL,
    parent_id      INTEGER
);
CREATE INDEX symbols_name ON symbols(name);
CREATE INDEX symbols_qualified ON symbols(qualified_name);
CREATE INDEX symbols_file ON symbols(file_id, start_line);

-- Raw uses of names, kept whether they resolve or not (an unresolved one keeps its name).
CREATE TABLE refs (
    id          INTEGER PRIMARY KEY,
    file_id     INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    from_symbol INTEGER,
    name        TEXT NOT NULL,
    qualifier   TEXT,
    kind        TEXT NOT NULL,
    line        INTEGER NOT NULL,
    col         INTEGER NOT NULL
);
CREATE INDEX refs_file ON refs(file_id);
CREATE INDEX refs_name ON refs(name);

CREATE TABLE imports (
    id      INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    module  TEXT NOT NULL,
    name    TEXT,
    alias   TEXT,
    line    INTEGER NOT NULL
);
CREATE INDEX imports_file ON imports(file_id);
CREATE INDEX imports_name ON imports(name);

CREATE TABLE bases (
    id        INTEGER PRIMARY KEY,
    file_id   INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    symbol_id INTEGER,
    subject   TEXT NOT NULL,
    name      TEXT NOT NULL,
    qualifier TEXT,
    kind      TEXT NOT NULL,
    line      INTEGER NOT NULL
);
CREATE INDEX bases_file ON bases(file_id);
CREATE INDEX bases_name ON bases(name);
CREATE INDEX bases_subject ON bases(subject);

-- The resolved graph. `src_file` owns the edge: re-resolving a file replaces its edges.
-- kind: CALLS | REFERENCES | IMPORTS | INHERITS | IMPLEMENTS | CONTAINS
-- confidence: exact | import | name
CREATE TABLE edges (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    src_file    INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    src_symbol  INTEGER,
    dst_file    INTEGER,
    dst_symbol  INTEGER,
    confidence  TEXT NOT NULL,
    line        INTEGER NOT NULL
);
CREATE INDEX edges_src ON edges(src_symbol, kind);
CREATE INDEX edges_dst ON edges(dst_symbol, kind);
CREATE INDEX edges_src_file ON edges(src_file);
CREATE INDEX edges_dst_file ON edges(dst_file, kind);

-- Trigram index over file contents for `loci search` (replaced in V2).
CREATE VIRTUAL TABLE code_fts USING fts5(
    body, content='', contentless_delete=1, tokenize='trigram', detail='none'
);
"#;

/// The search index's definition since V2. Contentless (the text stays in the workspace)
/// and detail=none (candidates are confirmed line by line), which keeps it small and fast
/// to build. [`crate::search_index`] builds the same table in a side file.
macro_rules! code_fts_ddl {
    () => {
        "CREATE VIRTUAL TABLE code_fts USING fts5(
    terms, content='', contentless_delete=1, tokenize='ascii', detail='none'
)"
    };
}
pub(crate) const CODE_FTS_DDL: &str = code_fts_ddl!();

/// V2: the search index holds each file's distinct trigrams, computed by the indexer
/// (`loci_index`'s `trigram` module) and written as plain terms, instead of running
/// FTS5's trigram tokenizer over every occurrence. Every file's fingerprint is reset so
/// the next run re-reads and re-indexes it (symbol ids are kept: files are matched by path).
///
/// `symbols_qualified` is dropped: selectors look definitions up by name and match the
/// qualified name on the few rows found.
///
/// Each file keeps how many of its references reached no definition (written by
/// resolution), and `file_counts` its symbols by kind and its edges by kind and
/// confidence (written with them), so `stats` sums a few rows per file instead of
/// scanning the symbols and edges.
///
/// `refs` and `edges` are stored in the order of the file that owns them (`WITHOUT
/// ROWID`, keyed by file and position), which is also the order a first index writes
/// them in: a file's rows are one range, and the two indexes that found them by file are
/// gone. The edges' other four indexes become one, `(dst_file, kind, dst_symbol)`: a
/// symbol's edges are found through its file (an edge's source symbol is in its source
/// file, its target symbol in its target file). Both tables are rebuilt by the re-index.
const V2: &str = concat!(
    "DROP TABLE code_fts;\n",
    code_fts_ddl!(),
    ";\n",
    "UPDATE files SET size = -1, hash = x'', resolved = 0;\n",
    "UPDATE meta SET value = 'indexing' WHERE key = 'state';\n",
    "ALTER TABLE files ADD COLUMN unresolved_refs INTEGER NOT NULL DEFAULT 0;\n",
    "DROP TABLE refs;\n",
    "CREATE TABLE refs (
    file_id     INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL, -- position in the file's references
    from_symbol INTEGER,
    name        TEXT NOT NULL,
    qualifier   TEXT,
    kind        TEXT NOT NULL,
    line        INTEGER NOT NULL,
    col         INTEGER NOT NULL,
    PRIMARY KEY (file_id, seq)
) WITHOUT ROWID;\n",
    "CREATE INDEX refs_name ON refs(name);\n",
    "DROP TABLE edges;\n",
    "CREATE TABLE edges (
    src_file    INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    seq         INTEGER NOT NULL, -- position in the file's edges
    src_symbol  INTEGER,
    dst_file    INTEGER,
    dst_symbol  INTEGER,
    confidence  TEXT NOT NULL,
    line        INTEGER NOT NULL,
    PRIMARY KEY (src_file, kind, seq)
) WITHOUT ROWID;\n",
    "CREATE INDEX edges_in ON edges(dst_file, kind, dst_symbol);\n",
    "DROP INDEX IF EXISTS symbols_qualified;\n",
    "CREATE TABLE file_counts (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    what    TEXT NOT NULL, -- symbol_kind | edge_kind | confidence
    key     TEXT NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (file_id, what, key)
) WITHOUT ROWID;\n",
);

/// V3: a file's references are one blob (`file_refs`, written and read by `loci_index`'s
/// `stored_refs` module) instead of a row each, and the names they use are kept once
/// per file (`ref_names`) to find the files a changed definition affects. They were only
/// ever read a whole file at a time, and the rows and their name index were a third of
/// a first index's writing.
///
/// `CONTAINS` edges are written with their file's symbols and have no `dst_file` (the
/// target is in the source file): `edges_in`, which finds edges by target, leaves them
/// out (parents are found through `symbols.parent_id`). Every query that looks edges up by
/// target names `dst_file`, so SQLite can use the partial index.
///
/// Every file is re-indexed (symbol ids are kept).
const V3: &str = r#"
DROP TABLE refs;
CREATE TABLE file_refs (
    file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    n       INTEGER NOT NULL, -- how many references
    data    BLOB NOT NULL     -- the references, in source order
);
CREATE TABLE ref_names (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    PRIMARY KEY (file_id, name)
) WITHOUT ROWID;
CREATE INDEX ref_names_name ON ref_names(name);
DROP INDEX edges_in;
CREATE INDEX edges_in ON edges(dst_file, kind, dst_symbol) WHERE dst_file IS NOT NULL;
UPDATE files SET size = -1, hash = x'', resolved = 0;
UPDATE meta SET value = 'indexing' WHERE key = 'state';
"#;

/// V4: a file is keyed by the exact bytes of its relative path (`path_bytes`, unique);
/// `path` is only how it is shown (lossy UTF-8, not unique, indexed for lookups by the
/// shown name). Until V3 the lossy text was the unique key, so two names that differ
/// only in bytes that are not UTF-8 (`x\xff.rs`, `x\xfe.rs`) collided and every run
/// failed from then on.
///
/// SQLite cannot drop a column's `UNIQUE`, so `files` is rebuilt (foreign keys are off
/// while migrations run, so nothing cascades); ids are kept, so every fact, edge and
/// symbol id stays as it is. A V3 path was valid UTF-8 or already lossy; its bytes are
/// its UTF-8 text, and the next run replaces a lossy one by the file's true name.
const V4: &str = r#"
CREATE TABLE files_v4 (
    id              INTEGER PRIMARY KEY,
    path_bytes      BLOB NOT NULL UNIQUE,
    path            TEXT NOT NULL,
    lang            TEXT NOT NULL,
    size            INTEGER NOT NULL,
    mtime_ns        INTEGER NOT NULL,
    inode           INTEGER NOT NULL,
    hash            BLOB NOT NULL,
    lossy           INTEGER NOT NULL DEFAULT 0,
    lines           INTEGER NOT NULL,
    resolved        INTEGER NOT NULL DEFAULT 0,
    unresolved_refs INTEGER NOT NULL DEFAULT 0
);
INSERT INTO files_v4 (id, path_bytes, path, lang, size, mtime_ns, inode, hash, lossy, lines,
                      resolved, unresolved_refs)
    SELECT id, CAST(path AS BLOB), path, lang, size, mtime_ns, inode, hash, lossy, lines,
           resolved, unresolved_refs FROM files;
DROP TABLE files;
ALTER TABLE files_v4 RENAME TO files;
CREATE INDEX files_unresolved ON files(id) WHERE resolved = 0;
CREATE INDEX files_path ON files(path);
"#;

/// V5: each stored reference carries its qualifier's type when the file says it (the
/// receiver type `loci_index` infers), which changes the `file_refs` blob's layout, and
/// each function the type it returns (`symbols.returns`, for `x := New()`). The old
/// blobs are dropped and every file is re-indexed (symbol ids are kept).
const V5: &str = r#"
ALTER TABLE symbols ADD COLUMN returns TEXT;
DELETE FROM file_refs;
DELETE FROM ref_names;
UPDATE files SET size = -1, hash = x'', resolved = 0;
UPDATE meta SET value = 'indexing' WHERE key = 'state';
"#;

/// V6: Java's overloads are told apart by arity: each callable of such a language
/// records how many arguments it takes (`symbols.params`: `2`, or `1+` with a variadic
/// last parameter) and each call how many it passes (in the `file_refs` blob, whose
/// layout changes). The old blobs are dropped and every file is re-indexed (symbol ids
/// are kept).
const V6: &str = r#"
ALTER TABLE symbols ADD COLUMN params TEXT;
DELETE FROM file_refs;
DELETE FROM ref_names;
UPDATE files SET size = -1, hash = x'', resolved = 0;
UPDATE meta SET value = 'indexing' WHERE key = 'state';
"#;

/// V7: each file records the version of the extractor rules that gave its facts
/// (`loci_index::extract::version`), so a run re-extracts a file whose rules changed
/// even when its content did not. Rows from before carry 0, which no extractor has:
/// the next run re-extracts every file once (symbol ids are kept).
const V7: &str = r#"
ALTER TABLE files ADD COLUMN extractor INTEGER NOT NULL DEFAULT 0;
"#;

/// V8: a Kotlin extension function records the type it extends (`symbols.receiver`:
/// `KType` for `fun KType.asTypeName()`), so that a call on a receiver of known type
/// reaches that type's extensions only. Kotlin's extractor version changed with it, so
/// the next run re-extracts every Kotlin file (symbol ids are kept).
const V8: &str = r#"
ALTER TABLE symbols ADD COLUMN receiver TEXT;
"#;

/// V9: Kotlin's overloads of one arity are told apart by type: each Kotlin call records
/// its arguments' types where the file says them (in the `file_refs` blob, whose layout
/// changes) and each Kotlin callable its parameters' types after its arity in
/// `symbols.params` (`2(String,CodeBlock?)`). The old blobs are dropped and every file is
/// re-indexed (symbol ids are kept).
const V9: &str = r#"
DELETE FROM file_refs;
DELETE FROM ref_names;
UPDATE files SET size = -1, hash = x'', resolved = 0;
UPDATE meta SET value = 'indexing' WHERE key = 'state';
"#;

/// Secondary indexes on the per-file fact tables. A fresh bulk load drops them and
/// builds them once at the end (much cheaper than maintaining them row by row); every
/// run re-creates any that are missing, so a run killed in between leaves nothing behind.
const FACT_INDEXES: &[&str] = &[
    "CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name)",
    "CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file_id, start_line)",
    "CREATE INDEX IF NOT EXISTS ref_names_name ON ref_names(name)",
    "CREATE INDEX IF NOT EXISTS imports_file ON imports(file_id)",
    "CREATE INDEX IF NOT EXISTS imports_name ON imports(name)",
    "CREATE INDEX IF NOT EXISTS bases_file ON bases(file_id)",
    "CREATE INDEX IF NOT EXISTS bases_name ON bases(name)",
    "CREATE INDEX IF NOT EXISTS bases_subject ON bases(subject)",
];

/// The edge table's indexes, handled the same way around a fresh resolution.
const EDGE_INDEXES: &[&str] = &[
    "CREATE INDEX IF NOT EXISTS edges_in ON edges(dst_file, kind, dst_symbol) WHERE dst_file IS NOT NULL",
];

fn drop_indexes(conn: &Connection, list: &[&str]) -> rusqlite::Result<()> {
    for create in list {
        let name = create.split_whitespace().nth(5).unwrap_or_default();
        conn.execute_batch(&format!("DROP INDEX IF EXISTS {name}"))?;
    }
    Ok(())
}

fn create_indexes(conn: &Connection, list: &[&str]) -> rusqlite::Result<()> {
    for create in list {
        conn.execute_batch(create)?;
    }
    Ok(())
}

/// Drops the fact tables' secondary indexes before a bulk load into an empty index.
pub fn drop_fact_indexes(conn: &Connection) -> rusqlite::Result<()> {
    drop_indexes(conn, FACT_INDEXES)
}

/// Creates any missing fact-table index (all of them after a bulk load).
pub fn create_fact_indexes(conn: &Connection) -> rusqlite::Result<()> {
    create_indexes(conn, FACT_INDEXES)
}

/// Drops the edge indexes before resolving a freshly loaded index.
pub fn drop_edge_indexes(conn: &Connection) -> rusqlite::Result<()> {
    drop_indexes(conn, EDGE_INDEXES)
}

/// Creates any missing edge index (all of them after a fresh resolution).
pub fn create_edge_indexes(conn: &Connection) -> rusqlite::Result<()> {
    create_indexes(conn, EDGE_INDEXES)
}

/// Brings `conn` to [`SCHEMA_VERSION`], or reports the version it found if it is not
/// one this build knows (newer, or negative). Foreign keys must be off: a migration may
/// rebuild a table others reference (V4), and dropping it would cascade.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), MigrateError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let Some(from) = known_version(found) else {
        return Err(MigrateError::Unknown(found));
    };
    if from == MIGRATIONS.len() {
        return Ok(());
    }
    // Every step in one transaction: a reader sees the old schema or the newest, never
    // a version in between (a new file goes from 0 to the newest at once).
    let tx = conn.transaction()?;
    for sql in &MIGRATIONS[from..] {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", MIGRATIONS.len() as i64)?;
    tx.commit()?;
    Ok(())
}

/// `found` as an index into [`MIGRATIONS`], when it is a version this build can open:
/// `0..=SCHEMA_VERSION` (0 is a new, empty file).
pub(crate) fn known_version(found: i64) -> Option<usize> {
    (0..=SCHEMA_VERSION)
        .contains(&found)
        .then_some(found as usize)
}

pub(crate) enum MigrateError {
    /// A version this build does not know.
    Unknown(i64),
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for MigrateError {
    fn from(e: rusqlite::Error) -> Self {
        MigrateError::Sqlite(e)
    }
}
