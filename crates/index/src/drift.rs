//! Is the index behind the working tree? A read-only comparison of a fresh walk with
//! the stored fingerprints: the same walk and the same rules as an index run, but
//! nothing is written and nothing is parsed.
//!
//! Stat first (size, mtime, inode); a file's content is hashed only when its stat
//! changed, so an unchanged workspace costs one walk and one table scan. A file whose
//! stat changed but whose content hash did not is *touched*, not drift: a sync would
//! only refresh its stat. A file indexed by older extractor rules (`files.extractor`)
//! is *outdated*: drift, since a sync re-extracts it.
//!
//! What resolution reads besides the source files counts too: a `Cargo.toml` whose
//! change alters the crate map (a crate renamed, added or removed) is drift, since a
//! sync re-resolves every Rust file against the new map; a manifest touched without
//! such a change is not. So is a `tsconfig.json`/`jsconfig.json` (or a `tsconfig.*.json`
//! one extends) or a `go.mod` whose change alters the module settings resolution reads
//! (`paths`, `baseUrl`, `extends`, the `module` path).
//!
//! ```no_run
//! let report = loci_index::drift::drift(&loci_index::drift::DriftOptions::new("/repo")).unwrap();
//! if report.is_drift() {
//!     println!("{} added, {} changed, {} removed", report.added, report.changed, report.removed);
//! }
//! ```

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::parse::{BINARY_SNIFF, is_binary};
use crate::sources::{could_be_source, source_lang};
use crate::sync::{DEFAULT_MAX_FILE_BYTES, load_stored};
use crate::walk::{self, Found};
use crate::{crates, module_configs};

/// Paths named per category in a report (the counts are exact).
const SAMPLE: usize = 10;

/// What to compare.
#[derive(Debug, Clone)]
pub struct DriftOptions {
    /// The workspace root (canonical).
    pub root: PathBuf,
    /// The index file; `None` → `<root>/.loci/index.db`.
    pub index_path: Option<PathBuf>,
    /// `index.maxFileBytes`: larger files are not indexed, so they are not drift either.
    pub max_file_bytes: u64,
    /// Walk threads (0 → all cores).
    pub threads: usize,
}

impl DriftOptions {
    /// Defaults for `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DriftOptions {
            root: root.into(),
            index_path: None,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            threads: 0,
        }
    }
}

/// How the working tree differs from the index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DriftReport {
    /// Source files on disk, not in the index, that an index run would add.
    pub added: u64,
    /// Indexed files whose content changed.
    pub changed: u64,
    /// Indexed files gone from disk (or now ignored, too large, binary or unreadable).
    pub removed: u64,
    /// Indexed files whose stat changed but content did not (not drift).
    pub touched: u64,
    /// Indexed files unchanged by stat.
    pub unchanged: u64,
    /// Files whose edges still wait to be re-resolved (an interrupted run's leftovers).
    pub pending_resolve: u64,
    /// Indexed files, unchanged, whose facts came from older extractor rules.
    pub outdated: u64,
    /// Crate manifests (`Cargo.toml`) whose change alters the crate map (counted once,
    /// 0 or 1: a sync then re-resolves every Rust file).
    pub manifests: u64,
    /// 1 when the index's edges were made by other resolution rules than this build's
    /// (a sync then re-resolves every file), else 0.
    pub rules: u64,
    /// Module configs (`tsconfig.json`, `jsconfig.json`, `go.mod`) whose change alters
    /// what resolution reads from them (counted once, 0 or 1: a sync then re-resolves
    /// every JavaScript/TypeScript or Go file).
    pub module_configs: u64,
    /// 1 when `HEAD` names another commit than the one the index recorded (a
    /// checkout, pull, reset or commit since the last run: a sync records the new one,
    /// and reads whatever files it changed), else 0.
    pub head_moved: u64,
    /// Up to ten example paths per category, `added:`/`changed:`/`removed:`/`outdated:`
    /// prefixed.
    pub sample: Vec<String>,
}

impl DriftReport {
    /// Whether a sync would change the graph.
    pub fn is_drift(&self) -> bool {
        self.pending_work() > 0
    }

    /// How much a sync has to do: files to add, re-extract, remove or re-resolve, a
    /// changed crate map and changed module configs.
    pub fn pending_work(&self) -> u64 {
        self.added
            + self.changed
            + self.removed
            + self.pending_resolve
            + self.outdated
            + self.manifests
            + self.rules
            + self.module_configs
            + self.head_moved
    }
}

