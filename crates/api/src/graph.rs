//! The graph reads: find, def, refs, callers, callees, impact, outline, search, stats.
//! Each takes a typed request and a [`Workspace`] handle, and answers one page with its
//! total, its cursor and the index's freshness.

use std::collections::BTreeMap;
use std::path::Path;

use loci_index::graph::{self, OutlineItem, SearchHit, SymbolInfo, Unresolved, UseKinds};
use loci_index::{EdgeKind, Lang, SymbolKind};

/// Which way a traversal follows edges (the index's own type, not a copy).
pub use loci_index::graph::Direction;
/// The items of the pages below, for front ends that render them (the web view).
pub use loci_index::graph::{Reached, RefHit};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorKind};
use crate::handle::{Freshness, ReadOptions, Workspace};
use crate::page::{PageInfo, PageRequest};

/// Default page of `find`.
pub const FIND_LIMIT: usize = 100;
/// Default page of `def`, `refs`, traversals and outlines.
pub const LIST_LIMIT: usize = 100;
/// Default page of `outline` (a file's definitions: most files have fewer).
pub const OUTLINE_LIMIT: usize = 500;
/// Default page of `search`.
pub const SEARCH_LIMIT: usize = 200;
/// Matches `find` counts at most for its total.
pub const FIND_COUNT_CAP: usize = 10_000;
/// Deepest traversal.
pub const MAX_DEPTH: u32 = 32;

/// `find`: definitions by name or glob.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FindRequest {
    /// A name, or a glob (`parse_*`, `*Error`, `[A-Z]*`).
    #[schemars(regex(pattern = r"\S"))]
    pub pattern: String,
    /// Only this kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<SymbolKind>,
    /// Only this language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<Lang>,
    /// The page.
    #[serde(flatten)]
    pub page: PageRequest,
}

/// `def` and `refs`: one symbol by selector.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SymbolRequest {
    /// `name`, `Qualified::name` (any separator) or `path/to/file:name`.
    #[schemars(regex(pattern = r"\S"))]
    pub symbol: String,
    /// The page.
    #[serde(flatten)]
    pub page: PageRequest,
}

/// `refs`: the uses of one symbol.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RefsRequest {
    /// `name`, `Qualified::name` (any separator) or `path/to/file:name`.
    #[schemars(regex(pattern = r"\S"))]
    pub symbol: String,
    /// Also list the references by the symbol's name that linked to no definition
    /// (`unresolved.sites`); without it only their count, reasons and files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_unresolved: bool,
    /// The page.
    #[serde(flatten)]
    pub page: PageRequest,
}

/// `callers`, `callees`, `impact`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TraversalRequest {
    /// A selector; for `impact`, a file path in the index too.
    #[schemars(regex(pattern = r"\S"))]
    pub target: String,
    /// Hops to follow, 1..=32 (default 1; 3 for impact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_DEPTH))]
    pub depth: Option<u32>,
    /// Also list the references the first hop could be missing (`unresolved.sites`);
    /// without it only their count, reasons and files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_unresolved: bool,
    /// `impact` only: also follow links made by name alone (left out by default: a
    /// same-named definition elsewhere is no proof of a dependency).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_name_only: bool,
    /// Only nodes in these files: a glob (`src/**/*.rs`), or a file or folder path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"[^./]"))]
    pub path: Option<String>,
    /// Only nodes reached through these edge kinds (`CALLS`, `REFERENCES`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges: Option<Vec<EdgeKind>>,
    /// `file`: one row per file (its count of nodes and edges by kind) instead of one
    /// per node; the page then counts files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_by: Option<GroupBy>,
    /// The page.
    #[serde(flatten)]
    pub page: PageRequest,
}

impl TraversalRequest {
    /// `target` to `depth` hops, proven edges only, every filter off, no grouping: the
    /// plain traversal a page draws.
    pub fn plain(target: String, depth: u32, page: PageRequest) -> TraversalRequest {
        TraversalRequest {
            target,
            depth: Some(depth),
            include_unresolved: false,
            include_name_only: false,
            path: None,
            edges: None,
            group_by: None,
            page,
        }
    }
}

/// How a broad traversal is summarized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroupBy {
    /// One row per file.
    File,
}

