//! Migration 3: which memories changed for the vector k-NN, so a process's cache of the
//! vectors re-reads those and not every vector after a write. One row per memory (its
//! latest stamp, from one counter per file); triggers keep it, whichever process or
//! connection writes: a vector stored or dropped, a memory updated (edit, forget,
//! restore, rename, merge: each updates its row) or purged.

/// `user_version` 2 → 3.
pub(crate) const V3: &str = r#"
CREATE TABLE vector_log (
    memory_id INTEGER PRIMARY KEY,
    stamp     INTEGER NOT NULL
);
CREATE INDEX vector_log_stamp ON vector_log(stamp);
CREATE TRIGGER vector_log_embedding_insert AFTER INSERT ON embeddings BEGIN
    INSERT OR REPLACE INTO vector_log (memory_id, stamp)
    VALUES (new.memory_id, (SELECT coalesce(max(stamp), 0) + 1 FROM vector_log));
END;
CREATE TRIGGER vector_log_embedding_delete AFTER DELETE ON embeddings BEGIN
    INSERT OR REPLACE INTO vector_log (memory_id, stamp)
    VALUES (old.memory_id, (SELECT coalesce(max(stamp), 0) + 1 FROM vector_log));
END;
CREATE TRIGGER vector_log_memory_update AFTER UPDATE ON memories BEGIN
    INSERT OR REPLACE INTO vector_log (memory_id, stamp)
    VALUES (new.id, (SELECT coalesce(max(stamp), 0) + 1 FROM vector_log));
END;
CREATE TRIGGER vector_log_memory_delete AFTER DELETE ON memories BEGIN
    INSERT OR REPLACE INTO vector_log (memory_id, stamp)
    VALUES (old.id, (SELECT coalesce(max(stamp), 0) + 1 FROM vector_log));
END;
"#;
