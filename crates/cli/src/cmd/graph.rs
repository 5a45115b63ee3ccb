//! The graph queries: find, def, refs, callers, callees, impact, outline, search, stats.
//! Each parses its arguments into the API's request, calls `loci_api::graph` and prints.

use std::path::PathBuf;

use clap::Args;
use loci_api::graph::{self as api, Direction};
use loci_api::meaning;
use loci_api::vocab::index::SymbolInfo;
use loci_api::vocab::index::{EdgeKind, Lang, SymbolKind};
use loci_api::{ApiError, ErrorKind, PageRequest, ReadOptions};

use crate::output;
use crate::workspace_arg::{load_config, open};

/// `--limit` and `--cursor`, shared by every list.
#[derive(Args)]
pub struct PageArgs {
    /// At most this many results (default depends on the command; at most 10000).
    #[arg(long)]
    limit: Option<usize>,
    /// Continue after the previous page (its `next_cursor`).
    #[arg(long)]
    cursor: Option<String>,
}

impl PageArgs {
    pub fn request(&self) -> PageRequest {
        PageRequest {
            limit: self.limit,
            cursor: self.cursor.clone(),
        }
    }
}

#[derive(Args)]
pub struct FindArgs {
    /// A name, or a glob (`parse_*`, `*Error`).
    pattern: String,
    /// Only this kind (function, method, class, struct, enum, trait, interface, type_alias, module, constant, macro, field).
    #[arg(long)]
    kind: Option<String>,
    /// Only this language (rust, python, javascript, typescript, tsx, go, java, c, cpp, csharp, ruby, php, kotlin, swift, bash).
    #[arg(long)]
    lang: Option<String>,
    #[command(flatten)]
    page: PageArgs,
}

#[derive(Args)]
pub struct SymbolArgs {
    /// `name`, `Qualified::name` (or `pkg.Class.name`) or `path/to/file:name`.
    symbol: String,
    #[command(flatten)]
    page: PageArgs,
}

/// Whether an answer lists what it could not link, beside counting it.
#[derive(Args)]
pub struct UnresolvedArgs {
    /// Also list the references that linked to no definition but could belong to the
    /// answer (for callees: the calls inside the target that linked to nothing).
    #[arg(long)]
    include_unresolved: bool,
}

/// Which nodes of a traversal are kept, and how they are shown.
#[derive(Args)]
pub struct TraversalFilterArgs {
    /// Only nodes in these files: a glob (`src/**/*.rs`), or a file or folder path.
    #[arg(long)]
    path: Option<String>,
    /// Only nodes reached through this edge kind (CALLS, REFERENCES, IMPORTS, INHERITS,
    /// IMPLEMENTS); repeat for several.
    #[arg(long = "edge", value_parser = edge_kind)]
    edges: Vec<EdgeKind>,
    /// `file`: one line per file (its nodes counted by edge kind) instead of one per node.
    #[arg(long, value_parser = ["file"])]
    group_by: Option<String>,
}

impl TraversalFilterArgs {
    fn fill(self, req: &mut api::TraversalRequest) {
        req.path = self.path;
        req.edges = (!self.edges.is_empty()).then_some(self.edges);
        req.group_by = self.group_by.map(|_| api::GroupBy::File);
    }
}

fn edge_kind(text: &str) -> Result<EdgeKind, String> {
    EdgeKind::from_name(&text.to_ascii_uppercase()).ok_or_else(|| {
        let all: Vec<&str> = EdgeKind::ALL.iter().map(|k| k.name()).collect();
        format!("unknown edge kind `{text}`; one of: {}", all.join(", "))
    })
}

#[derive(Args)]
pub struct RefsArgs {
    /// `name`, `Qualified::name` (or `pkg.Class.name`) or `path/to/file:name`.
    symbol: String,
    #[command(flatten)]
    unresolved: UnresolvedArgs,
    #[command(flatten)]
    page: PageArgs,
}

#[derive(Args)]
pub struct DepthArgs {
    /// `name`, `Qualified::name` or `path/to/file:name`.
    symbol: String,
    /// Hops to follow (1 = direct only).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=32))]
    depth: u32,
    #[command(flatten)]
    unresolved: UnresolvedArgs,
    #[command(flatten)]
    filter: TraversalFilterArgs,
    #[command(flatten)]
    page: PageArgs,
}

