//! Finding the files to index: a gitignore-aware parallel walk (also honouring
//! `.lociignore`) that reports every file it will not index and why.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A path relative to the workspace root, `/`-separated, exactly as the file system
/// names it: the bytes, not a UTF-8 decoding of them. Two names that decode to the same
/// text (`x\xff.rs`, `x\xfe.rs`) are two paths; the index keys files by these bytes and
/// only shows them as text ([`RelPath::display`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct RelPath(Vec<u8>);

impl RelPath {
    /// The path of `path` beneath `root`, component by component.
    pub fn of(root: &Path, path: &Path) -> RelPath {
        let rel = path.strip_prefix(root).unwrap_or(path);
        let mut out = Vec::with_capacity(rel.as_os_str().len());
        for (i, part) in rel.components().enumerate() {
            if i > 0 {
                out.push(b'/');
            }
            out.extend_from_slice(part.as_os_str().as_bytes());
        }
        RelPath(out)
    }

    /// A stored path (the `files.path_bytes` column).
    pub fn from_bytes(bytes: Vec<u8>) -> RelPath {
        RelPath(bytes)
    }

    /// The exact bytes (the index's key for the file).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The path as text for people and for the name-based rules (module names, globs):
    /// lossy where the name is not UTF-8.
    pub fn display(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    /// The path to open, beneath the root.
    pub fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.0))
    }
}

/// A regular file the walk found, with the stat part of its fingerprint.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// Path relative to the workspace root, exact.
    pub rel: RelPath,
    /// Absolute path.
    pub abs: PathBuf,
    pub stat: Stat,
}

/// The stat half of a fingerprint: if all three match, the file is taken as unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub size: u64,
    pub mtime_ns: i64,
    pub inode: u64,
}

/// Why a file was not indexed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Contains NUL bytes.
    Binary,
    /// Larger than `index.maxFileBytes`.
    TooLarge,
    /// Could not be opened or read.
    Unreadable,
    /// A symbolic link that loops or points back into an ancestor.
    SymlinkLoop,
    /// A symbolic link (loci does not follow links, so nothing outside the workspace is read).
    Symlink,
    /// The walk could not enter or stat it.
    WalkError,
    /// Its parse went past a limit (memory, or a nesting its grammar cannot keep): the
    /// detail names the limit. Skipped rather than stored half-parsed.
    TooComplex,
    /// Its parse and extraction (or its resolution) ran past the file's time budget
    /// (`index.fileBudgetMs`): the detail names the budget.
    Timeout,
    /// Its extraction (or resolution) panicked: a defect in loci, caught so the rest of
    /// the run completes; the detail carries the panic's message.
    Panic,
    /// Its byte-order mark declares another encoding than UTF-8 (UTF-16 or UTF-32).
    NotUtf8,
}

impl SkipReason {
    /// The stable name used in `--json`.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::TooLarge => "too_large",
            SkipReason::Unreadable => "unreadable",
            SkipReason::SymlinkLoop => "symlink_loop",
            SkipReason::Symlink => "symlink",
            SkipReason::WalkError => "walk_error",
            SkipReason::TooComplex => "too_complex",
            SkipReason::Timeout => "timeout",
            SkipReason::Panic => "panic",
            SkipReason::NotUtf8 => "not_utf8",
        }
    }

    /// Whether only parsing the file tells this reason (a cheap look at its size or
    /// first bytes does not): such a refusal is remembered by the file's fingerprint, so
    /// an unchanged file is neither parsed again by every run nor counted as drift.
    pub fn told_by_parse(self) -> bool {
        matches!(
            self,
            SkipReason::TooComplex | SkipReason::Timeout | SkipReason::Panic
        )
    }
}

