//! One index run: walk, diff against stored fingerprints, parse what changed on all
//! cores, write through one writer in large transactions (`run_writer.rs`), then
//! re-resolve the stale files.
//!
//! Crash safety: every transaction leaves the index consistent, and the work still to
//! do is itself stored (`files.resolved = 0`, `meta.state = 'indexing'`), so a run killed
//! at any point is finished by the next one.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::budget::FileBudget;
use crate::crates;
use crate::first_index;
use crate::freed_memory;
use crate::lock::{LockError, WriteLock};
use crate::module_configs;
use crate::parse::{FileLimits, Outcome};
use crate::parse_pool::{self, ParseJob};
use crate::run_writer::{BATCH_FILES, Counts, Gathered, RunWriter, SearchSink};
use crate::side_search::SideSearch;
use crate::skip_record::{RunSkips, SkipRecord};
use crate::trigram::TermsBuilder;
use crate::walk::{self, RelPath, Skipped, Stat};
use crate::write::StoredFile;
use crate::{IndexState, Lang, MetaKey, resolve};
use loci_store::search_index;

/// Default for `index.maxFileBytes`.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Receives progress of the parse phase (a TTY progress bar, or nothing).
pub trait Progress: Sync {
    /// The number of files to parse is known.
    fn start(&self, total: u64);
    /// `n` more files were parsed.
    fn advance(&self, n: u64);
    /// Parsing is done.
    fn finish(&self);
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// What to index and how.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// The workspace root (must be a directory).
    pub root: PathBuf,
    /// Where the index lives; `None` → `<root>/.loci/index.db`.
    pub index_path: Option<PathBuf>,
    /// Files larger than this are skipped (`index.maxFileBytes`).
    pub max_file_bytes: u64,
    /// Threads for walking and parsing (0 → all cores).
    pub threads: usize,
    /// What the write lock record says this run is (`index`, `sync`, `rebuild`, `watch`).
    pub purpose: String,
    /// The time one file's parse, extraction and resolution may take
    /// (`index.fileBudgetMs`); past it the file is skipped as `timeout`.
    pub file_budget: FileBudget,
}

impl IndexOptions {
    /// Defaults for indexing `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        IndexOptions {
            root: root.into(),
            index_path: None,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            threads: 0,
            purpose: "index".into(),
            file_budget: FileBudget::default(),
        }
    }
}

/// What a run did; `loci index --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    /// The canonical workspace root.
    pub workspace: String,
    /// The index file.
    pub index_path: String,
    /// Source files in the index after the run.
    pub files_indexed: u64,
    /// Files parsed in this run (new or changed content).
    pub files_parsed: u64,
    /// Files whose stat changed but content did not.
    pub files_touched: u64,
    /// Files found unchanged by stat.
    pub files_unchanged: u64,
    /// Files removed from the index in this run.
    pub files_removed: u64,
    /// Files not indexed (count).
    pub files_skipped: u64,
    /// Skipped files by reason.
    pub skipped_by_reason: BTreeMap<String, u64>,
    /// Every skipped file with its reason.
    pub skipped: Vec<Skipped>,
    /// Files decoded lossily because they were not valid UTF-8.
    pub lossy_files: Vec<String>,
    /// Files whose edges were recomputed.
    pub files_resolved: u64,
    /// Symbols in the index after the run.
    pub symbols: u64,
    /// Edges in the index after the run.
    pub edges: u64,
    /// Whether the run wrote anything (a no-change run writes nothing).
    pub wrote: bool,
    /// Whether the run took the first-index path (bulk load, resolution from memory,
    /// side-built search index): an empty index, or an interrupted first one.
    pub first_index: bool,
    /// Whether an interrupted first index was discarded and indexed again as a first
    /// index (its partial rows had nothing worth finishing incrementally).
    pub restarted_first_index: bool,
    /// Wall time of the run in milliseconds.
    pub elapsed_ms: u64,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The workspace path does not exist.
    #[error("workspace not found: {0}")]
    NotFound(PathBuf),
    /// The workspace path is not a directory.
    #[error("not a directory: {0}")]
    NotADirectory(PathBuf),
    /// The workspace could not be read.
    #[error("cannot read workspace {path}: {source}")]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Another process is writing this index.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] loci_store::StoreError),
}