/// Why drift could not be decided. The caller must treat this as *unknown*, never as drift.
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    /// The index could not be opened or read.
    #[error(transparent)]
    Store(#[from] loci_store::StoreError),
}

/// Compares the working tree of `opts.root` with its index, read-only.
pub fn drift(opts: &DriftOptions) -> Result<DriftReport, DriftError> {
    let index_path = opts
        .index_path
        .clone()
        .unwrap_or_else(|| loci_store::index_path_for(&opts.root));
    let conn = loci_store::open_index_read_only(&index_path)?;
    let err = |e| DriftError::Store(loci_store::StoreError::sqlite(&index_path, e));
    let stored = load_stored(&conn).map_err(err)?;
    let record = crate::skip_record::SkipRecord::load(&conn).map_err(err)?;
    let refusals = record.parse_refusals();
    let pending_resolve: i64 = conn
        .query_row("SELECT count(*) FROM files WHERE resolved = 0", [], |r| {
            r.get(0)
        })
        .map_err(err)?;
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.threads
    };
    let mut walked = walk::walk(&opts.root, threads, &|p: &Path| {
        could_be_source(p) || crates::is_manifest(p) || module_configs::is_config(p)
    });
    let (manifests, sources): (Vec<_>, Vec<_>) = std::mem::take(&mut walked.files)
        .into_iter()
        .partition(|f| crates::is_manifest(&f.abs) || module_configs::is_config(&f.abs));
    walked.files = sources;
    let (configs, manifests): (Vec<_>, Vec<_>) = manifests
        .into_iter()
        .partition(|f| module_configs::is_config(&f.abs));
    let crates_changed = crates::map_changed(&conn, &manifests).map_err(err)?;
    let rules_outdated = crate::settings::rules_outdated(&conn).map_err(err)?;
    let configs_changed = module_configs::configs_changed(&conn, &configs).map_err(err)?;
    let head_moved = crate::checkout::head_moved(&conn, &opts.root).map_err(err)?;
    drop(conn);

    let mut report = DriftReport {
        pending_resolve: pending_resolve as u64,
        manifests: u64::from(crates_changed),
        rules: u64::from(rules_outdated),
        module_configs: u64::from(configs_changed),
        head_moved: u64::from(head_moved),
        ..DriftReport::default()
    };
    let note = |report: &mut DriftReport, kind: &str, rel: &str| {
        if report.sample.len() < 4 * SAMPLE
            && report.sample.iter().filter(|s| s.starts_with(kind)).count() < SAMPLE
        {
            report.sample.push(format!("{kind}:{rel}"));
        }
    };
    let mut seen = std::collections::HashSet::with_capacity(walked.files.len());
    for found in &walked.files {
        match stored.get(&found.rel) {
            Some(s) if s.stat == found.stat && s.outdated => {
                report.outdated += 1;
                seen.insert(&found.rel);
                note(&mut report, "outdated", &found.rel.display());
            }
            Some(s) if s.stat == found.stat => {
                report.unchanged += 1;
                seen.insert(&found.rel);
            }
            Some(s) => match content_hash(found, opts.max_file_bytes) {
                Some(hash) if hash[..] == s.hash[..] && s.outdated => {
                    report.outdated += 1;
                    seen.insert(&found.rel);
                    note(&mut report, "outdated", &found.rel.display());
                }
                Some(hash) if hash[..] == s.hash[..] => {
                    report.touched += 1;
                    seen.insert(&found.rel);
                }
                Some(_) => {
                    report.changed += 1;
                    seen.insert(&found.rel);
                    note(&mut report, "changed", &found.rel.display());
                }
                // Now too large, binary or unreadable: a sync drops it (counted below).
                None => {}
            },
            // Refused by a parse and unchanged since: a run would skip it again.
            None if refusals.of(found).is_some() => {}
            None => {
                if would_index(found, opts.max_file_bytes) {
                    report.added += 1;
                    note(&mut report, "added", &found.rel.display());
                }
            }
        }
    }
    for path in stored.keys() {
        if !seen.contains(path) {
            report.removed += 1;
            note(&mut report, "removed", &path.display());
        }
    }
    report.sample.sort();
    Ok(report)
}