/// A file the index left out, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, PartialOrd, Ord, JsonSchema)]
pub struct Skipped {
    /// Path relative to the workspace.
    pub path: String,
    /// Why.
    pub reason: SkipReason,
    /// More detail (the OS error, the size), when there is any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What the walk saw: the candidate files (sorted by path) and what it skipped on the way.
pub(crate) struct Walked {
    pub files: Vec<Found>,
    pub skipped: Vec<Skipped>,
}

/// Directories never walked, whatever the ignore files say.
const ALWAYS_SKIPPED_DIRS: &[&str] = &[".git", ".loci", ".hg", ".svn"];

/// Walks `root` on `threads` threads. `wanted` decides from a path whether it could be a
/// source file (by name); files it rejects are not stat'ed further.
pub(crate) fn walk(root: &Path, threads: usize, wanted: &(dyn Fn(&Path) -> bool + Sync)) -> Walked {
    let files = Mutex::new(Vec::new());
    let skipped = Mutex::new(Vec::new());
    let mut builder = WalkBuilder::new(root);
    builder
        .threads(threads)
        .follow_links(false)
        .require_git(false)
        .add_custom_ignore_filename(".lociignore")
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| ALWAYS_SKIPPED_DIRS.contains(&n)))
        });
    builder.build_parallel().run(|| {
        let files = &files;
        let skipped = &skipped;
        Box::new(move |entry| {
            match entry {
                Ok(entry) => {
                    let Some(kind) = entry.file_type() else {
                        return WalkState::Continue;
                    };
                    if kind.is_dir() {
                        return WalkState::Continue;
                    }
                    if kind.is_symlink() {
                        if wanted(entry.path()) || entry.path().is_dir() || is_loop(entry.path()) {
                            let reason = if is_loop(entry.path()) {
                                SkipReason::SymlinkLoop
                            } else {
                                SkipReason::Symlink
                            };
                            skipped
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(Skipped {
                                    path: relative(root, entry.path()),
                                    reason,
                                    detail: None,
                                });
                        }
                        return WalkState::Continue;
                    }
                    if !kind.is_file() || !wanted(entry.path()) {
                        return WalkState::Continue;
                    }
                    let rel = RelPath::of(root, entry.path());
                    match entry.metadata() {
                        Ok(meta) => files.lock().unwrap_or_else(|p| p.into_inner()).push(Found {
                            rel,
                            abs: entry.path().to_path_buf(),
                            stat: stat_of(&meta),
                        }),
                        Err(e) => skipped
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(Skipped {
                                path: rel.display().into_owned(),
                                reason: SkipReason::WalkError,
                                detail: Some(e.to_string()),
                            }),
                    }
                }
                Err(err) => {
                    let (path, reason) = describe_walk_error(root, &err);
                    skipped
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(Skipped {
                            path,
                            reason,
                            detail: Some(err.to_string()),
                        });
                }
            }
            WalkState::Continue
        })
    });
    let mut files = files.into_inner().unwrap_or_else(|p| p.into_inner());
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    let mut skipped = skipped.into_inner().unwrap_or_else(|p| p.into_inner());
    skipped.sort();
    Walked { files, skipped }
}

pub(crate) fn stat_of(meta: &std::fs::Metadata) -> Stat {
    use std::os::unix::fs::MetadataExt;
    Stat {
        size: meta.len(),
        mtime_ns: meta
            .mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.mtime_nsec()),
        inode: meta.ino(),
    }
}

fn is_loop(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Err(e) => e.raw_os_error() == Some(libc_eloop()),
        Ok(meta) if meta.is_dir() => {
            // A link to one of its own ancestors would loop if followed.
            match (
                std::fs::canonicalize(path),
                path.parent().map(std::fs::canonicalize),
            ) {
                (Ok(target), Some(Ok(parent))) => parent.starts_with(&target),
                _ => false,
            }
        }
        Ok(_) => false,
    }
}

const fn libc_eloop() -> i32 {
    40 // ELOOP on Linux
}

fn describe_walk_error(root: &Path, err: &ignore::Error) -> (String, SkipReason) {
    let mut reason = SkipReason::WalkError;
    let mut path = String::new();
    let mut current = Some(err);
    while let Some(e) = current {
        current = match e {
            ignore::Error::WithPath { path: p, err } => {
                if path.is_empty() {
                    path = relative(root, p);
                }
                Some(err)
            }
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                Some(err)
            }
            ignore::Error::Loop { child, .. } => {
                path = relative(root, child);
                reason = SkipReason::SymlinkLoop;
                None
            }
            ignore::Error::Io(io) => {
                if io.kind() == std::io::ErrorKind::PermissionDenied {
                    reason = SkipReason::Unreadable;
                }
                None
            }
            _ => None,
        };
    }
    (path, reason)
}

/// `root/a/b.rs` → `a/b.rs` (lossy for non-UTF-8 names).
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut out = String::new();
    for (i, part) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&part.as_os_str().to_string_lossy());
    }
    out
}