#[derive(Args)]
pub struct ImpactArgs {
    /// A symbol (`name`, `Qualified::name`, `path:name`) or a file path in the index.
    target: String,
    /// Hops to follow.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=32))]
    depth: u32,
    /// Also follow links made by name alone (left out by default: a same-named
    /// definition elsewhere is no proof of a dependency).
    #[arg(long)]
    include_name_only: bool,
    #[command(flatten)]
    unresolved: UnresolvedArgs,
    #[command(flatten)]
    filter: TraversalFilterArgs,
    #[command(flatten)]
    page: PageArgs,
}

#[derive(Args)]
pub struct OutlineArgs {
    /// A file path (relative to the workspace, or absolute inside it).
    file: String,
    #[command(flatten)]
    page: PageArgs,
}

#[derive(Args)]
pub struct SearchArgs {
    /// The text to find (a literal unless --regex).
    #[arg(required_unless_present = "meaning", conflicts_with = "meaning")]
    pattern: Option<String>,
    /// Find code units (functions, methods, types) by what they do, in words: vectors,
    /// full text and callers fused (needs `loci embed` once, and the local model).
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["regex", "ignore_case", "path", "source_only"])]
    meaning: Option<String>,
    /// With --meaning: rank by vectors (cosine similarity) alone.
    #[arg(long, requires = "meaning", conflicts_with = "text_only")]
    meaning_only: bool,
    /// With --meaning: rank by full text (BM25 over the units' words) alone; needs no model.
    #[arg(long, requires = "meaning")]
    text_only: bool,
    /// Treat the pattern as a regular expression.
    #[arg(long, short = 'e')]
    regex: bool,
    /// Ignore case.
    #[arg(long, short = 'i')]
    ignore_case: bool,
    /// Only files whose path matches this glob, or beneath this file or folder path.
    #[arg(long)]
    path: Option<String>,
    /// Only the indexed source files (by default every text file the walk sees:
    /// README, manifests, docs too).
    #[arg(long)]
    source_only: bool,
    #[command(flatten)]
    page: PageArgs,
}

pub fn read_options() -> ReadOptions {
    ReadOptions {
        deadline: load_config(None).read_deadline(),
        ..ReadOptions::default()
    }
}

fn kind(name: Option<&str>) -> Result<Option<SymbolKind>, ApiError> {
    name.map(|k| {
        SymbolKind::from_name(k).ok_or_else(|| {
            let all: Vec<&str> = SymbolKind::ALL.iter().map(|k| k.name()).collect();
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("unknown kind `{k}`; one of: {}", all.join(", ")),
            )
        })
    })
    .transpose()
}

fn lang(name: Option<&str>) -> Result<Option<Lang>, ApiError> {
    name.map(|l| {
        Lang::from_name(l).ok_or_else(|| {
            let all: Vec<&str> = Lang::ALL.iter().map(|l| l.name()).collect();
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("unknown language `{l}`; one of: {}", all.join(", ")),
            )
        })
    })
    .transpose()
}

fn line(s: &SymbolInfo) -> String {
    format!("{}:{}  {}  {}", s.path, s.line, s.kind, s.qualified_name)
}

pub fn find(args: FindArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let req = api::FindRequest {
        pattern: args.pattern,
        kind: kind(args.kind.as_deref())?,
        lang: lang(args.lang.as_deref())?,
        page: args.page.request(),
    };
    let ws = open(workspace)?;
    let found = api::find(&ws, &req, &read_options())?;
    if json {
        output::json(&found);
        return Ok(());
    }
    output::freshness(&found.index);
    if found.symbols.is_empty() {
        println!(
            "no definition matches `{}` (try `loci find '*{}*'`)",
            req.pattern,
            req.pattern.trim_matches('*')
        );
    }
    for s in &found.symbols {
        println!("{}  {}", line(s), s.signature);
    }
    output::more(&found.page, found.symbols.len());
    Ok(())
}

