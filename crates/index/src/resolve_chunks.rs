//! Resolution of a run that reads its inputs back from the index: in chunks whose
//! memory follows the chunk, not the tree.
//!
//! A chunk is at most [`Chunking::max_files`] files holding at most
//! [`Chunking::max_refs`] references. The files, paths and module graphs resolution
//! looks through are loaded once per run; the definitions once too on a small tree,
//! else per chunk, only those the chunk's names lead to ([`resolve::load_symbols`]),
//! and then at most [`Chunking::max_symbols`] of them unless the chunk is one file.

use rusqlite::Connection;

use crate::budget::FileBudget;
use crate::freed_memory;
use crate::resolve;
use crate::walk::Skipped;

/// How a run reading from the index splits its files into chunks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunking {
    /// Most definitions for which one table of every name is loaded for the whole run
    /// (about 300 bytes each): past it each chunk loads the names it mentions.
    pub whole_table_max_symbols: i64,
    /// Most files in one chunk.
    pub max_files: usize,
    /// Most references in one chunk (about 150 bytes each as inputs, and their edges):
    /// a chunk of large files takes no more memory than one of small files.
    pub max_refs: usize,
    /// Most definitions one chunk loads (about 190 bytes each) when a chunk loads the
    /// names it mentions: past it the chunk holds fewer files. Without it a chunk's
    /// table grows with the tree, since popular names (`new`, `get`) gain definitions.
    pub max_symbols: usize,
}

impl Chunking {
    /// The chunks every run uses (a 1.6 M-definition tree loading names per chunk: +3 %
    /// time, -0.4 GB peak against one whole table).
    pub(crate) const DEFAULT: Chunking = Chunking {
        whole_table_max_symbols: 250_000,
        max_files: 4000,
        max_refs: 250_000,
        max_symbols: 500_000,
    };
}

/// Reads the stale files' facts back from the index and resolves them, in chunks;
/// returns the files whose resolution was stopped.
pub(crate) fn resolve_from_index(
    conn: &mut Connection,
    stale: &[i64],
    fresh: bool,
    budget: FileBudget,
    pool: Option<&rayon::ThreadPool>,
    chunking: Chunking,
) -> rusqlite::Result<Vec<(i64, Skipped)>> {
    let mut stopped = Vec::new();
    let total_files: i64 = conn.query_row("SELECT count(*) FROM files", [], |r| r.get(0))?;
    let symbols: i64 = conn.query_row(
        "SELECT coalesce(sum(n), 0) FROM file_counts WHERE what = 'symbol_kind'",
        [],
        |r| r.get(0),
    )?;
    // One table of every name saves loading names chunk by chunk, but its memory grows
    // with the tree.
    let all_names =
        stale.len() as i64 * 4 >= total_files && symbols <= chunking.whole_table_max_symbols;
    let before = crate::resident::resident_mib();
    let mut table = resolve::load_table(conn, (!all_names).then_some(&[]))?;
    tracing::debug!(
        before_mib = before,
        rss_mib = crate::resident::resident_mib(),
        "resolution table loaded"
    );
    let mut rest = stale;
    let mut files_at_once = chunking.max_files;
    while !rest.is_empty() {
        let chunk = &rest[..rest.len().min(files_at_once)];
        let mut inputs = resolve::load_inputs(conn, chunk, chunking.max_refs)?;
        let loading = std::time::Instant::now();
        let mut loaded = resolve::Loaded::default();
        if !all_names {
            (files_at_once, loaded) = load_within_budget(conn, &mut table, &mut inputs, chunking)?;
        }
        rest = &rest[inputs.len()..];
        let load_ms = loading.elapsed().as_millis() as u64;
        let loaded_rss = crate::resident::resident_mib();
        let resolved = on_pool(pool, || resolve::resolve_all(&table, &inputs, budget));
        resolve::write_edges(conn, &resolved, fresh)?;
        tracing::debug!(
            files = inputs.len(),
            symbols = table.symbol_count(),
            left = rest.len(),
            load_ms,
            read = loaded.read,
            kept = loaded.kept,
            loaded_rss,
            rss_mib = crate::resident::resident_mib(),
            "resolved a chunk"
        );
        stopped.extend(stopped_resolutions(conn, &resolved)?);
        drop(resolved);
        drop(inputs);
        freed_memory::release();
    }
    Ok(stopped)
}

