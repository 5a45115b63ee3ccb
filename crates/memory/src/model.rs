//! The memory's data: what a caller gives (`NewMemory`, `EntityInput`,
//! `RelationshipInput`) and what it gets back (`Memory`, `Version`, `EntityInfo`...),
//! with the limits every input is checked against before anything is stored.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::MemoryError;

/// Largest body, in bytes (512 KiB).
pub const MAX_BODY_BYTES: usize = 512 * 1024;
/// Largest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// Longest memory or entity name, in bytes.
pub const MAX_NAME_BYTES: usize = 200;
/// Longest namespace, in bytes.
pub const MAX_NAMESPACE_BYTES: usize = 100;
/// A name or namespace as the schemas state it ([`check_name`]): not blank, no
/// control character (the byte limits are stated as `maxLength`).
pub const NAME_PATTERN: &str =
    r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$";
/// The namespace a caller gets when it names none.
pub const DEFAULT_NAMESPACE: &str = "default";

/// What a memory is about; the seed product's nine types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryType {
    /// A choice made, and why.
    Decision,
    /// How things are done here.
    Convention,
    /// Something that went wrong, and what was learnt.
    Incident,
    /// A pointer to where something is.
    Reference,
    /// About the project as a whole.
    Project,
    /// About the user.
    User,
    /// Feedback the user gave.
    Feedback,
    /// How to do a task.
    Skill,
    /// Anything else.
    Note,
}

impl MemoryType {
    /// Every type, in the order the docs list them.
    pub const ALL: [MemoryType; 9] = [
        MemoryType::Decision,
        MemoryType::Convention,
        MemoryType::Incident,
        MemoryType::Reference,
        MemoryType::Project,
        MemoryType::User,
        MemoryType::Feedback,
        MemoryType::Skill,
        MemoryType::Note,
    ];

    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            MemoryType::Decision => "decision",
            MemoryType::Convention => "convention",
            MemoryType::Incident => "incident",
            MemoryType::Reference => "reference",
            MemoryType::Project => "project",
            MemoryType::User => "user",
            MemoryType::Feedback => "feedback",
            MemoryType::Skill => "skill",
            MemoryType::Note => "note",
        }
    }

    /// The type named `text`, or an error listing the nine.
    pub fn parse(text: &str) -> Result<MemoryType, MemoryError> {
        MemoryType::ALL
            .into_iter()
            .find(|t| t.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = MemoryType::ALL.iter().map(|t| t.name()).collect();
                MemoryError::Invalid(format!(
                    "unknown memory type `{text}`; expected one of {}",
                    names.join("|")
                ))
            })
    }
}

impl std::fmt::Display for MemoryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An entity as the calling agent names it in `remember` (JSON: `{"name", "type",
/// "aliases"?}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityInput {
    /// The entity's name, unique per namespace (case-insensitive).
    #[schemars(regex(pattern = crate::NAME_PATTERN), length(max = 200))]
    pub name: String,
    /// What it is (`service`, `library`, `person`, `concept`...).
    #[serde(rename = "type")]
    #[schemars(regex(pattern = r"\S"))]
    pub entity_type: String,
    /// Other names it goes by.
    #[serde(default)]
    #[schemars(inner(regex(pattern = crate::NAME_PATTERN), length(max = 200)))]
    pub aliases: Vec<String>,
}

/// A weighted relationship between two entities (JSON: `{"source", "target",
/// "relation", "weight"?}`); both ends must be entities of the same call or already
/// known in the namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelationshipInput {
    /// The source entity's name.
    #[schemars(regex(pattern = crate::NAME_PATTERN), length(max = 200))]
    pub source: String,
    /// The target entity's name.
    #[schemars(regex(pattern = crate::NAME_PATTERN), length(max = 200))]
    pub target: String,
    /// The relation (`uses`, `depends_on`, `owns`...).
    #[schemars(regex(pattern = r"\S"))]
    pub relation: String,
    /// How strong, 0..=1 (default 1).
    #[serde(default = "one")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub weight: f64,
}

fn one() -> f64 {
    1.0
}

/// A code location a memory points at, keyed by what survives re-indexing: the file's
/// path, the symbol's qualified name and kind (`file` and an empty name for a file).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub struct CodeKey {
    /// Path relative to the workspace root.
    pub path: String,
    /// The symbol's qualified name (empty for a file).
    pub qualified_name: String,
    /// The symbol's kind (`function`, `struct`...), or `file`.
    pub kind: String,
}