fn sqlite(path: &Path) -> impl Fn(rusqlite::Error) -> IndexError + '_ {
    move |e| IndexError::Store(loci_store::StoreError::sqlite(path, e))
}

/// Resolves the workspace root of `path` (canonical, must be a directory).
pub fn workspace_root(path: &Path) -> Result<PathBuf, IndexError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => IndexError::NotFound(path.to_path_buf()),
        _ => IndexError::Unreadable {
            path: path.to_path_buf(),
            source: e,
        },
    })?;
    if !meta.is_dir() {
        return Err(IndexError::NotADirectory(path.to_path_buf()));
    }
    std::fs::canonicalize(path).map_err(|source| IndexError::Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

/// Builds or updates the index of `opts.root`. Takes the workspace's write lock for the run.
pub fn index_workspace(
    opts: &IndexOptions,
    progress: &dyn Progress,
) -> Result<IndexReport, IndexError> {
    let started = Instant::now();
    let root = workspace_root(&opts.root)?;
    let index_path = opts
        .index_path
        .clone()
        .unwrap_or_else(|| loci_store::index_path_for(&root));
    let index_dir = index_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let _lock = WriteLock::try_acquire(&index_dir, &opts.purpose)?;
    let mut conn = loci_store::open_index(&index_path)?;
    let err = sqlite(&index_path);
    let mut place = RunPlace {
        root: &root,
        index_path: &index_path,
        started,
        first_index: false,
        restarted: false,
    };
    let threads = if opts.threads == 0 {
        rayon::current_num_threads().max(1)
    } else {
        opts.threads
    };

    // An interrupted first index has nothing worth finishing incrementally: it starts
    // over as a first index (`first_index.rs`).
    let restarted = first_index::is_interrupted_first_index(&conn).map_err(&err)?;
    if restarted {
        first_index::discard(&mut conn).map_err(&err)?;
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            "an interrupted first index starts over"
        );
    }
    // A first index whose side-built search index was never installed: re-index every
    // file (a crash left no way to know which files' terms it had).
    if search_index::is_pending(&conn).map_err(&err)? {
        let _ = std::fs::remove_file(SideSearch::path_in(&index_dir));
        search_index::reset_for_reindex(&mut conn).map_err(&err)?;
    }
    let stored = load_stored(&conn).map_err(&err)?;
    let before = SkipRecord::load(&conn).map_err(&err)?;
    let mut walked = walk::walk(&root, threads, &|p: &Path| {
        could_be_source(p) || crates::is_manifest(p) || module_configs::is_config(p)
    });
    let (manifests, sources): (Vec<_>, Vec<_>) = std::mem::take(&mut walked.files)
        .into_iter()
        .partition(|f| crates::is_manifest(&f.abs) || module_configs::is_config(&f.abs));
    let (configs, manifests): (Vec<_>, Vec<_>) = manifests
        .into_iter()
        .partition(|f| module_configs::is_config(&f.abs));
    walked.files = sources;
    tracing::info!(
        files = walked.files.len(),
        ms = started.elapsed().as_millis() as u64,
        "walked"
    );
    let mut skipped = walked.skipped;

    // Diff: unchanged by stat, to (re)read, and removed.
    let mut to_read = Vec::new();
    let mut unchanged = 0u64;
    let refusals = before.parse_refusals();
    let mut seen: HashSet<&RelPath> = HashSet::with_capacity(walked.files.len());
    for found in &walked.files {
        let stored_file = stored.get(&found.rel);
        // Unchanged by stat, still within the size limit (which may have been lowered),
        // and extracted by this build's rules.
        if let Some(s) = stored_file
            && s.stat == found.stat
            && !s.outdated
            && found.stat.size <= opts.max_file_bytes
        {
            unchanged += 1;
            seen.insert(&found.rel);
            continue;
        }
        // Refused by an earlier run's parse (too complex, over its budget, a panic)
        // and unchanged since: not parsed again.
        if stored_file.is_none()
            && let Some(refusal) = refusals.of(found)
        {
            skipped.push(refusal);
            continue;
        }
        let Some(lang) = source_lang(&found.abs) else {
            continue;
        };
        seen.insert(&found.rel);
        // An outdated file is parsed again even if its content is as stored.
        let known_hash = stored_file.filter(|s| !s.outdated).map(|s| s.hash.clone());
        to_read.push(ParseJob {
            found: found.clone(),
            lang,
            known_hash,
        });
    }
    let removed: Vec<i64> = stored
        .iter()
        .filter(|(path, _)| !seen.contains(path))
        .map(|(_, s)| s.id)
        .collect();
    let incomplete =
        IndexState::from_stored(meta_get(&conn, MetaKey::State).map_err(&err)?.as_deref())
            != IndexState::Complete;
    // Crate names first: a changed map makes every Rust file's edges stale, recorded
    // with the map in one transaction.
    let crates = refresh_crates(&mut conn, &manifests).map_err(&err)?;
    let configs = refresh_configs(&mut conn, &configs).map_err(&err)?;
    let rules_wrote = refresh_rules(&mut conn).map_err(&err)?;
    let stale = resolve::stale_files(&conn).map_err(&err)?;

    if to_read.is_empty() && removed.is_empty() && stale.is_empty() && !incomplete {
        let wrote = record_skips(&conn, &walked.files, &mut skipped, &[], &[], &before)
            .map_err(&err)?
            || crates.wrote
            || configs.wrote
            || rules_wrote;
        return finish_report(
            &conn,
            &place,
            skipped,
            Vec::new(),
            Counts {
                unchanged,
                ..Counts::default()
            },
            wrote,
        )
        .map_err(&err);
    }

    let fresh = stored.is_empty();
    place.first_index = fresh;
    place.restarted = restarted;
    // Files to read may all turn out to be skipped (too large, binary, unreadable) and
    // not in the index: then the run changes nothing and must write nothing. Unless a
    // write is certain, the run is marked unfinished in the first transaction that
    // changes something.
    let will_write = fresh || incomplete || !removed.is_empty() || !stale.is_empty();
    if will_write {
        meta_set(&conn, MetaKey::State, IndexState::Indexing.name()).map_err(&err)?;
    }
    crate::git_exclude::ensure_excluded(&root);
    if fresh {
        loci_store::drop_fact_indexes(&conn).map_err(&err)?;
    } else {
        loci_store::create_fact_indexes(&conn).map_err(&err)?;
    }
    let mut counts = Counts {
        unchanged,
        removed: removed.len() as u64,
        ..Counts::default()
    };
    let mut lossy = Vec::new();
    let mut gathered = fresh.then(Gathered::default);
    let mut search = match fresh.then(|| SideSearch::start(&index_dir)).flatten() {
        Some(side) => {
            search_index::mark_pending(&conn).map_err(&err)?;
            SearchSink::Side(side)
        }
        None => SearchSink::Inline(TermsBuilder::default()),
    };

    // Parse on all cores, write through this thread.
    progress.start(to_read.len() as u64);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .ok();
    let limits = FileLimits {
        max_bytes: opts.max_file_bytes,
        budget: opts.file_budget,
    };
    let (tx, rx) = crossbeam_channel::bounded::<Outcome>(256);
    let write_result: Result<bool, IndexError> = std::thread::scope(|scope| {
        let jobs = std::mem::take(&mut to_read);
        scope.spawn(move || {
            parse_pool::parse_all(jobs, threads, limits, &tx);
            tracing::info!(ms = started.elapsed().as_millis() as u64, "parsing done");
        });
        let mut writer = RunWriter {
            stored: &stored,
            fresh,
            marked: will_write,
            counts: &mut counts,
            skipped: &mut skipped,
            lossy: &mut lossy,
            gathered: &mut gathered,
            search: &mut search,
        };
        let writing = writer
            .write_all(&mut conn, rx, &removed, progress)
            .map_err(&err)?;
        tracing::info!(
            ms = writing.as_millis() as u64,
            "time in the writer's transactions"
        );
        Ok(writer.marked)
    });
    progress.finish();
    if !write_result? {
        // Every file read was skipped, and none was in the index: nothing changed but,
        // perhaps, which files were skipped.
        let wrote = record_skips(&conn, &walked.files, &mut skipped, &[], &[], &before)
            .map_err(&err)?
            || crates.wrote
            || configs.wrote;
        return finish_report(&conn, &place, skipped, lossy, counts, wrote).map_err(&err);
    }
    if let SearchSink::Side(side) = &mut search {
        side.all_sent();
    }
    freed_memory::release();
    tracing::info!(
        parsed = counts.parsed,
        ms = started.elapsed().as_millis() as u64,
        "parsed and written"
    );

    // Resolve every stale file. A fresh index has no edges yet: no deletes are needed,
    // and the edge indexes are built once at the end.
    if fresh {
        loci_store::drop_edge_indexes(&conn).map_err(&err)?;
    } else {
        loci_store::create_edge_indexes(&conn).map_err(&err)?;
    }
    let stale = resolve::stale_files(&conn).map_err(&err)?;
    let unresolved = match gathered.filter(|g| g.inputs.len() == stale.len()) {
        Some(gathered) => {
            // A first index: resolve what was just written, from memory, on the pool,
            // while this thread builds the fact indexes.
            let Gathered {
                mut table, inputs, ..
            } = gathered;
            table.set_crates(crates.map);
            table.set_module_configs(configs.configs);
            let (resolved, indexed) = std::thread::scope(|scope| {
                let resolving = scope.spawn(|| {
                    let table = table.build();
                    on_pool(pool.as_ref(), || {
                        resolve::resolve_all(&table, &inputs, opts.file_budget)
                    })
                });
                let indexed = loci_store::create_fact_indexes(&conn);
                let resolved = resolving
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (resolved, indexed)
            });
            indexed.map_err(&err)?;
            tracing::info!(
                ms = started.elapsed().as_millis() as u64,
                "resolved in memory"
            );
            // Freeing a million facts takes a while: on the other core, beside the writes.
            std::thread::scope(|scope| {
                scope.spawn(move || drop(inputs));
                resolve::write_edges(&mut conn, &resolved, true)
            })
            .map_err(&err)?;
            stopped_resolutions(&conn, &resolved).map_err(&err)?
        }
        None => {
            // Rebuilt after a bulk load; on any other run this only re-creates what a
            // killed bulk load left missing.
            loci_store::create_fact_indexes(&conn).map_err(&err)?;
            resolve_from_index(&mut conn, &stale, fresh, opts.file_budget, pool.as_ref())
                .map_err(&err)?
        }
    };
    tracing::info!(ms = started.elapsed().as_millis() as u64, "edges written");
    loci_store::create_edge_indexes(&conn).map_err(&err)?;
    if let SearchSink::Side(side) = search {
        let built = side.finish().map_err(&err)?;
        search_index::install(&mut conn, &built).map_err(&err)?;
    }
    counts.resolved = stale.len() as u64;
    tracing::info!(
        resolved = counts.resolved,
        ms = started.elapsed().as_millis() as u64,
        "resolved"
    );
    meta_set(&conn, MetaKey::State, IndexState::Complete.name()).map_err(&err)?;
    // Set once a run has completed: a later interrupted run is then unfinished work
    // (drift the next sync resumes), not an incomplete first index.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    meta_set(&conn, MetaKey::CompletedAt, &now.to_string()).map_err(&err)?;
    // Keep the WAL from growing without bound across runs.
    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    record_skips(
        &conn,
        &walked.files,
        &mut skipped,
        &unresolved,
        &stale,
        &before,
    )
    .map_err(&err)?;
    finish_report(&conn, &place, skipped, lossy, counts, true).map_err(&err)
}

