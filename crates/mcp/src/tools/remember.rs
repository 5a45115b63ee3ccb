//! `remember`: stores what the agent learned as a memory of the workspace, with the
//! entities and relationships it names and links to the code its body mentions.

use loci_api::ApiError;
use loci_api::memory::{self as mem, ExtractMode, LlmChoice, RememberRequest};
use schemars::JsonSchema;
use serde_json::{Value, json};

use super::memory::{MemoryArgs, body_budget, freshness, strings, target, view};
use super::wire::{Object, Strings};
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;

/// The arguments.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: read through Args")]
struct Input {
    name: String,
    body: String,
    #[serde(flatten)]
    memory: MemoryArgs,
    links: Option<Strings>,
    extract: Option<ExtractMode>,
    llm: Option<LlmChoice>,
}

/// The answer.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: built as JSON")]
struct Output {
    memory: Object,
}

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "remember",
    title: "Remember",
    description: "Stores a memory (`name` unique, `body` <= 512 KiB; type decision|convention|incident|\
reference|project|user|feedback|skill|note). Code the body names is linked (+ `links`); `entities` \
[{name,type,aliases?}], `relationships` [{source,target,relation,weight?}]; `extract`: \"llm\" has claude/codex (`llm`) extract them, when the host allows it (llm.allowSpawn).",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: None,
    read_only: false,
    destructive: false,
    idempotent: false,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let mut fields = serde_json::Map::new();
    for field in [
        "name",
        "body",
        "type",
        "description",
        "namespace",
        "entities",
        "relationships",
        "extract",
        "llm",
    ] {
        if let Some(v) = args.opt_value(field) {
            fields.insert(field.into(), v.clone());
        }
    }
    fields.insert("links".into(), json!(strings(args, "links")?));
    let req: RememberRequest = serde_json::from_value(Value::Object(fields)).map_err(|e| {
        ApiError::new(
            loci_api::ErrorKind::InvalidInput,
            format!("the memory is not valid: {e}"),
        )
    })?;
    let (_, value, text) = view(
        "remembered",
        mem::remember(&target(ctx, args)?, &req)?,
        body_budget(args)?,
    )?;
    Ok(Reply {
        answer: Answer::One {
            structured: json!({"memory": value}),
            text,
        },
        freshness: freshness(ctx),
    })
}