/// One file of a grouped traversal.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileGroup {
    /// Relative path.
    pub path: String,
    /// Nodes reached in it.
    pub count: u64,
    /// The fewest hops from the target to one of them.
    pub depth: u32,
    /// Its nodes by the edge kind that reached them.
    pub edges: BTreeMap<EdgeKind, u64>,
}

/// `outline`: the definitions of one file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct OutlineRequest {
    /// A path relative to the workspace root.
    pub file: String,
    /// The page.
    #[serde(flatten)]
    pub page: PageRequest,
}

/// `search`: code text.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchRequest {
    /// The text to find (a literal unless `regex`).
    pub pattern: String,
    /// Treat the pattern as a regular expression.
    #[serde(default)]
    pub regex: bool,
    /// Ignore case.
    #[serde(default)]
    pub ignore_case: bool,
    /// Only these files: a glob (`src/**/*.rs`), or a file or folder path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"[^./]"))]
    pub path: Option<String>,
    /// Only the indexed source files; else every text file the walk sees too (README,
    /// manifests, docs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub source_only: bool,
    /// The page.
    #[serde(flatten)]
    pub page: PageRequest,
}

/// A page of definitions.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SymbolsPage {
    /// The definitions.
    pub symbols: Vec<SymbolInfo>,
    /// Where the page stands.
    #[serde(flatten)]
    pub page: PageInfo,
    /// How fresh the index was.
    pub index: Freshness,
}

/// A page of one definition's uses.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RefsPage {
    /// The definition.
    pub target: SymbolInfo,
    /// Its uses, by path and line.
    pub refs: Vec<RefHit>,
    /// The references by its name that linked to no definition: uses `refs` may miss.
    pub unresolved: Unresolved,
    /// Where the page stands.
    #[serde(flatten)]
    pub page: PageInfo,
    /// How fresh the index was.
    pub index: Freshness,
}

/// A page of a traversal.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TraversalPage {
    /// What the traversal started from (symbols, or a file).
    pub targets: Vec<String>,
    /// The definitions it started from.
    pub target_symbols: Vec<SymbolInfo>,
    /// Nodes reached, by depth then path (empty when grouped).
    pub reached: Vec<Reached>,
    /// With `group_by: file`: the files reached, most nodes first (the page's items).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<FileGroup>>,
    /// What the first hop could be missing: references by the targets' names that
    /// linked to no definition (callers, impact), or calls inside the targets that
    /// linked to nothing (callees).
    pub unresolved: Unresolved,
    /// `impact`: the definitions and files only links made by name alone reached, left
    /// out (0 with `include_name_only`, and for callers and callees).
    pub name_only_left_out: u64,
    /// Where the page stands.
    #[serde(flatten)]
    pub page: PageInfo,
    /// How fresh the index was.
    pub index: Freshness,
}

/// A page of a file's outline.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OutlinePage {
    /// The file as asked.
    pub path: String,
    /// Its definitions in source order, with depth.
    pub symbols: Vec<OutlineItem>,
    /// Where the page stands.
    #[serde(flatten)]
    pub page: PageInfo,
    /// How fresh the index was.
    pub index: Freshness,
}

/// A page of search hits.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchPage {
    /// `path:line:col` hits in (path, line) order.
    pub hits: Vec<SearchHit>,
    /// Where the page stands.
    #[serde(flatten)]
    pub page: PageInfo,
    /// How fresh the index was.
    pub index: Freshness,
}

/// Counts of the index.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatsAnswer {
    /// The counts.
    #[serde(flatten)]
    pub stats: graph::Stats,
    /// How fresh the index was.
    pub index: Freshness,
}

/// Definitions matching a name or glob.
pub fn find(
    ws: &Workspace,
    req: &FindRequest,
    opts: &ReadOptions,
) -> Result<SymbolsPage, ApiError> {
    let window = req.page.window(FIND_LIMIT)?;
    let fetch = window.wanted().max(FIND_COUNT_CAP);
    let ((found, capped), index) = ws.read(opts, |g| {
        graph::find(g, &req.pattern, req.kind, req.lang, fetch)
    })?;
    let (symbols, page) = window.slice(found, !capped);
    let index = ws.checked(opts, index, symbols.iter().map(|s| s.path.as_str()))?;
    Ok(SymbolsPage {
        symbols,
        page,
        index,
    })
}

