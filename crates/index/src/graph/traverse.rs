//! Walking the graph from a definition: callers, callees and impact (transitive
//! dependents), breadth first, each reached node with the path that reaches it.

use std::collections::{HashMap, HashSet, VecDeque};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Confidence, EdgeKind};

use super::handle::{Graph, QueryError, SYMBOL_COLUMNS, SymbolInfo, symbol_from_row};
use super::select::resolve_selector;

/// Most nodes a traversal reports before it stops and says so.
const MAX_REACHED: usize = 5000;

/// Which way edges are followed: the one vocabulary every front end parses into
/// (`callers`, `callees`, `impact` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Who calls the target.
    Callers,
    /// What the target calls.
    Callees,
    /// What depends on the target (calls, type uses, inheritance, imports), transitively.
    Impact,
}

/// A node a traversal reached.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Reached {
    /// The definition reached; `None` for top-level code of a file (then see `path`).
    pub symbol: Option<SymbolInfo>,
    /// The file (relative path) of the reached node.
    pub path: String,
    /// The reached definition's first line (0 for top-level code).
    pub line: u32,
    /// Where the edge is written: the call site, the type use, the import.
    pub site: Site,
    /// Hops from the target.
    pub depth: u32,
    /// The edge kind that reached it (`CALLS`, `REFERENCES`, `INHERITS`, `IMPLEMENTS`, `IMPORTS`).
    pub edge: EdgeKind,
    /// How sure that edge is (`exact`, `import`, `name`).
    pub confidence: Confidence,
    /// Labels from the target to this node (inclusive), e.g. `["parse", "run", "main"]`.
    pub via: Vec<String>,
}

/// A place in the workspace.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Site {
    /// Relative path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
}

/// The result of a traversal.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Traversal {
    /// What the traversal started from (symbols, or a file for `impact <file>`).
    pub targets: Vec<String>,
    /// The definitions it started from.
    pub target_symbols: Vec<SymbolInfo>,
    /// Everything reached, by depth then path.
    pub reached: Vec<Reached>,
    /// Whether the result is cut: by [`MAX_REACHED`], or by a traversal asked to stop
    /// once it had enough ([`traverse_enough`]); then more may be reachable.
    pub truncated: bool,
    /// Definitions and files an impact left out because only links made by name alone
    /// reached them (`Confidence::Name`: a same-named definition elsewhere is no proof
    /// of a dependency); 0 when name links were followed.
    pub name_only_left_out: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Node {
    Symbol(i64),
    File(i64),
}

/// Who calls `selector`, up to `depth` hops.
pub fn callers(graph: &Graph, selector: &str, depth: u32) -> Result<Traversal, QueryError> {
    traverse_enough(graph, Direction::Callers, selector, depth, true, usize::MAX)
}

/// What `selector` calls, up to `depth` hops.
pub fn callees(graph: &Graph, selector: &str, depth: u32) -> Result<Traversal, QueryError> {
    traverse_enough(graph, Direction::Callees, selector, depth, true, usize::MAX)
}

/// What depends on `target` (a symbol selector, or a file path in the index), up to `depth`
/// hops: through links resolution proved (a path, an import, a receiver's type), and with
/// `name_links` through links made by name alone too.
pub fn impact(
    graph: &Graph,
    target: &str,
    depth: u32,
    name_links: bool,
) -> Result<Traversal, QueryError> {
    traverse_enough(
        graph,
        Direction::Impact,
        target,
        depth,
        name_links,
        usize::MAX,
    )
}

/// [`callers`], [`callees`] or [`impact`] (`name_links` matters to impact only) for a
/// caller that keeps only the first `enough` nodes of the answer (a page): the walk
/// stops going deeper once the nodes of the depths done make `enough`. The answer is
/// sorted by depth first and every node of a depth is found before any deeper one, so
/// its first `enough` nodes (and the path to each) are those of the whole traversal;
/// when it stopped with depths left to walk, `truncated` says so and the count is a
/// lower bound.
pub fn traverse_enough(
    graph: &Graph,
    direction: Direction,
    target: &str,
    depth: u32,
    name_links: bool,
    enough: usize,
) -> Result<Traversal, QueryError> {
    if direction != Direction::Impact {
        let targets = resolve_selector(graph, target, false)?;
        return traverse(graph, targets, Vec::new(), direction, depth, true, enough);
    }
    let err = QueryError::sqlite(&graph.index_path);
    let file_id = graph.indexed_file(target)?;
    match file_id {
        Some(file_id) => {
            let mut stmt = graph
                .conn
                .prepare_cached(&format!(
                    "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.file_id = ?1
                     ORDER BY s.start_line"
                ))
                .map_err(&err)?;
            let symbols: Vec<SymbolInfo> = stmt
                .query_map([file_id], symbol_from_row)
                .map_err(&err)?
                .collect::<Result<_, _>>()
                .map_err(&err)?;
            let shown: String = graph
                .conn
                .query_row("SELECT path FROM files WHERE id = ?1", [file_id], |r| {
                    r.get(0)
                })
                .map_err(&err)?;
            traverse(
                graph,
                symbols,
                vec![(file_id, shown)],
                Direction::Impact,
                depth,
                name_links,
                enough,
            )
        }
        None => {
            let targets = match resolve_selector(graph, target, false) {
                Err(QueryError::NotFound { .. }) if looks_like_file(target) => {
                    return Err(QueryError::NotFound {
                        what: format!("file or symbol `{target}` in the index"),
                    });
                }
                other => other?,
            };
            traverse(
                graph,
                targets,
                Vec::new(),
                Direction::Impact,
                depth,
                name_links,
                enough,
            )
        }
    }
}

