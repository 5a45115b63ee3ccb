//! `changes`: what a diff changes in the code graph. The files a git diff changes
//! (renames followed), the definitions whose span a hunk touches on either side —
//! each side's definitions taken by loci's own extractor from that side's bytes (a
//! commit's or the index's blob, or the working tree's file), nothing checked out and
//! the live index untouched; a side whose bytes the live index holds is read from it
//! instead of parsed — and, for each, its direct callers, the size of its
//! transitive impact, the tests among them (from the live index) and the memories
//! linked to it.

mod definitions;
mod kinds;
mod pairing;
mod reach;
mod sides;
mod touched;

use loci_git::{Compare, Content, Diff, FileChange, Limits, Listed, Repo, Status};
use loci_index::{Lang, SymbolKind};
use loci_memory::CodeKey;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use kinds::{NotRead, SymbolChange};
pub use reach::{ImpactCount, Reach, SHOWN_PER_SYMBOL, SymbolRef, is_test};

use crate::error::ApiError;
use crate::graph::{MAX_DEPTH, checked_depth};
use crate::handle::{Freshness, ReadOptions, Workspace};
use crate::memory::{ImpactMemory, memories_or_unavailable};
use crate::page::{PageInfo, PageRequest};
use definitions::Found;
use pairing::{Entry, FileSide, Placed, pair_file, pair_moves};
use sides::{SideBytes, SideSource};

/// Default page of changed definitions (each carries two traversals).
pub const CHANGES_LIMIT: usize = crate::graph::LIST_LIMIT;
/// Most changed files listed and read; past it the files are only counted.
pub const MAX_CHANGED_FILES: usize = 1_000;
/// Largest file compared or read on either side (as `index.maxFileBytes`'s default).
pub const MAX_CHANGED_FILE_BYTES: u64 = loci_index::DEFAULT_MAX_FILE_BYTES;
/// Default depth of each definition's impact.
pub const CHANGES_DEPTH: u32 = 2;

/// `changes`: which two sides to compare: `rev`, else `staged`, else `worktree`; none is
/// `HEAD` against the working tree.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ChangesRequest {
    /// `REV` (that commit against the working tree), `A..B`, or `A...B` (from their
    /// merge base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"\S"), length(min = 1, max = 1024))]
    pub rev: Option<String>,
    /// `HEAD` against the index: what is staged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub staged: bool,
    /// The index against the working tree: what is not staged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub worktree: bool,
    /// Hops of each definition's impact, 1..=32 (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_DEPTH))]
    pub depth: Option<u32>,
    /// The page (of changed definitions).
    #[serde(flatten)]
    pub page: PageRequest,
}

/// One side of the comparison.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChangeSide {
    /// `HEAD`, `index`, `working tree`, or the revision as given.
    pub label: String,
    /// The commit's id, for a committed side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// New (untracked files too).
    Added,
    /// Edited in place.
    Modified,
    /// Gone.
    Deleted,
    /// Moved (`old_path`, `similarity`), perhaps edited.
    Renamed,
    /// Became another kind of entry (a file, a symlink, a submodule).
    TypeChanged,
}

/// What a changed file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileContent {
    /// Text.
    Text,
    /// Binary (or past the size limit for git).
    Binary,
    /// A symbolic link.
    Symlink,
    /// A submodule's commit.
    Submodule,
}

/// One changed file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChangedFile {
    /// Its path on the new side (the old one when deleted), relative to the workspace.
    pub path: String,
    /// Its path on the old side, when renamed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// How it changed.
    pub status: FileStatus,
    /// A rename's similarity, 0..=100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<u8>,
    /// What it holds.
    pub content: FileContent,
    /// Lines added.
    pub lines_added: u32,
    /// Lines removed.
    pub lines_removed: u32,
    /// Changed definitions in it (on either side).
    pub symbols: u32,
    /// Why its definitions were not read, when they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_read: Option<NotRead>,
}

