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

use rusqlite::Connection;
use serde::Serialize;

use crate::budget::FileBudget;
use crate::checkout::{self, Checkout};
use crate::crates;
use crate::first_index;
use crate::freed_memory;
use crate::lock::{WriteLock, WriteWork};
use crate::meta::{meta_get, meta_set};
use crate::module_configs;
use crate::parse::{FileLimits, Outcome};
use crate::parse_pool::{self, ParseJob};
use crate::progress::Progress;
use crate::resolve_chunks::{Chunking, on_pool, resolve_from_index, stopped_resolutions};
use crate::root::{IndexError, sqlite, workspace_root};
use crate::run_writer::{Counts, GATHER_MAX_ROWS, Gathered, RunWriter, SearchSink};
use crate::settings::{refresh_configs, refresh_crates, refresh_rules};
use crate::side_search::SideSearch;
use crate::skip_record::{RunSkips, SkipRecord};
use crate::sources::{could_be_source, source_lang};
use crate::trigram::TermsBuilder;
use crate::walk::{self, RelPath, Skipped, Stat};
use crate::write::StoredFile;
use crate::{IndexState, MetaKey, resolve};
use loci_store::search_index;

/// Default for `index.maxFileBytes`.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

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
    /// What the write lock record says this run is.
    pub purpose: WriteWork,
    /// The time one file's parse, extraction and resolution may take
    /// (`index.fileBudgetMs`); past it the file is skipped as `timeout`.
    pub file_budget: FileBudget,
    /// Most facts a first index keeps in memory to resolve without reading them back;
    /// a larger tree resolves from the index in chunks. Lowered by tests to take the
    /// large-tree path on a small tree.
    pub(crate) gather_max_rows: usize,
}

impl IndexOptions {
    /// Defaults for indexing `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        IndexOptions {
            root: root.into(),
            index_path: None,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            threads: 0,
            purpose: WriteWork::Index,
            file_budget: FileBudget::default(),
            gather_max_rows: GATHER_MAX_ROWS,
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

/// Builds or updates the index of `opts.root`. Takes the workspace's write lock for the
/// run. The phases, in order: open (and start over what cannot be finished), plan
/// (walk and diff), refresh the stored settings, parse and write, resolve, finish.
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
    let _lock = WriteLock::try_acquire(&index_dir, opts.purpose)?;
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

    let restarted =
        start_over_what_cannot_be_finished(&mut conn, &index_dir, started).map_err(&err)?;
    // Before the walk: a checkout that moves `HEAD` during the run also changes files,
    // which the next run then reads under the commit it records.
    let checkout = checkout::observe(&root);
    let stored = load_stored(&conn).map_err(&err)?;
    let before = SkipRecord::load(&conn).map_err(&err)?;
    let mut plan = plan(&root, threads, opts, &stored, &before, started);
    let incomplete =
        IndexState::from_stored(meta_get(&conn, MetaKey::State).map_err(&err)?.as_deref())
            != IndexState::Complete;
    // Crate names first: a changed map makes every Rust file's edges stale, recorded
    // with the map in one transaction.
    let crates = refresh_crates(&mut conn, &plan.manifests).map_err(&err)?;
    let configs = refresh_configs(&mut conn, &plan.configs).map_err(&err)?;
    let rules_wrote = refresh_rules(&mut conn).map_err(&err)?;
    let stale = resolve::stale_files(&conn).map_err(&err)?;
    let settings_wrote = crates.wrote || configs.wrote || rules_wrote;

    if plan.to_read.is_empty() && plan.removed.is_empty() && stale.is_empty() && !incomplete {
        let mut skipped = std::mem::take(&mut plan.skipped);
        let wrote = record_skips(&conn, &plan.walked, &mut skipped, &[], &[], &before)
            .map_err(&err)?
            || checkout::record(&conn, checkout.as_ref()).map_err(&err)?
            || settings_wrote;
        let counts = Counts {
            unchanged: plan.unchanged,
            ..Counts::default()
        };
        return finish_report(&conn, &place, skipped, Vec::new(), counts, wrote).map_err(&err);
    }

