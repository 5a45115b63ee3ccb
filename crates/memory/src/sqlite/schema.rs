//! The memory database's schema. Step `i` takes `user_version` from `i` to `i + 1`;
//! `loci_store::open_side_db` runs the missing steps in one transaction.

/// The migrations, oldest first.
pub(crate) const MIGRATIONS: &[&str] = &[
    V1,
    super::schema_extraction::V2,
    super::schema_vector_log::V3,
    super::schema_porter::V4,
];

const V1: &str = r#"
CREATE TABLE memories (
    id          INTEGER PRIMARY KEY,
    namespace   TEXT NOT NULL,
    name        TEXT NOT NULL,
    type        TEXT NOT NULL,
    description TEXT NOT NULL,
    body        TEXT NOT NULL,
    body_hash   TEXT NOT NULL,
    source      TEXT,
    session_id  TEXT,
    metadata    TEXT NOT NULL,
    version     INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    deleted_at  INTEGER,
    UNIQUE (namespace, name)
);
CREATE INDEX memories_recent ON memories(namespace, updated_at);

-- The content after every operation; a memory's versions go with it on purge.
CREATE TABLE memory_versions (
    memory_id   INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    op          TEXT NOT NULL,
    name        TEXT NOT NULL,
    type        TEXT NOT NULL,
    description TEXT NOT NULL,
    body        TEXT NOT NULL,
    metadata    TEXT NOT NULL,
    deleted     INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    PRIMARY KEY (memory_id, version)
) WITHOUT ROWID;

-- BM25 over name, description and body; the text stays in `memories`.
CREATE VIRTUAL TABLE memory_fts USING fts5(
    name, description, body, content='memories', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memory_fts(rowid, name, description, body)
    VALUES (new.id, new.name, new.description, new.body);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, name, description, body)
    VALUES ('delete', old.id, old.name, old.description, old.body);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF name, description, body ON memories BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, name, description, body)
    VALUES ('delete', old.id, old.name, old.description, old.body);
    INSERT INTO memory_fts(rowid, name, description, body)
    VALUES (new.id, new.name, new.description, new.body);
END;

-- Byte ranges of the body, the unit of embedding.
CREATE TABLE chunks (
    memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    start     INTEGER NOT NULL,
    end       INTEGER NOT NULL,
    PRIMARY KEY (memory_id, seq)
) WITHOUT ROWID;

-- One vector per chunk and model: `dim` little-endian f32s, L2-normalised.
CREATE TABLE embeddings (
    model     TEXT NOT NULL,
    memory_id INTEGER NOT NULL,
    seq       INTEGER NOT NULL,
    dim       INTEGER NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (model, memory_id, seq),
    FOREIGN KEY (memory_id, seq) REFERENCES chunks(memory_id, seq) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX embeddings_chunk ON embeddings(memory_id, seq);

CREATE TABLE entities (
    id         INTEGER PRIMARY KEY,
    namespace  TEXT NOT NULL,
    name       TEXT NOT NULL,
    type       TEXT NOT NULL,
    aliases    TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX entities_name ON entities(namespace, name COLLATE NOCASE);

CREATE TABLE memory_entities (
    memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX memory_entities_entity ON memory_entities(entity_id);

CREATE TABLE relationships (
    id        INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    source_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    target_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    relation  TEXT NOT NULL,
    weight    REAL NOT NULL CHECK (weight >= 0 AND weight <= 1),
    memory_id INTEGER REFERENCES memories(id) ON DELETE SET NULL,
    UNIQUE (source_id, target_id, relation)
);
CREATE INDEX relationships_target ON relationships(target_id);

-- A memory's links to code, keyed by what survives re-indexing (never a symbol row id).
CREATE TABLE code_links (
    id             INTEGER PRIMARY KEY,
    memory_id      INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    path           TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    kind           TEXT NOT NULL,
    hash           TEXT NOT NULL,
    line           INTEGER NOT NULL,
    origin         TEXT NOT NULL,
    mention        TEXT,
    linked_at      INTEGER NOT NULL,
    UNIQUE (memory_id, path, qualified_name, kind)
);
CREATE INDEX code_links_key ON code_links(path, qualified_name, kind);
"#;
