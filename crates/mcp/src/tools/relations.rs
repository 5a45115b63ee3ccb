//! `relations`: who calls a definition, what it calls, every use of it, or what depends
//! on it — one tool with a `direction` and a `depth`, nearest first.

use loci_api::graph::{Direction, FileGroup, GroupBy, RefsRequest, TraversalRequest};
use loci_api::vocab::index::{Confidence, EdgeKind, SymbolInfo, SymbolKind, Unresolved};
use loci_api::{ApiError, ErrorKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::wire::{Flag, Number, Object};
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;
use crate::budget::Listing;

/// Which relation a call asks for: a traversal's [`Direction`], or every use (`refs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Toward {
    Callers,
    Callees,
    Refs,
    Impact,
}

impl Toward {
    /// The traversal it names; `None` for `refs` (every use, one hop).
    fn traversal(self) -> Option<Direction> {
        match self {
            Toward::Callers => Some(Direction::Callers),
            Toward::Callees => Some(Direction::Callees),
            Toward::Impact => Some(Direction::Impact),
            Toward::Refs => None,
        }
    }

    /// Its name, as sent.
    fn name(self) -> &'static str {
        match self {
            Toward::Callers => "callers",
            Toward::Callees => "callees",
            Toward::Refs => "refs",
            Toward::Impact => "impact",
        }
    }
}

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Input {
    /// selector or (impact) file path
    target: String,
    direction: Toward,
    /// hops, 1..32
    depth: Option<Number>,
    /// list unresolved uses
    include_unresolved: Option<Flag>,
    /// impact: name-only links too
    include_name_only: Option<Flag>,
    /// glob, file or folder
    path: Option<String>,
    edges: Option<Vec<EdgeKind>>,
    group_by: Option<GroupBy>,
}

/// The answer.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: built as a Listing")]
struct Output {
    direction: String,
    targets: Vec<String>,
    relations: Vec<Relation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    groups: Option<Vec<Object>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unresolved: Option<Object>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name_only_left_out: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    candidates: Option<Vec<Object>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    candidate_count: Option<u64>,
}

/// One definition (or a file's top level) reached, and the edge that reached it.
#[derive(Serialize, JsonSchema)]
struct Relation {
    symbol: Option<String>,
    #[schemars(with = "Option<String>")]
    kind: Option<SymbolKind>,
    path: String,
    line: u32,
    depth: u32,
    // Strings, as `kind`: the tool's description names the values.
    #[schemars(with = "String")]
    edge: EdgeKind,
    #[schemars(with = "String")]
    confidence: Confidence,
    site: String,
}

impl Relation {
    /// The item of an edge to `from` at `path:line` (its site `site`).
    fn new(
        from: Option<&SymbolInfo>,
        (path, line, depth): (&str, u32, u32),
        (edge, confidence): (EdgeKind, Confidence),
        site: String,
    ) -> Relation {
        Relation {
            symbol: from.map(|s| s.qualified_name.clone()),
            kind: from.map(|s| s.kind),
            path: path.to_string(),
            line,
            depth,
            edge,
            confidence,
            site,
        }
    }
}

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "relations",
    title: "Callers, callees, uses, impact",
    description: "The code graph around `target` (a selector: `name`, `Qualified::name`, \
`path/to/file:name`; for impact also a file path). `direction`: `callers`, `callees`, `refs` (every use) \
or `impact` (what depends on it, transitively). `depth` 1..32 hops \
(default 1; impact 3). Nearest first, with edge kind, confidence \
(exact, import, name) and call site. Filters: `path`, `edges`; `group_by: file` counts per file. \
`unresolved` counts same-named uses that linked nowhere. An ambiguous target gives `candidates`, \
most used first, each a `target`.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: Some("relations"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let input: Input = args.parse()?;
    let (target, direction) = (input.target.clone(), input.direction.name());
    answer(ctx, args, input).or_else(|e| {
        let mut head = serde_json::Map::new();
        head.insert("direction".into(), json!(direction));
        head.insert("targets".into(), json!([]));
        head.insert("relations".into(), json!([]));
        super::ambiguity::answer(e, &target, head, || {
            loci_api::graph::freshness(&*ctx.workspace()?, &ctx.opts)
        })
    })
}

