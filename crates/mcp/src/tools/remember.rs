//! `remember`: stores what the agent learned as a memory of the workspace, with the
//! entities and relationships it names and links to the code its body mentions.

use loci_api::ApiError;
use loci_api::memory::{self as mem, ExtractMode, LlmChoice, RememberRequest};
use loci_api::vocab::memory::NewMemory;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::memory::{MemoryArgs, body_budget, freshness, target, view};
use super::wire::{Object, Strings};
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
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
#[derive(Serialize, JsonSchema)]
struct Output {
    #[schemars(with = "Object")]
    memory: Value,
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
    let Input {
        name,
        body,
        memory,
        links,
        extract,
        llm,
    } = parse(args)?;
    let req = RememberRequest {
        memory: NewMemory {
            namespace: memory.namespace,
            name,
            memory_type: memory.memory_type,
            description: memory.description.unwrap_or_default(),
            body,
            entities: memory.entities.unwrap_or_default(),
            relationships: memory.relationships.unwrap_or_default(),
            ..NewMemory::default()
        },
        links: links.map(Strings::into_vec).unwrap_or_default(),
        extract,
        llm,
    };
    let (_, memory, text) = view(
        "remembered",
        mem::remember(&target(ctx, memory.scope), &req)?,
        body_budget(args)?,
    )?;
    Ok(Reply {
        answer: Answer::One {
            structured: super::to_value(&Output { memory })?,
            text,
        },
        freshness: freshness(ctx),
    })
}

/// The arguments (the memory's own first: see [`MemoryArgs`]).
fn parse(args: &Args) -> Result<Input, ApiError> {
    MemoryArgs::check(args)?;
    Ok(args.parse()?)
}

#[cfg(test)]
mod tests {
    use loci_api::memory::ExtractMode;
    use loci_api::vocab::memory::{EntityInput, MemoryType};
    use serde_json::json;

    use super::parse;
    use crate::args::of;
    use crate::tools::wire::{OneOrMany, Strings};

    #[test]
    fn remember_arguments_parse_into_its_input() {
        let input = parse(&of(json!({
            "name": "config-rule", "body": "b", "type": "convention",
            "entities": [{"name": "config", "type": "concept"}],
            "links": "Settings", "extract": "llm", "workspace": {"kind": "mounted"},
        })))
        .unwrap();
        assert_eq!(input.name, "config-rule");
        assert_eq!(input.memory.memory_type, Some(MemoryType::Convention));
        let entity = EntityInput {
            name: "config".into(),
            entity_type: "concept".into(),
            aliases: Vec::new(),
        };
        assert_eq!(input.memory.entities, Some(vec![entity]));
        assert_eq!(
            input.links,
            Some(Strings(OneOrMany::One("Settings".into())))
        );
        assert_eq!(input.extract, Some(ExtractMode::Llm));
    }

    #[test]
    fn a_bad_memory_argument_is_named_even_inside_the_flattened_ones() {
        for (sent, want) in [
            (json!({"name": "n"}), "the argument `body` is required"),
            (
                json!({"name": "n", "body": "b", "entities": [{"name": "no type"}]}),
                "the argument `entities[0]` is not valid: missing field `type`",
            ),
            (
                json!({"name": "n", "body": "b", "type": "diary"}),
                "`type` \"diary\" is not a known value: unknown variant `diary`",
            ),
            (
                json!({"name": "n", "body": "b", "description": 7}),
                "the argument `description` must be a string, not 7",
            ),
            (
                json!({"name": "n", "body": "b", "extract": "regex"}),
                "`extract` \"regex\" is not a known value",
            ),
        ] {
            let e = parse(&of(sent.clone())).unwrap_err();
            assert_eq!(e.kind, loci_api::ErrorKind::InvalidInput, "{sent}");
            assert!(e.message.starts_with(want), "{sent}: {}", e.message);
        }
    }
}
