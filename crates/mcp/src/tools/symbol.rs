//! `symbol`: one definition in full — signature, doc comment, an excerpt of its body
//! and the outline of what it contains; on a file's path, the file's outline.

use std::io::{BufRead, BufReader};

use loci_api::graph::{OutlineRequest, SymbolRequest};
use loci_api::vocab::index::SymbolKind;
use loci_api::{ApiError, PageRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::item::SymbolItem;
use super::wire::Number;
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;
use crate::budget::{Listing, clip};

/// Body lines shown when the call names none.
const BODY_LINES: u64 = 40;
/// Most body lines a call may ask for.
const MAX_BODY_LINES: u64 = 400;
/// Characters of one body line kept.
const LINE_CHARS: usize = 240;
/// Characters of a doc comment kept.
const DOC_CHARS: usize = 1_200;
/// Members listed in a definition's outline.
const OUTLINE_ITEMS: usize = 60;

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Input {
    /// selector
    symbol: String,
    /// body lines to show (default 40, at most 400; 0 for none)
    body_lines: Option<Number>,
}

/// The answer.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: built as a Listing")]
struct Output {
    definitions: Vec<Definition>,
}

/// One definition in full.
#[derive(Serialize, JsonSchema)]
struct Definition {
    #[serde(flatten)]
    item: SymbolItem,
    #[serde(skip_serializing_if = "Option::is_none")]
    doc: Option<String>,
    /// the first body_lines lines
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body_truncated: Option<bool>,
    members: Vec<Member>,
}

/// A definition inside another, `depth` levels down.
#[derive(Serialize, JsonSchema)]
struct Member {
    name: String,
    #[schemars(with = "String")]
    kind: SymbolKind,
    line: u32,
    depth: u32,
}

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "symbol",
    title: "Definition",
    description: "One definition by selector (`name`, `Qualified::name` with any separator, or \
`path/to/file:name`): signature, doc comment, the first `body_lines` lines of its body (default 40) \
and the outline of its members. A name defined in several places gives each definition. \
A file's path gives its outline.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: Some("definitions"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let Input {
        symbol: selector,
        body_lines,
    } = args.parse()?;
    let body_lines = match body_lines.map_or(BODY_LINES, |n| n.0) {
        n if n > MAX_BODY_LINES => {
            return Err(ApiError::new(
                loci_api::ErrorKind::LimitExceeded,
                format!("`body_lines` {n} is above its limit {MAX_BODY_LINES}"),
            ));
        }
        n => n as usize,
    };
    let ws = ctx.workspace()?;
    // `a/b.rs` can only be a file (a selector naming a definition in a file has `:`);
    // `build.rs` is a file when no definition has that name.
    if names_a_path(&selector) {
        return file_outline(ctx, &ws, &selector, args);
    }
    let req = SymbolRequest {
        symbol: selector.clone(),
        page: super::page(args)?,
    };
    let defs = match loci_api::graph::def(&ws, &req, &ctx.opts) {
        Ok(defs) => defs,
        Err(e) if e.kind == loci_api::ErrorKind::NotFound && !selector.contains(':') => {
            return file_outline(ctx, &ws, &selector, args).map_err(|_| e);
        }
        Err(e) => return Err(e),
    };
    let mut items = Vec::with_capacity(defs.symbols.len());
    let mut lines = Vec::with_capacity(defs.symbols.len());
    for s in &defs.symbols {
        let (body, body_truncated) = if body_lines > 0 {
            let (body, truncated) = excerpt(ctx.root, &s.path, s.line, s.end_line, body_lines);
            (Some(body), Some(truncated))
        } else {
            (None, None)
        };
        let def = Definition {
            item: SymbolItem::of(s),
            doc: s.doc.as_deref().map(|d| clip(d, DOC_CHARS)),
            body,
            body_truncated,
            members: members(ctx, &ws, s),
        };
        let mut line = format!(
            "{}:{}-{} {} {}\n  {}",
            s.path, s.line, s.end_line, s.kind, s.qualified_name, s.signature
        );
        for l in def.body.as_deref().unwrap_or_default().lines() {
            line.push_str("\n  | ");
            line.push_str(l);
        }
        items.push(super::to_value(&def)?);
        lines.push(line);
    }
    let title = format!("definitions of `{selector}`");
    Ok(definitions(
        args,
        (items, lines),
        &defs.page,
        title,
        defs.index,
    ))
}

/// The reply listing `items` (rendered as `lines`), a page of `page`.
fn definitions(
    args: &Args,
    (items, lines): (Vec<serde_json::Value>, Vec<String>),
    page: &loci_api::PageInfo,
    title: String,
    index: loci_api::Freshness,
) -> Reply {
    Reply {
        answer: Answer::List(Listing {
            key: "definitions",
            items,
            lines,
            offset: super::offset(args),
            total: page.total,
            exact: page.total_exact,
            head: Default::default(),
            title,
        }),
        freshness: Some(index),
    }
}

