//! The operations that need both the store and the code graph: `remember` (validate,
//! find the code the body mentions, link it, store it all in one transaction), `read`
//! and `edit` (links checked, or re-found from the new body), `link` to code.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::MemoryError;
use crate::code::{CheckedLink, CodeGraph};
use crate::mentions::{self, Mention};
use crate::model::{self, CodeKey, Edit, LinkOrigin, Memory, NewCodeLink, NewMemory};
use crate::recall;
use crate::store::MemoryStore;

/// Most candidates a mention may have and still be linked (to each of them).
pub const AUTO_LINK_MAX: usize = 1;

/// What became of one mention in a body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MentionOutcome {
    /// The mention as written.
    pub text: String,
    /// `linked`, `ambiguous` (several definitions: not linked) or `unresolved`.
    pub status: String,
    /// What it was linked to, or the candidates when ambiguous.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code: Vec<CodeKey>,
}

/// A memory as `read`, `remember` and `edit` answer it: the memory, its code links
/// checked against the code graph, and whether any is stale.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MemoryView {
    /// The memory (its `links` as stored, after following moves).
    #[serde(flatten)]
    pub memory: Memory,
    /// Each code link and how it stands now.
    pub checked_links: Vec<CheckedLink>,
    /// Whether a linked symbol or file changed, moved or disappeared.
    pub stale: bool,
    /// What changed, one line per stale link.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_reasons: Vec<String>,
    /// The body's code mentions and what became of each (`remember`, `edit`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<MentionOutcome>,
    /// Whether its chunks have vectors (`on`, `pending`, `failed`), when a front end
    /// with an embedding model says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<crate::recall::VectorsState>,
}

/// Checks everything `remember` is given; returns the namespace.
pub fn validate(m: &NewMemory) -> Result<String, MemoryError> {
    let ns = model::namespace(m.namespace.as_deref())?;
    model::check_name("memory", &m.name)?;
    model::check_body(&m.body)?;
    model::check_description(&m.description)?;
    if let Some(meta) = &m.metadata {
        model::check_metadata(meta)?;
    }
    model::check_entities(&m.entities)?;
    model::check_relationships(&m.relationships)?;
    Ok(ns)
}

/// The auto links of a body: each mention that names exactly one definition or file.
pub fn auto_links(code: &dyn CodeGraph, body: &str) -> (Vec<NewCodeLink>, Vec<MentionOutcome>) {
    let mut links: Vec<NewCodeLink> = Vec::new();
    let mut outcomes = Vec::new();
    for m in mentions::extract(body) {
        let found = code.resolve(&m, 4);
        let status = match found.len() {
            0 => "unresolved",
            n if n <= AUTO_LINK_MAX => "linked",
            _ => "ambiguous",
        };
        if status == "linked" {
            for t in &found {
                if !links.iter().any(|l| l.key == t.key) {
                    links.push(NewCodeLink {
                        key: t.key.clone(),
                        hash: t.hash.clone(),
                        line: t.line,
                        origin: LinkOrigin::Auto,
                        mention: Some(m.text()),
                    });
                }
            }
        }
        outcomes.push(MentionOutcome {
            text: m.text(),
            status: status.into(),
            code: found.into_iter().map(|t| t.key).collect(),
        });
    }
    (links, outcomes)
}