/// The definitions a selector names, with doc comments.
pub fn def(
    ws: &Workspace,
    req: &SymbolRequest,
    opts: &ReadOptions,
) -> Result<SymbolsPage, ApiError> {
    let window = req.page.window(LIST_LIMIT)?;
    let (found, index) = ws.read(opts, |g| g.def(&req.symbol))?;
    let (symbols, page) = window.slice(found, true);
    let index = ws.checked(opts, index, symbols.iter().map(|s| s.path.as_str()))?;
    Ok(SymbolsPage {
        symbols,
        page,
        index,
    })
}

/// Whether an answer counts the references it could not link (its `unresolved`).
/// The JSON answers do ([`Unlinked::Count`]). A page that does not show them skips
/// the scan ([`Unlinked::Skip`]): it reads the stored references of every file that
/// uses the target's name (up to 2,000 files), which on a large tree is most of the
/// answer's time for a common name (`new`, `from`) or a large file's impact. Skipped,
/// `unresolved` is empty, with `complete: false` (nothing was counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlinked {
    /// Count them (and list them when the request asks).
    Count,
    /// Do not look for them.
    Skip,
}

/// Every use of one definition.
pub fn refs(ws: &Workspace, req: &RefsRequest, opts: &ReadOptions) -> Result<RefsPage, ApiError> {
    refs_with(ws, req, opts, Unlinked::Count)
}

/// [`refs`], counting the unlinked references or not.
pub fn refs_with(
    ws: &Workspace,
    req: &RefsRequest,
    opts: &ReadOptions,
    unlinked: Unlinked,
) -> Result<RefsPage, ApiError> {
    let window = req.page.window(LIST_LIMIT)?;
    let ((found, unresolved), index) = ws.read(opts, |g| {
        let found = graph::refs(g, &req.symbol)?;
        let unresolved = match unlinked {
            Unlinked::Skip => Unresolved::default(),
            Unlinked::Count => graph::unresolved_uses(
                g,
                std::slice::from_ref(&found.target),
                UseKinds::All,
                req.include_unresolved,
            )?,
        };
        Ok((found, unresolved))
    })?;
    let (refs, page) = window.slice(found.refs, true);
    let paths =
        std::iter::once(found.target.path.as_str()).chain(refs.iter().map(|r| r.path.as_str()));
    let index = ws.checked(opts, index, paths)?;
    Ok(RefsPage {
        target: found.target,
        refs,
        unresolved,
        page,
        index,
    })
}

/// How fresh the index is, for an answer that reads nothing else from it (an
/// ambiguous target answered with its candidates).
pub fn freshness(ws: &Workspace, opts: &ReadOptions) -> Result<Freshness, ApiError> {
    Ok(ws.read(opts, |_| Ok(()))?.1)
}

/// How much of a traversal an answer reads. The JSON answers read it whole
/// ([`Reach::Whole`]: up to 5,000 nodes, the exact count). A page that shows only its
/// window asks for [`Reach::Page`]: the walk stops going deeper once the depths done
/// hold the window's nodes (`loci_index::graph::traverse_enough`), so the window is
/// the same but `page.total` is a lower bound (`total_exact: false`) when it stopped
/// with depths left. A path or edge filter, or grouping by file, reads it whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Every node (up to the traversal's cap).
    Whole,
    /// Enough nodes for the page asked for.
    Page,
}

/// Callers, callees or impact of a target, breadth first.
pub fn traverse(
    ws: &Workspace,
    direction: Direction,
    req: &TraversalRequest,
    opts: &ReadOptions,
) -> Result<TraversalPage, ApiError> {
    traverse_with(ws, direction, req, opts, Unlinked::Count, Reach::Whole)
}

