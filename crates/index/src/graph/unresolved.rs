//! What a graph answer cannot see: the references that reached no definition but could
//! be a use of the target (a call to a same-named function on a value whose type the
//! file does not say, a macro, a name from outside the index), or, for callees, the
//! calls inside the target that linked to nothing. Resolution keeps every reference
//! with its name (`file_refs`), so these are counted from the stored facts at query
//! time: a reference is unresolved when no edge of its kind leaves its file at its line
//! towards a definition of its name.
//!
//! Only the first hop is covered (the target's own uses or calls), and the scan has a
//! budget: past [`MAX_FILES_SCANNED`] files the count is a lower bound and says so.

use std::collections::{BTreeMap, HashMap, HashSet};

use schemars::JsonSchema;
use serde::Serialize;

use super::handle::{Graph, QueryError, SymbolInfo};
use crate::extract::RefKind;
use crate::stored_refs;

/// Most files whose references one answer reads before it stops and says the count is
/// a lower bound (a name like `new` is used in most files of a large tree).
pub const MAX_FILES_SCANNED: usize = 2000;

/// Most unresolved references listed when they are asked for.
pub const MAX_SITES: usize = 200;

/// Most files named in the summary (the ones holding the most).
const MAX_FILES_SHOWN: usize = 10;

/// Which stored references could be a use the answer is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseKinds {
    /// Calls and macro invocations (`callers`).
    Calls,
    /// Every reference: calls and type uses (`refs`, `impact`).
    All,
}

/// Why a reference reached no definition, as far as the stored reference tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnresolvedReason {
    /// Written on a value or a path that resolution could not follow (`x.add_permits()`
    /// where the file does not say `x`'s type, `a::b::f()` through an unknown module).
    UnknownReceiver,
    /// A macro invocation no macro definition in the index answers.
    Macro,
    /// A bare name no definition in scope answers: defined outside the index, or too
    /// many same-named definitions to pick one.
    UnboundName,
}

impl UnresolvedReason {
    /// The name written in answers (`unknown_receiver`, `macro`, `unbound_name`).
    pub fn name(self) -> &'static str {
        match self {
            UnresolvedReason::UnknownReceiver => "unknown_receiver",
            UnresolvedReason::Macro => "macro",
            UnresolvedReason::UnboundName => "unbound_name",
        }
    }
}

/// How many unresolved references have one reason.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReasonCount {
    /// The reason.
    pub reason: UnresolvedReason,
    /// How many.
    pub count: u64,
}

/// How many unresolved references one file holds.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileCount {
    /// Relative path.
    pub path: String,
    /// How many.
    pub count: u64,
}

/// One unresolved reference.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnresolvedSite {
    /// Relative path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// The name used.
    pub name: String,
    /// What stood before it, as written (`self.sem`, `a::b`), if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qualifier: Option<String>,
    /// Why it reached no definition.
    pub reason: UnresolvedReason,
    /// The qualified name of the definition it is written in, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

impl UnresolvedSite {
    /// The use as its source writes it: `a::b::f` for a path (Rust, C++), else `x.f`, so
    /// every front end shows the same text an agent can search for.
    pub fn written(&self) -> String {
        match &self.qualifier {
            Some(q) => format!("{q}{}{}", path_separator(&self.path, q), self.name),
            None => self.name.clone(),
        }
    }
}

/// How `qualifier` joins a name in the file `path`: `::` for a type or module path in
/// Rust and C++ (`Self`, `Arc`, `a::b`), `.` for a value (`self.sem`) and elsewhere.
fn path_separator(path: &str, qualifier: &str) -> &'static str {
    let paths = [".rs", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".h"]
        .iter()
        .any(|ext| path.ends_with(ext));
    let is_path = qualifier.contains("::")
        || qualifier.chars().next().is_some_and(char::is_uppercase)
        || qualifier == "Self";
    if paths && !qualifier.contains('.') && is_path {
        "::"
    } else {
        "."
    }
}

