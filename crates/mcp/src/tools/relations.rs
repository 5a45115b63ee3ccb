//! `relations`: who calls a definition, what it calls, every use of it, or what depends
//! on it — one tool with a `direction` and a `depth`, nearest first.

use loci_api::graph::{Direction, SymbolRequest, TraversalRequest};
use loci_api::{ApiError, ErrorKind};
use serde_json::{Value, json};

use super::{Answer, Ctx, Reply, ToolDef, object};
use crate::args::Args;
use crate::budget::Listing;

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "relations",
    title: "Callers, callees, uses, impact",
    description: "The code graph around `target` (a selector: `name`, `Qualified::name`, \
`path/to/file:name`; for impact also a file path). `direction`: `callers`, `callees`, `refs` (every use: \
calls, references, imports, inheritance) or `impact` (what depends on it, transitively). `depth` 1..32 hops \
(default 1; impact 3). Nearest first, then by path: path:line, the definition reached, edge kind, \
confidence (exact, import, name), call site.",
    input: || {
        object(
            json!({
                "target": {"type": "string", "description": "selector or (impact) file path"},
                "direction": {"type": "string", "enum": ["callers", "callees", "refs", "impact"]},
                "depth": {"type": ["integer", "string"], "description": "hops, 1..32"}
            }),
            &["target", "direction"],
        )
    },
    output: || {
        object(
            json!({
                "direction": {"type": "string"},
                "targets": {"type": "array", "items": {"type": "string"}},
                "relations": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "symbol": {"type": ["string", "null"]},
                        "kind": {"type": ["string", "null"]},
                        "path": {"type": "string"}, "line": {"type": "integer"},
                        "depth": {"type": "integer"}, "edge": {"type": "string"},
                        "confidence": {"type": "string"}, "site": {"type": "string"}
                    },
                    "required": ["path", "line", "depth", "edge", "confidence"]
                }}
            }),
            &["direction", "targets", "relations"],
        )
    },
    list: Some("relations"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let target = args.string("target")?;
    let direction = args.string("direction")?;
    let depth = args
        .opt_u64("depth")?
        .map(|d| u32::try_from(d).unwrap_or(u32::MAX));
    let ws = ctx.workspace()?;
    let page = super::page(args)?;
    let (items, lines, total, exact, targets, index) = if direction == "refs" {
        if depth.is_some_and(|d| d != 1) {
            return Err(ApiError::new(
                ErrorKind::InvalidInput,
                "`depth` applies to callers, callees and impact, not to refs",
            )
            .hint("drop `depth`, or ask `callers` with a depth"));
        }
        let r = loci_api::graph::refs(
            &ws,
            &SymbolRequest {
                symbol: target.clone(),
                page,
            },
            &ctx.opts,
        )?;
        let lines = r
            .refs
            .iter()
            .map(|h| {
                let from = h
                    .from
                    .as_ref()
                    .map_or("(top level)", |s| s.qualified_name.as_str());
                format!(
                    "{}:{} {} {} ({})",
                    h.path, h.line, from, h.edge, h.confidence
                )
            })
            .collect();
        let items: Vec<Value> = r
            .refs
            .iter()
            .map(|h| {
                json!({
                    "symbol": h.from.as_ref().map(|s| &s.qualified_name),
                    "kind": h.from.as_ref().map(|s| s.kind),
                    "path": h.path, "line": h.line, "depth": 1,
                    "edge": h.edge, "confidence": h.confidence,
                    "site": format!("{}:{}", h.path, h.line),
                })
            })
            .collect();
        let targets = vec![format!(
            "{}:{} {}",
            r.target.path, r.target.line, r.target.qualified_name
        )];
        (
            items,
            lines,
            r.page.total,
            r.page.total_exact,
            targets,
            r.index,
        )
    } else {
        let dir: Direction = super::parse_enum("direction", &direction)?;
        let req = TraversalRequest {
            target: target.clone(),
            depth,
            page,
        };
        let t = loci_api::graph::traverse(&ws, dir, &req, &ctx.opts)?;
        let lines = t
            .reached
            .iter()
            .map(|r| {
                let name = r
                    .symbol
                    .as_ref()
                    .map_or("(top level)", |s| s.qualified_name.as_str());
                format!(
                    "d{} {}:{} {} ({} {}) at {}:{}",
                    r.depth, r.path, r.line, name, r.edge, r.confidence, r.site.path, r.site.line
                )
            })
            .collect();
        let items: Vec<Value> = t
            .reached
            .iter()
            .map(|r| {
                json!({
                    "symbol": r.symbol.as_ref().map(|s| &s.qualified_name),
                    "kind": r.symbol.as_ref().map(|s| s.kind),
                    "path": r.path, "line": r.line, "depth": r.depth,
                    "edge": r.edge, "confidence": r.confidence,
                    "site": format!("{}:{}", r.site.path, r.site.line),
                })
            })
            .collect();
        (
            items,
            lines,
            t.page.total,
            t.page.total_exact,
            t.targets,
            t.index,
        )
    };
    let mut head = serde_json::Map::new();
    head.insert("direction".into(), json!(direction));
    head.insert("targets".into(), json!(targets));
    Ok(Reply {
        answer: Answer::List(Listing {
            key: "relations",
            items,
            lines,
            offset: super::offset(args),
            total,
            exact,
            head,
            title: format!("{direction} of `{target}`"),
        }),
        freshness: Some(index),
    })
}
