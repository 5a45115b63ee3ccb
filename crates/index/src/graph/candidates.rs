//! The definitions an ambiguous selector could mean, told apart and ranked: each with
//! the module it lives in and how many uses the index links to it, most used first, so
//! an agent picks one without another call.

use super::handle::{Candidate, Graph, QueryError, SymbolInfo};
use crate::Lang;
use crate::crates::CrateMap;

/// `found` as candidates: most used first, then by path and line.
pub(super) fn ranked(graph: &Graph, found: Vec<SymbolInfo>) -> Result<Vec<Candidate>, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let crates = if found.iter().any(|s| s.lang == Lang::Rust) {
        crate::crates::load(&graph.conn).map_err(&err)?
    } else {
        CrateMap::default()
    };
    let mut uses = graph
        .conn
        .prepare_cached(
            "SELECT count(*) FROM edges WHERE dst_file = (SELECT file_id FROM symbols WHERE id = ?1)
             AND dst_symbol = ?1 AND kind != 'CONTAINS'",
        )
        .map_err(&err)?;
    let mut out = Vec::with_capacity(found.len());
    for symbol in found {
        let n: i64 = uses.query_row([symbol.id], |r| r.get(0)).map_err(&err)?;
        out.push(Candidate {
            module: module_path(&symbol.path, symbol.lang, &crates),
            uses: n as u64,
            symbol,
        });
    }
    out.sort_by(|a, b| {
        b.uses
            .cmp(&a.uses)
            .then_with(|| a.symbol.path.cmp(&b.symbol.path))
            .then(a.symbol.line.cmp(&b.symbol.line))
    });
    Ok(out)
}

/// The module of the file `path` as its language writes a path to it: a Rust file's
/// crate and module (`tokio::sync::semaphore`, from the crate's directory, leaving out
/// `src`, `lib`, `main` and `mod`), a Python file's dotted module (`pkg.sem`), else the
/// path without its extension (`src/util`).
pub(super) fn module_path(path: &str, lang: Lang, crates: &CrateMap) -> String {
    let stem = path.rsplit_once('.').map_or(path, |(head, _)| head);
    match lang {
        Lang::Rust => {
            let owner = crates.owner_of(stem);
            let (name, inside) = match owner {
                Some(c) if c.dir.is_empty() => (c.name.replace('-', "_"), stem),
                Some(c) => (c.name.replace('-', "_"), &stem[c.dir.len() + 1..]),
                None => ("crate".to_string(), stem),
            };
            let inside = inside.strip_prefix("src/").unwrap_or(inside);
            let mut segments = vec![name];
            segments.extend(
                inside
                    .split('/')
                    .enumerate()
                    .filter(|(i, s)| {
                        let last = *i == inside.split('/').count() - 1;
                        !(last && matches!(*s, "lib" | "main" | "mod"))
                    })
                    .map(|(_, s)| s.to_string()),
            );
            segments.join("::")
        }
        Lang::Python => stem
            .strip_suffix("/__init__")
            .unwrap_or(stem)
            .replace('/', "."),
        _ => stem.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crates::Crate;

    #[test]
    fn a_module_is_written_as_its_language_writes_it() {
        let crates = CrateMap {
            crates: vec![
                Crate {
                    name: "tokio".into(),
                    dir: "tokio".into(),
                    roots: vec![],
                },
                Crate {
                    name: "tokio-util".into(),
                    dir: "tokio-util".into(),
                    roots: vec![],
                },
            ],
        };
        for (path, lang, want) in [
            (
                "tokio/src/sync/semaphore.rs",
                Lang::Rust,
                "tokio::sync::semaphore",
            ),
            ("tokio/src/sync/mod.rs", Lang::Rust, "tokio::sync"),
            ("tokio/src/lib.rs", Lang::Rust, "tokio"),
            (
                "tokio-util/src/codec/mod.rs",
                Lang::Rust,
                "tokio_util::codec",
            ),
            ("tokio/tests/rt.rs", Lang::Rust, "tokio::tests::rt"),
            ("other/src/x.rs", Lang::Rust, "crate::other::src::x"),
            ("pkg/sem.py", Lang::Python, "pkg.sem"),
            ("pkg/__init__.py", Lang::Python, "pkg"),
            ("src/util.ts", Lang::TypeScript, "src/util"),
        ] {
            assert_eq!(module_path(path, lang, &crates), want, "{path}");
        }
    }
}