/// The references an answer could not link: how many, why, where, and (when asked)
/// which.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Unresolved {
    /// How many references reached no definition and could belong to the answer.
    pub count: u64,
    /// `false` when the scan stopped at its budget: `count` is then a lower bound.
    pub complete: bool,
    /// Counts by reason, largest first.
    pub reasons: Vec<ReasonCount>,
    /// The files holding the most of them (at most 10), most first.
    pub files: Vec<FileCount>,
    /// The references themselves, by path and line (at most 200), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sites: Option<Vec<UnresolvedSite>>,
}

/// A reference found unresolved, before the summary is made.
struct Found {
    file: i64,
    path: String,
    line: u32,
    name: String,
    qualifier: Option<String>,
    reason: UnresolvedReason,
    from: Option<i64>,
}

fn reason_of(kind: RefKind, qualifier: Option<&str>) -> UnresolvedReason {
    match (kind, qualifier) {
        (RefKind::Macro, _) => UnresolvedReason::Macro,
        (_, Some(q)) if !q.is_empty() => UnresolvedReason::UnknownReceiver,
        _ => UnresolvedReason::UnboundName,
    }
}

fn kind_matches(kinds: UseKinds, kind: RefKind) -> bool {
    match kinds {
        UseKinds::Calls => matches!(kind, RefKind::Call | RefKind::Macro),
        UseKinds::All => true,
    }
}

/// Whether a resolved reference of `kind` leaves a `CALLS` edge (else `REFERENCES`).
fn leaves_a_call(kind: RefKind) -> bool {
    matches!(kind, RefKind::Call | RefKind::Macro)
}

/// The references named like one of `targets` that reached no definition: uses the
/// answer about `targets` may be missing (`callers` with [`UseKinds::Calls`], `refs` and
/// `impact` with [`UseKinds::All`]). `list`: also return them, by path and line.
pub fn unresolved_uses(
    graph: &Graph,
    targets: &[SymbolInfo],
    kinds: UseKinds,
    list: bool,
) -> Result<Unresolved, QueryError> {
    uses_within(graph, targets, kinds, list, MAX_FILES_SCANNED)
}

/// [`unresolved_uses`], reading at most `max_files` files' references.
fn uses_within(
    graph: &Graph,
    targets: &[SymbolInfo],
    kinds: UseKinds,
    list: bool,
    max_files: usize,
) -> Result<Unresolved, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let mut names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut found = Vec::new();
    let mut scanned = 0usize;
    let mut complete = true;
    for name in names {
        // Where a reference by this name did link: (file, line, a call's edge).
        let mut resolved: HashSet<(i64, u32, bool)> = HashSet::new();
        let mut stmt = graph
            .conn
            .prepare_cached(
                "SELECT e.src_file, e.line, e.kind FROM symbols s
                 JOIN edges e ON e.dst_file = s.file_id AND e.kind IN ('CALLS', 'REFERENCES')
                                 AND e.dst_symbol = s.id
                 WHERE s.name = ?1",
            )
            .map_err(&err)?;
        let rows = stmt
            .query_map([name], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)? == "CALLS"))
            })
            .map_err(&err)?;
        for row in rows {
            resolved.insert(row.map_err(&err)?);
        }
        let mut files = graph
            .conn
            .prepare_cached(
                "SELECT f.id, f.path, r.data FROM ref_names n
                 JOIN files f ON f.id = n.file_id
                 JOIN file_refs r ON r.file_id = n.file_id
                 WHERE n.name = ?1 ORDER BY f.path",
            )
            .map_err(&err)?;
        let mut rows = files.query([name]).map_err(&err)?;
        while let Some(row) = rows.next().map_err(&err)? {
            if scanned == max_files {
                complete = false;
                break;
            }
            scanned += 1;
            let file: i64 = row.get(0).map_err(&err)?;
            let path: String = row.get(1).map_err(&err)?;
            let blob = row.get_ref(2).map_err(&err)?.as_blob().map_err(|e| {
                err(rusqlite::Error::FromSqlConversionFailure(
                    2,
                    rusqlite::types::Type::Blob,
                    Box::new(e),
                ))
            })?;
            for r in stored_refs::decode(blob, 2).map_err(&err)? {
                if r.name != name
                    || !kind_matches(kinds, r.kind)
                    || resolved.contains(&(file, r.line, leaves_a_call(r.kind)))
                {
                    continue;
                }
                found.push(Found {
                    file,
                    path: path.clone(),
                    line: r.line,
                    name: r.name.to_string(),
                    qualifier: r.qualifier.map(str::to_string),
                    reason: reason_of(r.kind, r.qualifier),
                    from: r.from,
                });
            }
        }
        if !complete {
            break;
        }
    }
    summarize(graph, found, complete, list)
}

