//! The files the last run left out, stored in the index (`meta.skipped_files`), so
//! `loci status` and `loci stats` can name each with its reason long after the run.
//!
//! A file refused after its parse (too complex, over its time budget, a panic in its
//! extraction) or its resolution is also remembered by its fingerprint: an unchanged
//! refused file is neither parsed again by every run (up to its budget each time) nor
//! counted as drift forever. Other reasons (size, NUL bytes, unreadable) are told
//! again by every run at the cost of a stat or a read.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::meta::{meta_get, meta_set};
use crate::vocab::MetaKey;
use crate::walk::{Found, SkipReason, Skipped, Stat};

/// Most entries stored besides the fingerprinted ones: a tree of 100,000 binary files
/// under source names keeps its counts, not every name.
const MAX_PLAIN_ENTRIES: usize = 10_000;

/// What the last run left out.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SkipRecord {
    /// Every skipped file up to [`MAX_PLAIN_ENTRIES`] plus every fingerprinted one, by path.
    files: Vec<Entry>,
    /// Skipped files in all (more than `files` holds when the plain ones were cut).
    total: u64,
    /// Skipped files per reason, of all of them.
    #[serde(default)]
    by_reason: BTreeMap<String, u64>,
}

/// Where a refusal was found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Stage {
    /// Walking, statting or reading the file.
    #[default]
    Read,
    /// Parsing and extracting it: the file is not in the index.
    Parse,
    /// Resolving its references: its definitions are in the index, its edges are not.
    Resolve,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    path: String,
    reason: SkipReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(default)]
    stage: Stage,
    /// The exact path (hex of its bytes) and stat of a file refused by a parse or a
    /// resolution, which holds while the file is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fingerprint: Option<Fingerprint>,
    /// The file's id in the index (resolution refusals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file_id: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Fingerprint {
    key: String,
    size: u64,
    mtime_ns: i64,
    inode: u64,
}

impl Fingerprint {
    fn of(found: &Found) -> Fingerprint {
        Fingerprint {
            key: key(found),
            size: found.stat.size,
            mtime_ns: found.stat.mtime_ns,
            inode: found.stat.inode,
        }
    }

    fn matches(&self, found: &Found) -> bool {
        self.stat() == found.stat && self.key == key(found)
    }

    fn stat(&self) -> Stat {
        Stat {
            size: self.size,
            mtime_ns: self.mtime_ns,
            inode: self.inode,
        }
    }
}

fn key(found: &Found) -> String {
    found
        .rel
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What one run learned about skipped files, for [`SkipRecord::of_run`].
pub(crate) struct RunSkips<'a> {
    /// Every file the run walked.
    pub walked: &'a [Found],
    /// The files it skipped while walking, reading or parsing.
    pub skipped: &'a [Skipped],
    /// The files whose resolution it stopped, with their ids.
    pub unresolved: &'a [(i64, Skipped)],
    /// The ids of the files it resolved (stopped or not).
    pub resolved: &'a HashSet<i64>,
}

impl SkipRecord {
    /// The record of the last run; an absent or unreadable one is empty (refused files
    /// are then parsed once more, which rewrites it).
    pub(crate) fn load(conn: &Connection) -> rusqlite::Result<SkipRecord> {
        Ok(meta_get(conn, MetaKey::SkippedFiles)?
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default())
    }

