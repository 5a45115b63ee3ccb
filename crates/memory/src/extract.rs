//! LLM extraction, the part that needs no process: the prompt a memory is sent with,
//! the answer's schema (the same entity/relationship JSON `remember` takes from an
//! agent, checked by the same rules), the token estimate a batch shows before it
//! runs, and the record a memory keeps of its last extraction. Running the tool is the
//! service layer's job (through the supervisor); this module never spawns.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::MemoryError;
use crate::model::{self, EntityInput, Memory, RelationshipInput};

/// Most entities one answer may hold (more is refused, not truncated).
pub const MAX_ENTITIES: usize = 10_000;
/// Most relationships one answer may hold.
pub const MAX_RELATIONSHIPS: usize = 20_000;
/// Output tokens a call is assumed to produce, for the estimate.
pub const OUTPUT_TOKENS_PER_CALL: u64 = 1_000;
/// Bytes per token of the estimate (the usual rule of thumb for English and code).
pub const BYTES_PER_TOKEN: u64 = 4;

pub use crate::model::{Extraction, ExtractionState};

/// The answer the tool must give: the schema `remember --entities/--relationships`
/// takes, in one object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Extracted {
    /// The entities the memory names.
    #[serde(default)]
    pub entities: Vec<EntityInput>,
    /// Relationships between them (each end among `entities` or already known).
    #[serde(default)]
    pub relationships: Vec<RelationshipInput>,
}

const INSTRUCTIONS: &str = r#"You extract a knowledge graph from one note about a codebase.
Answer with ONE JSON object and nothing else (no prose, no code fence), exactly:
{"entities": [{"name": string, "type": string, "aliases": [string]}],
 "relationships": [{"source": string, "target": string, "relation": string, "weight": number}]}
Rules: entity types are short lowercase words (service, library, module, function, person,
concept, team, tool, file); names are at most 200 bytes; every relationship's source and
target is the name of one of your entities; relation is a short snake_case verb
(uses, depends_on, owns, calls, replaces); weight is in 0..1. Leave out anything the
note does not say. Unknown fields are refused.
"#;

/// The prompt sent (on stdin) to extract one memory's entities and relationships.
pub fn prompt(m: &Memory) -> String {
    let mut p = String::with_capacity(INSTRUCTIONS.len() + m.body.len() + 256);
    p.push_str(INSTRUCTIONS);
    p.push_str("\nThe note:\nname: ");
    p.push_str(&m.name);
    p.push_str("\ntype: ");
    p.push_str(m.memory_type.name());
    if !m.description.is_empty() {
        p.push_str("\ndescription: ");
        p.push_str(&m.description);
    }
    p.push_str("\n<<<BODY\n");
    p.push_str(&m.body);
    p.push_str("\nBODY>>>\n");
    p
}

/// Tokens one memory's extraction is estimated to cost: its prompt's bytes / 4 plus
/// [`OUTPUT_TOKENS_PER_CALL`].
pub fn estimate_tokens(m: &Memory) -> u64 {
    let prompt_bytes =
        (INSTRUCTIONS.len() + m.name.len() + m.description.len() + m.body.len() + 64) as u64;
    prompt_bytes.div_ceil(BYTES_PER_TOKEN) + OUTPUT_TOKENS_PER_CALL
}

/// Parses and checks the tool's answer text: one JSON object of [`Extracted`] (a
/// surrounding code fence or prose before the first `{` is tolerated), checked with the
/// rules `remember` applies to an agent's entities and relationships.
pub fn parse_answer(text: &str) -> Result<Extracted, MemoryError> {
    let json = json_object(text).ok_or_else(|| {
        MemoryError::Invalid(format!(
            "the answer holds no JSON object (it starts {:?})",
            text.chars().take(80).collect::<String>()
        ))
    })?;
    let x: Extracted = serde_json::from_str(json).map_err(|e| {
        MemoryError::Invalid(format!(
            "the answer does not match the extraction schema ({e}); expected {{\"entities\": [{{\"name\", \"type\", \"aliases\"?}}], \"relationships\": [{{\"source\", \"target\", \"relation\", \"weight\"?}}]}}"
        ))
    })?;
    if x.entities.len() > MAX_ENTITIES {
        return Err(MemoryError::Invalid(format!(
            "the answer names {} entities, over the limit of {MAX_ENTITIES}",
            x.entities.len()
        )));
    }
    if x.relationships.len() > MAX_RELATIONSHIPS {
        return Err(MemoryError::Invalid(format!(
            "the answer holds {} relationships, over the limit of {MAX_RELATIONSHIPS}",
            x.relationships.len()
        )));
    }
    model::check_entities(&x.entities)?;
    model::check_relationships(&x.relationships)?;
    Ok(x)
}

/// The JSON object in `text`: all of it when it is one, else from the first `{` to the
/// last `}` (a code fence or a sentence around it).
fn json_object(text: &str) -> Option<&str> {
    let t = text.trim();
    if t.starts_with('{') && t.ends_with('}') {
        return Some(t);
    }
    let start = t.find('{')?;
    let end = t.rfind('}')?;
    (end > start).then(|| &t[start..=end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_answer_is_parsed_and_checked() {
        let x = parse_answer(
            "```json\n{\"entities\": [{\"name\": \"Ledger\", \"type\": \"service\"}], \"relationships\": []}\n```",
        )
        .unwrap();
        assert_eq!(x.entities[0].name, "Ledger");
    }

    #[test]
    fn answer_with_unknown_field_or_bad_weight_is_refused() {
        let e = parse_answer(r#"{"entities": [], "extra": 1}"#).unwrap_err();
        assert!(e.to_string().contains("extraction schema"), "{e}");
        let e = parse_answer(
            r#"{"entities": [{"name": "A", "type": "x"}], "relationships": [{"source": "A", "target": "A", "relation": "r", "weight": 3}]}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("outside 0..=1"), "{e}");
        assert!(parse_answer("no json here").is_err());
    }
}