pub fn def(args: SymbolArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let req = api::SymbolRequest {
        symbol: args.symbol,
        page: args.page.request(),
    };
    let ws = open(workspace)?;
    let found = api::def(&ws, &req, &read_options())?;
    if json {
        output::json(&found);
        return Ok(());
    }
    output::freshness(&found.index);
    for s in &found.symbols {
        println!("{}\n    {}", line(s), s.signature);
        if let Some(doc) = &s.doc {
            for l in doc.lines() {
                println!("    | {l}");
            }
        }
    }
    output::more(&found.page, found.symbols.len());
    Ok(())
}

pub fn refs(args: RefsArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let req = api::RefsRequest {
        symbol: args.symbol,
        include_unresolved: args.unresolved.include_unresolved,
        page: args.page.request(),
    };
    let ws = open(workspace)?;
    let result = api::refs(&ws, &req, &read_options())?;
    if json {
        output::json(&result);
        return Ok(());
    }
    output::freshness(&result.index);
    println!(
        "{} of {}",
        output::plural(result.page.total as usize, "use", "uses"),
        line(&result.target)
    );
    for r in &result.refs {
        let from = r
            .from
            .as_ref()
            .map(|s| s.qualified_name.as_str())
            .unwrap_or("<top level>");
        println!(
            "  {}:{}  {} from {} ({})",
            r.path, r.line, r.edge, from, r.confidence
        );
    }
    output::more(&result.page, result.refs.len());
    let (one, many) = uses_label(&result.target.name);
    output::unresolved(&result.unresolved, &one, &many);
    Ok(())
}

pub fn traverse(
    args: DepthArgs,
    workspace: Option<PathBuf>,
    json: bool,
    direction: Direction,
) -> Result<(), ApiError> {
    let mut req = api::TraversalRequest {
        target: args.symbol,
        depth: Some(args.depth),
        include_unresolved: args.unresolved.include_unresolved,
        include_name_only: false,
        path: None,
        edges: None,
        group_by: None,
        page: args.page.request(),
    };
    args.filter.fill(&mut req);
    run_traversal(req, direction, workspace, json)
}

pub fn impact(args: ImpactArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let ws = open(workspace)?;
    let mut req = api::TraversalRequest {
        target: api::impact_target(&args.target, ws.root(), &cwd()?),
        depth: Some(args.depth),
        include_unresolved: args.unresolved.include_unresolved,
        include_name_only: args.include_name_only,
        path: None,
        edges: None,
        group_by: None,
        page: args.page.request(),
    };
    args.filter.fill(&mut req);
    let answer = loci_api::memory::impact(&ws, &req, &read_options())?;
    if json {
        output::json(&answer);
        return Ok(());
    }
    print_traversal_page(&answer.traversal);
    if answer.traversal.name_only_left_out > 0 {
        println!(
            "+ {} reached only by links made by name alone, left out (--include-name-only follows them)",
            answer.traversal.name_only_left_out
        );
    }
    let (one, many) = traversal_label(&answer.traversal, Direction::Impact);
    output::unresolved(&answer.traversal.unresolved, &one, &many);
    super::memory_print::impact_memories(&answer);
    Ok(())
}

fn run_traversal(
    req: api::TraversalRequest,
    direction: Direction,
    workspace: Option<PathBuf>,
    json: bool,
) -> Result<(), ApiError> {
    print_traversal(&open(workspace)?, req, direction, json)
}

fn print_traversal(
    ws: &loci_api::Workspace,
    req: api::TraversalRequest,
    direction: Direction,
    json: bool,
) -> Result<(), ApiError> {
    let t = api::traverse(ws, direction, &req, &read_options())?;
    if json {
        output::json(&t);
        return Ok(());
    }
    print_traversal_page(&t);
    let (one, many) = traversal_label(&t, direction);
    output::unresolved(&t.unresolved, &one, &many);
    Ok(())
}