    /// The files an earlier parse refused, looked up by exact path.
    pub(crate) fn parse_refusals(&self) -> Refusals<'_> {
        Refusals(
            self.files
                .iter()
                .filter(|e| e.stage == Stage::Parse)
                .filter_map(|e| Some((e.fingerprint.as_ref()?.key.as_str(), e)))
                .collect(),
        )
    }

    /// The record of a run: what it skipped, with fingerprints for the refusals a parse
    /// or a resolution told, and the resolution refusals of earlier runs whose files
    /// this run neither changed nor resolved again.
    pub(crate) fn of_run(run: &RunSkips<'_>, before: &SkipRecord) -> SkipRecord {
        let needs_walked = run.skipped.iter().any(|s| s.reason.told_by_parse())
            || !run.unresolved.is_empty()
            || before.files.iter().any(|e| e.stage == Stage::Resolve);
        let walked: HashMap<String, &Found> = if needs_walked {
            run.walked
                .iter()
                .map(|f| (f.rel.display().into_owned(), f))
                .collect()
        } else {
            HashMap::new()
        };
        let fingerprint = |path: &str| walked.get(path).map(|f| Fingerprint::of(f));
        let mut files: Vec<Entry> = Vec::with_capacity(run.skipped.len());
        for s in run.skipped {
            let told_by_parse = s.reason.told_by_parse();
            files.push(Entry {
                path: s.path.clone(),
                reason: s.reason,
                detail: s.detail.clone(),
                stage: if told_by_parse {
                    Stage::Parse
                } else {
                    Stage::Read
                },
                fingerprint: told_by_parse.then(|| fingerprint(&s.path)).flatten(),
                file_id: None,
            });
        }
        for (id, s) in run.unresolved {
            files.push(Entry {
                path: s.path.clone(),
                reason: s.reason,
                detail: s.detail.clone(),
                stage: Stage::Resolve,
                fingerprint: fingerprint(&s.path),
                file_id: Some(*id),
            });
        }
        for e in before.files.iter().filter(|e| e.stage == Stage::Resolve) {
            let unchanged = e
                .fingerprint
                .as_ref()
                .zip(walked.get(&e.path))
                .is_some_and(|(f, found)| f.matches(found));
            let resolved_again = e.file_id.is_some_and(|id| run.resolved.contains(&id));
            if unchanged && !resolved_again {
                files.push(e.clone());
            }
        }
        files.sort_by(|a, b| (&a.path, a.stage as u8).cmp(&(&b.path, b.stage as u8)));
        files.dedup_by(|a, b| a.path == b.path && a.stage == b.stage);
        let total = files.len() as u64;
        let mut by_reason = BTreeMap::new();
        for e in &files {
            *by_reason.entry(e.reason.name().to_string()).or_insert(0) += 1;
        }
        let mut plain = 0usize;
        files.retain(|e| {
            e.fingerprint.is_some() || {
                plain += 1;
                plain <= MAX_PLAIN_ENTRIES
            }
        });
        SkipRecord {
            files,
            total,
            by_reason,
        }
    }

    /// The resolution refusals carried over from earlier runs (their files unchanged
    /// and not resolved again), to report with this run's skips.
    pub(crate) fn carried_unresolved(&self) -> impl Iterator<Item = Skipped> + '_ {
        self.files
            .iter()
            .filter(|e| e.stage == Stage::Resolve)
            .map(Entry::skipped)
    }

    /// Stores `self` when it differs from `before`; says whether it wrote.
    pub(crate) fn store_if_changed(
        &self,
        before: &SkipRecord,
        conn: &Connection,
    ) -> rusqlite::Result<bool> {
        if self == before {
            return Ok(false);
        }
        let text = serde_json::to_string(self).unwrap_or_else(|_| "{}".into());
        meta_set(conn, MetaKey::SkippedFiles, &text)?;
        Ok(true)
    }
}

/// The files an earlier parse refused, by the hex of their exact path.
pub(crate) struct Refusals<'a>(HashMap<&'a str, &'a Entry>);

impl Refusals<'_> {
    /// Why `found` was refused by an earlier parse, when it was and has not changed since.
    pub(crate) fn of(&self, found: &Found) -> Option<Skipped> {
        if self.0.is_empty() {
            return None;
        }
        let entry = self.0.get(key(found).as_str())?;
        let unchanged = entry
            .fingerprint
            .as_ref()
            .is_some_and(|f| f.stat() == found.stat);
        unchanged.then(|| entry.skipped())
    }
}

impl Entry {
    fn skipped(&self) -> Skipped {
        Skipped {
            path: self.path.clone(),
            reason: self.reason,
            detail: self.detail.clone(),
        }
    }
}

/// The skipped files as the index last recorded them, for status and stats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SkippedFiles {
    /// Files the last run left out (or whose references it left unresolved).
    pub total: u64,
    /// How many for each reason (`timeout`, `panic`, `too_large`, `binary`, ...).
    pub by_reason: BTreeMap<String, u64>,
    /// The first of them by path, each with its reason and detail (at most the limit
    /// asked for; `total` says how many there are).
    pub files: Vec<Skipped>,
}

/// What the index records of its last run's skipped files, listing at most `limit`.
pub fn recorded_skips(conn: &Connection, limit: usize) -> rusqlite::Result<SkippedFiles> {
    let record = SkipRecord::load(conn)?;
    Ok(SkippedFiles {
        total: record.total,
        by_reason: record.by_reason,
        files: record
            .files
            .iter()
            .take(limit)
            .map(Entry::skipped)
            .collect(),
    })
}