/// Loads the definitions `inputs` lead to into `table`, dropping files from the end of
/// `inputs` (halving them) while those are more than [`Chunking::max_symbols`]: in a
/// large tree a thousand files' names lead to most of its definitions. A single file
/// loads all of its own, whatever their number. Returns how many files the next chunk
/// should try (twice what fitted, so that the chunks grow back after a crowded stretch),
/// and what its loads did, summed over its tries.
fn load_within_budget(
    conn: &Connection,
    table: &mut resolve::SymbolTable,
    inputs: &mut Vec<resolve::FileInputs>,
    chunking: Chunking,
) -> rusqlite::Result<(usize, resolve::Loaded)> {
    let tried = inputs.len();
    let mut total = resolve::Loaded::default();
    loop {
        let budget = if inputs.len() > 1 {
            chunking.max_symbols
        } else {
            usize::MAX
        };
        let loaded = resolve::load_symbols(conn, table, &resolve::Needed::of(inputs), budget)?;
        total.read += loaded.read;
        total.kept += loaded.kept;
        if loaded.fits {
            break;
        }
        inputs.truncate(inputs.len().div_ceil(2));
    }
    let fitted = inputs.len();
    let next = if fitted == tried {
        chunking.max_files
    } else {
        (fitted * 2).min(chunking.max_files)
    };
    Ok((next, total))
}

