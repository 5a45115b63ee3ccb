//! C# conditional directives where tree-sitter-c-sharp cannot take them: inside a
//! parameter list (`void F(int a\n#if TRACE\n, int b\n#endif\n)`) or between a statement's
//! head and its block (`#if CHECK\nlock (gate)\n#endif\n{`), the grammar, which knows
//! `#if` only around whole declarations and statements, loses the file (pythonnet's
//! `Finalizer.cs` was one `ERROR` from its first line).
//!
//! A parse with an error is tried again on the file with one configuration's code: every
//! `#if`, `#elif`, `#else` and `#endif` line blanked, and every line of an `#elif` or
//! `#else` branch too, so each group keeps its first branch (balanced, as each branch
//! of a compiling file is). Blanking puts spaces in place of a line's bytes, so every
//! offset and line number stays. The second parse is kept only when less of the file
//! is in error.

use std::borrow::Cow;

use tree_sitter::{Node, Tree};

/// `tree` (of `source`), or the tree of `source` with only the first branch of each
/// conditional group ([`first_branches`]) when `reparse` gives one with fewer bytes in
/// error; with the text it is a tree of.
pub(crate) fn recover<'s>(
    source: &'s str,
    tree: Tree,
    reparse: impl FnOnce(&str) -> Option<Tree>,
) -> (Tree, Cow<'s, str>) {
    if !tree.root_node().has_error() {
        return (tree, Cow::Borrowed(source));
    }
    let Some(rewritten) = first_branches(source) else {
        return (tree, Cow::Borrowed(source));
    };
    match reparse(&rewritten) {
        Some(again) if error_bytes(again.root_node()) < error_bytes(tree.root_node()) => {
            (again, Cow::Owned(rewritten))
        }
        _ => (tree, Cow::Borrowed(source)),
    }
}

/// A conditional directive line's keyword.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Directive {
    If,
    ElseBranch,
    EndIf,
}

fn directive(line: &str) -> Option<Directive> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let word_end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    match &rest[..word_end] {
        "if" => Some(Directive::If),
        "elif" | "else" => Some(Directive::ElseBranch),
        "endif" => Some(Directive::EndIf),
        _ => None,
    }
}

/// `source` with its conditional directive lines and the lines of every `#elif` and
/// `#else` branch blanked; `None` when it has no conditional directive.
pub(crate) fn first_branches(source: &str) -> Option<String> {
    let mut out = Vec::with_capacity(source.len());
    // One entry per open group: whether the lines are in its first branch.
    let mut groups: Vec<bool> = Vec::new();
    let mut any = false;
    for line in source.split_inclusive('\n') {
        let found = directive(line);
        match found {
            Some(Directive::If) => groups.push(true),
            Some(Directive::ElseBranch) => {
                if let Some(first) = groups.last_mut() {
                    *first = false;
                }
            }
            Some(Directive::EndIf) => {
                groups.pop();
            }
            None => {}
        }
        any |= found.is_some();
        if found.is_some() || groups.iter().any(|first| !first) {
            let content = line.trim_end_matches(['\n', '\r']);
            out.extend(std::iter::repeat_n(b' ', content.len()));
            out.extend_from_slice(&line.as_bytes()[content.len()..]);
        } else {
            out.extend_from_slice(line.as_bytes());
        }
    }
    // Whole lines were replaced, so the text is still UTF-8.
    any.then_some(out)
        .and_then(|bytes| String::from_utf8(bytes).ok())
}

/// How many bytes the outermost `ERROR` nodes under `node` cover, and one for each
/// missing token. Iterative (a cursor, no recursion): a deeply nested file cannot
/// exhaust the stack.
fn error_bytes(node: Node<'_>) -> usize {
    let mut total = 0;
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        let descend = if n.is_error() {
            total += n.end_byte() - n.start_byte();
            false
        } else if n.is_missing() {
            total += 1;
            false
        } else {
            n.has_error()
        };
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node().id() == node.id() {
                return total;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return total;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_group_keeps_its_first_branch_in_place() {
        let src = "a\n#if X\nb\n#elif Y\nc\n#else\nd\n#endif\n  #if Z\ne\n#endif\nf\r\n";
        let out = first_branches(src).unwrap();
        assert_eq!(out.len(), src.len());
        assert_eq!(
            out.lines().map(str::trim).collect::<Vec<_>>(),
            ["a", "", "b", "", "", "", "", "", "", "e", "", "f"]
        );
        assert!(out.ends_with("f\r\n"));
        assert_eq!(first_branches("class A {}\n#region R\n#endregion\n"), None);
    }

    #[test]
    fn nested_groups_keep_the_first_branch_of_each() {
        let src = "#if A\n#if B\nx\n#else\ny\n#endif\n#else\nz\n#endif\n";
        let out = first_branches(src).unwrap();
        let kept: Vec<&str> = out
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(kept, ["x"]);
    }
}