/// The links a caller asks for by name: each must name exactly one definition or file.
pub fn explicit_links(
    code: &dyn CodeGraph,
    have_index: bool,
    texts: &[String],
) -> Result<Vec<NewCodeLink>, MemoryError> {
    if !texts.is_empty() && !have_index {
        return Err(MemoryError::NoIndex(format!(
            "cannot link `{}` to code: the workspace has no index (run `loci index` first)",
            texts[0]
        )));
    }
    let mut out = Vec::new();
    for text in texts {
        let m = mentions::parse_one(text);
        let found = code.resolve(&m, 10);
        match found.len() {
            0 => {
                return Err(MemoryError::Unresolved(format!(
                    "`{text}` names no symbol or file in the index"
                )));
            }
            1 => {
                let t = &found[0];
                out.push(NewCodeLink {
                    key: t.key.clone(),
                    hash: t.hash.clone(),
                    line: t.line,
                    origin: LinkOrigin::Manual,
                    mention: Some(text.clone()),
                });
            }
            _ => {
                let names: Vec<String> = found.iter().map(|t| t.key.to_string()).collect();
                return Err(MemoryError::Invalid(format!(
                    "`{text}` names several definitions: {} (name one with `path:name`)",
                    names.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

/// Stores a new memory with its entities, relationships and code links (those the body
/// mentions and those asked for in `links`), all or nothing.
pub fn remember(
    store: &mut dyn MemoryStore,
    code: &dyn CodeGraph,
    have_index: bool,
    m: &NewMemory,
    links: &[String],
) -> Result<MemoryView, MemoryError> {
    let ns = validate(m)?;
    let mut all = explicit_links(code, have_index, links)?;
    let (auto, mentions) = if have_index {
        auto_links(code, &m.body)
    } else {
        (Vec::new(), Vec::new())
    };
    for l in auto {
        if !all.iter().any(|x| x.key == l.key) {
            all.push(l);
        }
    }
    let memory = store.create(m, &ns, &all)?;
    let mut view = view(store, code, have_index, memory)?;
    view.mentions = mentions;
    Ok(view)
}

/// A memory with its links checked (moves followed).
pub fn read(
    store: &mut dyn MemoryStore,
    code: &dyn CodeGraph,
    have_index: bool,
    ns: &str,
    name: &str,
) -> Result<MemoryView, MemoryError> {
    let memory = store.read(ns, name)?;
    view(store, code, have_index, memory)
}

/// Edits a memory; a new body's mentions replace its auto links.
pub fn edit(
    store: &mut dyn MemoryStore,
    code: &dyn CodeGraph,
    have_index: bool,
    ns: &str,
    name: &str,
    e: &Edit,
) -> Result<MemoryView, MemoryError> {
    let (auto, mentions) = match (&e.body, have_index) {
        (Some(body), true) => {
            let (l, m) = auto_links(code, body);
            (Some(l), m)
        }
        _ => (None, Vec::new()),
    };
    let memory = store.edit(ns, name, e, auto.as_deref())?;
    let mut view = view(store, code, have_index, memory)?;
    view.mentions = mentions;
    Ok(view)
}

/// What `link` adds to a memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkSet<'a> {
    /// Entities to attach.
    pub entities: &'a [model::EntityInput],
    /// Relationships to add.
    pub relationships: &'a [model::RelationshipInput],
    /// Code to link by name.
    pub code: &'a [String],
}

/// Links a memory to entities, relationships and code by name (`memory link`).
pub fn link(
    store: &mut dyn MemoryStore,
    code: &dyn CodeGraph,
    have_index: bool,
    ns: &str,
    name: &str,
    add: LinkSet<'_>,
) -> Result<MemoryView, MemoryError> {
    model::check_entities(add.entities)?;
    model::check_relationships(add.relationships)?;
    let links = explicit_links(code, have_index, add.code)?;
    let memory = store.link(ns, name, add.entities, add.relationships, &links)?;
    view(store, code, have_index, memory)
}

fn view(
    store: &mut dyn MemoryStore,
    code: &dyn CodeGraph,
    have_index: bool,
    mut memory: Memory,
) -> Result<MemoryView, MemoryError> {
    let checked = recall::checked_links(store, code, have_index, &[memory.id])?
        .remove(&memory.id)
        .unwrap_or_default();
    memory.links = checked.iter().map(|c| c.link.clone()).collect();
    let stale_reasons = recall::stale_reasons(&checked);
    Ok(MemoryView {
        memory,
        stale: !stale_reasons.is_empty(),
        stale_reasons,
        checked_links: checked,
        mentions: Vec::new(),
        vectors: None,
    })
}

/// The mention a `--symbol`/`--file` filter names, for the caller's code graph.
pub fn target_mention(text: &str) -> Mention {
    mentions::parse_one(text)
}
