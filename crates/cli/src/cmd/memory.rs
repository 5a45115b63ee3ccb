//! `loci remember`, `loci recall` and `loci memory ...`: each parses its arguments into a
//! `loci_api::memory` request, calls the one function and prints (`memory_print.rs`).

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use loci_api::memory::{self as api, NameRequest};
use loci_api::vocab::memory::MAX_BODY_BYTES;
use loci_api::vocab::memory::{Edit, NewMemory};
use loci_api::{ApiError, ErrorKind, PageRequest};

use super::memory_print as print;
use super::memory_store::{StoreArgs, target};
use crate::output;

/// Where a body comes from: an argument, `--file`, or stdin (`-` or `--stdin`).
#[derive(Args)]
pub struct BodyArgs {
    /// The body text (`-` reads stdin).
    body: Option<String>,
    /// Read the body from this file.
    #[arg(long, conflicts_with = "body")]
    file: Option<PathBuf>,
    /// Read the body from stdin.
    #[arg(long, conflicts_with_all = ["body", "file"])]
    stdin: bool,
}

impl BodyArgs {
    fn read(&self) -> Result<Option<String>, ApiError> {
        let limit = MAX_BODY_BYTES as u64 + 1;
        let mut bytes = Vec::new();
        let origin = if let Some(f) = &self.file {
            let file = std::fs::File::open(f).map_err(|e| {
                ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("cannot read {}: {e}", f.display()),
                )
            })?;
            file.take(limit).read_to_end(&mut bytes).map_err(|e| {
                ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("cannot read {}: {e}", f.display()),
                )
            })?;
            f.display().to_string()
        } else if self.stdin || self.body.as_deref() == Some("-") {
            std::io::stdin()
                .take(limit)
                .read_to_end(&mut bytes)
                .map_err(|e| {
                    ApiError::new(ErrorKind::InvalidInput, format!("cannot read stdin: {e}"))
                })?;
            "stdin".to_string()
        } else {
            return Ok(self.body.clone());
        };
        api::body_from_bytes(&origin, bytes).map(Some)
    }
}

#[derive(Args)]
pub struct RememberArgs {
    /// The memory's name, unique in its namespace.
    #[arg(long)]
    name: String,
    /// decision|convention|incident|reference|project|user|feedback|skill|note (default note).
    #[arg(long = "type", short = 't')]
    memory_type: Option<String>,
    /// One line, at most 500 characters.
    #[arg(long, short = 'd', default_value = "")]
    description: String,
    #[command(flatten)]
    body: BodyArgs,
    /// Entities as JSON: `[{"name": "...", "type": "...", "aliases": ["..."]}]`.
    #[arg(long)]
    entities: Option<String>,
    /// Relationships as JSON: `[{"source": "A", "target": "B", "relation": "uses", "weight": 0.8}]`.
    #[arg(long)]
    relationships: Option<String>,
    /// Link to this symbol or file too (repeatable): `name`, `Type::method`, `path:name`, `path`, `path:line`.
    #[arg(long)]
    link: Vec<String>,
    /// Where it came from.
    #[arg(long)]
    source: Option<String>,
    /// The agent session that wrote it.
    #[arg(long)]
    session: Option<String>,
    /// A JSON object of anything else.
    #[arg(long)]
    metadata: Option<String>,
    /// `llm`: after storing, extract entities and relationships with an LLM tool.
    #[arg(long, value_name = "MODE")]
    extract: Option<String>,
    /// The LLM tool for --extract: claude (default) or codex.
    #[arg(long, value_name = "TOOL", requires = "extract")]
    llm: Option<String>,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Args)]
pub struct RecallArgs {
    /// What to recall (free text; may be empty with --symbol or --file).
    query: Vec<String>,
    /// Only memories linked to this symbol or to what its change reaches.
    #[arg(long)]
    symbol: Option<String>,
    /// Only memories linked to this file or to symbols in it.
    #[arg(long)]
    file: Option<String>,
    #[command(flatten)]
    filter: FilterArgs,
    /// At most this many hits (default 10).
    #[arg(long)]
    limit: Option<usize>,
}

#[derive(Args)]
pub struct FilterArgs {
    /// Only this type (repeatable).
    #[arg(long = "type", short = 't')]
    types: Vec<String>,
    /// Changed since (7d, 12h, 2026-01-31, unix seconds).
    #[arg(long)]
    since: Option<String>,
    /// Changed until (same forms).
    #[arg(long)]
    until: Option<String>,
    #[command(flatten)]
    store: StoreArgs,
}

