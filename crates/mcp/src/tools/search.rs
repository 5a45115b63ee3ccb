//! `search`: code text (a literal or a regular expression) through the index's
//! trigram search, each hit confirmed in the file.

use loci_api::ApiError;
use loci_api::graph::SearchRequest;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::wire::Flag;
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;
use crate::budget::{Listing, clip};

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Input {
    pattern: String,
    regex: Option<Flag>,
    ignore_case: Option<Flag>,
    /// glob, file or folder
    path: Option<String>,
    source_only: Option<Flag>,
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
    description: "Lines holding `pattern` (a literal; a regular expression with `regex: true`) in every \
text file, docs and configs too (`source_only`: indexed source only), within `path`. Hits in path, line \
order: path:line:col and the line.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: Some("hits"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let Input {
        pattern,
        regex,
        ignore_case,
        path,
        source_only,
    } = args.parse()?;
    let req = SearchRequest {
        pattern: pattern.clone(),
        regex: regex.is_some_and(|f| f.0),
        ignore_case: ignore_case.is_some_and(|f| f.0),
        path,
        source_only: source_only.is_some_and(|f| f.0),
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Input;
    use crate::args::of;
    use crate::tools::wire::Flag;

    #[test]
    fn search_arguments_parse_into_its_input() {
        let sent = json!({"pattern": "u32", "regex": "true", "ignore_case": false, "path": "src/**",
            "source_only": "true"});
        let want = Input {
            pattern: "u32".into(),
            regex: Some(Flag(true)),
            ignore_case: Some(Flag(false)),
            path: Some("src/**".into()),
            source_only: Some(Flag(true)),
        };
        assert_eq!(of(sent).parse::<Input>().unwrap(), want);
        let e = of(json!({"pattern": "u32", "regex": 1}))
            .parse::<Input>()
            .unwrap_err();
        assert_eq!(
            e.error.message,
            "the argument `regex` must be a boolean, not 1"
        );
    }
}