/// Where a changed definition was, on the old side.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OldPlace {
    /// The file.
    pub path: String,
    /// First line.
    pub line: u32,
    /// Last line.
    pub end_line: u32,
}

/// One changed definition.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChangedSymbol {
    /// How it changed.
    pub change: SymbolChange,
    /// The name as written.
    pub name: String,
    /// Scopes and name.
    pub qualified_name: String,
    /// `function`, `method`, ...
    pub kind: SymbolKind,
    /// Its file's language.
    pub lang: Lang,
    /// Its file on the new side (the old side when removed).
    pub path: String,
    /// First line there.
    pub line: u32,
    /// Last line there.
    pub end_line: u32,
    /// The declaration head.
    pub signature: String,
    /// Where it was, when changed or moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<OldPlace>,
    /// What it reaches in the live index.
    #[serde(flatten)]
    pub reach: Reach,
}

/// What a diff changes in the code graph.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChangesAnswer {
    /// The old side.
    pub base: ChangeSide,
    /// The new side.
    pub head: ChangeSide,
    /// The changed files, by path (at most 1000).
    pub files: Vec<ChangedFile>,
    /// Changed files in all.
    pub files_total: u64,
    /// The page of changed definitions, by file then line.
    pub symbols: Vec<ChangedSymbol>,
    /// Memories linked to a definition of the page (either side): stale now, or about
    /// to be once the change lands.
    pub memories: Vec<ImpactMemory>,
    /// Set when the memory store could not be read (then `memories` is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memories_unavailable: Option<String>,
    /// Where the page stands.
    #[serde(flatten)]
    pub page: PageInfo,
    /// How fresh the index was.
    pub index: Freshness,
}

/// The sides a request names: `rev` before `staged` before `worktree` (the command
/// line refuses two at once; every schema-valid request over HTTP and MCP is answered).
fn compare_of(req: &ChangesRequest) -> Result<Compare, ApiError> {
    Ok(match (&req.rev, req.staged, req.worktree) {
        (Some(rev), _, _) => Compare::Rev(rev.clone()),
        (None, true, _) => Compare::Staged,
        (None, false, true) => Compare::Unstaged,
        (None, false, false) => Compare::Worktree,
    })
}

/// What the diff `req` names changes: its files, the page of changed definitions with
/// their callers, impact and tests in the live index, and the memories linked to them.
pub fn changes(
    ws: &Workspace,
    req: &ChangesRequest,
    opts: &ReadOptions,
) -> Result<ChangesAnswer, ApiError> {
    let window = req.page.window(CHANGES_LIMIT)?;
    let depth = checked_depth(req.depth.unwrap_or(CHANGES_DEPTH))?;
    let compare = compare_of(req)?;
    let repo = Repo::open(ws.root())?;
    let listed = repo.list(
        &compare,
        Limits {
            max_files: MAX_CHANGED_FILES,
            max_file_bytes: MAX_CHANGED_FILE_BYTES,
        },
    )?;
    let source = |worktree| SideSource {
        repo: &repo,
        root: ws.root(),
        worktree,
        max_bytes: MAX_CHANGED_FILE_BYTES,
    };
    let (old_side, new_side) = (source(false), source(listed.without_hunks().new.worktree));
    let (diff, found, index) = diff_and_definitions(ws, listed, [&old_side, &new_side], opts)?;
    let changed = changed_files(&diff);
    let mut found = found.into_iter();
    let mut files = Vec::with_capacity(changed.len());
    let mut entries = Vec::new();
    for change in &changed {
        let mut next = || found.next().unwrap_or(Err(NotRead::Unreadable));
        let (mut old, mut new) = (next(), next());
        if change.content != Content::Text {
            // Its content proved binary while its hunks were read.
            let not_read = |side: Result<Option<SideBytes>, NotRead>| side.map(|_| None);
            (old, new) = (
                not_read(old_side.read(change, false)),
                not_read(new_side.read(change, true)),
            );
        }
        let (mut file, found) = file_entries(change, old, new);
        file.symbols = found.len() as u32;
        entries.extend(found);
        files.push(file);
    }
    let (page_entries, page) = window.slice(pair_moves(entries), true);
    let symbols = changed_symbols(ws, &page_entries, depth, opts)?;
    if opts.cancel.is_cancelled() {
        return Err(ApiError::cancelled());
    }
    let keys = page_entries.iter().flat_map(entry_keys).collect();
    let (memories, memories_unavailable) = memories_or_unavailable(ws, keys)?;
    let index = ws.checked(opts, index, symbols.iter().map(|s| s.path.as_str()))?;
    Ok(ChangesAnswer {
        base: side_of(&diff.old),
        head: side_of(&diff.new),
        files_total: diff.files_total as u64,
        files,
        symbols,
        memories,
        memories_unavailable,
        page,
        index,
    })
}

