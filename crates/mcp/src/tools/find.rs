//! `find`: definitions by name or glob, exact names first.

use loci_api::ApiError;
use loci_api::graph::FindRequest;
use loci_api::vocab::index::{Lang, SymbolKind};
use schemars::JsonSchema;
use serde::Deserialize;

use super::item::SymbolItem;
use super::{Answer, Ctx, Reply, ToolDef, symbol_item};
use crate::args::Args;
use crate::budget::Listing;

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Input {
    /// name or glob
    pattern: String,
    kind: Option<SymbolKind>,
    lang: Option<Lang>,
}

/// The answer.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: built as a Listing")]
struct Output {
    symbols: Vec<SymbolItem>,
}

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "find",
    title: "Find definitions",
    description: "Definitions (functions, methods, classes, types, ...) whose name matches \
`pattern`: an exact name or a glob (`parse_*`, `*Error`, `[A-Z]*`), optionally one `kind` and `lang`. \
Each hit: path:line, kind, qualified name, signature; exact names first. `symbol` shows one \
definition's body, `relations` its callers.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: Some("symbols"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let Input {
        pattern,
        kind,
        lang,
    } = args.parse()?;
    let req = FindRequest {
        kind,
        lang,
        pattern: pattern.clone(),
        page: super::page(args)?,
    };
    let ws = ctx.workspace()?;
    let mut page = loci_api::graph::find(&ws, &req, &ctx.opts)?;
    // Relevance: an exact name before a glob's other matches (stable: then name, path).
    page.symbols.sort_by_key(|s| s.name != pattern);
    let lines = page
        .symbols
        .iter()
        .map(|s| format!("{}:{} {} {}", s.path, s.line, s.kind, s.qualified_name))
        .collect();
    let items = page.symbols.iter().map(symbol_item).collect();
    Ok(Reply {
        answer: Answer::List(Listing {
            key: "symbols",
            items,
            lines,
            offset: super::offset(args),
            total: page.page.total,
            exact: page.page.total_exact,
            head: Default::default(),
            title: format!("definitions matching `{pattern}`"),
        }),
        freshness: Some(page.index),
    })
}

#[cfg(test)]
mod tests {
    use loci_api::vocab::index::{Lang, SymbolKind};
    use serde_json::json;

    use super::Input;
    use crate::args::of;

    #[test]
    fn find_arguments_parse_into_its_input() {
        let input: Input = of(json!({"pattern": "parse_*", "kind": "function", "lang": "rust"}))
            .parse()
            .unwrap();
        let want = Input {
            pattern: "parse_*".into(),
            kind: Some(SymbolKind::Function),
            lang: Some(Lang::Rust),
        };
        assert_eq!(input, want);
    }

    #[test]
    fn a_bad_kind_or_lang_is_named() {
        for (sent, want) in [
            (
                json!({"pattern": "x", "kind": "spaceship"}),
                "`kind` \"spaceship\" is not a known value: unknown variant `spaceship`",
            ),
            (
                json!({"pattern": "x", "kind": 5}),
                "the argument `kind` must be a string, not 5",
            ),
            (
                json!({"pattern": "x", "lang": "cobol"}),
                "`lang` \"cobol\" is not a known value",
            ),
            (
                json!({"kind": "function"}),
                "the argument `pattern` is required",
            ),
        ] {
            let e = of(sent.clone()).parse::<Input>().unwrap_err().error;
            assert_eq!(e.kind, loci_api::ErrorKind::InvalidInput, "{sent}");
            assert!(e.message.starts_with(want), "{sent}: {}", e.message);
        }
    }
}
