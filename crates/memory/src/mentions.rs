//! Code mentions in a body: what a note says about the code, found without an LLM —
//! backticked identifiers (`` `parse_args` ``), qualified names (`Graph::outline`,
//! `pkg.Class.method`), `path:line` and file paths (`src/lib.rs`). The caller resolves
//! each against the code graph; unresolved mentions are simply not linked.

use rustc_hash::FxHashSet;

/// Most mentions taken from one body.
pub const MAX_MENTIONS: usize = 200;

/// One mention of code.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Mention {
    /// A name or qualified name (`outline`, `Graph::outline`, `a.b.c`).
    Symbol(String),
    /// A file path, with the line when written `path:line`.
    File {
        /// The path as written.
        path: String,
        /// The line, when given.
        line: Option<u32>,
    },
}

impl Mention {
    /// The text as it appears in the body.
    pub fn text(&self) -> String {
        match self {
            Mention::Symbol(s) => s.clone(),
            Mention::File { path, line: None } => path.clone(),
            Mention::File {
                path,
                line: Some(l),
            } => format!("{path}:{l}"),
        }
    }
}

/// The mentions of code in `body`, in order of first appearance, without repeats.
pub fn extract(body: &str) -> Vec<Mention> {
    let mut seen = FxHashSet::default();
    let mut out = Vec::new();
    let mut push = |m: Mention| {
        if out.len() < MAX_MENTIONS && seen.insert(m.clone()) {
            out.push(m);
        }
    };
    // Backticked spans first: they are what the writer meant as code.
    let mut rest = body;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else { break };
        let inner = after[..close].trim();
        if !inner.contains('\n')
            && let Some(m) = classify(inner.trim_end_matches("()"))
        {
            push(m);
        }
        rest = &after[close + 1..];
    }
    // Then bare words that can only be code: qualified names and paths.
    for word in body.split(|c: char| c.is_whitespace() || "()[]{}<>,;\"'`".contains(c)) {
        let word = word.trim_end_matches(['.', ':', '!', '?']);
        let path_part = word.rsplit_once(':').map_or(word, |(p, _)| p);
        if (word.contains("::") || looks_like_path(path_part))
            && let Some(m) = classify(word)
        {
            push(m);
        }
    }
    out
}

/// A backticked or bare span as a mention, if it can be one.
fn classify(text: &str) -> Option<Mention> {
    if text.is_empty() || text.len() > 300 || text.contains(char::is_whitespace) {
        return None;
    }
    if let Some((path, line)) = text.rsplit_once(':')
        && !path.ends_with(':')
        && let Ok(line) = line.parse::<u32>()
        && looks_like_path(path)
    {
        return Some(Mention::File {
            path: path.to_string(),
            line: Some(line),
        });
    }
    if looks_like_path(text) {
        return Some(Mention::File {
            path: text.to_string(),
            line: None,
        });
    }
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    let parts: Vec<&str> = if text.contains("::") {
        text.split("::").collect()
    } else {
        text.split(['.', '#']).collect()
    };
    parts
        .iter()
        .all(|p| ident(p))
        .then(|| Mention::Symbol(text.to_string()))
}

/// Whether a word reads as a relative file path: a `/` and a file name with an
/// extension of letters, or a bare file name with a common source extension.
fn looks_like_path(word: &str) -> bool {
    if word.starts_with('/') || word.contains("://") || word.is_empty() {
        return false;
    }
    let name = word.rsplit('/').next().unwrap_or(word);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    if stem.is_empty()
        || ext.is_empty()
        || ext.len() > 5
        || !ext.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return false;
    }
    if !word
        .chars()
        .all(|c| c.is_alphanumeric() || "_-./".contains(c))
    {
        return false;
    }
    word.contains('/')
        || matches!(
            ext,
            "rs" | "py"
                | "js"
                | "ts"
                | "tsx"
                | "go"
                | "java"
                | "c"
                | "h"
                | "cc"
                | "cpp"
                | "hpp"
                | "cs"
                | "rb"
                | "php"
                | "kt"
                | "swift"
                | "sh"
                | "toml"
                | "md"
        )
}

/// One piece of text a caller names code with (`--link`): a path, `path:line`, or a
/// symbol selector (`name`, `Qualified::name`, `path:name`).
pub fn parse_one(text: &str) -> Mention {
    classify(text).unwrap_or_else(|| Mention::Symbol(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(s: &str) -> Mention {
        Mention::Symbol(s.into())
    }

    #[test]
    fn backticks_qualified_names_and_paths_are_mentions() {
        let body = "We chose `parse_args()` over `clap`; see Graph::outline and \
                    crates/index/src/lib.rs:42, also `src/main.rs`. Not this: http://x.io/a.html";
        let found = extract(body);
        assert_eq!(
            found,
            vec![
                sym("parse_args"),
                sym("clap"),
                Mention::File {
                    path: "src/main.rs".into(),
                    line: None
                },
                sym("Graph::outline"),
                Mention::File {
                    path: "crates/index/src/lib.rs".into(),
                    line: Some(42)
                },
            ]
        );
    }

    #[test]
    fn prose_in_backticks_is_not_a_mention() {
        assert!(extract("run `cargo test --workspace` first").is_empty());
        assert!(extract("a plain sentence, nothing else.").is_empty());
    }
}
