//! What a changed definition reaches in the live index: its direct callers, the size of
//! its transitive impact, and the tests among them.

use std::collections::BTreeSet;

use loci_index::graph::{self, Direction, Graph, QueryError, Reached, SymbolInfo};
use schemars::JsonSchema;
use serde::Serialize;

use super::pairing::Placed;

/// Callers and tests listed per changed definition (the counts are complete).
pub const SHOWN_PER_SYMBOL: usize = 10;

/// A definition named compactly (an item of a changed definition's lists).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SymbolRef {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Its first line.
    pub line: u32,
    /// Scopes and name.
    pub qualified_name: String,
    /// `function`, `method`, ...
    pub kind: loci_index::SymbolKind,
}

/// How far a change reaches through the proven links of the index.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ImpactCount {
    /// Hops followed.
    pub depth: u32,
    /// Definitions reached (top-level code of a file counts as one).
    pub symbols: u64,
    /// Files they are in.
    pub files: u64,
    /// Whether the traversal stopped at its node cap (the counts are then lower bounds).
    pub truncated: bool,
}

/// What one changed definition reaches in the live index.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Reach {
    /// Whether the live index has it (else no callers, impact or tests are known).
    pub in_index: bool,
    /// Its direct callers (the first 10).
    pub callers: Vec<SymbolRef>,
    /// Its direct callers in all.
    pub callers_total: u64,
    /// What depends on it, transitively, through proven links.
    pub impact: ImpactCount,
    /// Test definitions among its callers and its impact (the first 10).
    pub tests: Vec<SymbolRef>,
    /// Those tests in all.
    pub tests_total: u64,
}

/// The definition in the index that `placed` is (same file, qualified name and kind;
/// the one starting nearest its line when several), if the index has it.
fn in_index(g: &Graph, placed: &Placed) -> Result<Option<SymbolInfo>, QueryError> {
    let s = &placed.symbol;
    let found = g.definitions_in(&placed.path, &s.qualified_name, s.kind.name())?;
    Ok(found
        .into_iter()
        .min_by_key(|d| d.line.abs_diff(s.span.start_line)))
}

/// Callers (depth 1), impact (to `depth`, proven links) and the tests among both, for
/// the definition `placed` names in the live index; an empty [`Reach`] when the index
/// does not have it (a definition only on a side the workspace is not at).
pub(super) fn reach(g: &Graph, placed: &Placed, depth: u32) -> Result<Reach, QueryError> {
    let Some(target) = in_index(g, placed)? else {
        return Ok(Reach {
            impact: ImpactCount {
                depth,
                ..ImpactCount::default()
            },
            ..Reach::default()
        });
    };
    let callers = graph::traverse_from(g, vec![target.clone()], Direction::Callers, 1, true)?;
    let impact = graph::traverse_from(g, vec![target], Direction::Impact, depth, false)?;
    let caller_refs: Vec<SymbolRef> = callers.reached.iter().filter_map(symbol_ref).collect();
    let files: BTreeSet<&str> = impact.reached.iter().map(|r| r.path.as_str()).collect();
    let mut tests: Vec<SymbolRef> = callers
        .reached
        .iter()
        .chain(&impact.reached)
        .filter_map(symbol_ref)
        .filter(|r| is_test(&r.path, &r.qualified_name))
        .collect();
    tests.sort_by(|a, b| {
        (&a.path, a.line, &a.qualified_name).cmp(&(&b.path, b.line, &b.qualified_name))
    });
    tests.dedup();
    Ok(Reach {
        in_index: true,
        callers_total: caller_refs.len() as u64,
        callers: caller_refs.into_iter().take(SHOWN_PER_SYMBOL).collect(),
        impact: ImpactCount {
            depth,
            symbols: impact.reached.len() as u64,
            files: files.len() as u64,
            truncated: impact.truncated,
        },
        tests_total: tests.len() as u64,
        tests: tests.into_iter().take(SHOWN_PER_SYMBOL).collect(),
    })
}

fn symbol_ref(r: &Reached) -> Option<SymbolRef> {
    r.symbol.as_ref().map(|s| SymbolRef {
        path: s.path.clone(),
        line: s.line,
        qualified_name: s.qualified_name.clone(),
        kind: s.kind,
    })
}

/// Whether a definition is test code: in a test folder (`tests/`, `test/`,
/// `__tests__/`, `spec/`), in a test file by its language's convention (`*_test.go`,
/// `*_tests.rs`, `test_*.py`, `*.test.ts`, `*.spec.js`, `FooTest.java`, `*_spec.rb`), or inside a Rust
/// `tests` module (`tests::it_works`).
pub fn is_test(path: &str, qualified_name: &str) -> bool {
    let mut parts = path.split('/').collect::<Vec<_>>();
    let file = parts.pop().unwrap_or_default();
    if parts
        .iter()
        .any(|d| matches!(*d, "tests" | "test" | "__tests__" | "spec" | "testing"))
    {
        return true;
    }
    let stem = file.split('.').next().unwrap_or_default();
    let in_file = stem.ends_with("_test")
        || stem.ends_with("_tests")
        || matches!(stem, "test" | "tests")
        || stem.starts_with("test_")
        || stem.ends_with("_spec")
        || file.contains(".test.")
        || file.contains(".spec.")
        || (stem.ends_with("Test") || stem.ends_with("Tests")) && stem.len() > 4;
    in_file
        || qualified_name
            .split([':', '.'])
            .any(|seg| seg == "tests" || seg == "test")
}

#[cfg(test)]
mod tests {
    use super::is_test;

    #[test]
    fn test_code_is_told_by_folder_file_name_or_module() {
        for (path, name) in [
            ("tests/it.rs", "works"),
            ("pkg/__tests__/a.js", "a"),
            ("crates/x/src/collector_tests.rs", "splits"),
            ("go/server_test.go", "TestServe"),
            ("py/test_core.py", "test_target"),
            ("web/app.spec.ts", "renders"),
            ("java/PoolTest.java", "PoolTest.interrupts"),
            ("src/lib.rs", "tests::it_works"),
        ] {
            assert!(is_test(path, name), "{path} {name}");
        }
        for (path, name) in [
            ("src/lib.rs", "attest"),
            ("src/contest.rs", "run"),
            ("src/Test.java", "Test.run"),
        ] {
            assert!(!is_test(path, name), "{path} {name}");
        }
    }
}