/// The diff with its hunks, and each changed file's two sides' definitions (old, new,
/// in [`changed_files`] order) with the index's freshness. The sides are parsed on the
/// other cores as this thread reads them, then this thread reads the hunks: both load
/// every changed file, and neither needs the other until pairing.
fn diff_and_definitions(
    ws: &Workspace,
    listed: Listed<'_>,
    [old_side, new_side]: [&SideSource<'_>; 2],
    opts: &ReadOptions,
) -> Result<(Diff, Vec<Found>, Freshness), ApiError> {
    let (diff, read, sent) = std::thread::scope(|scope| {
        let listed_files = changed_files(listed.without_hunks());
        let total = listed_files.len() * 2;
        let (send, sides) = std::sync::mpsc::channel();
        let definitions = scope.spawn(move || {
            ws.read(opts, |g| {
                definitions::definitions(g, sides, total, ws.parsed_sides(), opts)
            })
        });
        let sent = (|| {
            for (at, change) in listed_files.iter().enumerate() {
                if opts.cancel.is_cancelled() {
                    return Err(ApiError::cancelled());
                }
                let _ = send.send((2 * at, old_side.read(change, false)));
                let _ = send.send((2 * at + 1, new_side.read(change, true)));
            }
            Ok(())
        })();
        drop(send);
        let diff = listed.with_hunks();
        let read = definitions
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (diff, read, sent)
    });
    sent?;
    let (found, index) = read?;
    Ok((diff?, found, index))
}

/// The files of `diff` that are the workspace's code, in order.
fn changed_files(diff: &Diff) -> Vec<&FileChange> {
    diff.files.iter().filter(|c| !in_marker_dir(c)).collect()
}

/// loci's own folder is never a change of the workspace's code.
fn in_marker_dir(c: &FileChange) -> bool {
    [&c.old_path, &c.new_path]
        .into_iter()
        .flatten()
        .any(|p| p.starts_with(".loci/"))
}

/// A changed file's row and its changed definitions.
fn file_entries(change: &FileChange, old: Found, new: Found) -> (ChangedFile, Vec<Entry>) {
    let mut file = ChangedFile {
        path: change.path().to_string(),
        old_path: change
            .old_path
            .clone()
            .filter(|_| change.status == Status::Renamed),
        status: match change.status {
            Status::Added => FileStatus::Added,
            Status::Modified => FileStatus::Modified,
            Status::Deleted => FileStatus::Deleted,
            Status::Renamed => FileStatus::Renamed,
            Status::TypeChanged => FileStatus::TypeChanged,
        },
        similarity: change.similarity,
        content: match change.content {
            Content::Text => FileContent::Text,
            Content::Binary => FileContent::Binary,
            Content::Symlink => FileContent::Symlink,
            Content::Submodule => FileContent::Submodule,
        },
        lines_added: change.lines_added,
        lines_removed: change.lines_removed,
        symbols: 0,
        not_read: None,
    };
    let (old, new) = match old.and_then(|old| Ok((old, new?))) {
        Ok(both) => both,
        Err(why) => {
            file.not_read = Some(why);
            return (file, Vec::new());
        }
    };
    let found = pair_file(
        side(&change.old_path, old.as_ref(), &change.removed),
        side(&change.new_path, new.as_ref(), &change.added),
    );
    (file, found)
}

/// One side of a file for pairing, when it exists and was read.
fn side<'a>(
    path: &'a Option<String>,
    facts: Option<&'a sides::SideFacts>,
    ranges: &'a [loci_git::LineRange],
) -> Option<FileSide<'a>> {
    Some(FileSide {
        path: path.as_deref()?,
        facts: facts?,
        ranges,
    })
}

