//! `recall`: the memories that answer a question or concern a symbol or file, fused
//! from full text, vectors (when installed), entities and the code graph, each hit
//! saying why it ranked and whether the code it is linked to changed.

use loci_api::ApiError;
use loci_api::memory::{self as mem, RecallRequest};
use loci_api::vocab::memory::MemoryType;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::memory::{Scope, freshness, target};
use super::wire::{Number, Object};
use super::{Answer, Ctx, Reply, ToolDef, to_value};
use crate::args::Args;

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Input {
    query: Option<String>,
    symbol: Option<String>,
    file: Option<String>,
    namespace: Option<String>,
    scope: Option<Scope>,
    // Strings in the schema, as `type` in remember and memory (see MemoryArgs).
    #[schemars(with = "Option<Vec<String>>")]
    types: Option<Vec<MemoryType>>,
    since: Option<String>,
    until: Option<String>,
    limit: Option<Number>,
}

/// The answer.
#[derive(JsonSchema)]
#[allow(
    dead_code,
    reason = "schema only: the answer is loci_api's, its hits cut to the budget"
)]
struct Output {
    hits: Vec<Object>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vectors: Option<Object>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cut_by_budget: Option<u64>,
}

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "recall",
    title: "Recall memories",
    description: "Memories for a `query`, or linked to a `symbol` (or code it reaches) or `file`. Each hit \
says why it ranked, a `snippet` of its body and if its code went `stale`.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: None,
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let Input {
        query,
        symbol,
        file,
        namespace,
        scope,
        types,
        since,
        until,
        limit,
    } = args.parse()?;
    let mut req = RecallRequest {
        query: query.unwrap_or_default(),
        symbol,
        file,
        limit: super::within("limit", limit, mem::MAX_RECALL_LIMIT as u64)?,
        ..RecallRequest::default()
    };
    req.filter.namespace = namespace;
    req.filter.types = types.unwrap_or_default();
    req.filter.since = since;
    req.filter.until = until;
    let answer = mem::recall(&target(ctx, scope), &req)?;
    let mut text = format!(
        "{} memories (vectors {})",
        answer.hits.len(),
        answer.vectors.state
    );
    for h in &answer.hits {
        text.push_str(&format!(
            "\n{:.3} {}{}",
            h.score,
            h.memory.name,
            if h.stale { " STALE" } else { "" }
        ));
        if let Some(s) = &h.snippet {
            text.push_str(&format!("\n  | {s}"));
        }
        for r in &h.stale_reasons {
            text.push_str(&format!("\n  stale: {r}"));
        }
    }
    let mut structured = to_value(&answer)?;
    // The budget: the last hits go first, and the answer says so.
    let room = super::memory::body_budget(args)?;
    let mut cut = 0;
    while structured.to_string().len() > room {
        match structured["hits"].as_array_mut() {
            Some(hits) if hits.len() > 1 => {
                hits.pop();
                cut += 1;
            }
            _ => break,
        }
    }
    if cut > 0 {
        structured["cut_by_budget"] = json!(cut);
        text.push_str(&format!(
            "\n[{cut} more hits cut by budget: raise max_chars or lower limit]"
        ));
    }
    Ok(Reply {
        answer: Answer::One { structured, text },
        freshness: freshness(ctx),
    })
}

#[cfg(test)]
mod tests {
    use loci_api::vocab::memory::MemoryType;
    use serde_json::json;

    use super::Input;
    use crate::args::of;
    use crate::tools::memory::Scope;
    use crate::tools::wire::Number;

    #[test]
    fn recall_arguments_parse_into_its_input() {
        let sent = json!({"query": "no IO", "scope": "user", "types": ["decision"], "limit": "5", "since": null});
        let want = Input {
            query: Some("no IO".into()),
            symbol: None,
            file: None,
            namespace: None,
            scope: Some(Scope::User),
            types: Some(vec![MemoryType::Decision]),
            since: None,
            until: None,
            limit: Some(Number(5)),
        };
        assert_eq!(of(sent).parse::<Input>().unwrap(), want);
    }

    #[test]
    fn a_bad_type_or_scope_is_named() {
        for (sent, want) in [
            (
                json!({"types": ["nope"]}),
                "`types[0]` \"nope\" is not a known value: unknown variant `nope`",
            ),
            (
                json!({"types": "decision"}),
                "the argument `types` must be a sequence, not \"decision\"",
            ),
            (
                json!({"scope": "team"}),
                "`scope` \"team\" is not a known value: unknown variant `team`, expected `workspace` or `user`",
            ),
        ] {
            let e = of(sent.clone()).parse::<Input>().unwrap_err().error;
            assert!(e.message.starts_with(want), "{sent}: {}", e.message);
        }
    }
}
