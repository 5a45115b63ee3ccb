//! PostgreSQL's `text` and `jsonb` cannot hold NUL (U+0000), which SQLite's `TEXT`
//! can: a value holding one is refused before the transaction, naming the field, rather
//! than failing as a storage error halfway.

use crate::MemoryError;
use crate::model::{EntityInput, RelationshipInput};

/// Refuses `text` when it holds a NUL.
pub(super) fn text(what: &str, text: &str) -> Result<(), MemoryError> {
    match text.find('\0') {
        Some(at) => Err(MemoryError::Invalid(format!(
            "{what} holds a NUL character (U+0000) at byte {at}, which the PostgreSQL memory store cannot keep"
        ))),
        None => Ok(()),
    }
}

/// Refuses a JSON value with a NUL in any key or string.
pub(super) fn json(what: &str, v: &serde_json::Value) -> Result<(), MemoryError> {
    match v {
        serde_json::Value::String(s) => text(what, s),
        serde_json::Value::Array(items) => items.iter().try_for_each(|i| json(what, i)),
        serde_json::Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            text(what, k)?;
            json(what, v)
        }),
        _ => Ok(()),
    }
}

/// Refuses entities or relationships with a NUL in a type or relation (names and
/// aliases are already refused any control character).
pub(super) fn graph(
    entities: &[EntityInput],
    relationships: &[RelationshipInput],
) -> Result<(), MemoryError> {
    for (i, e) in entities.iter().enumerate() {
        text(&format!("entities[{i}].type"), &e.entity_type)?;
    }
    for (i, r) in relationships.iter().enumerate() {
        text(&format!("relationships[{i}].relation"), &r.relation)?;
    }
    Ok(())
}