/// The content hash an index run would store, or `None` when it would skip the file.
fn content_hash(found: &Found, max_bytes: u64) -> Option<[u8; 32]> {
    if found.stat.size > max_bytes {
        return None;
    }
    let mut bytes = Vec::with_capacity(found.stat.size as usize + 1);
    std::fs::File::open(&found.abs)
        .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes))
        .ok()?;
    if bytes.len() as u64 > max_bytes || is_binary(&bytes) {
        return None;
    }
    Some(*blake3::hash(&bytes).as_bytes())
}

/// Whether an index run would add this unindexed file (a language, small, not binary).
fn would_index(found: &Found, max_bytes: u64) -> bool {
    if source_lang(&found.abs).is_none() {
        return false;
    }
    if found.stat.size > max_bytes {
        return false;
    }
    let mut head = vec![0u8; BINARY_SNIFF.min(found.stat.size as usize)];
    match std::fs::File::open(&found.abs).and_then(|mut f| f.read_exact(&mut head)) {
        Ok(()) => !is_binary(&head),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IndexOptions, NoProgress, index_workspace};

    fn indexed(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        index_workspace(&IndexOptions::new(dir.path()), &NoProgress).unwrap();
        dir
    }

    fn check(dir: &Path) -> DriftReport {
        drift(&DriftOptions::new(std::fs::canonicalize(dir).unwrap())).unwrap()
    }

    #[test]
    fn fresh_index_has_no_drift() {
        let dir = indexed(&[("a.py", "def a(): pass\n"), ("notes.txt", "x")]);
        let r = check(dir.path());
        assert!(!r.is_drift(), "{r:?}");
        assert_eq!(r.unchanged, 1);
    }

    #[test]
    fn added_changed_removed_are_drift_and_touched_is_not() {
        let dir = indexed(&[
            ("a.py", "def a(): pass\n"),
            ("b.py", "def b(): pass\n"),
            ("c.py", "def c(): pass\n"),
        ]);
        let root = dir.path();
        std::fs::write(root.join("a.py"), "def a2(): pass\n").unwrap();
        std::fs::remove_file(root.join("b.py")).unwrap();
        std::fs::write(root.join("d.py"), "def d(): pass\n").unwrap();
        // Same content, new inode and mtime: touched only.
        std::fs::remove_file(root.join("c.py")).unwrap();
        std::fs::write(root.join("c.py"), "def c(): pass\n").unwrap();
        let r = check(root);
        assert_eq!(
            (r.added, r.changed, r.removed, r.touched),
            (1, 1, 1, 1),
            "{r:?}"
        );
        assert!(r.is_drift());
        assert_eq!(r.sample, ["added:d.py", "changed:a.py", "removed:b.py"]);
    }

    #[test]
    fn files_an_index_run_would_skip_are_not_drift() {
        let dir = indexed(&[("a.py", "def a(): pass\n")]);
        std::fs::write(dir.path().join("bin.py"), b"\0\x01binary").unwrap();
        std::fs::write(dir.path().join("README"), "no shebang").unwrap();
        assert!(!check(dir.path()).is_drift());
    }

    #[test]
    fn a_changed_config_that_tsconfig_extends_is_drift_and_a_touched_one_is_not() {
        let base = |target: &str| {
            format!("{{ \"compilerOptions\": {{ \"paths\": {{ \"@x/*\": [\"{target}\"] }} }} }}\n")
        };
        let dir = indexed(&[
            (
                "tsconfig.json",
                "{ \"extends\": \"./tsconfig.base.json\" }\n",
            ),
            ("tsconfig.base.json", &base("lib/*")),
            ("lib/a.ts", "export function a() {}\n"),
        ]);
        let root = dir.path();
        std::fs::remove_file(root.join("tsconfig.base.json")).unwrap();
        std::fs::write(root.join("tsconfig.base.json"), base("lib/*")).unwrap();
        let r = check(root);
        assert!(!r.is_drift(), "{r:?}");
        std::fs::write(root.join("tsconfig.base.json"), base("src/*")).unwrap();
        let r = check(root);
        assert_eq!((r.module_configs, r.changed), (1, 0), "{r:?}");
        assert!(r.is_drift());
    }

    #[test]
    fn a_missing_index_is_an_error_not_drift() {
        let dir = tempfile::tempdir().unwrap();
        assert!(drift(&DriftOptions::new(dir.path())).is_err());
    }
}