/// Records the run's skipped files in the index when they changed (whether it wrote),
/// and completes `skipped` for the report with the files whose resolution this run or
/// an earlier one stopped.
fn record_skips(
    conn: &Connection,
    walked: &[walk::Found],
    skipped: &mut Vec<Skipped>,
    unresolved: &[(i64, Skipped)],
    resolved: &[i64],
    before: &SkipRecord,
) -> rusqlite::Result<bool> {
    let resolved: HashSet<i64> = resolved.iter().copied().collect();
    let record = SkipRecord::of_run(
        &RunSkips {
            walked,
            skipped,
            unresolved,
            resolved: &resolved,
        },
        before,
    );
    let wrote = record.store_if_changed(before, conn)?;
    skipped.extend(record.carried_unresolved());
    Ok(wrote)
}

/// The files whose resolution was stopped, by id and path.
fn stopped_resolutions(
    conn: &Connection,
    resolved: &[resolve::ResolvedFile],
) -> rusqlite::Result<Vec<(i64, Skipped)>> {
    let mut path_of = conn.prepare_cached("SELECT path FROM files WHERE id = ?1")?;
    let mut out = Vec::new();
    for r in resolved {
        if let Some((reason, detail)) = &r.stopped {
            let path: String = path_of.query_row([r.file_id()], |row| row.get(0))?;
            tracing::warn!(%path, %detail, "a file's resolution was stopped");
            out.push((
                r.file_id(),
                Skipped {
                    path,
                    reason: *reason,
                    detail: Some(detail.clone()),
                },
            ));
        }
    }
    Ok(out)
}

