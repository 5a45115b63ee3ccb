//! `remember`: stores what the agent learned as a memory of the workspace, with the
//! entities and relationships it names and links to the code its body mentions.

use loci_api::ApiError;
use loci_api::memory::{self as mem, RememberRequest};
use serde_json::{Value, json};

use super::memory::{body_budget, freshness, scope, strings, target, view};
use super::{Answer, Ctx, Reply, ToolDef, object};
use crate::args::Args;

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "remember",
    title: "Remember",
    description: "Stores a memory (`name` unique, `body` <= 512 KiB; type decision|convention|incident|\
reference|project|user|feedback|skill|note). Code the body names is linked (+ `links`); `entities` \
[{name,type,aliases?}], `relationships` [{source,target,relation,weight?}]; `extract`: \"llm\" has claude/codex (`llm`) extract them, when the host allows it (llm.allowSpawn).",
    input: || {
        object(
            json!({
                "name": {"type": "string"},
                "body": {"type": "string"},
                "type": {"type": "string"},
                "description": {"type": "string"},
                "namespace": {"type": "string"},
                "scope": scope(),
                "entities": {"type": "array"},
                "relationships": {"type": "array"},
                "links": {"type": ["array", "string"]},
                "extract": {"type": "string", "enum": ["llm"]},
                "llm": {"type": "string", "enum": ["claude", "codex"]}
            }),
            &["name", "body"],
        )
    },
    output: || object(json!({"memory": {"type": "object"}}), &["memory"]),
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