/// Most threads walking the graph for one page at once.
const MAX_REACH_THREADS: usize = 4;

/// Entries one thread walks at least: fewer do not repay a connection.
const MIN_ENTRIES_PER_THREAD: usize = 8;

/// The page's entries as the answer shows them, each with what it reaches. Two walks
/// per entry were a fifth of an answer's time, one after another on one connection:
/// the cores take entries one at a time (their walks differ a hundredfold in size),
/// each on a connection of its own, and the answers keep the page's order.
fn changed_symbols(
    ws: &Workspace,
    entries: &[Entry],
    depth: u32,
    opts: &ReadOptions,
) -> Result<Vec<ChangedSymbol>, ApiError> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_REACH_THREADS)
        .min(entries.len() / MIN_ENTRIES_PER_THREAD)
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let walk = || {
        ws.run(opts, |g| {
            let mut done = Vec::new();
            loop {
                let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(e) = entries.get(at) else {
                    return Ok(done);
                };
                done.push((at, changed_symbol(g, e, depth)?));
            }
        })
    };
    let parts: Vec<Result<Vec<(usize, ChangedSymbol)>, ApiError>> = if threads == 1 {
        vec![walk()]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(walk)).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    };
    let mut symbols = Vec::with_capacity(entries.len());
    for part in parts {
        symbols.extend(part?);
    }
    symbols.sort_by_key(|(at, _)| *at);
    Ok(symbols.into_iter().map(|(_, s)| s).collect())
}

/// One entry as the answer shows it, with what it reaches in the live index (the new
/// side's definition, else the old side's).
fn changed_symbol(
    g: &loci_index::graph::Graph,
    e: &Entry,
    depth: u32,
) -> Result<ChangedSymbol, loci_index::graph::QueryError> {
    let Some(shown) = e.new.as_ref().or(e.old.as_ref()) else {
        unreachable!("an entry has a side");
    };
    let mut reach = reach::reach(g, shown, depth)?;
    if !reach.in_index
        && let (Some(old), Some(_)) = (&e.old, &e.new)
    {
        reach = reach::reach(g, old, depth)?;
    }
    let s = &shown.symbol;
    Ok(ChangedSymbol {
        change: e.change,
        name: s.name.clone(),
        qualified_name: s.qualified_name.clone(),
        kind: s.kind,
        lang: shown.lang,
        path: shown.path.clone(),
        line: s.span.start_line,
        end_line: s.span.end_line,
        signature: s.signature.clone(),
        old: e
            .old
            .as_ref()
            .filter(|_| e.new.is_some())
            .map(|o| OldPlace {
                path: o.path.clone(),
                line: o.symbol.span.start_line,
                end_line: o.symbol.span.end_line,
            }),
        reach,
    })
}

/// The code keys a memory may be linked to an entry by: both sides'.
fn entry_keys(e: &Entry) -> Vec<(CodeKey, u32)> {
    let key = |p: &Placed| CodeKey {
        path: p.path.clone(),
        qualified_name: p.symbol.qualified_name.clone(),
        kind: p.symbol.kind.name().to_string(),
    };
    let mut keys: Vec<(CodeKey, u32)> = e.old.iter().chain(&e.new).map(|p| (key(p), 0)).collect();
    keys.dedup();
    keys
}

fn side_of(s: &loci_git::SideInfo) -> ChangeSide {
    ChangeSide {
        label: s.label.clone(),
        commit: s.commit.clone(),
    }
}
