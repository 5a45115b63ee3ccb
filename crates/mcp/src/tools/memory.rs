//! `memory`: one memory's read, edit and links, by `action` — read, list, edit, rename,
//! forget (soft: `restore` brings it back), restore, history, link, unlink, merge (into
//! `into`), related, entities, stats; `scope` `user` picks the user-level store (all
//! three memory tools take it). Purge (deleting for good) is not offered over MCP: an agent forgets,
//! a person purges (`loci memory purge --yes`, or HTTP with consent).

use loci_api::memory::{
    self as mem, EditRequest, LinkRequest, ListRequest, MergeMemoriesRequest, NameRequest,
    RelatedRequest, RenameRequest, RestoreRequest, StoreTarget, UnlinkRequest,
};
use loci_api::vocab::memory::{Edit, EntityInput, MemoryType, RelationshipInput};
use loci_api::{ApiError, Freshness, PageRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::wire::{Number, Object, OneOrMany, Strings};
use super::{Answer, Ctx, Reply, ToolDef, to_value};
use crate::args::{Args, BadArg, required};
use crate::budget::{DEFAULT_MAX_CHARS, clip};

/// What a `memory` call does, in the order the schema lists them (no purge: an agent
/// forgets, a person purges).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Action {
    Read,
    List,
    Edit,
    Rename,
    Forget,
    Restore,
    History,
    Link,
    Unlink,
    Merge,
    Related,
    Entities,
    Stats,
}

/// Which store a memory tool reads and writes (absent: `workspace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Scope {
    /// The session's workspace's store.
    Workspace,
    /// The user-level store, shared by every workspace.
    User,
}

/// What `remember` and `memory` take about a memory besides its name and body.
/// Flattened into their arguments, where serde loses a bad field's name: each tool
/// parses it alone first ([`MemoryArgs::check`]), so such an error names it.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
pub(crate) struct MemoryArgs {
    // A string in the schema, not MemoryType's nine values: in the memory tools'
    // schemas they would take tools/list past its bound (tests/tools_list.rs);
    // remember's description lists them, and a wrong one is an error that lists them.
    #[serde(rename = "type")]
    #[schemars(with = "Option<String>")]
    pub memory_type: Option<MemoryType>,
    pub description: Option<String>,
    pub namespace: Option<String>,
    pub scope: Option<Scope>,
    // Objects in the schema: the description names their fields.
    #[schemars(with = "Option<Vec<Object>>")]
    pub entities: Option<Vec<EntityInput>>,
    #[schemars(with = "Option<Vec<Object>>")]
    pub relationships: Option<Vec<RelationshipInput>>,
}

impl MemoryArgs {
    /// Parses these arguments alone, so that a bad one is named (see the type's doc).
    pub(crate) fn check(args: &Args) -> Result<(), BadArg> {
        args.parse::<MemoryArgs>().map(drop)
    }
}

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Input {
    action: Action,
    name: Option<String>,
    body: Option<String>,
    #[serde(flatten)]
    memory: MemoryArgs,
    new_name: Option<String>,
    into: Option<String>,
    version: Option<Number>,
    code: Option<Strings>,
    entity: Option<String>,
    depth: Option<Number>,
    limit: Option<Number>,
    cursor: Option<String>,
}

