//! The memory's [`CodeGraph`] over a workspace's index: mentions resolved with the
//! graph's selectors, a symbol's content hash taken over its source span (the index
//! keeps spans and each file's hash, not a hash per symbol), moves found by qualified
//! name and kind in other files or by content hash in the same file, and what a
//! symbol's change reaches through `impact`.

use std::path::{Path, PathBuf};

use loci_index::graph::{self, Graph, SymbolInfo};
use loci_memory::mentions::Mention;
use loci_memory::{CodeGraph, CodeKey, CodeTarget};
use rusqlite::OptionalExtension;

/// A workspace's index seen as the memory's code graph (read-only).
pub struct IndexCodeGraph {
    graph: Option<Graph>,
    root: PathBuf,
}

impl IndexCodeGraph {
    /// The index at `index_path` of the workspace `root`, or none when it cannot be
    /// opened (no index yet: links are then neither made nor checked).
    pub fn open(root: &Path, index_path: &Path) -> IndexCodeGraph {
        IndexCodeGraph {
            graph: Graph::open_at(root, index_path).ok(),
            root: root.to_path_buf(),
        }
    }

    /// No code graph (the user-level store).
    pub fn none() -> IndexCodeGraph {
        IndexCodeGraph {
            graph: None,
            root: PathBuf::new(),
        }
    }

    /// Whether an index is there to check against.
    pub fn available(&self) -> bool {
        self.graph.is_some()
    }

    /// The file's indexed hash and whether the file on disk still has it, with its bytes.
    fn file_state(&self, g: &Graph, path: &str) -> Option<(Vec<u8>, bool, Option<Vec<u8>>)> {
        let stored: Vec<u8> = g
            .connection()
            .query_row("SELECT hash FROM files WHERE path = ?1", [path], |r| {
                r.get(0)
            })
            .optional()
            .ok()??;
        // Beneath the root: a file swapped for a symlink out of the workspace is not read.
        let disk = loci_paths::read_file_beneath(&self.root, Path::new(path)).ok();
        let current = disk
            .as_ref()
            .is_some_and(|b| blake3::hash(b).as_bytes()[..] == stored[..]);
        Some((stored, current, disk))
    }

    fn file_target(&self, g: &Graph, path: &str) -> Option<CodeTarget> {
        let (stored, current, _) = self.file_state(g, path)?;
        Some(CodeTarget {
            key: CodeKey::file(path),
            line: 1,
            hash: hex(&stored),
            indexed_current: current,
        })
    }