/// Brings the stored crate map up to date with the walked manifests; when it changed,
/// marks every Rust file for re-resolution in the same transaction.
fn refresh_crates(
    conn: &mut Connection,
    manifests: &[walk::Found],
) -> rusqlite::Result<crates::Refreshed> {
    let tx = conn.transaction()?;
    let refreshed = crates::refresh(&tx, manifests)?;
    if refreshed.changed {
        tx.execute(
            "UPDATE files SET resolved = 0 WHERE resolved = 1 AND lang = ?1",
            [Lang::Rust.name()],
        )?;
    }
    tx.commit()?;
    Ok(refreshed)
}

/// Whether the stored edges were made by other resolution rules than this build's
/// ([`resolve::RULES_VERSION`]); an index from before rules had a version counts as other.
pub(crate) fn rules_outdated(conn: &Connection) -> rusqlite::Result<bool> {
    Ok(meta_get(conn, MetaKey::ResolverRules)?.as_deref()
        != Some(resolve::RULES_VERSION.to_string().as_str()))
}

/// Records this build's resolution rules; when the stored edges were made by others,
/// marks every file for re-resolution in the same transaction. Whether it wrote.
fn refresh_rules(conn: &mut Connection) -> rusqlite::Result<bool> {
    if !rules_outdated(conn)? {
        return Ok(false);
    }
    let tx = conn.transaction()?;
    tx.execute("UPDATE files SET resolved = 0 WHERE resolved = 1", [])?;
    meta_set(
        &tx,
        MetaKey::ResolverRules,
        &resolve::RULES_VERSION.to_string(),
    )?;
    tx.commit()?;
    Ok(true)
}

