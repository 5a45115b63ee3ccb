//! An ambiguous target answered with data: the definitions it could mean, in the
//! structured content and the text, most used first, each named by the `path:line` that
//! names it alone, so the agent asks again without another lookup.

use loci_api::{ApiError, ErrorKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Answer, Reply};
use crate::budget::Listing;

/// One definition an ambiguous target could mean (`relations`' `candidates`, described
/// in its tool description: the schema's bytes are paid in every client's context).
#[derive(Debug, Serialize, Deserialize)]
struct Candidate {
    /// `path:line`: the target naming this definition alone
    target: String,
    qualified_name: String,
    kind: String,
    path: String,
    line: u32,
    signature: String,
    /// the module it lives in
    module: String,
    /// uses linked to it
    uses: u64,
}

/// The answer to `error` when it is an ambiguity (`head`: the tool's other fields,
/// `index`: how fresh the index is); any other error stays one.
pub(crate) fn answer(
    error: ApiError,
    target: &str,
    head: serde_json::Map<String, Value>,
    index: impl FnOnce() -> Result<loci_api::Freshness, ApiError>,
) -> Result<Reply, ApiError> {
    if error.kind != ErrorKind::Ambiguous {
        return Err(error);
    }
    let detail = error.detail.clone().unwrap_or_default();
    let Some(listed) = detail.get("candidates").and_then(Value::as_array) else {
        return Err(error);
    };
    let mut candidates = Vec::with_capacity(listed.len());
    for c in listed {
        let mut c = c.clone();
        c["target"] = json!(format!(
            "{}:{}",
            c["path"].as_str().unwrap_or(""),
            c["line"]
        ));
        match serde_json::from_value::<Candidate>(c) {
            Ok(c) => candidates.push(c),
            Err(_) => return Err(error),
        }
    }
    let total = detail
        .get("candidate_count")
        .and_then(Value::as_u64)
        .unwrap_or(candidates.len() as u64);
    let lines = candidates
        .iter()
        .map(|c| {
            format!(
                "{} {} {} ({}; {} uses)  {}",
                c.target, c.kind, c.qualified_name, c.module, c.uses, c.signature
            )
        })
        .collect();
    let items = candidates
        .iter()
        .map(super::to_value)
        .collect::<Result<Vec<Value>, _>>()?;
    // The list is the most used few (no cursor reaches past them): the page counts them,
    // `candidate_count` every definition the target names.
    let mut head = head;
    head.insert("candidate_count".into(), json!(total));
    let shown = if total > items.len() as u64 {
        format!(", the {} most used shown", items.len())
    } else {
        ", most used first".to_string()
    };
    Ok(Reply {
        answer: Answer::List(Listing {
            key: "candidates",
            total: items.len() as u64,
            items,
            lines,
            offset: 0,
            exact: true,
            head,
            title: format!(
                "`{target}` is ambiguous: {total} definitions{shown}; ask again with one `target` below"
            ),
        }),
        freshness: Some(index()?),
    })
}