    let fresh = stored.is_empty();
    place.first_index = fresh;
    place.restarted = restarted;
    // Files to read may all turn out to be skipped (too large, binary, unreadable) and
    // not in the index: then the run changes nothing and must write nothing. Unless a
    // write is certain, the run is marked unfinished in the first transaction that
    // changes something.
    let will_write = fresh || incomplete || !plan.removed.is_empty() || !stale.is_empty();
    if will_write {
        meta_set(&conn, MetaKey::State, IndexState::Indexing.name()).map_err(&err)?;
    }
    crate::git_exclude::ensure_excluded(&root);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .ok();
    let written = parse_and_write(
        &mut conn,
        &index_path,
        &mut plan,
        &stored,
        WriteMode { fresh, will_write },
        opts,
        threads,
        progress,
        started,
    )?;
    let Written {
        mut counts,
        lossy,
        gathered,
        mut search,
        marked,
    } = written;
    let mut skipped = std::mem::take(&mut plan.skipped);
    if !marked {
        // Every file read was skipped, and none was in the index: nothing changed but,
        // perhaps, which files were skipped.
        let wrote = record_skips(&conn, &plan.walked, &mut skipped, &[], &[], &before)
            .map_err(&err)?
            || checkout::record(&conn, checkout.as_ref()).map_err(&err)?
            || crates.wrote
            || configs.wrote;
        return finish_report(&conn, &place, skipped, lossy, counts, wrote).map_err(&err);
    }
    if let SearchSink::Side(side) = &mut search {
        side.all_sent();
    }
    // A tree too large to resolve from the gathered facts resolves from the index in
    // chunks: the side build closes first, so its caches and a chunk's table never
    // peak together (about 0.15 GB on a 13 M-line tree, for a few seconds' wait).
    if gathered.is_none()
        && let SearchSink::Side(side) = search
    {
        search = SearchSink::SideBuilt(side.finish().map_err(&err)?);
    }
    freed_memory::release();
    tracing::info!(
        parsed = counts.parsed,
        ms = started.elapsed().as_millis() as u64,
        "parsed and written"
    );

    let (stale, unresolved) = resolve_stale(
        &mut conn,
        gathered,
        crates.map,
        configs.configs,
        fresh,
        opts.file_budget,
        pool.as_ref(),
        started,
    )
    .map_err(&err)?;
    counts.resolved = stale.len() as u64;
    complete(&mut conn, search, checkout.as_ref(), started).map_err(&err)?;
    record_skips(
        &conn,
        &plan.walked,
        &mut skipped,
        &unresolved,
        &stale,
        &before,
    )
    .map_err(&err)?;
    finish_report(&conn, &place, skipped, lossy, counts, true).map_err(&err)
}

/// An interrupted first index has nothing worth finishing incrementally: it starts
/// over as a first index (`first_index.rs`); whether it did. A first index whose
/// side-built search index was never installed re-indexes every file (a crash left no
/// way to know which files' terms it had).
fn start_over_what_cannot_be_finished(
    conn: &mut Connection,
    index_dir: &Path,
    started: Instant,
) -> rusqlite::Result<bool> {
    let restarted = first_index::is_interrupted_first_index(conn)?;
    if restarted {
        first_index::discard(conn)?;
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            "an interrupted first index starts over"
        );
    }
    if search_index::is_pending(conn)? {
        let _ = std::fs::remove_file(SideSearch::path_in(index_dir));
        search_index::reset_for_reindex(conn)?;
    }
    Ok(restarted)
}

/// What a run will do, from the walk and the stored fingerprints.
struct Plan {
    /// Every source file walked.
    walked: Vec<walk::Found>,
    /// The `Cargo.toml` files walked.
    manifests: Vec<walk::Found>,
    /// The `tsconfig.json`/`jsconfig.json`/`go.mod` files walked.
    configs: Vec<walk::Found>,
    /// Files skipped so far (by the walk, or refused by an earlier parse).
    skipped: Vec<Skipped>,
    /// Files to read: new, changed by stat, or extracted by older rules.
    to_read: Vec<ParseJob>,
    /// Files unchanged by stat.
    unchanged: u64,
    /// Ids of indexed files that are gone.
    removed: Vec<i64>,
}