/// Whether `selector` can only name a file: a path with a folder and no `:name`.
fn names_a_path(selector: &str) -> bool {
    selector.contains('/') && !selector.contains(':')
}

/// The outline of the file `path`: its top-level definitions, a page of them, each with
/// the definitions inside it as members.
fn file_outline(
    ctx: &Ctx<'_>,
    ws: &loci_api::Workspace,
    path: &str,
    args: &Args,
) -> Result<Reply, ApiError> {
    let window = super::page(args)?.window(loci_api::graph::LIST_LIMIT)?;
    let req = OutlineRequest {
        file: path.to_string(),
        page: PageRequest::first(loci_api::MAX_LIMIT),
    };
    let outline = loci_api::graph::outline(ws, &req, &ctx.opts)?;
    let all = &outline.symbols;
    let tops: Vec<usize> = (0..all.len()).filter(|&i| all[i].depth == 0).collect();
    let (tops, page) = window.slice(tops, outline.page.total_exact);
    let mut items = Vec::with_capacity(tops.len());
    let mut lines = Vec::with_capacity(tops.len());
    for i in tops {
        let s = &all[i].symbol;
        let members: Vec<Member> = all[i + 1..]
            .iter()
            .take_while(|o| o.depth > 0)
            .take(OUTLINE_ITEMS)
            .map(|o| Member {
                name: o.symbol.name.clone(),
                kind: o.symbol.kind,
                line: o.symbol.line,
                depth: o.depth,
            })
            .collect();
        let mut line = format!("{}-{} {} {}", s.line, s.end_line, s.kind, s.qualified_name);
        for m in &members {
            line.push_str(&format!(
                "\n  {}{}: {} {}",
                "  ".repeat(m.depth as usize - 1),
                m.line,
                m.kind,
                m.name
            ));
        }
        let def = Definition {
            item: SymbolItem::of(s),
            doc: None,
            body: None,
            body_truncated: None,
            members,
        };
        items.push(super::to_value(&def)?);
        lines.push(line);
    }
    let title = format!("outline of `{path}`");
    Ok(definitions(
        args,
        (items, lines),
        &page,
        title,
        outline.index,
    ))
}

/// The first `max` lines of `path` from `line` to `end_line`, and whether more followed.
fn excerpt(
    root: &std::path::Path,
    path: &str,
    line: u32,
    end_line: u32,
    max: usize,
) -> (String, bool) {
    // Beneath the root: a file swapped for a symlink out of the workspace is not read.
    let Ok(file) = loci_api::vocab::paths::open_file_beneath(root, std::path::Path::new(path))
    else {
        return (String::new(), false);
    };
    let first = line.max(1) as usize;
    let last = (end_line as usize).max(first);
    let mut out = String::new();
    for (shown, text) in BufReader::new(file)
        .lines()
        .skip(first - 1)
        .take(last - first + 1)
        .map_while(Result::ok)
        .enumerate()
    {
        if shown == max {
            return (out, true);
        }
        out.push_str(&clip(&text, LINE_CHARS));
        out.push('\n');
    }
    (out, false)
}

/// The definitions inside `s` (its file's outline within its lines).
fn members(
    ctx: &Ctx<'_>,
    ws: &loci_api::Workspace,
    s: &loci_api::vocab::index::SymbolInfo,
) -> Vec<Member> {
    let req = OutlineRequest {
        file: s.path.clone(),
        page: PageRequest::first(loci_api::MAX_LIMIT),
    };
    let Ok(outline) = loci_api::graph::outline(ws, &req, &ctx.opts) else {
        return Vec::new();
    };
    let base = outline
        .symbols
        .iter()
        .find(|o| o.symbol.line == s.line && o.symbol.name == s.name)
        .map_or(0, |o| o.depth);
    outline
        .symbols
        .iter()
        .filter(|o| o.symbol.line > s.line && o.symbol.end_line <= s.end_line && o.depth > base)
        .take(OUTLINE_ITEMS)
        .map(|o| Member {
            name: o.symbol.name.clone(),
            kind: o.symbol.kind,
            line: o.symbol.line,
            depth: o.depth - base,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Input;
    use crate::args::of;
    use crate::tools::wire::Number;

    #[test]
    fn symbol_arguments_parse_into_its_input() {
        let input: Input = of(json!({"symbol": "cfg::parse", "body_lines": "0"}))
            .parse()
            .unwrap();
        let want = Input {
            symbol: "cfg::parse".into(),
            body_lines: Some(Number(0)),
        };
        assert_eq!(input, want);
        let e = of(json!({"body_lines": 3})).parse::<Input>().unwrap_err();
        assert_eq!(e.name, "symbol");
    }
}
