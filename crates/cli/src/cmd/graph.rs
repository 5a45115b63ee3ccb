//! The graph queries: find, def, refs, callers, callees, impact, outline, search, stats.

use std::path::PathBuf;

use clap::Args;
use loci_index::graph::{self, Direction, Graph, SymbolInfo};

use crate::exit::{self, Failure};
use crate::output;
use crate::workspace_arg::query_root;

#[derive(Args)]
pub struct FindArgs {
    /// A name, or a glob (`parse_*`, `*Error`).
    pattern: String,
    /// Only this kind (function, method, class, struct, enum, trait, interface, type_alias, module, constant, macro).
    #[arg(long)]
    kind: Option<String>,
    /// Only this language (rust, python, javascript, typescript, tsx, go, java, c, cpp, csharp, ruby, php, kotlin, swift, bash).
    #[arg(long)]
    lang: Option<String>,
    /// At most this many results.
    #[arg(long, default_value_t = 100)]
    limit: usize,
}

#[derive(Args)]
pub struct SymbolArgs {
    /// `name`, `Qualified::name` (or `pkg.Class.name`) or `path/to/file:name`.
    symbol: String,
}

#[derive(Args)]
pub struct DepthArgs {
    /// `name`, `Qualified::name` or `path/to/file:name`.
    symbol: String,
    /// Hops to follow (1 = direct only).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=32))]
    depth: u32,
}

#[derive(Args)]
pub struct ImpactArgs {
    /// A symbol (`name`, `Qualified::name`, `path:name`) or a file path in the index.
    target: String,
    /// Hops to follow.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=32))]
    depth: u32,
}

#[derive(Args)]
pub struct OutlineArgs {
    /// A file path (relative to the workspace, or absolute inside it).
    file: String,
}

#[derive(Args)]
pub struct SearchArgs {
    /// The text to find (a literal unless --regex).
    pattern: String,
    /// Treat the pattern as a regular expression.
    #[arg(long, short = 'e')]
    regex: bool,
    /// Ignore case.
    #[arg(long, short = 'i')]
    ignore_case: bool,
    /// Only files whose path matches this glob.
    #[arg(long)]
    path: Option<String>,
    /// At most this many hits.
    #[arg(long, default_value_t = 200)]
    limit: usize,
}

fn open(workspace: Option<PathBuf>) -> Result<Graph, Failure> {
    let root = query_root(workspace)?;
    Graph::open(&root).map_err(Failure::from)
}

fn line(s: &SymbolInfo) -> String {
    format!("{}:{}  {}  {}", s.path, s.line, s.kind, s.qualified_name)
}

pub fn find(args: FindArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let g = open(workspace)?;
    let (found, truncated) = graph::find(
        &g,
        &args.pattern,
        args.kind.as_deref(),
        args.lang.as_deref(),
        args.limit,
    )?;
    if json {
        output::json(&serde_json::json!({ "symbols": found, "truncated": truncated }));
        return Ok(());
    }
    if found.is_empty() {
        return Err(Failure::new(
            exit::NOT_FOUND,
            "not_found",
            format!("no definition matches `{}`", args.pattern),
        ));
    }
    for s in &found {
        println!("{}  {}", line(s), s.signature);
    }
    if truncated {
        println!("... more results (raise --limit)");
    }
    Ok(())
}

pub fn def(args: SymbolArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let g = open(workspace)?;
    let found = g.def(&args.symbol)?;
    if json {
        output::json(&serde_json::json!({ "symbols": found }));
        return Ok(());
    }
    for s in &found {
        println!("{}\n    {}", line(s), s.signature);
        if let Some(doc) = &s.doc {
            for l in doc.lines() {
                println!("    | {l}");
            }
        }
    }
    Ok(())
}

pub fn refs(args: SymbolArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let g = open(workspace)?;
    let result = graph::refs(&g, &args.symbol)?;
    if json {
        output::json(&result);
        return Ok(());
    }
    println!("{} uses of {}", result.refs.len(), line(&result.target));
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
    Ok(())
}

pub fn traverse(
    args: DepthArgs,
    workspace: Option<PathBuf>,
    json: bool,
    direction: Direction,
) -> Result<(), Failure> {
    let g = open(workspace)?;
    let result = match direction {
        Direction::Callers => graph::callers(&g, &args.symbol, args.depth)?,
        Direction::Callees => graph::callees(&g, &args.symbol, args.depth)?,
        Direction::Impact => graph::impact(&g, &args.symbol, args.depth)?,
    };
    print_traversal(&result, json);
    Ok(())
}

pub fn impact(args: ImpactArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let g = open(workspace)?;
    let result = graph::impact(&g, &args.target, args.depth)?;
    print_traversal(&result, json);
    Ok(())
}

fn print_traversal(t: &graph::Traversal, json: bool) {
    if json {
        output::json(t);
        return;
    }
    println!("{} ({} reached)", t.targets.join(", "), t.reached.len());
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
    if t.truncated {
        println!("  ... truncated");
    }
}

pub fn outline(args: OutlineArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let g = open(workspace)?;
    let items = g.outline(&args.file)?;
    if json {
        output::json(&serde_json::json!({ "path": args.file, "symbols": items }));
        return Ok(());
    }
    for item in &items {
        println!(
            "{:indent$}{} {}  :{}",
            "",
            item.symbol.kind,
            item.symbol.signature,
            item.symbol.line,
            indent = item.depth as usize * 2
        );
    }
    Ok(())
}

pub fn search(args: SearchArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let g = open(workspace)?;
    let opts = graph::SearchOptions {
        regex: args.regex,
        ignore_case: args.ignore_case,
        limit: args.limit,
        path_glob: args.path,
    };
    let (hits, truncated) = graph::search(&g, &args.pattern, &opts)?;
    if json {
        output::json(&serde_json::json!({ "hits": hits, "truncated": truncated }));
        return Ok(());
    }
    for h in &hits {
        println!("{}:{}:{}: {}", h.path, h.line, h.col, h.text);
    }
    if truncated {
        println!("... more hits (raise --limit)");
    }
    Ok(())
}

pub fn stats(workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let g = open(workspace)?;
    let s = g.stats()?;
    if json {
        output::json(&s);
        return Ok(());
    }
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
    Ok(())
}