impl CodeKey {
    /// The key of a whole file.
    pub fn file(path: impl Into<String>) -> CodeKey {
        CodeKey {
            path: path.into(),
            qualified_name: String::new(),
            kind: "file".into(),
        }
    }

    /// Whether it names a file rather than a symbol.
    pub fn is_file(&self) -> bool {
        self.kind == "file"
    }
}

impl std::fmt::Display for CodeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_file() {
            write!(f, "{}", self.path)
        } else {
            write!(f, "{}:{} ({})", self.path, self.qualified_name, self.kind)
        }
    }
}

/// How a code link was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkOrigin {
    /// Found in the body by mention resolution (replaced when the body is edited).
    Auto,
    /// Asked for (`--link`, `memory link`).
    Manual,
}

/// A code link to store: the key and the content hash of the code when linked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NewCodeLink {
    /// What it points at.
    pub key: CodeKey,
    /// blake3 of the symbol's source span (or of the file), hex.
    pub hash: String,
    /// The symbol's first line when linked.
    pub line: u32,
    /// How it was made.
    pub origin: LinkOrigin,
    /// The text in the body it came from (auto links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mention: Option<String>,
}

/// A stored code link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CodeLink {
    /// Row id (stable for the link's life).
    pub id: i64,
    /// What it points at now.
    pub key: CodeKey,
    /// The content hash when linked.
    pub hash: String,
    /// The first line when linked.
    pub line: u32,
    /// How it was made.
    pub origin: LinkOrigin,
    /// The mention it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mention: Option<String>,
    /// When it was made (unix ms).
    pub linked_at: i64,
}

/// What `remember` stores.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NewMemory {
    /// The namespace (default `default`).
    #[serde(default)]
    #[schemars(regex(pattern = crate::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
    /// Unique in the namespace.
    #[schemars(regex(pattern = crate::NAME_PATTERN), length(max = 200))]
    pub name: String,
    /// The type (default `note`).
    #[serde(default, rename = "type")]
    pub memory_type: Option<MemoryType>,
    /// One line, ≤ 500 characters.
    #[serde(default)]
    pub description: String,
    /// The text, ≤ 512 KiB of UTF-8.
    pub body: String,
    /// Where it came from (a tool, a URL, `agent`...).
    #[serde(default)]
    pub source: Option<String>,
    /// The agent session that wrote it.
    #[serde(default)]
    pub session_id: Option<String>,
    /// A JSON object of anything else.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub metadata: Option<serde_json::Value>,
    /// Entities the memory is about.
    #[serde(default)]
    pub entities: Vec<EntityInput>,
    /// Relationships between entities.
    #[serde(default)]
    pub relationships: Vec<RelationshipInput>,
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Memory {
    /// Row id.
    pub id: i64,
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
    /// blake3 of the body, hex.
    pub body_hash: String,
    /// Where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The session that wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The metadata object.
    pub metadata: serde_json::Value,
    /// The current version (1 when created).
    pub version: u32,
    /// Created (unix ms).
    pub created_at: i64,
    /// Last changed (unix ms).
    pub updated_at: i64,
    /// When it was forgotten (soft delete), if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<i64>,
    /// Its entities' names.
    pub entities: Vec<String>,
    /// Its code links.
    pub links: Vec<CodeLink>,
    /// How its last LLM extraction ended (absent when none was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extraction: Option<Extraction>,
}

/// One line of `list` and of recall hits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemorySummary {
    /// Row id.
    pub id: i64,
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
    /// The type.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// The description.
    pub description: String,
    /// The current version.
    pub version: u32,
    /// Last changed (unix ms).
    pub updated_at: i64,
    /// When it was forgotten, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<i64>,
    /// How its last LLM extraction ended (absent when none was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extraction: Option<Extraction>,
}

/// What changed a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// `remember`.
    Create,
    /// `edit`.
    Edit,
    /// `rename`.
    Rename,
    /// `forget` (soft delete).
    Forget,
    /// `restore` (undo a forget, or bring an old version back).
    Restore,
    /// Entities or links changed (`link`, `unlink`, an entity merge).
    Link,
    /// Entities and relationships extracted by an LLM were attached (`enrich`).
    Enrich,
    /// A memory merge: the kept memory took the other's body and links, and the other
    /// was forgotten pointing at it.
    Merge,
}