/// A traversal from definitions already read from this index (by [`Graph::definitions_in`]):
/// `loci changes` walks from each changed definition without a selector to resolve.
pub fn traverse_from(
    graph: &Graph,
    targets: Vec<SymbolInfo>,
    direction: Direction,
    depth: u32,
    name_links: bool,
) -> Result<Traversal, QueryError> {
    traverse(
        graph,
        targets,
        Vec::new(),
        direction,
        depth,
        name_links,
        usize::MAX,
    )
}

/// A target that reads as a file path (a directory separator, or a source file's
/// extension) and is no `path:name` selector: when it matches nothing, the answer names
/// both the file and the symbol it could have been.
pub fn looks_like_file(target: &str) -> bool {
    !target.contains(':')
        && (target.contains(['/', '\\'])
            || crate::Lang::detect(std::path::Path::new(target), b"").is_some())
}

struct Step {
    node: Node,
    edge: EdgeKind,
    confidence: Confidence,
    site_file: i64,
    site_line: u32,
    /// Whether any of the links it stands for was proven (not made by name alone).
    proven: bool,
}

fn traverse(
    graph: &Graph,
    symbols: Vec<SymbolInfo>,
    files: Vec<(i64, String)>,
    direction: Direction,
    depth: u32,
    name_links: bool,
    enough: usize,
) -> Result<Traversal, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let mut labels: HashMap<Node, (String, Option<SymbolInfo>, String)> = HashMap::new();
    let mut queue: VecDeque<(Node, u32)> = VecDeque::new();
    let mut seen: HashSet<Node> = HashSet::new();
    let mut prev: HashMap<Node, Node> = HashMap::new();
    for s in &symbols {
        let node = Node::Symbol(s.id);
        labels.insert(
            node,
            (s.qualified_name.clone(), Some(s.clone()), s.path.clone()),
        );
        seen.insert(node);
        queue.push_back((node, 0));
    }
    for (id, path) in &files {
        let node = Node::File(*id);
        labels.insert(node, (path.clone(), None, path.clone()));
        seen.insert(node);
        queue.push_back((node, 0));
    }
    let mut reached = Vec::new();
    let mut truncated = false;
    // Start nodes found calling themselves: a recursive definition is its own caller and
    // callee, reported once at depth 1 and not followed again.
    let mut recursive: HashSet<Node> = HashSet::new();
    // Most reached nodes share a few files: each path is read once.
    let mut paths: HashMap<i64, String> = HashMap::new();
    // Nodes only name links led to, left out of an impact that does not follow them.
    let mut name_only: HashSet<Node> = HashSet::new();
    // The depth whose nodes are being expanded: the queue holds them in depth order.
    let mut level = 0;
    while let Some((node, d)) = queue.pop_front() {
        if d >= depth {
            continue;
        }
        if d > level {
            level = d;
            // Every node up to depth `d` is found: enough for the caller's page.
            if reached.len() >= enough {
                truncated = true;
                break;
            }
        }
        for step in neighbours(graph, node, direction).map_err(&err)? {
            if !step.proven && !name_links && direction == Direction::Impact {
                name_only.insert(step.node);
                continue;
            }
            let itself = d == 0
                && step.node == node
                && direction != Direction::Impact
                && matches!(node, Node::Symbol(_));
            if itself {
                if !recursive.insert(node) {
                    continue;
                }
            } else if !seen.insert(step.node) {
                continue;
            }
            if reached.len() >= MAX_REACHED {
                truncated = true;
                break;
            }
            // A recursive start node: its own label twice, not followed again.
            let (symbol, path, via) = if itself {
                let (label, symbol, path) = labels.get(&node).cloned().unwrap_or_default();
                (symbol, path, vec![label.clone(), label])
            } else {
                prev.insert(step.node, node);
                let (label, symbol, path) = describe(graph, step.node, &mut paths).map_err(&err)?;
                labels.insert(step.node, (label, symbol.clone(), path.clone()));
                let mut via = Vec::new();
                let mut cursor = Some(step.node);
                while let Some(n) = cursor {
                    via.push(labels.get(&n).map(|l| l.0.clone()).unwrap_or_default());
                    cursor = prev.get(&n).copied();
                }
                via.reverse();
                (symbol, path, via)
            };
            let site_path = file_path(graph, step.site_file, &mut paths).map_err(&err)?;
            reached.push(Reached {
                line: symbol.as_ref().map_or(0, |s| s.line),
                symbol,
                path,
                site: Site {
                    path: site_path,
                    line: step.site_line,
                },
                depth: d + 1,
                edge: step.edge,
                confidence: step.confidence,
                via,
            });
            if itself {
                continue;
            }
            queue.push_back((step.node, d + 1));
        }
        if truncated {
            break;
        }
    }
    reached.sort_by(|a, b| {
        (a.depth, &a.path, a.line, &a.site.path, a.site.line).cmp(&(
            b.depth,
            &b.path,
            b.line,
            &b.site.path,
            b.site.line,
        ))
    });
    let mut targets: Vec<String> = symbols
        .iter()
        .map(|s| format!("{}:{}", s.path, s.qualified_name))
        .collect();
    targets.extend(files.into_iter().map(|(_, p)| p));
    Ok(Traversal {
        targets,
        target_symbols: symbols,
        reached,
        truncated,
        name_only_left_out: name_only.difference(&seen).count(),
    })
}