/// The relations `input` asks for.
fn answer(ctx: &Ctx<'_>, args: &Args, input: Input) -> Result<Reply, ApiError> {
    let Input {
        target,
        direction: toward,
        depth,
        include_unresolved,
        include_name_only,
        path,
        edges,
        group_by,
    } = input;
    let include_unresolved = include_unresolved.is_some_and(|f| f.0);
    let direction = toward.name();
    let depth = depth.map(|d| u32::try_from(d.0).unwrap_or(u32::MAX));
    let ws = ctx.workspace()?;
    let page = super::page(args)?;
    let mut key = "relations";
    let mut name_only_left_out = 0;
    let (items, lines, total, exact, targets, index, unresolved) = match toward.traversal() {
        None => {
            if depth.is_some_and(|d| d != 1) {
                return Err(ApiError::new(
                    ErrorKind::InvalidInput,
                    "`depth` applies to callers, callees and impact, not to refs",
                )
                .hint("drop `depth`, or ask `callers` with a depth"));
            }
            if path.is_some() || edges.is_some() || group_by.is_some() {
                return Err(ApiError::new(
                    ErrorKind::InvalidInput,
                    "`path`, `edges` and `group_by` apply to callers, callees and impact, not to refs",
                )
                .hint("drop them, or ask `impact` with them"));
            }
            let r = loci_api::graph::refs(
                &ws,
                &RefsRequest {
                    symbol: target.clone(),
                    include_unresolved,
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
            let items = r
                .refs
                .iter()
                .map(|h| {
                    super::to_value(&Relation::new(
                        h.from.as_ref(),
                        (&h.path, h.line, 1),
                        (h.edge, h.confidence),
                        format!("{}:{}", h.path, h.line),
                    ))
                })
                .collect::<Result<Vec<Value>, _>>()?;
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
                r.unresolved,
            )
        }
        Some(dir) => {
            let req = TraversalRequest {
                target: target.clone(),
                depth,
                include_unresolved,
                include_name_only: include_name_only.is_some_and(|f| f.0),
                path,
                edges,
                group_by,
                page,
            };
            let t = loci_api::graph::traverse(&ws, dir, &req, &ctx.opts)?;
            name_only_left_out = t.name_only_left_out;
            if let Some(groups) = &t.groups {
                key = "groups";
                let lines = groups.iter().map(group_line).collect();
                let items = groups
                    .iter()
                    .map(super::to_value)
                    .collect::<Result<Vec<Value>, _>>()?;
                (
                    items,
                    lines,
                    t.page.total,
                    t.page.total_exact,
                    t.targets,
                    t.index,
                    t.unresolved,
                )
            } else {
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
                            r.depth,
                            r.path,
                            r.line,
                            name,
                            r.edge,
                            r.confidence,
                            r.site.path,
                            r.site.line
                        )
                    })
                    .collect();
                let items = t
                    .reached
                    .iter()
                    .map(|r| {
                        super::to_value(&Relation::new(
                            r.symbol.as_ref(),
                            (&r.path, r.line, r.depth),
                            (r.edge, r.confidence),
                            format!("{}:{}", r.site.path, r.site.line),
                        ))
                    })
                    .collect::<Result<Vec<Value>, _>>()?;
                (
                    items,
                    lines,
                    t.page.total,
                    t.page.total_exact,
                    t.targets,
                    t.index,
                    t.unresolved,
                )
            }
        }
    };
    let mut head = serde_json::Map::new();
    head.insert("direction".into(), json!(direction));
    head.insert("targets".into(), json!(targets));
    if key == "groups" {
        head.insert("relations".into(), json!([]));
    }
    let mut title = format!("{direction} of `{target}`");
    if unresolved.count > 0 || !unresolved.complete {
        title.push_str(&unresolved_text(&unresolved));
        head.insert("unresolved".into(), super::to_value(&unresolved)?);
    }
    if name_only_left_out > 0 {
        title.push_str(&format!(
            "\n+ {name_only_left_out} reached only by links made by name alone, left out; include_name_only: true follows them"
        ));
        head.insert("name_only_left_out".into(), json!(name_only_left_out));
    }
    Ok(Reply {
        answer: Answer::List(Listing {
            key,
            items,
            lines,
            offset: super::offset(args),
            total,
            exact,
            head,
            title,
        }),
        freshness: Some(index),
    })
}