/// Brings the stored module settings (tsconfig, go.mod) up to date; when the
/// TypeScript ones changed, marks every JavaScript/TypeScript file for re-resolution,
/// when the Go modules changed every Go file, in the same transaction.
fn refresh_configs(
    conn: &mut Connection,
    files: &[walk::Found],
) -> rusqlite::Result<module_configs::Refreshed> {
    let tx = conn.transaction()?;
    let refreshed = module_configs::refresh(&tx, files)?;
    let mut langs = Vec::new();
    if refreshed.ts_changed {
        langs.extend([Lang::JavaScript, Lang::TypeScript, Lang::Tsx]);
    }
    if refreshed.go_changed {
        langs.push(Lang::Go);
    }
    for lang in langs {
        tx.execute(
            "UPDATE files SET resolved = 0 WHERE resolved = 1 AND lang = ?1",
            [lang.name()],
        )?;
    }
    tx.commit()?;
    Ok(refreshed)
}

/// Runs `work` on the run's thread pool (or here if it could not be built).
fn on_pool<R: Send>(pool: Option<&rayon::ThreadPool>, work: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// Most definitions for which resolution loads one symbol table of every name (about
/// 300 bytes each): a larger tree loads each chunk's names only, so resolution's memory
/// does not grow with the tree (a 1.6 M-definition tree: +3 % time, -0.4 GB peak).
const WHOLE_TABLE_MAX_SYMBOLS: i64 = 250_000;

/// Reads the stale files' facts back from the index and resolves them, in chunks;
/// returns the files whose resolution was stopped.
fn resolve_from_index(
    conn: &mut Connection,
    stale: &[i64],
    fresh: bool,
    budget: FileBudget,
    pool: Option<&rayon::ThreadPool>,
) -> rusqlite::Result<Vec<(i64, Skipped)>> {
    let mut stopped = Vec::new();
    let total_files: i64 = conn.query_row("SELECT count(*) FROM files", [], |r| r.get(0))?;
    let symbols: i64 = conn.query_row(
        "SELECT coalesce(sum(n), 0) FROM file_counts WHERE what = 'symbol_kind'",
        [],
        |r| r.get(0),
    )?;
    // One table of every name saves loading names chunk by chunk, but its memory grows
    // with the tree: past WHOLE_TABLE_MAX_SYMBOLS each chunk loads only what it names.
    let all_names = stale.len() as i64 * 4 >= total_files && symbols <= WHOLE_TABLE_MAX_SYMBOLS;
    let whole_table = if all_names {
        Some(resolve::load_table(conn, None)?)
    } else {
        None
    };
    for chunk in stale.chunks(4 * BATCH_FILES) {
        let inputs = resolve::load_inputs(conn, chunk)?;
        let partial;
        let table = match &whole_table {
            Some(table) => table,
            None => {
                partial = resolve::load_table(conn, Some(&resolve::needed_names(&inputs)))?;
                &partial
            }
        };
        let resolved = on_pool(pool, || resolve::resolve_all(table, &inputs, budget));
        resolve::write_edges(conn, &resolved, fresh)?;
        stopped.extend(stopped_resolutions(conn, &resolved)?);
        drop(resolved);
        drop(inputs);
        freed_memory::release();
    }
    Ok(stopped)
}

/// Every indexed file's fingerprint, by its exact path, and whether its facts came from
/// older extractor rules.
pub(crate) fn load_stored(conn: &Connection) -> rusqlite::Result<HashMap<RelPath, StoredFile>> {
    let mut stmt = conn.prepare(
        "SELECT id, path_bytes, size, mtime_ns, inode, hash, lang, extractor FROM files",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            RelPath::from_bytes(r.get::<_, Vec<u8>>(1)?),
            StoredFile {
                id: r.get(0)?,
                stat: Stat {
                    size: r.get::<_, i64>(2)? as u64,
                    mtime_ns: r.get(3)?,
                    inode: r.get::<_, i64>(4)? as u64,
                },
                hash: r.get(5)?,
                outdated: crate::extract::is_outdated(&r.get::<_, String>(6)?, r.get(7)?),
            },
        ))
    })?;
    rows.collect()
}

