//! The memory's view of the code graph: a small trait the service layer implements over
//! the workspace's index (so this crate needs no index), and the staleness check that
//! compares a link's recorded content hash with the code as the index sees it now.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mentions::Mention;
use crate::model::{CodeKey, CodeLink};

/// A symbol or file as the code graph knows it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeTarget {
    /// Its key.
    pub key: CodeKey,
    /// Its first line (1 for a file).
    pub line: u32,
    /// blake3 of its source span (or of the file), hex.
    pub hash: String,
    /// False when the file on disk differs from what the index read (the span may be off
    /// until the next sync).
    pub indexed_current: bool,
}

/// What the memory asks of a code graph.
pub trait CodeGraph {
    /// The definitions or file a mention names; empty when it names none or is
    /// ambiguous beyond `max` candidates.
    fn resolve(&self, mention: &Mention, max: usize) -> Vec<CodeTarget>;
    /// The code at `key` now, if any.
    fn lookup(&self, key: &CodeKey) -> Option<CodeTarget>;
    /// Where a vanished `key` may have gone: the same qualified name and kind in another
    /// file, or a definition of the same kind with the same content `hash` in the same file.
    fn moved(&self, key: &CodeKey, hash: &str) -> Vec<CodeTarget>;
    /// What the code graph connects to `key` within `depth` hops (what its change
    /// reaches), each with the path of names that reaches it.
    fn connected(&self, key: &CodeKey, depth: u32) -> Vec<(CodeKey, Vec<String>)>;
}

/// No code graph (the workspace has no index yet, or the user-level store).
pub struct NoCode;

impl CodeGraph for NoCode {
    fn resolve(&self, _: &Mention, _: usize) -> Vec<CodeTarget> {
        Vec::new()
    }
    fn lookup(&self, _: &CodeKey) -> Option<CodeTarget> {
        None
    }
    fn moved(&self, _: &CodeKey, _: &str) -> Vec<CodeTarget> {
        Vec::new()
    }
    fn connected(&self, _: &CodeKey, _: u32) -> Vec<(CodeKey, Vec<String>)> {
        Vec::new()
    }
}

/// How a link stands against the code now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LinkState {
    /// The code is as it was when linked (it may have moved lines).
    Fresh {
        /// Its first line now.
        line: u32,
    },
    /// The code's content changed since it was linked.
    Changed {
        /// Its first line when linked.
        was_line: u32,
        /// Its first line now.
        line: u32,
        /// Why, in words.
        reason: String,
    },
    /// The symbol or file is now elsewhere, unchanged; the link was moved to follow it.
    Followed {
        /// Where it was.
        from: CodeKey,
        /// Where it is.
        to: CodeKey,
    },
    /// The symbol or file is gone from the index.
    Missing {
        /// Why, in words (with the candidates when several could be it).
        reason: String,
    },
    /// No code graph to check against (no index).
    Unchecked,
}

impl LinkState {
    /// Whether the memory should be reported stale for this link.
    pub fn is_stale(&self) -> bool {
        matches!(self, LinkState::Changed { .. } | LinkState::Missing { .. })
    }
}

/// A link with its state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckedLink {
    /// The link (after following a move).
    #[serde(flatten)]
    pub link: CodeLink,
    /// How it stands.
    pub status: LinkState,
}

/// Where `link` stands in `code`, and the key it should follow to when its code moved
/// unchanged (the caller stores the new key).
pub fn check(
    link: &CodeLink,
    code: &dyn CodeGraph,
    have_index: bool,
) -> (LinkState, Option<CodeTarget>) {
    if !have_index {
        return (LinkState::Unchecked, None);
    }
    if let Some(now) = code.lookup(&link.key) {
        if now.hash == link.hash {
            return (LinkState::Fresh { line: now.line }, None);
        }
        let reason = if now.indexed_current {
            format!(
                "{} changed since it was linked (content hash {} → {})",
                link.key,
                short(&link.hash),
                short(&now.hash)
            )
        } else {
            format!(
                "{} changed on disk since it was linked (the index has not seen it yet: run `loci sync`)",
                link.key.path
            )
        };
        return (
            LinkState::Changed {
                was_line: link.line,
                line: now.line,
                reason,
            },
            None,
        );
    }
    let candidates = code.moved(&link.key, &link.hash);
    let same: Vec<&CodeTarget> = candidates.iter().filter(|c| c.hash == link.hash).collect();
    if same.len() == 1 {
        let to = same[0].clone();
        return (
            LinkState::Followed {
                from: link.key.clone(),
                to: to.key.clone(),
            },
            Some(to),
        );
    }
    let reason = if candidates.is_empty() {
        format!(
            "{} is no longer in the index (deleted or renamed)",
            link.key
        )
    } else {
        let names: Vec<String> = candidates.iter().map(|c| c.key.to_string()).collect();
        format!(
            "{} is no longer in the index; it may be one of: {} (changed, so the link was not moved)",
            link.key,
            names.join(", ")
        )
    };
    (LinkState::Missing { reason }, None)
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}
