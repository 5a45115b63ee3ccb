//! The PostgreSQL memory schema, in its own PostgreSQL schema `loci_memory` (so it sits
//! beside a team's other tables without a clash). Step `i` takes the database from
//! version `i` to `i + 1`; `migrate.rs` runs the missing ones on connect.
//!
//! Every table carries `scope`, the repository identity a workspace's memories belong
//! to: two clones of one repository (two machines) passing the same scope share their
//! memories, and `(scope, namespace, name)` is unique. Row ids come from one sequence
//! per table, so an id names one row whatever its scope; every query still tests the
//! scope, so one scope never reads or touches another's rows.

/// The PostgreSQL schema (namespace) holding loci's tables.
pub(crate) const SCHEMA: &str = "loci_memory";

/// The migrations, oldest first.
pub(crate) const MIGRATIONS: &[&str] = &[V1, V2, V3];

/// The first schema: what the SQLite store's migrations 1–4 add up to, in PostgreSQL's
/// terms. Metadata is `json`, kept as written (its keys in the caller's order, as
/// SQLite's text keeps them; `jsonb` would sort them). Full text is a generated `tsvector` over name (weight A), description (B) and
/// body (D), English-stemmed, with a GIN index; vectors are `real[]` (exact cosine in
/// loci: no pgvector); timestamps are unix milliseconds from the database's clock.
const V1: &str = r#"
CREATE TABLE memories (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope       text NOT NULL,
    namespace   text NOT NULL,
    name        text NOT NULL,
    type        text NOT NULL,
    description text NOT NULL,
    body        text NOT NULL,
    body_hash   text NOT NULL,
    source      text,
    session_id  text,
    metadata    json NOT NULL,
    version     integer NOT NULL,
    created_at  bigint NOT NULL,
    updated_at  bigint NOT NULL,
    deleted_at  bigint,
    extraction  json,
    fts         tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, name), 'A') ||
        setweight(to_tsvector('english'::regconfig, description), 'B') ||
        setweight(to_tsvector('english'::regconfig, body), 'D')
    ) STORED,
    UNIQUE (scope, namespace, name)
);
CREATE INDEX memories_recent ON memories (scope, namespace, updated_at);
CREATE INDEX memories_fts ON memories USING gin (fts);

-- The content after every operation; a memory's versions go with it on purge.
CREATE TABLE memory_versions (
    scope       text NOT NULL,
    memory_id   bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    version     integer NOT NULL,
    op          text NOT NULL,
    name        text NOT NULL,
    type        text NOT NULL,
    description text NOT NULL,
    body        text NOT NULL,
    metadata    json NOT NULL,
    deleted     boolean NOT NULL,
    at          bigint NOT NULL,
    PRIMARY KEY (memory_id, version)
);

-- Byte ranges of the body, the unit of embedding.
CREATE TABLE chunks (
    scope      text NOT NULL,
    memory_id  bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    seq        integer NOT NULL,
    start_byte integer NOT NULL,
    end_byte   integer NOT NULL,
    PRIMARY KEY (memory_id, seq)
);

-- One vector per chunk and model, L2-normalised. A pgvector `vector(dim)` column and
-- its index would be a later migration (see `vectors.rs`).
CREATE TABLE embeddings (
    scope     text NOT NULL,
    model     text NOT NULL,
    memory_id bigint NOT NULL,
    seq       integer NOT NULL,
    dim       integer NOT NULL,
    vector    real[] NOT NULL,
    PRIMARY KEY (model, memory_id, seq),
    FOREIGN KEY (memory_id, seq) REFERENCES chunks (memory_id, seq) ON DELETE CASCADE
);
CREATE INDEX embeddings_chunk ON embeddings (memory_id, seq);
CREATE INDEX embeddings_scope ON embeddings (scope, model);

CREATE TABLE entities (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope      text NOT NULL,
    namespace  text NOT NULL,
    name       text NOT NULL,
    type       text NOT NULL,
    aliases    text[] NOT NULL DEFAULT '{}',
    created_at bigint NOT NULL
);
-- Entity names match case-insensitively, as SQLite's `COLLATE NOCASE` does.
CREATE UNIQUE INDEX entities_name ON entities (scope, namespace, lower(name));

