//! `memory`: one memory's read, edit and links, by `action` — read, list, edit, rename,
//! forget (soft: `restore` brings it back), restore, history, link, unlink, merge (into
//! `into`), related, entities, stats; `scope` `user` picks the user-level store (all
//! three memory tools take it). Purge (deleting for good) is not offered over MCP: an agent forgets,
//! a person purges (`loci memory purge --yes`, or HTTP with consent).

use loci_api::memory::{
    self as mem, EditRequest, LinkRequest, ListRequest, MergeMemoriesRequest, NameRequest,
    RelatedRequest, RenameRequest, RestoreRequest, StoreTarget, UnlinkRequest,
};
use loci_api::{ApiError, ErrorKind, Freshness, PageRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::wire::{Number, Object, Strings};
use super::{Answer, Ctx, Reply, ToolDef, to_value};
use crate::args::Args;
use crate::budget::{DEFAULT_MAX_CHARS, MAX_MAX_CHARS, clip};

/// What a `memory` call does, in the order the schema lists them (no purge: an agent
/// forgets, a person purges).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
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

impl Action {
    /// The action named `name`, or `invalid_input` listing them all.
    fn parse(name: &str) -> Result<Action, ApiError> {
        serde_json::from_value(Value::String(name.to_string())).map_err(|_| {
            let schema = super::input_of::<Action>();
            let names: Vec<&str> = schema["enum"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("`action` {name:?} is not one of {}", names.join(", ")),
            )
            .hint("purge is not offered over MCP: forget instead (restorable)")
        })
    }
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
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: read through Args")]
pub(crate) struct MemoryArgs {
    // A string, not loci_memory's MemoryType: its nine values in the memory tools'
    // schemas would take tools/list past its bound (tests/tools_list.rs); remember's
    // description lists them, and a wrong one is an error that lists them.
    #[serde(rename = "type")]
    memory_type: Option<String>,
    description: Option<String>,
    namespace: Option<String>,
    scope: Option<Scope>,
    entities: Option<Vec<Object>>,
    relationships: Option<Vec<Object>>,
}

/// The arguments.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: read through Args")]
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
#[allow(dead_code, reason = "schema only: built as JSON")]
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
    let action = args.string("action")?;
    let t = target(ctx, args)?;
    let act = Action::parse(&action)?;
    let name = || -> Result<NameRequest, ApiError> {
        Ok(NameRequest {
            namespace: args.opt_string("namespace")?,
            name: args.string("name")?,
        })
    };
    let budget = body_budget(args)?;
    let (key, value, text) = match act {
        Action::Read => view("read", mem::read(&t, &name()?)?, budget)?,
        Action::Forget => view("forgot", mem::forget(&t, &name()?)?, budget)?,
        Action::Edit => {
            let req = edit_request(args, name()?)?;
            view("edited", mem::edit(&t, &req)?, budget)?
        }
        Action::Rename => {
            let req = RenameRequest {
                name: name()?,
                new_name: args.string("new_name")?,
            };
            view("renamed", mem::rename(&t, &req)?, budget)?
        }
        Action::Restore => {
            let version = args
                .opt_u64("version")?
                .map(|v| u32::try_from(v).unwrap_or(u32::MAX));
            let req = RestoreRequest {
                name: name()?,
                version,
            };
            view("restored", mem::restore(&t, &req)?, budget)?
        }
        Action::Link => {
            let req = LinkRequest {
                name: name()?,
                entities: json_arg(args, "entities")?,
                relationships: json_arg(args, "relationships")?,
                code: strings(args, "code")?,
            };
            view("linked", mem::link(&t, &req)?, budget)?
        }
        Action::Unlink => {
            let req = UnlinkRequest {
                name: name()?,
                entity: args.opt_string("entity")?,
                code: args.opt_string("code")?,
            };
            view("unlinked", mem::unlink(&t, &req)?, budget)?
        }
        Action::Merge => {
            let req = MergeMemoriesRequest {
                namespace: args.opt_string("namespace")?,
                from: args.string("name")?,
                into: args.string("into")?,
            };
            let m = mem::merge(&t, &req)?;
            let from = m.from.name.clone();
            let (_, value, text) = view(&format!("merged `{from}` into"), m.into, budget)?;
            ("memory", json!({"into": value, "from": m.from}), text)
        }
        Action::History => {
            let h = mem::history(&t, &name()?)?;
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
                    limit: args.opt_usize_max("limit", loci_api::MAX_LIMIT as u64)?,
                    cursor: args.opt_string("cursor")?,
                },
                ..ListRequest::default()
            };
            req.filter.namespace = args.opt_string("namespace")?;
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
            let depth = args
                .opt_u64("depth")?
                .map(|d| u32::try_from(d).unwrap_or(u32::MAX));
            let r = mem::related(
                &t,
                &RelatedRequest {
                    name: name()?,
                    depth,
                },
            )?;
            let text = format!("{} memories related to `{}`", r.related.len(), r.name);
            ("related", to_value(&r.related)?, text)
        }
        Action::Entities => {
            let e = mem::entities(&t, &args.opt_string("namespace")?)?;
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
            let mut s = to_value(&mem::stats(&t, &args.opt_string("namespace")?)?)?;
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

/// The store a call names: the session's workspace's (`scope` absent or `workspace`),
/// or the user-level one (`user`).
pub(crate) fn target(ctx: &Ctx<'_>, args: &Args) -> Result<StoreTarget, ApiError> {
    let scope = match args.opt_string("scope")? {
        None => Scope::Workspace,
        Some(name) => serde_json::from_value(Value::String(name.clone())).map_err(|_| {
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("`scope` {name:?} is neither \"workspace\" nor \"user\""),
            )
        })?,
    };
    Ok(StoreTarget {
        workspace: ctx.root.to_path_buf(),
        user: scope == Scope::User,
    })
}

/// The index's freshness, when the workspace has one (code links are checked against it).
pub(crate) fn freshness(ctx: &Ctx<'_>) -> Option<Freshness> {
    let ws = ctx.workspace().ok()?;
    ws.read(&ctx.opts, |_| Ok(())).ok().map(|((), f)| f)
}

/// What a body may take of the answer: half the call's `max_chars`.
pub(crate) fn body_budget(args: &Args) -> Result<usize, ApiError> {
    Ok(args
        .opt_usize_max("max_chars", MAX_MAX_CHARS as u64)?
        .unwrap_or(DEFAULT_MAX_CHARS)
        / 2)
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

/// An array argument as its typed items (`invalid_input` naming what did not fit).
pub(crate) fn json_arg<T: serde::de::DeserializeOwned>(
    args: &Args,
    name: &str,
) -> Result<Vec<T>, ApiError> {
    match args.opt_value(name) {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("`{name}` does not match its schema: {e}"),
            )
        }),
    }
}

/// A string or an array of strings.
pub(crate) fn strings(args: &Args, name: &str) -> Result<Vec<String>, ApiError> {
    match args.opt_value(name) {
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        _ => json_arg(args, name),
    }
}

/// The edit of `name`: the `body`, `description` and `type` sent.
fn edit_request(args: &Args, name: NameRequest) -> Result<EditRequest, ApiError> {
    let mut edit = serde_json::Map::new();
    edit.insert("name".into(), json!(name.name));
    edit.insert("namespace".into(), json!(name.namespace));
    for field in ["body", "description", "type"] {
        if let Some(v) = args.opt_string(field)? {
            edit.insert(field.into(), json!(v));
        }
    }
    serde_json::from_value(Value::Object(edit)).map_err(|e| {
        ApiError::new(
            ErrorKind::InvalidInput,
            format!("the edit is not valid: {e}"),
        )
    })
}