/// Walks the tree and diffs it against the stored fingerprints.
fn plan(
    root: &Path,
    threads: usize,
    opts: &IndexOptions,
    stored: &HashMap<RelPath, StoredFile>,
    before: &SkipRecord,
    started: Instant,
) -> Plan {
    let mut walked = walk::walk(root, threads, &|p: &Path| {
        could_be_source(p) || crates::is_manifest(p) || module_configs::is_config(p)
    });
    let (settings, sources): (Vec<_>, Vec<_>) = std::mem::take(&mut walked.files)
        .into_iter()
        .partition(|f| crates::is_manifest(&f.abs) || module_configs::is_config(&f.abs));
    let (configs, manifests): (Vec<_>, Vec<_>) = settings
        .into_iter()
        .partition(|f| module_configs::is_config(&f.abs));
    tracing::info!(
        files = sources.len(),
        ms = started.elapsed().as_millis() as u64,
        "walked"
    );
    let mut skipped = walked.skipped;
    let mut to_read = Vec::new();
    let mut unchanged = 0u64;
    let refusals = before.parse_refusals();
    let mut seen: HashSet<&RelPath> = HashSet::with_capacity(sources.len());
    for found in &sources {
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
    Plan {
        walked: sources,
        manifests,
        configs,
        skipped,
        to_read,
        unchanged,
        removed,
    }
}

/// How the writer applies a run.
#[derive(Clone, Copy)]
struct WriteMode {
    /// A first index: bulk load (fact indexes dropped), resolution inputs gathered,
    /// search index built on the side.
    fresh: bool,
    /// The run is marked unfinished before its first write (it will surely write).
    will_write: bool,
}

/// What the parse-and-write phase leaves for the rest of the run.
struct Written {
    counts: Counts,
    lossy: Vec<String>,
    gathered: Option<Gathered>,
    search: SearchSink,
    /// Whether `meta.state` says the run is unfinished: false when nothing was written.
    marked: bool,
}

/// Parses `plan.to_read` on all cores and writes each file through this thread (the
/// parse pool's outcomes, in transactions of `BATCH_FILES`), then removes
/// `plan.removed`. The files skipped on the way join `plan.skipped`.
#[allow(clippy::too_many_arguments)]
fn parse_and_write(
    conn: &mut Connection,
    index_path: &Path,
    plan: &mut Plan,
    stored: &HashMap<RelPath, StoredFile>,
    mode: WriteMode,
    opts: &IndexOptions,
    threads: usize,
    progress: &dyn Progress,
    started: Instant,
) -> Result<Written, IndexError> {
    let err = sqlite(index_path);
    let index_dir = index_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    if mode.fresh {
        loci_store::drop_fact_indexes(conn).map_err(&err)?;
    } else {
        loci_store::create_fact_indexes(conn).map_err(&err)?;
    }
    let mut counts = Counts {
        unchanged: plan.unchanged,
        removed: plan.removed.len() as u64,
        ..Counts::default()
    };
    let mut lossy = Vec::new();
    let mut gathered = mode
        .fresh
        .then(|| Gathered::with_max_rows(opts.gather_max_rows));
    let mut search = match mode.fresh.then(|| SideSearch::start(&index_dir)).flatten() {
        Some(side) => {
            search_index::mark_pending(conn).map_err(&err)?;
            SearchSink::Side(side)
        }
        None => SearchSink::Inline(TermsBuilder::default()),
    };
    progress.start(plan.to_read.len() as u64);
    let limits = FileLimits {
        max_bytes: opts.max_file_bytes,
        budget: opts.file_budget,
    };
    let (tx, rx) = crossbeam_channel::bounded::<Outcome>(256);
    let jobs = std::mem::take(&mut plan.to_read);
    let removed = &plan.removed;
    let skipped = &mut plan.skipped;
    let marked = std::thread::scope(|scope| {
        scope.spawn(move || {
            parse_pool::parse_all(jobs, threads, limits, &tx);
            tracing::info!(ms = started.elapsed().as_millis() as u64, "parsing done");
        });
        let mut writer = RunWriter {
            stored,
            fresh: mode.fresh,
            marked: mode.will_write,
            counts: &mut counts,
            skipped,
            lossy: &mut lossy,
            gathered: &mut gathered,
            search: &mut search,
        };
        let writing = writer.write_all(conn, rx, removed, progress)?;
        tracing::info!(
            ms = writing.as_millis() as u64,
            "time in the writer's transactions"
        );
        Ok(writer.marked)
    });
    progress.finish();
    let marked = marked.map_err(&err)?;
    Ok(Written {
        counts,
        lossy,
        gathered,
        search,
        marked,
    })
}

/// A file whose resolution was stopped: its id, and why, as a skipped file.
type StoppedResolution = (i64, Skipped);

/// Resolves every stale file: a first index from the facts it gathered in memory (on
/// the pool, while this thread builds the fact indexes), any other run from the
/// index. Returns the stale files' ids and the files whose resolution was stopped.
#[allow(clippy::too_many_arguments)]
fn resolve_stale(
    conn: &mut Connection,
    gathered: Option<Gathered>,
    crates: crate::crates::CrateMap,
    configs: module_configs::ModuleConfigs,
    fresh: bool,
    budget: FileBudget,
    pool: Option<&rayon::ThreadPool>,
    started: Instant,
) -> rusqlite::Result<(Vec<i64>, Vec<StoppedResolution>)> {
    // A fresh index has no edges yet: no deletes are needed, and the edge indexes are
    // built once at the end.
    if fresh {
        loci_store::drop_edge_indexes(conn)?;
    } else {
        loci_store::create_edge_indexes(conn)?;
    }
    let stale = resolve::stale_files(conn)?;
    let unresolved = match gathered.filter(|g| g.inputs.len() == stale.len()) {
        Some(gathered) => {
            let Gathered {
                mut table, inputs, ..
            } = gathered;
            table.set_crates(crates);
            table.set_module_configs(configs);
            let (resolved, indexed) = std::thread::scope(|scope| {
                let resolving = scope.spawn(|| {
                    let table = table.build();
                    on_pool(pool, || resolve::resolve_all(&table, &inputs, budget))
                });
                let indexed = loci_store::create_fact_indexes(conn);
                let resolved = resolving
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (resolved, indexed)
            });
            indexed?;
            tracing::info!(
                ms = started.elapsed().as_millis() as u64,
                "resolved in memory"
            );
            // Freeing a million facts takes a while: on the other core, beside the writes.
            std::thread::scope(|scope| {
                scope.spawn(move || drop(inputs));
                resolve::write_edges(conn, &resolved, true)
            })?;
            stopped_resolutions(conn, &resolved)?
        }
        None => {
            // Rebuilt after a bulk load; on any other run this only re-creates what a
            // killed bulk load left missing.
            loci_store::create_fact_indexes(conn)?;
            resolve_from_index(conn, &stale, fresh, budget, pool, Chunking::DEFAULT)?
        }
    };
    tracing::info!(ms = started.elapsed().as_millis() as u64, "edges written");
    Ok((stale, unresolved))
}

/// Builds the edge indexes, installs a side-built search index, records the checkout
/// the run saw, and marks the run complete.
fn complete(
    conn: &mut Connection,
    search: SearchSink,
    checkout: Option<&Checkout>,
    started: Instant,
) -> rusqlite::Result<()> {
    loci_store::create_edge_indexes(conn)?;
    let built = match search {
        SearchSink::Side(side) => Some(side.finish()?),
        SearchSink::SideBuilt(built) => Some(built),
        SearchSink::Inline(_) => None,
    };
    if let Some(built) = built {
        search_index::install(conn, &built)?;
    }
    tracing::info!(ms = started.elapsed().as_millis() as u64, "resolved");
    // Before the state: an index marked complete names the commit it reflects.
    checkout::record(conn, checkout)?;
    meta_set(conn, MetaKey::State, IndexState::Complete.name())?;
    // Set once a run has completed: a later interrupted run is then unfinished work
    // (drift the next sync resumes), not an incomplete first index.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    meta_set(conn, MetaKey::CompletedAt, &now.to_string())?;
    // Keep the WAL from growing without bound across runs.
    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    Ok(())
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