/// Whether a file could be source by its name: a known extension, or no extension
/// (then its shebang decides).
pub(crate) fn could_be_source(path: &Path) -> bool {
    match path.extension() {
        Some(_) => Lang::detect(path, &[]).is_some(),
        None => true,
    }
}

/// The language an index run parses a walked file as: by its name, else by its shebang;
/// `None` for a file that is not source.
pub(crate) fn source_lang(path: &Path) -> Option<Lang> {
    Lang::detect(path, &[]).or_else(|| sniff_shebang(path))
}

/// Every file an index run of `root` would consider, with the language it would parse
/// it as: the same walk, ignore files and language rules (files too large or binary are
/// only found out by reading them). For tools that must see what the indexer sees, such
/// as the bench's tree-sitter-alone baseline.
pub fn source_files(root: &Path) -> Vec<(PathBuf, Lang)> {
    let walked = walk::walk(root, rayon::current_num_threads().max(1), &could_be_source);
    walked
        .files
        .into_iter()
        .filter_map(|found| source_lang(&found.abs).map(|lang| (found.abs, lang)))
        .collect()
}

fn sniff_shebang(path: &Path) -> Option<Lang> {
    use std::io::Read;
    let mut head = [0u8; 128];
    let mut file = std::fs::File::open(path).ok()?;
    let n = file.read(&mut head).ok()?;
    Lang::detect(Path::new(""), &head[..n])
}