/// A grouped traversal: a summary line (files, nodes, edges by kind), then a line per
/// file with its count and the fewest hops to it.
fn print_groups(groups: &[api::FileGroup]) {
    let mut by_edge: std::collections::BTreeMap<EdgeKind, u64> = Default::default();
    for g in groups {
        for (k, n) in &g.edges {
            *by_edge.entry(*k).or_default() += n;
        }
    }
    let nodes: u64 = groups.iter().map(|g| g.count).sum();
    let edges: Vec<String> = by_edge.iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!(
        "{} in {} on this page ({})",
        output::plural(nodes as usize, "node", "nodes"),
        output::plural(groups.len(), "file", "files"),
        edges.join(", ")
    );
    for g in groups {
        let edges: Vec<String> = g.edges.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!(
            "  {:>5}  {}  (depth {}; {})",
            g.count,
            g.path,
            g.depth,
            edges.join(", ")
        );
    }
}

/// How the unresolved references of a traversal are named: uses of the targets'
/// names, or (callees) calls inside the targets.
fn traversal_label(t: &api::TraversalPage, direction: Direction) -> (String, String) {
    match direction {
        Direction::Callees => (
            "call in it that linked to no definition".into(),
            "calls in it that linked to no definition".into(),
        ),
        Direction::Callers => {
            let name = names_of(t);
            (
                format!("call of {name} that linked to no definition"),
                format!("calls of {name} that linked to no definition"),
            )
        }
        Direction::Impact => uses_label(&names_of(t)),
    }
}

/// `` `name` `` of one target, or `its names` of several.
fn names_of(t: &api::TraversalPage) -> String {
    match t.target_symbols.as_slice() {
        [one] => format!("`{}`", one.name),
        _ => "the targets' names".into(),
    }
}

/// How unresolved uses of `name` are named.
fn uses_label(name: &str) -> (String, String) {
    let name = if name.starts_with('`') || name.starts_with("the ") {
        name.to_string()
    } else {
        format!("`{name}`")
    };
    (
        format!("reference to {name} that linked to no definition"),
        format!("references to {name} that linked to no definition"),
    )
}

fn print_traversal_page(t: &api::TraversalPage) {
    output::freshness(&t.index);
    let targets = match t.targets.as_slice() {
        // A file's impact starts from each of its definitions: name the file.
        many if many.len() > 3 => format!(
            "{} (and its {} definitions)",
            many.last().map_or("", String::as_str),
            many.len() - 1
        ),
        few => few.join(", "),
    };
    println!(
        "{} ({} {})",
        targets,
        if t.page.total_exact {
            t.page.total.to_string()
        } else {
            format!("at least {}", t.page.total)
        },
        if t.groups.is_some() {
            "files reached"
        } else {
            "reached"
        }
    );
    if let Some(groups) = &t.groups {
        print_groups(groups);
    }
    for r in &t.reached {
        let name = r
            .symbol
            .as_ref()
            .map(|s| s.qualified_name.as_str())
            .unwrap_or("<top level>");
        println!(
            "  {:>2}  {}:{}  {}  [{} {} at {}:{}]  via {}",
            r.depth,
            r.path,
            r.line,
            name,
            r.edge,
            r.confidence,
            r.site.path,
            r.site.line,
            r.via.join(" -> ")
        );
    }
    output::more(&t.page, t.reached.len());
}

pub fn outline(args: OutlineArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let ws = open(workspace)?;
    let req = api::OutlineRequest {
        file: api::workspace_relative(&args.file, ws.root(), &cwd()?),
        page: args.page.request(),
    };
    let items = api::outline(&ws, &req, &read_options())?;
    if json {
        output::json(&items);
        return Ok(());
    }
    output::freshness(&items.index);
    for item in &items.symbols {
        let s = &item.symbol;
        // Most signatures already start with their keyword (`class Parser`, `fn run`).
        let head = if s.signature.split_whitespace().any(|w| w == s.kind.name()) {
            s.signature.clone()
        } else {
            format!("{} {}", s.kind, s.signature)
        };
        println!(
            "{:indent$}{head}  :{}",
            "",
            s.line,
            indent = item.depth as usize * 2
        );
    }
    output::more(&items.page, items.symbols.len());
    Ok(())
}

/// The current directory, for file arguments given relative to it.
fn cwd() -> Result<PathBuf, ApiError> {
    std::env::current_dir().map_err(|e| {
        ApiError::new(
            ErrorKind::Unreadable,
            format!("cannot read the current directory: {e}"),
        )
    })
}