CREATE TABLE memory_entities (
    scope     text NOT NULL,
    memory_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    entity_id bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, entity_id)
);
CREATE INDEX memory_entities_entity ON memory_entities (entity_id);

CREATE TABLE relationships (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope     text NOT NULL,
    namespace text NOT NULL,
    source_id bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_id bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    relation  text NOT NULL,
    weight    double precision NOT NULL CHECK (weight >= 0 AND weight <= 1),
    memory_id bigint REFERENCES memories (id) ON DELETE SET NULL,
    UNIQUE (source_id, target_id, relation)
);
CREATE INDEX relationships_target ON relationships (target_id);
CREATE INDEX relationships_memory ON relationships (memory_id);
CREATE INDEX relationships_scope ON relationships (scope, namespace);

-- A memory's links to code, keyed by what survives re-indexing (never a symbol row id).
CREATE TABLE code_links (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope          text NOT NULL,
    memory_id      bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    path           text NOT NULL,
    qualified_name text NOT NULL,
    kind           text NOT NULL,
    hash           text NOT NULL,
    line           bigint NOT NULL,
    origin         text NOT NULL,
    mention        text,
    linked_at      bigint NOT NULL,
    UNIQUE (memory_id, path, qualified_name, kind)
);
CREATE INDEX code_links_key ON code_links (scope, path, qualified_name, kind);
"#;

/// BM25's one input `tsvector` does not give cheaply: each memory's length in words
/// (`fts_len`, the positions of its `tsvector`), generated so existing rows get it when
/// the table is rewritten here and every write keeps it. The scope's average, with its
/// count and id span, is what `fts.rs` reads on each query; the index on `(scope, id)`
/// also finds a scope's newest memories.
const V2: &str = r#"
CREATE FUNCTION fts_length(name text, description text, body text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(sum(cardinality(u.positions)), 0)::integer
    FROM unnest(to_tsvector('english'::regconfig, name) ||
                to_tsvector('english'::regconfig, description) ||
                to_tsvector('english'::regconfig, body)) AS u
$$;

ALTER TABLE memories
    ADD COLUMN fts_len integer GENERATED ALWAYS AS (fts_length(name, description, body)) STORED;
CREATE INDEX memories_len ON memories (scope, id) INCLUDE (fts_len);
"#;

/// BM25's corpus statistics without a scan: each scope's memory count and total length
/// in words, kept by a trigger in every writing transaction, so a query reads them in a
/// few rows however big the scope (an aggregate over the scope's index cost 6 ms at
/// 7,000 memories, growing with them). The totals are split over 8 rows per
/// scope, picked by the writer's backend, so concurrent writers rarely wait on one
/// row; a reader sums them. Existing memories are counted once here: the trigger is made
/// in the same transaction, whose lock on the table keeps writers out meanwhile.
const V3: &str = r#"
CREATE TABLE scope_totals (
    scope text    NOT NULL,
    shard integer NOT NULL,
    docs  bigint  NOT NULL,
    words bigint  NOT NULL,
    PRIMARY KEY (scope, shard)
);

CREATE FUNCTION scope_totals_add(s text, d bigint, w bigint) RETURNS void
LANGUAGE sql SET search_path FROM CURRENT AS $$
    INSERT INTO scope_totals AS t (scope, shard, docs, words)
    VALUES (s, pg_backend_pid() % 8, d, w)
    ON CONFLICT (scope, shard)
    DO UPDATE SET docs = t.docs + excluded.docs, words = t.words + excluded.words
$$;

CREATE FUNCTION scope_totals_count() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM scope_totals_add(OLD.scope, -1, -OLD.fts_len);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM scope_totals_add(NEW.scope, 1, NEW.fts_len);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER scope_totals_rows AFTER INSERT OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION scope_totals_count();
CREATE TRIGGER scope_totals_edits AFTER UPDATE ON memories
    FOR EACH ROW WHEN (OLD.scope IS DISTINCT FROM NEW.scope OR OLD.fts_len IS DISTINCT FROM NEW.fts_len)
    EXECUTE FUNCTION scope_totals_count();

LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO scope_totals (scope, shard, docs, words)
    SELECT scope, 0, count(*), coalesce(sum(fts_len), 0) FROM memories GROUP BY scope;
"#;