/// The answer: `action` and the one field it fills.
#[derive(JsonSchema)]
#[allow(
    dead_code,
    reason = "schema only: the answer's key depends on the action and its value"
)]
struct Output {
    action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<Object>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memories: Option<Vec<Object>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    versions: Option<Vec<Object>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    related: Option<Vec<Object>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entities: Option<Vec<Object>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<Object>,
}

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "memory",
    title: "Memory",
    description: "One memory by `name` and `action`: read (`stale`: its code changed), list, edit (versioned), \
rename (new_name), forget (soft), restore (version?), history, link, unlink, merge (into), related, entities, stats. \
No purge.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: None,
    read_only: false,
    destructive: true,
    idempotent: false,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let Input {
        action,
        name,
        body,
        memory,
        new_name,
        into,
        version,
        code,
        entity,
        depth,
        limit,
        cursor,
    } = parse(args)?;
    let t = target(ctx, memory.scope);
    let namespace = memory.namespace;
    let named = || -> Result<NameRequest, ApiError> {
        Ok(NameRequest {
            namespace: namespace.clone(),
            name: required("name", name.clone())?,
        })
    };
    let budget = body_budget(args)?;
    let (key, value, text) = match action {
        Action::Read => view("read", mem::read(&t, &named()?)?, budget)?,
        Action::Forget => view("forgot", mem::forget(&t, &named()?)?, budget)?,
        Action::Edit => {
            let req = EditRequest {
                name: named()?,
                edit: Edit {
                    body,
                    description: memory.description,
                    memory_type: memory.memory_type,
                    metadata: None,
                },
            };
            view("edited", mem::edit(&t, &req)?, budget)?
        }
        Action::Rename => {
            let req = RenameRequest {
                name: named()?,
                new_name: required("new_name", new_name)?,
            };
            view("renamed", mem::rename(&t, &req)?, budget)?
        }
        Action::Restore => {
            let req = RestoreRequest {
                name: named()?,
                version: version.map(|v| u32::try_from(v.0).unwrap_or(u32::MAX)),
            };
            view("restored", mem::restore(&t, &req)?, budget)?
        }
        Action::Link => {
            let req = LinkRequest {
                name: named()?,
                entities: memory.entities.unwrap_or_default(),
                relationships: memory.relationships.unwrap_or_default(),
                code: code.map(Strings::into_vec).unwrap_or_default(),
            };
            view("linked", mem::link(&t, &req)?, budget)?
        }
        Action::Unlink => {
            let code = match code {
                None => None,
                Some(Strings(OneOrMany::One(c))) => Some(c),
                // One link at a time.
                Some(Strings(OneOrMany::Many(_))) => return Err(args.wrong("code", "a string")),
            };
            let req = UnlinkRequest {
                name: named()?,
                entity,
                code,
            };
            view("unlinked", mem::unlink(&t, &req)?, budget)?
        }
        Action::Merge => {
            let req = MergeMemoriesRequest {
                namespace,
                from: required("name", name)?,
                into: required("into", into)?,
            };
            let m = mem::merge(&t, &req)?;
            let from = m.from.name.clone();
            let (_, value, text) = view(&format!("merged `{from}` into"), m.into, budget)?;
            ("memory", json!({"into": value, "from": m.from}), text)
        }
        Action::History => {
            let h = mem::history(&t, &named()?)?;
            let mut versions = to_value(&h.versions)?;
            for v in versions.as_array_mut().into_iter().flatten() {
                clip_body(v, budget / h.versions.len().max(1));
            }
            let text = h
                .versions
                .iter()
                .map(|v| format!("v{} {}", v.version, v.name))
                .collect::<Vec<_>>()
                .join("\n");
            (
                "versions",
                versions,
                format!("history of `{}`:\n{text}", h.name),
            )
        }
        Action::List => {
            let mut req = ListRequest {
                page: PageRequest {
                    limit: super::within("limit", limit, loci_api::MAX_LIMIT as u64)?,
                    cursor,
                },
                ..ListRequest::default()
            };
            req.filter.namespace = namespace;
            let l = mem::list(&t, &req)?;
            let text = l
                .memories
                .iter()
                .map(|m| m.name.clone())
                .collect::<Vec<_>>()
                .join("\n");
            let text = format!("{} of {} memories:\n{text}", l.memories.len(), l.page.total);
            ("memories", to_value(&l.memories)?, text)
        }
        Action::Related => {
            let r = mem::related(
                &t,
                &RelatedRequest {
                    name: named()?,
                    depth: depth.map(|d| u32::try_from(d.0).unwrap_or(u32::MAX)),
                },
            )?;
            let text = format!("{} memories related to `{}`", r.related.len(), r.name);
            ("related", to_value(&r.related)?, text)
        }
        Action::Entities => {
            let e = mem::entities(&t, &namespace)?;
            let text = e
                .entities
                .iter()
                .map(|e| e.name.clone())
                .collect::<Vec<_>>()
                .join(", ");
            (
                "entities",
                to_value(&e.entities)?,
                format!("entities: {text}"),
            )
        }
        Action::Stats => {
            let mut s = to_value(&mem::stats(&t, &namespace)?)?;
            if let Some(m) = s.as_object_mut() {
                m.remove("path");
            }
            let text = format!("memory: {s}");
            ("stats", s, text)
        }
    };
    let key = if value.is_object() && key != "stats" {
        "memory"
    } else {
        key
    };
    Ok(Reply {
        answer: Answer::One {
            structured: json!({"action": action, key: value}),
            text,
        },
        freshness: freshness(ctx),
    })
}