pub fn search(args: SearchArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    if let Some(text) = args.meaning {
        let signals = if args.meaning_only {
            meaning::Signals::Vectors
        } else if args.text_only {
            meaning::Signals::Text
        } else {
            meaning::Signals::Hybrid
        };
        let req = meaning::MeaningRequest {
            text,
            signals,
            page: args.page.request(),
        };
        let ws = open(workspace)?;
        let found = meaning::search(&ws, &req, &read_options())?;
        if json {
            output::json(&found);
            return Ok(());
        }
        output::freshness(&found.index);
        if let Some(hint) = &found.hint {
            eprintln!("note: {hint}");
        }
        if found.hits.is_empty() {
            println!("no code unit matches `{}`", req.text);
        }
        for h in &found.hits {
            let mut why = Vec::new();
            if let Some(v) = &h.why.vector {
                why.push(format!("vector #{} ({:.2})", v.rank, v.similarity));
            }
            if let Some(t) = &h.why.text {
                why.push(format!("text #{}", t.rank));
            }
            if let Some(g) = &h.why.graph {
                why.push(format!("{} callers", g.callers));
            }
            println!(
                "{}:{}-{}: {} {}  [{:.3}: {}]",
                h.path,
                h.line,
                h.end_line,
                h.kind,
                h.qualified_name,
                h.score,
                why.join(", ")
            );
        }
        output::more(&found.page, found.hits.len());
        return Ok(());
    }
    let req = api::SearchRequest {
        pattern: args.pattern.unwrap_or_default(),
        regex: args.regex,
        ignore_case: args.ignore_case,
        path: args.path,
        source_only: args.source_only,
        page: args.page.request(),
    };
    let ws = open(workspace)?;
    let found = api::search(&ws, &req, &read_options())?;
    if json {
        output::json(&found);
        return Ok(());
    }
    output::freshness(&found.index);
    if found.hits.is_empty() {
        println!("no hits for `{}`", req.pattern);
    }
    for h in &found.hits {
        println!("{}:{}:{}: {}", h.path, h.line, h.col, h.text);
    }
    output::more(&found.page, found.hits.len());
    Ok(())
}

pub fn stats(workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let ws = open(workspace)?;
    let answer = api::stats(&ws, &read_options())?;
    if json {
        output::json(&answer);
        return Ok(());
    }
    let s = &answer.stats;
    println!(
        "workspace {}\nindex     {} ({} KiB, {})",
        s.workspace,
        s.index_path,
        s.index_bytes / 1024,
        s.state
    );
    println!(
        "files {}  lines {}  symbols {}  edges {}  refs {} ({} unresolved)",
        s.files, s.lines, s.symbols, s.edges, s.refs, s.unresolved_refs
    );
    let fmt = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "languages  {}\nkinds      {}\nedges      {}\nconfidence {}",
        fmt(&s.languages),
        fmt(&s.kinds),
        fmt(&s.edge_kinds),
        fmt(&s.confidence)
    );
    if s.skipped.total > 0 {
        println!(
            "skipped    {} ({})",
            s.skipped.total,
            fmt(&s.skipped.by_reason)
        );
        output::skipped_files(&s.skipped.files, 20, s.skipped.total);
    }
    Ok(())
}

/// `loci embed`: the workspace's code units for `search --meaning`.
pub fn embed(workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let ws = open(workspace)?;
    let mut last = std::time::Instant::now();
    let r = meaning::embed(&ws, &mut |done, total| {
        // A line per few seconds, and the first and last.
        if done == 0 || done == total || last.elapsed().as_secs() >= 2 {
            eprintln!("embedded {done}/{total} code units");
            last = std::time::Instant::now();
        }
    })?;
    if json {
        output::json(&r);
    } else {
        println!(
            "{} code units in {} ({} embedded, {} reused; {} files embedded, {} removed) in {:.1} s{}",
            r.units,
            r.path,
            r.embedded,
            r.reused,
            r.files_embedded,
            r.files_removed,
            r.seconds,
            if r.embedded > 0 {
                format!(", {:.0} units/s", r.units_per_s)
            } else {
                String::new()
            }
        );
    }
    Ok(())
}