/// The files whose resolution was stopped, by id and path.
pub(crate) fn stopped_resolutions(
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

/// Runs `work` on the run's thread pool (or here if it could not be built).
pub(crate) fn on_pool<R: Send>(
    pool: Option<&rayon::ThreadPool>,
    work: impl FnOnce() -> R + Send,
) -> R {
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Every edge (by paths and qualified names, so that rows read in a failure) and
    /// every file's unresolved count, sorted.
    fn resolution(conn: &Connection) -> Vec<String> {
        let mut stmt = conn
            .prepare(
                "SELECT sf.path, e.kind, coalesce(ss.qualified_name, ''), e.line,
                        coalesce(df.path, ''), coalesce(ds.qualified_name, ''), e.confidence
                 FROM edges e JOIN files sf ON sf.id = e.src_file
                 LEFT JOIN symbols ss ON ss.id = e.src_symbol
                 LEFT JOIN files df ON df.id = e.dst_file
                 LEFT JOIN symbols ds ON ds.id = e.dst_symbol
                 UNION ALL
                 SELECT path, 'unresolved', unresolved_refs, 0, '', '', '' FROM files",
            )
            .unwrap();
        let mut out: Vec<String> = stmt
            .query_map([], |r| {
                Ok(format!(
                    "{}:{} {} {} -> {} {} ({})",
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, rusqlite::types::Value>(2)
                        .map(|v| format!("{v:?}"))?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                ))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        out.sort();
        out
    }

    /// Fails with the rows only one side has (a few of them).
    fn assert_same(got: &[String], expected: &[String], how: &str) {
        let only_got: Vec<&String> = got
            .iter()
            .filter(|r| !expected.contains(r))
            .take(8)
            .collect();
        let missing: Vec<&String> = expected
            .iter()
            .filter(|r| !got.contains(r))
            .take(8)
            .collect();
        assert!(
            only_got.is_empty() && missing.is_empty() && got.len() == expected.len(),
            "{how}: {} rows against {}; only here: {only_got:?}; missing: {missing:?}",
            got.len(),
            expected.len()
        );
    }

    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_tree(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }

    /// Re-resolves every file from the index with `chunking`.
    fn re_resolve(conn: &mut Connection, chunking: Chunking) {
        conn.execute("UPDATE files SET resolved = 0", []).unwrap();
        let stale = resolve::stale_files(conn).unwrap();
        resolve_from_index(conn, &stale, false, FileBudget::default(), None, chunking).unwrap();
    }

    /// The three ways a run resolves (from the facts a first index gathered, from one
    /// table of every name, and in chunks of a few files each loading its own names)
    /// link the same edges on real code in every language of the fixtures.
    /// loci's index sources, every fixture, and shapes found on real code.
    fn real_tree(root: &Path) {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        copy_tree(&manifest.join("src"), &root.join("index_src"));
        copy_tree(&manifest.join("tests/fixtures"), &root.join("fixtures"));

        // Found on real code (syn's tests beside boost's headers): `&Self` in an impl for
        // `[T]` is an empty receiver type, and a macro-made typedef an empty-named type.
        let shapes = root.join("shapes");
        std::fs::create_dir_all(&shapes).unwrap();
        let files = [
            (
                "eq.rs",
                "pub trait Same { fn same(&self, other: &Self) -> bool; }\n\
                 impl<T: Same> Same for [T] {\n\
                 fn same(&self, other: &Self) -> bool { self.len() == other.len() }\n}\n",
            ),
            ("len.rs", "pub fn len() -> usize { 0 }\n"),
            (
                "more.rs",
                "pub struct B;\nimpl B { pub fn len(&self) -> usize { 1 } }\n",
            ),
            ("tag.hpp", "struct tag {\n  typedef MACRO_tester;\n};\n"),
            // A static field of another type's (`Registries.DEFAULT`): its declared type
            // decides between same-named methods, loaded only through the field.
            (
                "Registry.java",
                "package shapes;\npublic class Registry { public int lookup(String k) { return 0; } }\n",
            ),
            (
                "Cache.java",
                "package shapes;\npublic class Cache { public int lookup(String k) { return 1; } }\n",
            ),
            (
                "Registries.java",
                "package shapes;\npublic class Registries { public static final Registry DEFAULT = null; }\n",
            ),
            (
                "Use.java",
                "package shapes;\npublic class Use { int f(String k) { return Registries.DEFAULT.lookup(k); } }\n",
            ),
        ];
        for (name, text) in files {
            std::fs::write(shapes.join(name), text).unwrap();
        }
    }

    /// [`real_tree`] in a temporary directory, indexed, and its index opened.
    fn indexed_real_tree() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        real_tree(dir.path());
        crate::index_workspace(
            &crate::IndexOptions::new(dir.path()),
            &crate::progress::NoProgress,
        )
        .unwrap();
        let conn = loci_store::open_index(&loci_store::index_path_for(dir.path())).unwrap();
        (dir, conn)
    }

    /// Every file's id, in order.
    fn file_ids(conn: &Connection) -> Vec<i64> {
        conn.prepare("SELECT id FROM files ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn chunked_resolution_links_what_one_table_links() {
        let (_dir, mut conn) = indexed_real_tree();
        let gathered = resolution(&conn);
        assert!(
            gathered.len() > 1000,
            "too few edges to compare: {}",
            gathered.len()
        );

        re_resolve(&mut conn, Chunking::DEFAULT);
        assert_same(&resolution(&conn), &gathered, "one table of every name");

        // One file per chunk: the strictest test of the names a chunk loads.
        let tiny = Chunking {
            whole_table_max_symbols: 0,
            max_files: 1,
            max_refs: 1,
            max_symbols: 1,
        };
        re_resolve(&mut conn, tiny);
        assert_same(
            &resolution(&conn),
            &gathered,
            "chunks loading their own names",
        );

        // Chunks cut down by their definitions, not by files or references.
        let few_definitions = Chunking {
            whole_table_max_symbols: 0,
            max_files: 4000,
            max_refs: usize::MAX,
            max_symbols: 200,
        };
        re_resolve(&mut conn, few_definitions);
        assert_same(
            &resolution(&conn),
            &gathered,
            "chunks within a definition budget",
        );
    }

    /// A chunk whose names lead to more definitions than the budget holds fewer files,
    /// each kept chunk within the budget unless it is one file; the next chunk tries
    /// twice as many files as fitted.
    #[test]
    fn a_chunk_past_its_definition_budget_holds_fewer_files() {
        let (_dir, conn) = indexed_real_tree();
        let files = file_ids(&conn);
        let chunking = Chunking {
            whole_table_max_symbols: 0,
            max_files: 4000,
            max_refs: usize::MAX,
            max_symbols: 300,
        };
        let mut table = resolve::load_table(&conn, Some(&[])).unwrap();
        let mut inputs = resolve::load_inputs(&conn, &files, usize::MAX).unwrap();
        let all = inputs.len();
        assert!(all > 100, "{all} files");
        let (next, _) = load_within_budget(&conn, &mut table, &mut inputs, chunking).unwrap();
        assert!(inputs.len() < all, "{} of {all} files kept", inputs.len());
        assert!(
            table.symbol_count() <= 300 || inputs.len() == 1,
            "{} definitions for {} files",
            table.symbol_count(),
            inputs.len()
        );
        assert_eq!(next, inputs.len() * 2);
        // Within the budget nothing is dropped and the next chunk may be whole.
        let mut inputs = resolve::load_inputs(&conn, &files[..1], usize::MAX).unwrap();
        let roomy = Chunking {
            max_symbols: usize::MAX,
            ..chunking
        };
        assert_eq!(
            load_within_budget(&conn, &mut table, &mut inputs, roomy)
                .unwrap()
                .0,
            4000
        );
        assert_eq!(inputs.len(), 1);
    }

    /// A chunk keeps the definitions of the names it shares with the previous chunk
    /// instead of reading them again, and holds every definition a load from nothing
    /// holds, in the same order; within its budget it keeps the previous chunk's other
    /// names too, and drops them first when it needs the room.
    #[test]
    fn a_chunk_keeps_the_shared_names_of_the_previous_chunk() {
        let (_dir, conn) = indexed_real_tree();
        let files = file_ids(&conn);
        let half = files.len() / 2;
        let first = resolve::load_inputs(&conn, &files[..half], usize::MAX).unwrap();
        let second = resolve::load_inputs(&conn, &files[half / 2..], usize::MAX).unwrap();
        let names = |inputs| resolve::Needed::of(inputs);
        let load = |table: &mut resolve::SymbolTable, inputs, max| {
            resolve::load_symbols(&conn, table, &names(inputs), max).unwrap()
        };

        let mut table = resolve::load_table(&conn, Some(&[])).unwrap();
        let once = load(&mut table, &first, usize::MAX);
        assert!(once.fits && once.read > 100 && once.kept == 0, "{once:?}");
        // The same names again: nothing is read.
        let again = load(&mut table, &first, usize::MAX);
        assert_eq!((again.read, again.kept), (0, once.read));

        // What a load of the second files' names from nothing holds.
        let mut fresh = resolve::load_table(&conn, Some(&[])).unwrap();
        let alone = load(&mut fresh, &second, usize::MAX);
        let expected = fresh.symbol_ids();

        // Overlapping names: the shared ones are kept, the rest read; with room to
        // spare the first files' other names stay too.
        let next = load(&mut table, &second, usize::MAX);
        assert!(next.kept > 0 && next.read > 0, "{next:?}");
        assert_eq!(alone.read, next.read + next.kept);
        let held = table.symbol_ids();
        for (name, ids) in &expected {
            assert_eq!(held.get(name), Some(ids), "{name}");
        }
        assert!(held.len() > expected.len());

        // Without room to spare, the names the second files do not need go first: the
        // table is exactly what a load from nothing makes.
        let mut table = resolve::load_table(&conn, Some(&[])).unwrap();
        load(&mut table, &first, usize::MAX);
        let tight = load(&mut table, &second, alone.read);
        assert!(tight.fits && tight.kept > 0, "{tight:?}");
        assert_eq!(table.symbol_ids(), expected);
    }

    /// A first index past its in-memory fact buffer (a tree too large to resolve from
    /// what it gathered) closes the side-built search index before resolving in chunks:
    /// it links what a first index resolving in memory links, and its search index is
    /// installed and answers.
    #[test]
    fn a_first_index_past_its_fact_buffer_links_and_searches_the_same() {
        let in_memory = tempfile::tempdir().unwrap();
        let from_index = tempfile::tempdir().unwrap();
        for dir in [&in_memory, &from_index] {
            real_tree(dir.path());
        }
        crate::index_workspace(
            &crate::IndexOptions::new(in_memory.path()),
            &crate::progress::NoProgress,
        )
        .unwrap();
        let mut opts = crate::IndexOptions::new(from_index.path());
        opts.gather_max_rows = 100;
        let report = crate::index_workspace(&opts, &crate::progress::NoProgress).unwrap();
        assert!(report.files_parsed > 100, "{report:?}");

        let open = |dir: &Path| loci_store::open_index(&loci_store::index_path_for(dir)).unwrap();
        let (expected, got) = (open(in_memory.path()), open(from_index.path()));
        assert!(resolution(&expected).len() > 1000);
        assert_same(
            &resolution(&got),
            &resolution(&expected),
            "resolved from the index",
        );
        assert!(!loci_store::search_index::is_pending(&got).unwrap());
        // The same hits from both search indexes (a few terms, each found somewhere).
        let hits = |dir: &Path, pattern: &str| {
            let graph = crate::graph::Graph::open(dir).unwrap();
            let options = crate::graph::SearchOptions::default();
            let (hits, _) = crate::graph::search(&graph, pattern, &options).unwrap();
            hits
        };
        for pattern in ["MACRO_tester", "fn load_symbols", "class"] {
            let expected = hits(in_memory.path(), pattern);
            assert!(!expected.is_empty(), "{pattern}");
            assert_eq!(hits(from_index.path(), pattern), expected, "{pattern}");
        }
    }
}
