//! The tools, one module each. A tool is a [`ToolDef`]: its name, description, input
//! and output JSON Schemas, annotations, and the function that converts the arguments,
//! calls `loci_api` and converts the answer back. Adding a tool is adding a module and
//! one line to [`TOOLS`]; the server lists and dispatches from that table alone.

mod ambiguity;
pub mod changes;
pub mod find;
mod item;
pub mod memory;
pub mod query;
pub mod recall;
pub mod relations;
pub mod remember;
pub mod search;
mod shared;
pub mod status;
pub mod symbol;
pub(crate) mod wire;

use std::path::Path;
use std::sync::Arc;

use loci_api::tool_schema::{Side, tool_schema};
use loci_api::{ApiError, Freshness, ReadOptions, Workspace};
use schemars::JsonSchema;
use serde_json::{Value, json};

use crate::args::Args;
use crate::budget::Listing;
use crate::host::Host;

/// Every tool this server offers, in the order `tools/list` shows them.
pub const TOOLS: &[&ToolDef] = &[
    &status::TOOL,
    &find::TOOL,
    &symbol::TOOL,
    &relations::TOOL,
    &search::TOOL,
    &changes::TOOL,
    &query::TOOL,
    &remember::TOOL,
    &recall::TOOL,
    &memory::TOOL,
];

/// The tool named `name`.
pub fn tool(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().copied().find(|t| t.name == name)
}

/// One tool.
#[derive(Debug)]
pub struct ToolDef {
    /// Its name in `tools/call`.
    pub name: &'static str,
    /// A human-readable title.
    pub title: &'static str,
    /// What it answers, for the model.
    pub description: &'static str,
    /// Its own input properties (`properties`, `required`); `max_chars` (and, for a
    /// list, `limit` and `cursor`) are added by [`input_schema`].
    pub input: fn() -> Value,
    /// Its own output properties; the page and `index` are added by
    /// [`output_schema`].
    pub output: fn() -> Value,
    /// The name of its list, when the answer is one (paged, budgeted).
    pub list: Option<&'static str>,
    /// Whether it only reads (every graph tool does).
    pub read_only: bool,
    /// Whether it may remove or overwrite what was stored (`memory`'s forget and edit).
    pub destructive: bool,
    /// Whether calling it again with the same arguments changes nothing more.
    pub idempotent: bool,
    /// Converts, calls, converts back.
    pub call: fn(&Ctx<'_>, &Args) -> Result<Reply, ApiError>,
}

/// What a tool call has to work with.
pub struct Ctx<'a> {
    /// The process-lifetime state.
    pub host: &'a Arc<Host>,
    /// The session's workspace.
    pub root: &'a Path,
    /// The read's deadline and cancel token.
    pub opts: ReadOptions,
    /// The call's cancellation, for work that the token does not reach.
    pub cancel: &'a crate::cancel::CallCancel,
    /// The session-start gate's status for this session (`None` while it runs).
    pub session_start: Option<loci_api::vocab::lifecycle::Status>,
    /// The memory namespaces this call may use: its request's API key's on `/mcp`
    /// (docs/http.md, "Keys scoped to namespaces"), every one on stdio.
    pub access: loci_api::memory::MemoryAccess,
}

impl Ctx<'_> {
    /// The workspace's read handle.
    pub fn workspace(&self) -> Result<Arc<Workspace>, ApiError> {
        self.host.workspace(self.root)
    }
}

/// A tool's answer before the budget and the freshness note are applied.
#[derive(Debug)]
pub enum Answer {
    /// A paged list.
    List(Listing),
    /// A single object and its text.
    One {
        /// The structured content.
        structured: Value,
        /// Its text rendering.
        text: String,
    },
}

/// An answer and the freshness of the index it came from (`None`: no index read).
#[derive(Debug)]
pub struct Reply {
    /// The answer.
    pub answer: Answer,
    /// The index's own state during the read.
    pub freshness: Option<Freshness>,
}

/// The full input schema of `tool`: its own arguments, then the page's (a list) and
/// the budget's, in that order.
pub fn input_schema(tool: &ToolDef) -> Value {
    let own = (tool.input)();
    let mut props = own["properties"].as_object().cloned().unwrap_or_default();
    let mut shared = Vec::new();
    if tool.list.is_some() {
        shared.push(input_of::<shared::PageArgs>());
    }
    shared.push(input_of::<shared::BudgetArg>());
    for more in &shared {
        if let Some(Value::Object(more)) = more.get("properties") {
            props.extend(more.clone());
        }
    }
    let mut schema = json!({"type": "object", "properties": props});
    // An empty `required` says nothing: left out, as every optional `null` is.
    if let Some(required) = own
        .get("required")
        .filter(|r| r.as_array().is_some_and(|r| !r.is_empty()))
    {
        schema["required"] = required.clone();
    }
    schema
}