/// A symbol's callers. Edges are found by target through their target's file (see
/// `edges_in`), and every lookup by target names `dst_file` so that SQLite can use that
/// partial index (a test checks each plan).
pub(super) const CALLERS_SQL: &str =
    "SELECT src_symbol, src_file, kind, confidence, min(line), src_file,
            max(confidence <> 'name') FROM edges
     WHERE dst_file = (SELECT file_id FROM symbols WHERE id = ?1) AND kind = 'CALLS'
       AND dst_symbol = ?1
     GROUP BY src_symbol, src_file";

/// A symbol's callees (edges are stored by source file).
const CALLEES_SQL: &str = "SELECT dst_symbol, dst_file, kind, confidence, min(line), src_file,
            max(confidence <> 'name') FROM edges
     WHERE src_file = (SELECT file_id FROM symbols WHERE id = ?1) AND kind = 'CALLS'
       AND src_symbol = ?1
     GROUP BY dst_symbol";

/// What depends on a symbol.
pub(super) const SYMBOL_DEPENDENTS_SQL: &str =
    "SELECT src_symbol, src_file, kind, confidence, min(line), src_file,
            max(confidence <> 'name') FROM edges
     WHERE dst_file = (SELECT file_id FROM symbols WHERE id = ?1)
       AND kind IN ('CALLS', 'REFERENCES', 'INHERITS', 'IMPLEMENTS') AND dst_symbol = ?1
     GROUP BY src_symbol, src_file";

/// The files that import a file.
pub(super) const FILE_DEPENDENTS_SQL: &str =
    "SELECT NULL, src_file, kind, confidence, min(line), src_file,
            max(confidence <> 'name') FROM edges
     WHERE dst_file = ?1 AND kind = 'IMPORTS' AND src_file != ?1 GROUP BY src_file";

fn neighbours(graph: &Graph, node: Node, direction: Direction) -> rusqlite::Result<Vec<Step>> {
    let (sql, id) = match (direction, node) {
        (Direction::Callers, Node::Symbol(id)) => (CALLERS_SQL, id),
        (Direction::Callees, Node::Symbol(id)) => (CALLEES_SQL, id),
        (Direction::Impact, Node::Symbol(id)) => (SYMBOL_DEPENDENTS_SQL, id),
        (Direction::Impact, Node::File(id)) => (FILE_DEPENDENTS_SQL, id),
        _ => return Ok(Vec::new()),
    };
    let mut stmt = graph.conn.prepare_cached(sql)?;
    let rows = stmt.query_map([id], |r| {
        let symbol: Option<i64> = r.get(0)?;
        let file: i64 = r.get(1)?;
        Ok(Step {
            node: symbol.map_or(Node::File(file), Node::Symbol),
            edge: r.get(2)?,
            confidence: r.get(3)?,
            site_line: r.get::<_, i64>(4)? as u32,
            site_file: r.get(5)?,
            proven: r.get(6)?,
        })
    })?;
    rows.collect()
}

/// The stored path of file `id`, read once per traversal.
fn file_path(graph: &Graph, id: i64, paths: &mut HashMap<i64, String>) -> rusqlite::Result<String> {
    if let Some(p) = paths.get(&id) {
        return Ok(p.clone());
    }
    let path: String = graph
        .conn
        .prepare_cached("SELECT path FROM files WHERE id = ?1")?
        .query_row([id], |r| r.get(0))?;
    paths.insert(id, path.clone());
    Ok(path)
}

/// The statement that reads one reached definition, built once.
fn describe_sql() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        format!("SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.id = ?1")
    })
}

fn describe(
    graph: &Graph,
    node: Node,
    paths: &mut HashMap<i64, String>,
) -> rusqlite::Result<(String, Option<SymbolInfo>, String)> {
    match node {
        Node::Symbol(id) => {
            let mut stmt = graph.conn.prepare_cached(describe_sql())?;
            let s = stmt.query_row([id], symbol_from_row)?;
            Ok((s.qualified_name.clone(), Some(s.clone()), s.path))
        }
        Node::File(id) => {
            let path = file_path(graph, id, paths)?;
            Ok((path.clone(), None, path))
        }
    }
}