    /// Symbols at `path` (and with `qualified`/`kind` when given), with their spans.
    fn spans(
        &self,
        g: &Graph,
        sql_where: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Vec<(CodeKey, u32, usize, usize)> {
        self.spans_ordered(g, sql_where, "f.path, s.start_line", params)
    }

    fn spans_ordered(
        &self,
        g: &Graph,
        sql_where: &str,
        order: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Vec<(CodeKey, u32, usize, usize)> {
        let sql = format!(
            "SELECT f.path, s.qualified_name, s.kind, s.start_line, s.start_byte, s.end_byte
             FROM symbols s JOIN files f ON f.id = s.file_id WHERE {sql_where}
             ORDER BY {order} LIMIT 50"
        );
        let Ok(mut stmt) = g.connection().prepare(&sql) else {
            return Vec::new();
        };
        stmt.query_map(params, |r| {
            Ok((
                CodeKey {
                    path: r.get(0)?,
                    qualified_name: r.get(1)?,
                    kind: r.get(2)?,
                },
                r.get::<_, u32>(3)?,
                r.get::<_, i64>(4)? as usize,
                r.get::<_, i64>(5)? as usize,
            ))
        })
        .map(|rows| rows.flatten().collect())
        .unwrap_or_default()
    }

    fn targets(&self, g: &Graph, spans: Vec<(CodeKey, u32, usize, usize)>) -> Vec<CodeTarget> {
        let mut files: rustc_hash::FxHashMap<String, Option<FileBytes>> = Default::default();
        spans
            .into_iter()
            .map(|(key, line, start, end)| {
                let state = files
                    .entry(key.path.clone())
                    .or_insert_with(|| self.file_state(g, &key.path).map(|(_, c, d)| (c, d)));
                let (current, bytes) = match state {
                    Some((c, Some(b))) => (*c, b.get(start..end).unwrap_or_default()),
                    _ => (false, &[][..]),
                };
                CodeTarget {
                    key,
                    line,
                    hash: hex(blake3::hash(bytes).as_bytes()),
                    indexed_current: current,
                }
            })
            .collect()
    }

    fn symbols_to_targets(&self, g: &Graph, found: Vec<SymbolInfo>) -> Vec<CodeTarget> {
        let mut out = Vec::new();
        for s in found {
            let spans = self.spans(
                g,
                "f.path = ?1 AND s.qualified_name = ?2 AND s.kind = ?3 AND s.start_line = ?4",
                &[&s.path, &s.qualified_name, &s.kind.name(), &s.line],
            );
            out.extend(self.targets(g, spans));
        }
        out
    }
}

/// Whether a file on disk is as indexed, and its bytes (when readable).
type FileBytes = (bool, Option<Vec<u8>>);

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl CodeGraph for IndexCodeGraph {
    fn resolve(&self, mention: &Mention, max: usize) -> Vec<CodeTarget> {
        let Some(g) = &self.graph else {
            return Vec::new();
        };
        match mention {
            Mention::Symbol(s) => match graph::resolve_selector(g, s, true) {
                Ok(found) => {
                    let n = found.len();
                    let found: Vec<SymbolInfo> = found.into_iter().take(max.max(1) + 1).collect();
                    let mut t = self.symbols_to_targets(g, found);
                    if n > max {
                        t.truncate(max + 1);
                    }
                    t
                }
                Err(_) => Vec::new(),
            },
            Mention::File { path, line } => {
                let path = path.trim_start_matches("./");
                let Some(file) = self.file_target(g, path) else {
                    return Vec::new();
                };
                match line {
                    None => vec![file],
                    Some(l) => {
                        let spans = self.spans_ordered(
                            g,
                            "f.path = ?1 AND s.start_line <= ?2 AND s.end_line >= ?2",
                            "s.end_line - s.start_line, s.start_line",
                            &[&path, l],
                        );
                        let innermost = spans.into_iter().next();
                        match innermost {
                            Some(s) => self.targets(g, vec![s]),
                            None => vec![file],
                        }
                    }
                }
            }
        }
    }

    fn lookup(&self, key: &CodeKey) -> Option<CodeTarget> {
        let g = self.graph.as_ref()?;
        if key.is_file() {
            return self.file_target(g, &key.path);
        }
        let spans = self.spans(
            g,
            "f.path = ?1 AND s.qualified_name = ?2 AND s.kind = ?3",
            &[&key.path, &key.qualified_name, &key.kind],
        );
        self.targets(g, spans).into_iter().next()
    }

    fn moved(&self, key: &CodeKey, hash: &str) -> Vec<CodeTarget> {
        let Some(g) = &self.graph else {
            return Vec::new();
        };
        if key.is_file() {
            let Ok(raw) = (0..hash.len() / 2)
                .map(|i| u8::from_str_radix(&hash[2 * i..2 * i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
            else {
                return Vec::new();
            };
            let paths: Vec<String> = g
                .connection()
                .prepare("SELECT path FROM files WHERE hash = ?1 ORDER BY path LIMIT 10")
                .and_then(|mut s| {
                    s.query_map([raw], |r| r.get(0))
                        .map(|rows| rows.flatten().collect())
                })
                .unwrap_or_default();
            return paths
                .iter()
                .filter_map(|p| self.file_target(g, p))
                .collect();
        }
        let elsewhere = self.spans(
            g,
            "s.qualified_name = ?1 AND s.kind = ?2 AND f.path != ?3",
            &[&key.qualified_name, &key.kind, &key.path],
        );
        let mut out = self.targets(g, elsewhere);
        let same_file = self.spans(g, "f.path = ?1 AND s.kind = ?2", &[&key.path, &key.kind]);
        out.extend(
            self.targets(g, same_file)
                .into_iter()
                .filter(|t| t.hash == hash),
        );
        out
    }

    fn connected(&self, key: &CodeKey, depth: u32) -> Vec<(CodeKey, Vec<String>)> {
        let Some(g) = &self.graph else {
            return Vec::new();
        };
        let target = if key.is_file() {
            key.path.clone()
        } else {
            format!("{}:{}", key.path, key.qualified_name)
        };
        let Ok(t) = graph::impact(g, &target, depth) else {
            return Vec::new();
        };
        t.reached
            .into_iter()
            .map(|r| {
                let key = match &r.symbol {
                    Some(s) => CodeKey {
                        path: s.path.clone(),
                        qualified_name: s.qualified_name.clone(),
                        kind: s.kind.name().to_string(),
                    },
                    None => CodeKey::file(r.path.clone()),
                };
                (key, r.via)
            })
            .collect()
    }
}