/// Reads a `meta` value.
pub fn meta_get(conn: &Connection, key: MetaKey) -> rusqlite::Result<Option<String>> {
    // Cached: every read of a served workspace asks for its state.
    conn.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([key.name()], |r| r.get(0))
        .optional()
}

pub(crate) fn meta_set(conn: &Connection, key: MetaKey, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
        params![key.name(), value],
    )?;
    Ok(())
}

/// What every report of a run says about where it ran and since when.
struct RunPlace<'a> {
    root: &'a Path,
    index_path: &'a Path,
    started: Instant,
    /// The run takes the first-index path.
    first_index: bool,
    /// It does so because an interrupted first index was discarded.
    restarted: bool,
}

fn finish_report(
    conn: &Connection,
    place: &RunPlace<'_>,
    mut skipped: Vec<Skipped>,
    lossy: Vec<String>,
    counts: Counts,
    wrote: bool,
) -> rusqlite::Result<IndexReport> {
    let RunPlace {
        root,
        index_path,
        started,
        first_index,
        restarted,
    } = *place;
    let count = |sql: &str| {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
    };
    skipped.sort();
    skipped.dedup();
    let mut by_reason = BTreeMap::new();
    for s in &skipped {
        *by_reason.entry(s.reason.name().to_string()).or_insert(0) += 1;
    }
    Ok(IndexReport {
        workspace: root.to_string_lossy().into_owned(),
        index_path: index_path.to_string_lossy().into_owned(),
        files_indexed: count("SELECT count(*) FROM files")?,
        files_parsed: counts.parsed,
        files_touched: counts.touched,
        files_unchanged: counts.unchanged,
        files_removed: counts.removed,
        files_skipped: skipped.len() as u64,
        skipped_by_reason: by_reason,
        skipped,
        lossy_files: lossy,
        files_resolved: counts.resolved,
        // From the per-file counts, written with the rows they count: counting the
        // tables themselves reads every page of `edges` (its one index is partial).
        symbols: count("SELECT coalesce(sum(n), 0) FROM file_counts WHERE what = 'symbol_kind'")?,
        edges: count("SELECT coalesce(sum(n), 0) FROM file_counts WHERE what = 'edge_kind'")?,
        wrote,
        first_index,
        restarted_first_index: restarted,
        elapsed_ms: started.elapsed().as_millis() as u64,
    })
}
