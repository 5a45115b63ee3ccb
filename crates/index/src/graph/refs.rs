//! Every place that uses a definition: calls, type uses, imports and inheritance.

use schemars::JsonSchema;
use serde::Serialize;

use crate::{Confidence, EdgeKind};

use super::handle::{Graph, QueryError, SYMBOL_COLUMNS, SymbolInfo, symbol_from_row};
use super::select::resolve_selector;

/// One use of the target.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RefHit {
    /// File of the use (relative).
    pub path: String,
    /// Line of the use.
    pub line: u32,
    /// `CALLS`, `REFERENCES`, `IMPORTS`, `INHERITS` or `IMPLEMENTS`.
    pub edge: EdgeKind,
    /// How sure the link is.
    pub confidence: Confidence,
    /// The definition the use is inside, if any.
    pub from: Option<SymbolInfo>,
}

/// The uses of one definition.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Refs {
    /// The definition.
    pub target: SymbolInfo,
    /// Its uses, by path and line.
    pub refs: Vec<RefHit>,
}

/// The edges into a definition, found through its file (so `edges_in` serves it).
pub(super) const USES_SQL: &str = "SELECT f.path, e.line, e.kind, e.confidence, e.src_symbol
     FROM edges e JOIN files f ON f.id = e.src_file
     WHERE e.dst_file = (SELECT file_id FROM symbols WHERE id = ?1)
       AND e.kind IN ('CALLS', 'REFERENCES', 'IMPORTS', 'INHERITS', 'IMPLEMENTS')
       AND e.dst_symbol = ?1
     ORDER BY f.path, e.line";

/// Uses of the definition `selector` names (ambiguous selectors list candidates).
pub fn refs(graph: &Graph, selector: &str) -> Result<Refs, QueryError> {
    let target = resolve_selector(graph, selector, false)?.remove(0);
    let err = QueryError::sqlite(&graph.index_path);
    let mut stmt = graph.conn.prepare_cached(USES_SQL).map_err(&err)?;
    let rows: Vec<(String, u32, EdgeKind, Confidence, Option<i64>)> = stmt
        .query_map([target.id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .map_err(&err)?
        .collect::<Result<_, _>>()
        .map_err(&err)?;
    let mut symbol_stmt = graph
        .conn
        .prepare_cached(&format!("SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.id = ?1"))
        .map_err(&err)?;
    let mut out = Vec::with_capacity(rows.len());
    for (path, line, edge, confidence, src) in rows {
        let from = match src {
            Some(id) => Some(symbol_stmt.query_row([id], symbol_from_row).map_err(&err)?),
            None => None,
        };
        out.push(RefHit {
            path,
            line,
            edge,
            confidence,
            from,
        });
    }
    Ok(Refs { target, refs: out })
}
