//! The memory's [`CodeGraph`] over a workspace's index: mentions resolved with the
//! graph's selectors, a symbol's content hash taken over its source span (the index
//! keeps spans and each file's hash, not a hash per symbol), moves found by qualified
//! name and kind in other files or by content hash in the same file, and what a
//! symbol's change reaches through `impact`.

use std::path::{Path, PathBuf};

use loci_index::graph::{self, Graph, SpanQuery, SymbolInfo};
use loci_memory::mentions::Mention;
use loci_memory::{CodeGraph, CodeKey, CodeTarget};

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
        let stored: Vec<u8> = g.file_hash(path).ok()??;
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

    /// The definitions `query` names, with their spans.
    fn spans(&self, g: &Graph, query: SpanQuery<'_>) -> Vec<(CodeKey, u32, usize, usize)> {
        g.spans(query)
            .unwrap_or_default()
            .into_iter()
            .map(|s| {
                (
                    CodeKey {
                        path: s.path,
                        qualified_name: s.qualified_name,
                        kind: s.kind,
                    },
                    s.line,
                    s.start_byte,
                    s.end_byte,
                )
            })
            .collect()
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
                SpanQuery::Exact {
                    path: &s.path,
                    qualified_name: &s.qualified_name,
                    kind: s.kind.name(),
                    line: Some(s.line),
                },
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
                        let spans = self.spans(g, SpanQuery::Enclosing { path, line: *l });
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
            SpanQuery::Exact {
                path: &key.path,
                qualified_name: &key.qualified_name,
                kind: &key.kind,
                line: None,
            },
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
            let paths = g.paths_with_hash(&raw, 10).unwrap_or_default();
            return paths
                .iter()
                .filter_map(|p| self.file_target(g, p))
                .collect();
        }
        let elsewhere = self.spans(
            g,
            SpanQuery::Elsewhere {
                path: &key.path,
                qualified_name: &key.qualified_name,
                kind: &key.kind,
            },
        );
        let mut out = self.targets(g, elsewhere);
        let same_file = self.spans(
            g,
            SpanQuery::InFile {
                path: &key.path,
                kind: &key.kind,
            },
        );
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
        let Ok(t) = graph::impact(g, &target, depth, true) else {
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
