//! `search`: code text (a literal or a regular expression) through the index's
//! trigram search, each hit confirmed in the file; or, with `meaning` instead of
//! `pattern`, the code units a sentence describes (`loci_api::meaning::search`).

use loci_api::graph::SearchRequest;
use loci_api::meaning::{MeaningHit, MeaningRequest, MeaningWhy, Signals};
use loci_api::{ApiError, ErrorKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::wire::Flag;
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;
use crate::budget::{Listing, clip};

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Input {
    pattern: Option<String>,
    meaning: Option<String>,
    signals: Option<Signals>,
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

/// One hit: a line (`pattern`) or a code unit (`meaning`).
#[derive(Serialize, JsonSchema)]
struct Hit {
    path: String,
    line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    col: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<String>,
}

/// Characters of a hit's line shown.
const TEXT_CHARS: usize = 200;

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "search",
    title: "Search code text",
    description: "Lines holding `pattern` (a literal; a regular expression with `regex: true`) in every \
text file, docs and configs too (`source_only`: indexed source only), within `path`. Hits in path, line \
order: path:line:col and the line. Or `meaning`: the code units a sentence describes, best first.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: Some("hits"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let input: Input = args.parse()?;
    match (input.pattern, input.meaning) {
        (Some(pattern), None) => {
            if input.signals.is_some() {
                return Err(only_with("signals", "meaning"));
            }
            text_search(
                ctx,
                args,
                pattern,
                input.regex,
                input.ignore_case,
                input.path,
                input.source_only,
            )
        }
        (None, Some(meaning)) => {
            let flags = [
                ("regex", input.regex.is_some()),
                ("ignore_case", input.ignore_case.is_some()),
                ("path", input.path.is_some()),
                ("source_only", input.source_only.is_some()),
            ];
            if let Some((name, _)) = flags.iter().find(|(_, sent)| *sent) {
                return Err(only_with(name, "pattern"));
            }
            meaning_search(ctx, args, meaning, input.signals.unwrap_or_default())
        }
        (Some(_), Some(_)) => Err(ApiError::new(
            ErrorKind::InvalidInput,
            "pass `pattern` or `meaning`, not both",
        )
        .hint("`pattern` finds text; `meaning` finds code by a sentence saying what it does")),
        (None, None) => Err(ApiError::new(
            ErrorKind::InvalidInput,
            "the argument `pattern` or `meaning` is required",
        )
        .hint("pass `pattern` (text) or `meaning` (a sentence) as a string")),
    }
}

/// `invalid_input`: the argument `name` goes with `with` only.
fn only_with(name: &str, with: &str) -> ApiError {
    ApiError::new(
        ErrorKind::InvalidInput,
        format!("the argument `{name}` applies to `{with}` searches only"),
    )
}

fn text_search(
    ctx: &Ctx<'_>,
    args: &Args,
    pattern: String,
    regex: Option<Flag>,
    ignore_case: Option<Flag>,
    path: Option<String>,
    source_only: Option<Flag>,
) -> Result<Reply, ApiError> {
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
                col: Some(h.col),
                text: Some(clip(&h.text, TEXT_CHARS)),
                name: None,
                kind: None,
                score: None,
                why: None,
            })
        })
        .collect::<Result<_, _>>()?;
    let title = format!("hits of `{pattern}`");
    Ok(listing(args, items, lines, &page.page, title, page.index))
}

/// The answer of either mode: a page of hits.
fn listing(
    args: &Args,
    items: Vec<serde_json::Value>,
    lines: Vec<String>,
    page: &loci_api::PageInfo,
    title: String,
    index: loci_api::Freshness,
) -> Reply {
    Reply {
        answer: Answer::List(Listing {
            key: "hits",
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

/// Characters of the query shown in the answer's title.
const QUERY_CHARS: usize = 80;

fn meaning_search(
    ctx: &Ctx<'_>,
    args: &Args,
    text: String,
    signals: Signals,
) -> Result<Reply, ApiError> {
    let req = MeaningRequest {
        text,
        signals,
        page: super::page(args)?,
    };
    let ws = ctx.workspace()?;
    let page = loci_api::meaning::search(&ws, &req, &ctx.opts).map_err(for_tools)?;
    let lines = page
        .hits
        .iter()
        .map(|h| {
            format!(
                "{}:{} {} {} {:.3} ({})",
                h.path,
                h.line,
                h.qualified_name,
                h.kind,
                h.score,
                why(&h.why)
            )
        })
        .collect();
    let items = page
        .hits
        .iter()
        .map(|h| super::to_value(&unit(h)))
        .collect::<Result<_, _>>()?;
    let mut title = format!("code units for `{}`", clip(req.text.trim(), QUERY_CHARS));
    if let Some(hint) = &page.hint {
        title.push_str(&format!(" ({hint})"));
    }
    Ok(listing(args, items, lines, &page.page, title, page.index))
}

/// A unit as a hit: where, what, the score to 4 places and the short why.
fn unit(h: &MeaningHit) -> Hit {
    Hit {
        path: h.path.clone(),
        line: h.line,
        col: None,
        text: None,
        name: Some(h.qualified_name.clone()),
        kind: Some(h.kind.clone()),
        score: Some((h.score * 1e4).round() / 1e4),
        why: Some(why(&h.why)),
    }
}

/// Which signals found a unit, in a few words: `vector #1 0.62, text #3, 12 callers`.
fn why(w: &MeaningWhy) -> String {
    let mut parts = Vec::new();
    if let Some(v) = &w.vector {
        parts.push(format!("vector #{} {:.2}", v.rank, v.similarity));
    }
    if let Some(t) = &w.text {
        parts.push(format!("text #{}", t.rank));
    }
    if let Some(g) = &w.graph {
        parts.push(format!("{} callers", g.callers));
    }
    parts.join(", ")
}

/// The CLI's flag in `model_missing`'s hint said as this tool's argument.
fn for_tools(mut e: ApiError) -> ApiError {
    if let Some(hint) = e.hint.take() {
        e.hint = Some(hint.replace("`--text-only`", "`signals: \"text\"`"));
    }
    e
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
            pattern: Some("u32".into()),
            meaning: None,
            signals: None,
            regex: Some(Flag(true)),
            ignore_case: Some(Flag(false)),
            path: Some("src/**".into()),
            source_only: Some(Flag(true)),
        };
        assert_eq!(of(sent).parse::<Input>().unwrap(), want);
        let sent = json!({"meaning": "retry a request", "signals": "vectors"});
        let got = of(sent).parse::<Input>().unwrap();
        assert_eq!(got.meaning.as_deref(), Some("retry a request"));
        assert_eq!(got.signals, Some(loci_api::meaning::Signals::Vectors));
        let e = of(json!({"meaning": "x", "signals": "loud"}))
            .parse::<Input>()
            .unwrap_err();
        assert_eq!(e.name, "signals");
        let e = of(json!({"pattern": "u32", "regex": 1}))
            .parse::<Input>()
            .unwrap_err();
        assert_eq!(
            e.error.message,
            "the argument `regex` must be a boolean, not 1"
        );
    }
}