/// [`traverse`], counting what the first hop could not link or not, read whole or
/// only as far as its page needs.
pub fn traverse_with(
    ws: &Workspace,
    direction: Direction,
    req: &TraversalRequest,
    opts: &ReadOptions,
    unlinked: Unlinked,
    reach: Reach,
) -> Result<TraversalPage, ApiError> {
    let window = req.page.window(LIST_LIMIT)?;
    let default_depth = if direction == Direction::Impact { 3 } else { 1 };
    let depth = checked_depth(req.depth.unwrap_or(default_depth))?;
    if let Some(text) = &req.path {
        ws.read(opts, |g| {
            graph::PathFilter::parse(text)?.require_some(g, text)
        })?;
    }
    let list = req.include_unresolved;
    let filtered = req.path.is_some() || req.edges.is_some() || req.group_by.is_some();
    let enough = match reach {
        Reach::Page if !filtered => window.offset.saturating_add(window.limit),
        _ => usize::MAX,
    };
    let ((t, unresolved), index) = ws
        .read(opts, |g| {
            // `name_links` is impact's alone: callers and callees follow every link.
            let t = graph::traverse_enough(
                g,
                direction,
                &req.target,
                depth,
                req.include_name_only,
                enough,
            )?;
            let unresolved = match direction {
                _ if unlinked == Unlinked::Skip => Ok(Unresolved::default()),
                Direction::Callers => {
                    graph::unresolved_uses(g, &t.target_symbols, UseKinds::Calls, list)
                }
                Direction::Callees => graph::unresolved_calls_from(g, &t.target_symbols, list),
                // A file's impact: only the names few definitions share.
                Direction::Impact if t.targets.len() > t.target_symbols.len() => {
                    let names =
                        graph::distinctive(g, &t.target_symbols, graph::MAX_SHARED_DEFINITIONS)?;
                    graph::unresolved_uses(g, &names, UseKinds::All, list)
                }
                Direction::Impact => {
                    graph::unresolved_uses(g, &t.target_symbols, UseKinds::All, list)
                }
            }?;
            Ok((t, unresolved))
        })
        .map_err(|e| match direction {
            Direction::Impact if graph::looks_like_file(&req.target) => {
                with_similar_files(e, ws, &req.target, opts)
            }
            _ => e,
        })?;
    let mut all = t.reached;
    if let Some(text) = &req.path {
        let filter = graph::PathFilter::parse(text).map_err(ApiError::from)?;
        all.retain(|r| filter.matches(&r.path));
    }
    if let Some(kinds) = &req.edges {
        all.retain(|r| kinds.contains(&r.edge));
    }
    let (reached, groups, page) = match req.group_by {
        None => {
            let (reached, page) = window.slice(all, !t.truncated);
            (reached, None, page)
        }
        Some(GroupBy::File) => {
            let (groups, page) = window.slice(group_by_file(&all), !t.truncated);
            (Vec::new(), Some(groups), page)
        }
    };
    let paths = t
        .target_symbols
        .iter()
        .map(|s| s.path.as_str())
        .chain(reached.iter().map(|r| r.path.as_str()))
        .chain(groups.iter().flatten().map(|g| g.path.as_str()));
    let index = ws.checked(opts, index, paths)?;
    Ok(TraversalPage {
        targets: t.targets,
        target_symbols: t.target_symbols,
        reached,
        groups,
        unresolved,
        name_only_left_out: t.name_only_left_out as u64,
        page,
        index,
    })
}

/// `depth` when it is within 1..=[`MAX_DEPTH`], else `invalid_input` naming the range.
pub(crate) fn checked_depth(depth: u32) -> Result<u32, ApiError> {
    if (1..=MAX_DEPTH).contains(&depth) {
        Ok(depth)
    } else {
        Err(ApiError::new(
            ErrorKind::InvalidInput,
            format!("depth {depth} is outside 1..={MAX_DEPTH}"),
        ))
    }
}

/// The nodes of a traversal by file: most nodes first, then by path.
fn group_by_file(reached: &[Reached]) -> Vec<FileGroup> {
    let mut by_path: BTreeMap<&str, FileGroup> = BTreeMap::new();
    for r in reached {
        let g = by_path.entry(&r.path).or_insert_with(|| FileGroup {
            path: r.path.clone(),
            count: 0,
            depth: r.depth,
            edges: BTreeMap::new(),
        });
        g.count += 1;
        g.depth = g.depth.min(r.depth);
        *g.edges.entry(r.edge).or_default() += 1;
    }
    let mut groups: Vec<FileGroup> = by_path.into_values().collect();
    groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
    groups
}