/// Most definitions a name may have for a file's impact to count its unresolved uses.
pub const MAX_SHARED_DEFINITIONS: usize = 3;

/// The targets whose name at most `max_defs` definitions of the index share. A file's
/// impact counts only these: names like `new`, `drop` or `poll`, defined all over a
/// tree, would count every unresolved call of that name.
pub fn distinctive(
    graph: &Graph,
    targets: &[SymbolInfo],
    max_defs: usize,
) -> Result<Vec<SymbolInfo>, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let mut stmt = graph
        .conn
        .prepare_cached("SELECT count(*) FROM (SELECT 1 FROM symbols WHERE name = ?1 LIMIT ?2)")
        .map_err(&err)?;
    let mut out = Vec::new();
    for t in targets {
        let n: i64 = stmt
            .query_row(rusqlite::params![t.name, max_defs as i64 + 1], |r| r.get(0))
            .map_err(&err)?;
        if n as usize <= max_defs {
            out.push(t.clone());
        }
    }
    Ok(out)
}

/// The calls written inside `targets` that linked to no definition: what a `callees`
/// answer cannot show (code outside the index, values of unknown type, macros).
pub fn unresolved_calls_from(
    graph: &Graph,
    targets: &[SymbolInfo],
    list: bool,
) -> Result<Unresolved, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let mut found = Vec::new();
    let mut complete = true;
    for (i, t) in targets.iter().enumerate() {
        if i == MAX_FILES_SCANNED {
            complete = false;
            break;
        }
        let (file, blob): (i64, Vec<u8>) = match graph.conn.query_row(
            "SELECT s.file_id, r.data FROM symbols s JOIN file_refs r ON r.file_id = s.file_id
             WHERE s.id = ?1",
            [t.id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        ) {
            Ok(row) => row,
            Err(rusqlite::Error::QueryReturnedNoRows) => continue,
            Err(e) => return Err(err(e)),
        };
        let mut resolved: HashSet<(u32, String)> = HashSet::new();
        let mut stmt = graph
            .conn
            .prepare_cached(
                "SELECT e.line, s.name FROM edges e JOIN symbols s ON s.id = e.dst_symbol
                 WHERE e.src_file = ?1 AND e.kind = 'CALLS' AND e.src_symbol = ?2",
            )
            .map_err(&err)?;
        let rows = stmt
            .query_map([file, t.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(&err)?;
        for row in rows {
            resolved.insert(row.map_err(&err)?);
        }
        for r in stored_refs::decode(&blob, 1).map_err(&err)? {
            if r.from != Some(t.id)
                || !kind_matches(UseKinds::Calls, r.kind)
                || resolved.contains(&(r.line, r.name.to_string()))
            {
                continue;
            }
            found.push(Found {
                file,
                path: t.path.clone(),
                line: r.line,
                name: r.name.to_string(),
                qualifier: r.qualifier.map(str::to_string),
                reason: reason_of(r.kind, r.qualifier),
                from: r.from,
            });
        }
    }
    summarize(graph, found, complete, list)
}

fn summarize(
    graph: &Graph,
    mut found: Vec<Found>,
    complete: bool,
    list: bool,
) -> Result<Unresolved, QueryError> {
    let mut reasons: BTreeMap<UnresolvedReason, u64> = BTreeMap::new();
    let mut per_file: HashMap<i64, (String, u64)> = HashMap::new();
    for f in &found {
        *reasons.entry(f.reason).or_default() += 1;
        per_file
            .entry(f.file)
            .or_insert_with(|| (f.path.clone(), 0))
            .1 += 1;
    }
    let mut reasons: Vec<ReasonCount> = reasons
        .into_iter()
        .map(|(reason, count)| ReasonCount { reason, count })
        .collect();
    reasons.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
    let mut files: Vec<FileCount> = per_file
        .into_values()
        .map(|(path, count)| FileCount { path, count })
        .collect();
    files.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
    files.truncate(MAX_FILES_SHOWN);
    let sites = if list {
        found.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
        found.truncate(MAX_SITES);
        Some(sites_of(graph, found)?)
    } else {
        None
    };
    Ok(Unresolved {
        count: reasons.iter().map(|r| r.count).sum(),
        complete,
        reasons,
        files,
        sites,
    })
}

fn sites_of(graph: &Graph, found: Vec<Found>) -> Result<Vec<UnresolvedSite>, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let mut stmt = graph
        .conn
        .prepare_cached("SELECT qualified_name FROM symbols WHERE id = ?1")
        .map_err(&err)?;
    let mut names: HashMap<i64, Option<String>> = HashMap::new();
    let mut out = Vec::with_capacity(found.len());
    for f in found {
        let from = match f.from {
            Some(id) => match names.get(&id) {
                Some(n) => n.clone(),
                None => {
                    let n = match stmt.query_row([id], |r| r.get::<_, String>(0)) {
                        Ok(n) => Some(n),
                        Err(rusqlite::Error::QueryReturnedNoRows) => None,
                        Err(e) => return Err(err(e)),
                    };
                    names.insert(id, n.clone());
                    n
                }
            },
            None => None,
        };
        out.push(UnresolvedSite {
            path: f.path,
            line: f.line,
            name: f.name,
            qualifier: f.qualifier,
            reason: f.reason,
            from,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_is_written_as_its_language_writes_it() {
        let site = |path: &str, qualifier: Option<&str>, name: &str| UnresolvedSite {
            path: path.into(),
            line: 1,
            name: name.into(),
            qualifier: qualifier.map(str::to_owned),
            reason: UnresolvedReason::UnknownReceiver,
            from: None,
        };
        for (s, want) in [
            (site("src/a.rs", Some("Arc"), "new"), "Arc::new"),
            // The index keeps the qualifier, not its separator: a lower-case one reads
            // as a value.
            (site("src/a.rs", Some("task"), "spawn"), "task.spawn"),
            (
                site("src/a.rs", Some("tokio::task"), "spawn"),
                "tokio::task::spawn",
            ),
            (
                site("src/a.rs", Some("self.sem"), "add_permits"),
                "self.sem.add_permits",
            ),
            (site("src/a.rs", Some("Self"), "new"), "Self::new"),
            (
                site("a.hpp", Some("std::vector"), "size"),
                "std::vector::size",
            ),
            (site("pkg/a.py", Some("Pool"), "get"), "Pool.get"),
            (site("pkg/a.py", None, "get"), "get"),
        ] {
            assert_eq!(s.written(), want);
        }
    }

    /// Past its budget of files the scan stops and says its count is a lower bound;
    /// within it the count is exact and complete.
    #[test]
    fn a_scan_past_its_budget_says_its_count_is_a_lower_bound() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("def.py"), "def shared(x):\n    return x\n").unwrap();
        for i in 0..5 {
            std::fs::write(
                dir.path().join(format!("use{i}.py")),
                "def caller(v):\n    v.shared(1)\n",
            )
            .unwrap();
        }
        crate::index_workspace(&crate::IndexOptions::new(dir.path()), &crate::NoProgress).unwrap();
        let graph = Graph::open(dir.path()).unwrap();
        let target = graph.def("shared").unwrap();
        let all = uses_within(&graph, &target, UseKinds::Calls, false, 100).unwrap();
        assert_eq!((all.count, all.complete), (5, true), "{all:?}");
        let cut = uses_within(&graph, &target, UseKinds::Calls, true, 2).unwrap();
        assert!(!cut.complete, "{cut:?}");
        assert_eq!(cut.count, 2, "{cut:?}");
        assert_eq!(cut.sites.as_ref().map(Vec::len), Some(2));
    }
}