/// The full output schema of `tool`.
pub fn output_schema(tool: &ToolDef) -> Value {
    let own = (tool.output)();
    let mut props = own["properties"].as_object().cloned().unwrap_or_default();
    let mut required: Vec<Value> = own
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // The shared parts are named, not typed field by field: every tool repeats them, and
    // `tools/list` is paid for in every client's context (docs/mcp.md describes them
    // once: "Pages" and "Freshness").
    if tool.list.is_some() {
        props.insert("page".into(), json!({"type": "object"}));
        required.push(json!("page"));
    }
    props.insert("index".into(), json!({"type": "object"}));
    required.push(json!("index"));
    json!({"type": "object", "properties": props, "required": required})
}

/// A tool's own input schema: the arguments type `T` describes.
pub(crate) fn input_of<T: JsonSchema>() -> Value {
    tool_schema::<T>(Side::Input)
}

/// A tool's own output schema: the answer type `T` describes.
pub(crate) fn output_of<T: JsonSchema>() -> Value {
    tool_schema::<T>(Side::Output)
}

/// A typed answer (an item, a page) as JSON; failing only on a type that cannot be JSON.
pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, ApiError> {
    serde_json::to_value(v).map_err(|e| ApiError::new(loci_api::ErrorKind::Internal, e.to_string()))
}

/// The compact form of a definition in lists, as JSON.
pub(crate) fn symbol_item(s: &loci_api::vocab::index::SymbolInfo) -> Value {
    serde_json::to_value(item::SymbolItem::of(s)).unwrap_or(Value::Null)
}

/// The page request of a list tool's `limit` and `cursor`.
pub(crate) fn page(args: &Args) -> Result<loci_api::PageRequest, ApiError> {
    let page: shared::PageArgs = args.parse()?;
    Ok(loci_api::PageRequest {
        limit: within("limit", page.limit, loci_api::MAX_LIMIT as u64)?,
        cursor: page.cursor,
    })
}

/// Where a page starts (its cursor), for the budget's next cursor.
pub(crate) fn offset(args: &Args) -> usize {
    args.parse::<shared::PageArgs>()
        .ok()
        .and_then(|p| p.cursor)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// The call's `max_chars`, as sent (at most [`MAX_MAX_CHARS`](crate::budget::MAX_MAX_CHARS)).
pub(crate) fn max_chars(args: &Args) -> Result<Option<usize>, ApiError> {
    let budget: shared::BudgetArg = args.parse()?;
    within(
        "max_chars",
        budget.max_chars,
        crate::budget::MAX_MAX_CHARS as u64,
    )
}

/// A number argument `name` within `max`, or `limit_exceeded` naming the limit.
pub(crate) fn within(
    name: &str,
    n: Option<wire::Number>,
    max: u64,
) -> Result<Option<usize>, ApiError> {
    match n {
        None => Ok(None),
        Some(wire::Number(n)) if n <= max => Ok(Some(n as usize)),
        Some(wire::Number(n)) => Err(ApiError::new(
            loci_api::ErrorKind::LimitExceeded,
            format!("`{name}` {n} is above its limit {max}"),
        )
        .hint(format!("pass `{name}` at most {max}"))),
    }
}

#[cfg(test)]
mod tests {
    use loci_api::ErrorKind;
    use serde_json::json;

    use crate::args::of;

    #[test]
    fn the_page_and_the_budget_parse_and_keep_their_limits() {
        let page = super::page(&of(json!({"limit": "20", "cursor": "40"}))).unwrap();
        assert_eq!((page.limit, page.cursor.as_deref()), (Some(20), Some("40")));
        assert_eq!(super::offset(&of(json!({"cursor": "40"}))), 40);
        let e = super::page(&of(json!({"limit": 20_000}))).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LimitExceeded);
        assert_eq!(e.message, "`limit` 20000 is above its limit 10000");
        assert_eq!(
            super::max_chars(&of(json!({"max_chars": "5000"}))).unwrap(),
            Some(5000)
        );
        let e = super::max_chars(&of(json!({"max_chars": true}))).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidInput);
        assert_eq!(
            e.message,
            "the argument `max_chars` must be a non-negative integer, not true"
        );
    }
}