impl FilterArgs {
    fn request(&self) -> Result<api::FilterRequest, ApiError> {
        Ok(api::FilterRequest {
            namespace: self.store.namespace.clone(),
            types: self
                .types
                .iter()
                .map(|t| api::parse_type(t))
                .collect::<Result<_, _>>()?,
            since: self.since.clone(),
            until: self.until.clone(),
        })
    }
}

#[derive(Args)]
pub struct MemoryArgs {
    #[command(subcommand)]
    command: MemoryCommand,
}

#[derive(Args)]
pub struct NameArgs {
    /// The memory's name.
    name: String,
    #[command(flatten)]
    store: StoreArgs,
}

impl NameArgs {
    fn request(&self) -> NameRequest {
        NameRequest {
            namespace: self.store.namespace.clone(),
            name: self.name.clone(),
        }
    }
}

#[derive(Subcommand)]
enum MemoryCommand {
    /// Show a memory, its links and whether the code they point at changed.
    Read(NameArgs),
    /// List memories, most recently changed first.
    List {
        #[command(flatten)]
        filter: FilterArgs,
        /// Forgotten memories too.
        #[arg(long)]
        forgotten: bool,
        /// At most this many (default 50).
        #[arg(long)]
        limit: Option<usize>,
        /// Continue after the previous page.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Change a memory's body, description, type or metadata (a new version).
    Edit {
        #[command(flatten)]
        name: NameArgs,
        #[command(flatten)]
        body: BodyArgs,
        /// A new description.
        #[arg(long, short = 'd')]
        description: Option<String>,
        /// A new type.
        #[arg(long = "type", short = 't')]
        memory_type: Option<String>,
        /// A new metadata object (JSON).
        #[arg(long)]
        metadata: Option<String>,
    },
    /// Rename a memory (a new version).
    Rename {
        #[command(flatten)]
        name: NameArgs,
        /// The new name.
        new_name: String,
    },
    /// Forget a memory (soft delete: `restore` brings it back).
    Forget(NameArgs),
    /// Undo a forget, or bring an old version's content back (a new version).
    Restore {
        #[command(flatten)]
        name: NameArgs,
        /// The version whose content comes back (see `history`); none: undo a forget.
        #[arg(value_name = "VERSION")]
        number: Option<u32>,
    },
    /// Merge memory FROM into INTO: INTO takes FROM's body and links, FROM is forgotten.
    Merge {
        /// The memory folded away (forgotten, restorable).
        from: String,
        /// The memory kept.
        into: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Delete a memory and every version for good (needs --yes).
    Purge {
        #[command(flatten)]
        name: NameArgs,
        /// Consent to deleting it for good.
        #[arg(long)]
        yes: bool,
    },
    /// Every version of a memory.
    History(NameArgs),
    /// Attach entities, relationships or code to a memory.
    Link {
        #[command(flatten)]
        name: NameArgs,
        /// Entities as JSON.
        #[arg(long)]
        entities: Option<String>,
        /// Relationships as JSON.
        #[arg(long)]
        relationships: Option<String>,
        /// A symbol or file (repeatable).
        #[arg(long)]
        code: Vec<String>,
    },
    /// Detach an entity or a code link from a memory.
    Unlink {
        #[command(flatten)]
        name: NameArgs,
        /// The entity.
        #[arg(long)]
        entity: Option<String>,
        /// The code link (its path, `path:qualified_name`, or the text it was linked by).
        #[arg(long)]
        code: Option<String>,
    },
    /// Memories sharing entities (or related entities) with one.
    Related {
        #[command(flatten)]
        name: NameArgs,
        /// Entity hops (1..=5).
        #[arg(long, default_value_t = 2)]
        depth: u32,
    },
    /// Entities: list (default), merge, rename.
    Entities {
        #[command(subcommand)]
        command: Option<EntitiesCommand>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// The memory graph as json, dot or mermaid.
    GraphExport {
        /// json|dot|mermaid.
        #[arg(long, default_value = "json")]
        format: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Counts of the memory store.
    Stats {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Write every memory (all namespaces, forgotten ones and versions too) as JSON lines.
    Export(super::memory_transfer::ExportArgs),
    /// Add the memories of an export file that are not there yet (twice adds nothing).
    Import(super::memory_transfer::ImportArgs),
    /// Extract entities and relationships of stored memories with an LLM tool.
    Enrich(super::memory_enrich::EnrichArgs),
    /// Fill the vectors the store's chunks are missing (needs `loci models install`).
    #[command(alias = "reindex-vectors")]
    Embed {
        /// Chunks per forward pass.
        #[arg(long, default_value_t = api::EMBED_BATCH)]
        batch: usize,
        /// Embed at most this many chunks now.
        #[arg(long)]
        max: Option<usize>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Subcommand)]
enum EntitiesCommand {
    /// Entities with their degrees.
    List,
    /// Fold FROM into INTO.
    Merge {
        /// The entity folded away.
        from: String,
        /// The entity kept.
        into: String,
    },
    /// Rename an entity (the old name becomes an alias).
    Rename {
        /// Its name.
        name: String,
        /// The new name.
        new_name: String,
    },
}

fn json_value<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, ApiError> {
    serde_json::from_str(text).map_err(|e| {
        ApiError::new(
            ErrorKind::InvalidInput,
            format!("--{what} is not valid JSON: {e}"),
        )
    })
}

pub fn remember(a: RememberArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let t = target(workspace, &a.store)?;
    let body = a.body.read()?.ok_or_else(|| {
        ApiError::new(
            ErrorKind::Usage,
            "remember needs a body: an argument, --file PATH or --stdin",
        )
    })?;
    let req = api::RememberRequest {
        memory: NewMemory {
            namespace: a.store.namespace.clone(),
            name: a.name,
            memory_type: a.memory_type.as_deref().map(api::parse_type).transpose()?,
            description: a.description,
            body,
            source: a.source,
            session_id: a.session,
            metadata: a
                .metadata
                .as_deref()
                .map(|m| json_value("metadata", m))
                .transpose()?,
            entities: a
                .entities
                .as_deref()
                .map(api::parse_entities)
                .transpose()?
                .unwrap_or_default(),
            relationships: a
                .relationships
                .as_deref()
                .map(api::parse_relationships)
                .transpose()?
                .unwrap_or_default(),
        },
        links: a.link,
        extract: a
            .extract
            .as_deref()
            .map(super::memory_enrich::extract_mode)
            .transpose()?,
        llm: a.llm.as_deref().map(api::LlmChoice::parse).transpose()?,
    };
    let view = api::remember(&t, &req)?;
    if json {
        output::json(&view);
    } else {
        print::remembered(&view);
    }
    Ok(())
}

pub fn recall(a: RecallArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let t = target(workspace, &a.filter.store)?;
    let req = api::RecallRequest {
        query: a.query.join(" "),
        filter: a.filter.request()?,
        symbol: a.symbol,
        file: a.file,
        limit: a.limit,
    };
    let answer = api::recall(&t, &req)?;
    if json {
        output::json(&answer);
    } else {
        print::recalled(&answer);
    }
    Ok(())
}

pub fn run(a: MemoryArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    use MemoryCommand as C;
    match a.command {
        C::Read(n) => {
            let v = api::read(&target(workspace, &n.store)?, &n.request())?;
            emit(json, &v, || print::view(&v))
        }
        C::List {
            filter,
            forgotten,
            limit,
            cursor,
        } => {
            let req = api::ListRequest {
                filter: filter.request()?,
                forgotten,
                page: PageRequest { limit, cursor },
            };
            let l = api::list(&target(workspace, &filter.store)?, &req)?;
            emit(json, &l, || print::list(&l))
        }
        C::Edit {
            name,
            body,
            description,
            memory_type,
            metadata,
        } => {
            let req = api::EditRequest {
                name: name.request(),
                edit: Edit {
                    body: body.read()?,
                    description,
                    memory_type: memory_type.as_deref().map(api::parse_type).transpose()?,
                    metadata: metadata
                        .as_deref()
                        .map(|m| json_value("metadata", m))
                        .transpose()?,
                },
            };
            let v = api::edit(&target(workspace, &name.store)?, &req)?;
            emit(json, &v, || print::changed("edited", &v))
        }
        C::Rename { name, new_name } => {
            let req = api::RenameRequest {
                name: name.request(),
                new_name,
            };
            let v = api::rename(&target(workspace, &name.store)?, &req)?;
            emit(json, &v, || print::changed("renamed", &v))
        }
        C::Forget(n) => {
            let v = api::forget(&target(workspace, &n.store)?, &n.request())?;
            emit(json, &v, || print::changed("forgot", &v))
        }
        C::Restore { name, number } => {
            let req = api::RestoreRequest {
                name: name.request(),
                version: number,
            };
            let v = api::restore(&target(workspace, &name.store)?, &req)?;
            emit(json, &v, || print::changed("restored", &v))
        }
        C::Merge { from, into, store } => {
            let req = api::MergeMemoriesRequest {
                namespace: store.namespace.clone(),
                from,
                into,
            };
            let m = api::merge(&target(workspace, &store)?, &req)?;
            emit(json, &m, || {
                print::changed(&format!("merged `{}` into", m.from.name), &m.into)
            })
        }
        C::Purge { name, yes } => {
            let req = api::PurgeRequest {
                name: name.request(),
                yes,
            };
            let p = api::purge(&target(workspace, &name.store)?, &req)?;
            emit(json, &p, || {
                println!("purged `{}` and its {} versions", p.name, p.versions)
            })
        }
        C::History(n) => {
            let h = api::history(&target(workspace, &n.store)?, &n.request())?;
            emit(json, &h, || print::history(&h))
        }
        C::Link {
            name,
            entities,
            relationships,
            code,
        } => {
            let req = api::LinkRequest {
                name: name.request(),
                entities: entities
                    .as_deref()
                    .map(api::parse_entities)
                    .transpose()?
                    .unwrap_or_default(),
                relationships: relationships
                    .as_deref()
                    .map(api::parse_relationships)
                    .transpose()?
                    .unwrap_or_default(),
                code,
            };
            let v = api::link(&target(workspace, &name.store)?, &req)?;
            emit(json, &v, || print::changed("linked", &v))
        }
        C::Unlink { name, entity, code } => {
            let req = api::UnlinkRequest {
                name: name.request(),
                entity,
                code,
            };
            let v = api::unlink(&target(workspace, &name.store)?, &req)?;
            emit(json, &v, || print::changed("unlinked", &v))
        }
        C::Related { name, depth } => {
            let req = api::RelatedRequest {
                name: name.request(),
                depth: Some(depth),
            };
            let r = api::related(&target(workspace, &name.store)?, &req)?;
            emit(json, &r, || print::related(&r))
        }
        C::Entities { command, store } => {
            let t = target(workspace, &store)?;
            match command.unwrap_or(EntitiesCommand::List) {
                EntitiesCommand::List => {
                    let e = api::entities(&t, &store.namespace)?;
                    emit(json, &e, || print::entities(&e))
                }
                EntitiesCommand::Merge { from, into } => {
                    let req = api::MergeRequest {
                        namespace: store.namespace.clone(),
                        from,
                        into,
                    };
                    let e = api::merge_entities(&t, &req)?;
                    emit(json, &e, || {
                        println!("merged into `{}` (degree {})", e.name, e.degree)
                    })
                }
                EntitiesCommand::Rename { name, new_name } => {
                    let req = api::RenameRequest {
                        name: NameRequest {
                            namespace: store.namespace.clone(),
                            name,
                        },
                        new_name,
                    };
                    let e = api::rename_entity(&t, &req)?;
                    emit(json, &e, || {
                        println!(
                            "renamed to `{}` (aliases: {})",
                            e.name,
                            e.aliases.join(", ")
                        )
                    })
                }
            }
        }
        C::GraphExport { format, store } => {
            let g = api::graph_export(&target(workspace, &store)?, &store.namespace, &format)?;
            // Without --json the document itself, ready to pipe into a renderer.
            emit(json, &g, || println!("{}", g.text.trim_end()))
        }
        C::Stats { store } => {
            let s = api::stats(&target(workspace, &store)?, &store.namespace)?;
            emit(json, &s, || print::stats(&s))
        }
        C::Export(e) => {
            let store = StoreArgs {
                namespace: None,
                user: e.user,
            };
            super::memory_transfer::export(&target(workspace, &store)?, e, json)
        }
        C::Import(i) => {
            let store = StoreArgs {
                namespace: None,
                user: i.user,
            };
            super::memory_transfer::import(&target(workspace, &store)?, i, json)
        }
        C::Enrich(e) => {
            let t = target(workspace, &e.store)?;
            super::memory_enrich::run(&t, e, json)
        }
        C::Embed { batch, max, store } => {
            let r = api::embed(
                &target(workspace, &store)?,
                batch,
                max,
                &mut |done, total| eprintln!("embedded {done}/{total} chunks"),
            )?;
            emit(json, &r, || print::embedded(&r))
        }
    }
}

fn emit<T: serde::Serialize>(json: bool, value: &T, text: impl FnOnce()) -> Result<(), ApiError> {
    if json {
        output::json(value);
    } else {
        text();
    }
    Ok(())
}
