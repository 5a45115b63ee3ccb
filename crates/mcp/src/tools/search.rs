//! `search`: code text (a literal or a regular expression) through the index's
//! trigram search, each hit confirmed in the file.

use loci_api::ApiError;
use loci_api::graph::SearchRequest;
use schemars::JsonSchema;
use serde::Serialize;

use super::wire::Flag;
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;
use crate::budget::{Listing, clip};

/// The arguments.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: read through Args")]
struct Input {
    pattern: String,
    regex: Option<Flag>,
    ignore_case: Option<Flag>,
    /// glob over paths
    path: Option<String>,
}

/// The answer.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: built as a Listing")]
struct Output {
    hits: Vec<Hit>,
}

/// One hit.
#[derive(Serialize, JsonSchema)]
struct Hit {
    path: String,
    line: u32,
    col: u32,
    text: String,
}

/// Characters of a hit's line shown.
const TEXT_CHARS: usize = 200;

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "search",
    title: "Search code text",
    description: "Lines of indexed files containing `pattern` (a literal, or a regular expression with \
`regex: true`), optionally case-insensitive and limited to paths matching the glob `path` (`src/**/*.rs`). \
Hits in path then line order, each as path:line:col and the line's text.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: Some("hits"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let pattern = args.string("pattern")?;
    let req = SearchRequest {
        pattern: pattern.clone(),
        regex: args.opt_bool("regex")?.unwrap_or(false),
        ignore_case: args.opt_bool("ignore_case")?.unwrap_or(false),
        path: args.opt_string("path")?,
        page: super::page(args)?,
    };
    let ws = ctx.workspace()?;
    let page = loci_api::graph::search(&ws, &req, &ctx.opts)?;
    let lines = page
        .hits
        .iter()
        .map(|h| {
            format!(
                "{}:{}:{}: {}",
                h.path,
                h.line,
                h.col,
                clip(h.text.trim_end(), TEXT_CHARS)
            )
        })
        .collect();
    let items = page
        .hits
        .iter()
        .map(|h| {
            super::to_value(&Hit {
                path: h.path.clone(),
                line: h.line,
                col: h.col,
                text: clip(&h.text, TEXT_CHARS),
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Reply {
        answer: Answer::List(Listing {
            key: "hits",
            items,
            lines,
            offset: super::offset(args),
            total: page.page.total,
            exact: page.page.total_exact,
            head: Default::default(),
            title: format!("hits of `{pattern}`"),
        }),
        freshness: Some(page.index),
    })
}