impl Operation {
    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Create => "create",
            Operation::Edit => "edit",
            Operation::Rename => "rename",
            Operation::Forget => "forget",
            Operation::Restore => "restore",
            Operation::Link => "link",
            Operation::Enrich => "enrich",
            Operation::Merge => "merge",
        }
    }

    /// The operation stored as `text`.
    pub fn parse(text: &str) -> Option<Operation> {
        [
            Operation::Create,
            Operation::Edit,
            Operation::Rename,
            Operation::Forget,
            Operation::Restore,
            Operation::Link,
            Operation::Enrich,
            Operation::Merge,
        ]
        .into_iter()
        .find(|o| o.name() == text)
    }
}

/// One version of a memory: the full content after an operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Version {
    /// 1, 2, 3...
    pub version: u32,
    /// What made it.
    pub op: Operation,
    /// The name then.
    pub name: String,
    /// The type then.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// The description then.
    pub description: String,
    /// The body then.
    pub body: String,
    /// The metadata then.
    pub metadata: serde_json::Value,
    /// When (unix ms).
    pub at: i64,
    /// Whether the memory was forgotten in this version.
    pub deleted: bool,
}

impl Version {
    /// The operation's stored name.
    pub fn op_name(&self) -> &'static str {
        self.op.name()
    }
}

/// What `edit` changes (absent fields stay).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Edit {
    /// A new body.
    #[serde(default)]
    pub body: Option<String>,
    /// A new description.
    #[serde(default)]
    pub description: Option<String>,
    /// A new type.
    #[serde(default, rename = "type")]
    pub memory_type: Option<MemoryType>,
    /// A new metadata object.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub metadata: Option<serde_json::Value>,
}

/// An entity with its degree (relationships plus memories that name it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EntityInfo {
    /// Row id.
    pub id: i64,
    /// The name.
    pub name: String,
    /// The type.
    #[serde(rename = "type")]
    pub entity_type: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// Relationships touching it plus memories naming it.
    pub degree: u64,
}

/// A relationship as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Relationship {
    /// The source entity.
    pub source: String,
    /// The target entity.
    pub target: String,
    /// The relation.
    pub relation: String,
    /// 0..=1.
    pub weight: f64,
}

/// Checks a name (memory or entity): non-empty, no control characters, ≤ 200 bytes.
pub fn check_name(what: &str, name: &str) -> Result<(), MemoryError> {
    if name.trim().is_empty() {
        return Err(MemoryError::Invalid(format!("the {what} name is empty")));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(MemoryError::TooLong {
            what: format!("the {what} name"),
            got: name.len(),
            limit: MAX_NAME_BYTES,
        });
    }
    if name.chars().any(char::is_control) {
        return Err(MemoryError::Invalid(format!(
            "the {what} name {name:?} holds a control character"
        )));
    }
    Ok(())
}

/// Checks a namespace like a name, and gives the default when none is named.
pub fn namespace(ns: Option<&str>) -> Result<String, MemoryError> {
    let ns = ns.unwrap_or(DEFAULT_NAMESPACE);
    if ns.len() > MAX_NAMESPACE_BYTES {
        return Err(MemoryError::TooLong {
            what: "the namespace".into(),
            got: ns.len(),
            limit: MAX_NAMESPACE_BYTES,
        });
    }
    check_name("namespace", ns)?;
    Ok(ns.to_string())
}

/// Checks a body against [`MAX_BODY_BYTES`] (it is UTF-8 by its type; bytes from a
/// file or stdin go through [`body_from_bytes`]).
pub fn check_body(body: &str) -> Result<(), MemoryError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(MemoryError::TooLong {
            what: "the body".into(),
            got: body.len(),
            limit: MAX_BODY_BYTES,
        });
    }
    Ok(())
}