/// One file of a grouped answer: its count, the fewest hops and its edges by kind.
fn group_line(g: &FileGroup) -> String {
    let edges: Vec<String> = g.edges.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!(
        "{} {} (d{}; {})",
        g.path,
        g.count,
        g.depth,
        edges.join(", ")
    )
}

/// Most unresolved sites the text shows (the structured answer has them all).
const SITES_IN_TEXT: usize = 20;

/// What the answer could not link, as text after its title: the count and why, then
/// the sites when they were asked for.
fn unresolved_text(u: &Unresolved) -> String {
    let reasons: Vec<String> = u
        .reasons
        .iter()
        .map(|r| format!("{} {}", r.reason.name(), r.count))
        .collect();
    let files: Vec<String> = u
        .files
        .iter()
        .take(3)
        .map(|f| format!("{} ({})", f.path, f.count))
        .collect();
    let mut out = format!(
        "\n+ {}{} same-named uses linked to no definition ({}) in {}",
        if u.complete { "" } else { "at least " },
        u.count,
        reasons.join(", "),
        files.join(", ")
    );
    match &u.sites {
        None => out.push_str("; include_unresolved: true lists them"),
        Some(sites) => {
            for s in sites.iter().take(SITES_IN_TEXT) {
                out.push_str(&format!(
                    "\n  ? {}:{} {} [{}] in {}",
                    s.path,
                    s.line,
                    s.written(),
                    s.reason.name(),
                    s.from.as_deref().unwrap_or("(top level)")
                ));
            }
            if sites.len() > SITES_IN_TEXT {
                out.push_str(&format!(
                    "\n  ... {} more in structuredContent.unresolved.sites",
                    sites.len() - SITES_IN_TEXT
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use loci_api::graph::GroupBy;
    use loci_api::vocab::index::EdgeKind;

    use super::{Input, Toward};
    use crate::args::of;
    use crate::tools::wire::{Flag, Number};

    #[test]
    fn relations_arguments_parse_into_its_input() {
        let input: Input = of(json!({"target": "helper", "direction": "impact", "depth": "2"}))
            .parse()
            .unwrap();
        let want = Input {
            target: "helper".into(),
            direction: Toward::Impact,
            depth: Some(Number(2)),
            include_unresolved: None,
            include_name_only: None,
            path: None,
            edges: None,
            group_by: None,
        };
        assert_eq!(input, want);
        assert_eq!(input.direction.name(), "impact");
        let input: Input = of(json!({"target": "f.rs", "direction": "impact",
            "include_unresolved": "true", "path": "src/sync", "edges": ["CALLS", "IMPORTS"],
            "group_by": "file", "include_name_only": true}))
        .parse()
        .unwrap();
        assert_eq!(input.include_unresolved, Some(Flag(true)));
        assert_eq!(input.include_name_only, Some(Flag(true)));
        assert_eq!(input.path.as_deref(), Some("src/sync"));
        assert_eq!(input.edges, Some(vec![EdgeKind::Calls, EdgeKind::Imports]));
        assert_eq!(input.group_by, Some(GroupBy::File));
        let e = of(json!({"target": "t", "direction": "impact", "edges": ["CALLZ"]}))
            .parse::<Input>()
            .unwrap_err()
            .error;
        assert_eq!(e.kind, loci_api::ErrorKind::InvalidInput);
        assert!(e.message.contains("edges"), "{}", e.message);
    }

    #[test]
    fn a_bad_direction_is_named() {
        for (sent, want) in [
            (
                json!({"target": "t", "direction": "sideways"}),
                "`direction` \"sideways\" is not a known value: unknown variant `sideways`, expected one of `callers`, `callees`, `refs`, `impact`",
            ),
            (
                json!({"target": "t"}),
                "the argument `direction` is required",
            ),
            (
                json!({"target": "t", "direction": "callers", "depth": -2}),
                "the argument `depth` must be a non-negative integer, not -2",
            ),
        ] {
            let e = of(sent.clone()).parse::<Input>().unwrap_err().error;
            assert_eq!(e.kind, loci_api::ErrorKind::InvalidInput, "{sent}");
            assert_eq!(e.message, want, "{sent}");
        }
    }
}