/// A file argument as the index stores it, relative to the workspace `root`: a relative
/// path that names an existing file from `cwd` inside the workspace is taken from there
/// (`loci outline lib.rs` in `src/`); anything else is passed on as given (relative to
/// the root, or absolute). Front ends with a current directory call this before
/// `outline` and `impact`.
pub fn workspace_relative(file: &str, root: &Path, cwd: &Path) -> String {
    let p = Path::new(file);
    if p.is_absolute() {
        return file.to_string();
    }
    if let Ok(abs) = std::fs::canonicalize(cwd.join(p))
        && abs.is_file()
        && let Ok(rel) = abs.strip_prefix(root)
    {
        return rel.to_string_lossy().into_owned();
    }
    file.to_string()
}

/// `impact`'s target as the index stores it: a target that reads as a file path
/// ([`graph::looks_like_file`]) goes through [`workspace_relative`]; a symbol selector
/// is left alone (a file named like a symbol in `cwd` never shadows the symbol).
pub fn impact_target(target: &str, root: &Path, cwd: &Path) -> String {
    if graph::looks_like_file(target) {
        workspace_relative(target, root, cwd)
    } else {
        target.to_string()
    }
}

/// The definitions of one file, nested.
pub fn outline(
    ws: &Workspace,
    req: &OutlineRequest,
    opts: &ReadOptions,
) -> Result<OutlinePage, ApiError> {
    let window = req.page.window(OUTLINE_LIMIT)?;
    let (items, index) = ws
        .read(opts, |g| g.outline(&req.file))
        .map_err(|e| with_similar_files(e, ws, &req.file, opts))?;
    let (symbols, page) = window.slice(items, true);
    let index = ws.checked(opts, index, [req.file.as_str()])?;
    Ok(OutlinePage {
        path: req.file.clone(),
        symbols,
        page,
        index,
    })
}

/// Most indexed paths a file `not_found` suggests.
const SIMILAR_FILES: usize = 5;

/// A file argument that named no indexed file: the hint also lists the indexed files
/// with the same file name (`src/lib.rs` for `lib.rs` given from the wrong directory),
/// and `detail.similar_files` carries them. Any other error is returned as it is.
fn with_similar_files(mut e: ApiError, ws: &Workspace, file: &str, opts: &ReadOptions) -> ApiError {
    if e.kind != ErrorKind::NotFound {
        return e;
    }
    let Some(name) = Path::new(file).file_name().map(|n| n.to_string_lossy()) else {
        return e;
    };
    let Ok((similar, _)) = ws.read(opts, |g| Ok(same_file_name(g, &name))) else {
        return e;
    };
    if similar.is_empty() {
        return e;
    }
    let listed = format!("indexed files named `{name}`: {}", similar.join(", "));
    e.hint = Some(match e.hint.take() {
        Some(hint) => format!("{listed}; {hint}"),
        None => listed,
    });
    e.detail(serde_json::json!({ "similar_files": similar }))
}

/// The indexed paths whose file name is `name` (a scan of `files` on the error path
/// only; a failure yields none, as the list is only a hint).
fn same_file_name(g: &graph::Graph, name: &str) -> Vec<String> {
    g.paths_named(name, SIMILAR_FILES).unwrap_or_default()
}

/// Code text search.
pub fn search(
    ws: &Workspace,
    req: &SearchRequest,
    opts: &ReadOptions,
) -> Result<SearchPage, ApiError> {
    let window = req.page.window(SEARCH_LIMIT)?;
    let search = graph::SearchOptions {
        regex: req.regex,
        ignore_case: req.ignore_case,
        limit: window.wanted(),
        path_glob: req.path.clone(),
        source_only: req.source_only,
    };
    let ((found, more), index) = ws.read(opts, |g| graph::search(g, &req.pattern, &search))?;
    let (hits, page) = window.slice(found, !more);
    let index = ws.checked(opts, index, hits.iter().map(|h| h.path.as_str()))?;
    Ok(SearchPage { hits, page, index })
}

/// Index-wide counts.
pub fn stats(ws: &Workspace, opts: &ReadOptions) -> Result<StatsAnswer, ApiError> {
    let (stats, index) = ws.read(opts, |g| g.stats())?;
    Ok(StatsAnswer { stats, index })
}