/// The arguments; an unknown `action` says why purge is not one.
fn parse(args: &Args) -> Result<Input, ApiError> {
    MemoryArgs::check(args)?;
    args.parse().map_err(|bad| {
        if bad.name == "action" && args.value("action").is_some() {
            bad.error
                .hint("purge is not offered over MCP: forget instead (restorable)")
        } else {
            bad.error
        }
    })
}

/// The store a call names: the session's workspace's (`scope` absent or `workspace`),
/// or the user-level one (`user`).
pub(crate) fn target(ctx: &Ctx<'_>, scope: Option<Scope>) -> StoreTarget {
    StoreTarget {
        workspace: ctx.root.to_path_buf(),
        user: scope == Some(Scope::User),
        access: ctx.access.clone(),
    }
}

/// The index's freshness, when the workspace has one (code links are checked against it).
pub(crate) fn freshness(ctx: &Ctx<'_>) -> Option<Freshness> {
    let ws = ctx.workspace().ok()?;
    ws.read(&ctx.opts, |_| Ok(())).ok().map(|((), f)| f)
}

/// What a body may take of the answer: half the call's `max_chars`.
pub(crate) fn body_budget(args: &Args) -> Result<usize, ApiError> {
    Ok(super::max_chars(args)?.unwrap_or(DEFAULT_MAX_CHARS) / 2)
}

/// Cuts a `body` field to `max` characters, saying so in `body_truncated`.
pub(crate) fn clip_body(v: &mut Value, max: usize) {
    if let Some(body) = v.get("body").and_then(Value::as_str)
        && body.chars().count() > max
    {
        v["body"] = json!(clip(body, max));
        v["body_truncated"] = json!(true);
    }
}

/// A memory view as `(key, value, text)`, its body within the budget.
pub(crate) fn view(
    verb: &str,
    m: mem::MemoryView,
    budget: usize,
) -> Result<(&'static str, Value, String), ApiError> {
    let mut text = format!(
        "{verb} `{}` (v{}){}",
        m.memory.name,
        m.memory.version,
        if m.stale { " STALE" } else { "" }
    );
    for r in &m.stale_reasons {
        text.push_str(&format!("\n  stale: {r}"));
    }
    for l in &m.checked_links {
        text.push_str(&format!(
            "\n  code: {}:{}",
            l.link.key.path, l.link.key.qualified_name
        ));
    }
    text.push_str(&format!("\n{}", clip(&m.memory.body, budget.min(2_000))));
    let mut value = to_value(&m)?;
    clip_body(&mut value, budget);
    Ok(("memory", value, text))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Action, parse};
    use crate::args::of;
    use crate::tools::wire::{Number, OneOrMany, Strings};

    #[test]
    fn memory_arguments_parse_into_its_input() {
        let input = parse(&of(
            json!({"action": "restore", "name": "n", "version": "1"}),
        ))
        .unwrap();
        assert_eq!(
            (input.action, input.name.as_deref()),
            (Action::Restore, Some("n"))
        );
        assert_eq!(input.version, Some(Number(1)));
        let input = parse(&of(
            json!({"action": "link", "name": "n", "code": ["a", "b"]}),
        ))
        .unwrap();
        let code = Strings(OneOrMany::Many(vec!["a".into(), "b".into()]));
        assert_eq!(input.code, Some(code));
    }

    #[test]
    fn purge_is_an_unknown_action_that_says_why() {
        let e = parse(&of(json!({"action": "purge", "name": "n"}))).unwrap_err();
        assert_eq!(e.kind, loci_api::ErrorKind::InvalidInput);
        assert!(
            e.message
                .starts_with("`action` \"purge\" is not a known value"),
            "{}",
            e.message
        );
        assert!(e.hint.unwrap().contains("forget instead"));
        let e = parse(&of(json!({"name": "n"}))).unwrap_err();
        assert_eq!(e.message, "the argument `action` is required");
        let e = parse(&of(json!({"action": "read", "scope": "team"}))).unwrap_err();
        assert!(e.message.starts_with("`scope` \"team\""), "{}", e.message);
    }
}