/// A body read as bytes (a file, stdin): within the limit and valid UTF-8, else an
/// error naming `origin` and the first invalid byte's offset.
pub fn body_from_bytes(origin: &str, bytes: Vec<u8>) -> Result<String, MemoryError> {
    if bytes.len() > MAX_BODY_BYTES {
        return Err(MemoryError::TooLong {
            what: format!("the body from {origin}"),
            got: bytes.len(),
            limit: MAX_BODY_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        MemoryError::Invalid(format!(
            "the body from {origin} is not valid UTF-8 (first invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Checks a description against [`MAX_DESCRIPTION_CHARS`].
pub fn check_description(description: &str) -> Result<(), MemoryError> {
    let n = description.chars().count();
    if n > MAX_DESCRIPTION_CHARS {
        return Err(MemoryError::TooLong {
            what: format!(
                "the description ({n} characters; limit {MAX_DESCRIPTION_CHARS} characters)"
            ),
            got: description.len(),
            limit: MAX_DESCRIPTION_CHARS,
        });
    }
    Ok(())
}

/// Checks metadata: a JSON object.
pub fn check_metadata(metadata: &serde_json::Value) -> Result<(), MemoryError> {
    if !metadata.is_object() {
        return Err(MemoryError::Invalid(format!(
            "metadata must be a JSON object, not {metadata}"
        )));
    }
    Ok(())
}

/// Parses the entities JSON a caller gives (an array of [`EntityInput`]), naming
/// where it breaks the schema.
pub fn parse_entities(json: &str) -> Result<Vec<EntityInput>, MemoryError> {
    let entities: Vec<EntityInput> = serde_json::from_str(json).map_err(|e| {
        MemoryError::Invalid(format!(
            "the entities JSON does not match its schema ({e}); expected an array of {{\"name\": string, \"type\": string, \"aliases\"?: [string]}}"
        ))
    })?;
    check_entities(&entities)?;
    Ok(entities)
}

/// Parses the relationships JSON a caller gives (an array of [`RelationshipInput`]).
pub fn parse_relationships(json: &str) -> Result<Vec<RelationshipInput>, MemoryError> {
    let rels: Vec<RelationshipInput> = serde_json::from_str(json).map_err(|e| {
        MemoryError::Invalid(format!(
            "the relationships JSON does not match its schema ({e}); expected an array of {{\"source\": string, \"target\": string, \"relation\": string, \"weight\"?: 0..1}}"
        ))
    })?;
    check_relationships(&rels)?;
    Ok(rels)
}

/// Checks entities given as values (names, types).
pub fn check_entities(entities: &[EntityInput]) -> Result<(), MemoryError> {
    for (i, e) in entities.iter().enumerate() {
        check_name("entity", &e.name).map_err(|err| at(i, "entities", err))?;
        if e.entity_type.trim().is_empty() {
            return Err(MemoryError::Invalid(format!(
                "entities[{i}] (`{}`): the type is empty",
                e.name
            )));
        }
        for a in &e.aliases {
            check_name("alias", a).map_err(|err| at(i, "entities", err))?;
        }
    }
    Ok(())
}

/// Checks relationships given as values (names, relation, weight in 0..=1).
pub fn check_relationships(rels: &[RelationshipInput]) -> Result<(), MemoryError> {
    for (i, r) in rels.iter().enumerate() {
        check_name("source entity", &r.source).map_err(|err| at(i, "relationships", err))?;
        check_name("target entity", &r.target).map_err(|err| at(i, "relationships", err))?;
        if r.relation.trim().is_empty() {
            return Err(MemoryError::Invalid(format!(
                "relationships[{i}]: the relation is empty"
            )));
        }
        if !(0.0..=1.0).contains(&r.weight) {
            return Err(MemoryError::Invalid(format!(
                "relationships[{i}]: weight {} is outside 0..=1",
                r.weight
            )));
        }
    }
    Ok(())
}

fn at(i: usize, list: &str, err: MemoryError) -> MemoryError {
    MemoryError::Invalid(format!("{list}[{i}]: {err}"))
}

/// blake3 of `text`, hex.
pub fn hash_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// How the last extraction of a memory ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExtractionState {
    /// Entities and relationships were extracted and attached.
    Done,
    /// The extraction failed; the memory is stored without them (`reason` says why).
    Failed,
}

/// What a memory keeps of its last LLM extraction (absent when none was asked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Extraction {
    /// `done` or `failed`.
    pub state: ExtractionState,
    /// The tool that ran (or was to run): `claude` or `codex`.
    pub tool: String,
    /// When it ended (unix ms).
    pub at: i64,
    /// Why it failed (a failed extraction only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The failure's stable kind (`preflight` guards by name: `binary_not_found`...;
    /// `llm_timed_out`, `invalid_output`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Entities extracted (a done extraction).
    #[serde(default)]
    pub entities: u32,
    /// Relationships extracted (a done extraction).
    #[serde(default)]
    pub relationships: u32,
}
