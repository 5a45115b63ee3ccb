//! What a caller across the network may learn about one registered workspace: its
//! lifecycle state with the reason, notices that name the HTTP routes that act on it,
//! the index's freshness and the last run — and no absolute path (DESIGN.md
//! invariant 1): every text that could name the root or the index is scrubbed.

use std::path::Path;

use loci_lifecycle::State;
use loci_store::registry::{Registry, WorkspaceEntry};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{ApiError, ErrorKind};
use crate::handle::{Freshness, ReadOptions, Workspace};

/// The registry entry with id `id`, or `not_found`.
pub fn entry(id: i64) -> Result<WorkspaceEntry, ApiError> {
    Registry::open_default()?
        .list()?
        .into_iter()
        .find(|e| e.id == id)
        .ok_or_else(|| unknown_workspace(id))
}

/// No registered workspace has this id.
pub fn unknown_workspace(id: i64) -> ApiError {
    ApiError::new(
        ErrorKind::NotFound,
        format!("no registered workspace has id {id}"),
    )
    .hint("GET /api/v1/workspaces lists the workspaces and their ids")
}

/// A one-time-style message about the workspace, for a remote caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RemoteNotice {
    /// Stable id (`unindexed`, `drift`, `corrupt`, `busy`, `last_run_failed`...).
    pub id: String,
    /// The text (names HTTP routes, never a path).
    pub message: String,
}

/// The last background run of the workspace, as the lifecycle recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LastRun {
    /// `index`, `sync` or `rebuild`.
    pub purpose: String,
    /// `ok`, `failed`, `timeout`, `cancelled`, `busy`, `spawn_failed`, `unexpected_output`.
    pub result: String,
    /// Start, ms since the Unix epoch.
    pub started_at_ms: u64,
    /// End, ms since the Unix epoch.
    pub ended_at_ms: u64,
    /// What went wrong, scrubbed of paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `GET /api/v1/workspaces/{id}`: one workspace, without any absolute path.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkspaceDetail {
    /// The registry id.
    pub id: i64,
    /// The last component of its root.
    pub name: String,
    /// The locator it was created under (`managed:NAME`, `mounted:SEGMENT`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
    /// The project it was confirmed for, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// The lifecycle state: `unavailable`, `unindexed`, `busy`, `indexing`,
    /// `rebuilding`, `drift`, `syncing`, `clean` or `corrupt`.
    pub state: String,
    /// Why, in one sentence.
    pub reason: String,
    /// What to do next, when something can be done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// What the caller should know, naming the routes that act on it.
    pub notices: Vec<RemoteNotice>,
    /// How fresh the index is, when it can be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Freshness>,
    /// Unix seconds of the creation's confirmation (set once).
    pub verified_at: Option<i64>,
    /// Unix seconds of the last completed index run.
    pub last_indexed_at: Option<i64>,
    /// Files in the index after the last run.
    pub files: Option<i64>,
    /// Symbols in the index after the last run.
    pub symbols: Option<i64>,
    /// The last background run, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run: Option<LastRun>,
}

/// The state of registered workspace `id`, classified in full (bounded by
/// `index.probeTimeoutMs`), with every path scrubbed.
pub fn describe(id: i64) -> Result<WorkspaceDetail, ApiError> {
    let entry = entry(id)?;
    let root = Path::new(&entry.root);
    let status = crate::maintain::status(root);
    let paths = paths_of(&entry, &status.workspace);
    let scrub = |s: &str| scrub(s, &paths);
    let index = crate::maintain::locate(root).ok().and_then(|located| {
        Workspace::new(located)
            .read(&ReadOptions::default(), |_| Ok(()))
            .ok()
            .map(|(_, f)| f)
    });
    let last_run = status.last_run.as_ref().map(|r| LastRun {
        purpose: r.purpose.clone(),
        result: serde_json::to_value(r.result)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        started_at_ms: r.started_at_ms,
        ended_at_ms: r.ended_at_ms,
        message: r.message.as_deref().map(scrub),
    });
    let mut notices = notices_for(
        id,
        status.state,
        status.facts.unknown,
        &scrub(&status.reason),
    );
    if let Some(run) = &last_run
        && run.result != "ok"
        && run.result != "busy"
    {
        notices.push(RemoteNotice {
            id: "last_run_failed".into(),
            message: format!(
                "the last background {} ended `{}`{}",
                run.purpose,
                run.result,
                run.message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
        });
    }
    Ok(WorkspaceDetail {
        id,
        name: root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        locator: entry.locator.clone(),
        project_id: entry.project_id.clone(),
        state: status.state.name().to_string(),
        reason: scrub(&status.reason),
        hint: status.hint.as_deref().map(scrub),
        notices,
        index,
        verified_at: entry.verified_at,
        last_indexed_at: entry.last_indexed_at,
        files: entry.files,
        symbols: entry.symbols,
        last_run,
    })
}

/// The notices of a state, for a caller who acts through the HTTP routes.
fn notices_for(id: i64, state: State, unknown: bool, reason: &str) -> Vec<RemoteNotice> {
    let route = |op: &str| format!("POST /api/v1/workspaces/{id}/{op}");
    let (nid, message) = match state {
        State::Unindexed => (
            "unindexed",
            format!(
                "this workspace has no index yet; {} builds it",
                route("index")
            ),
        ),
        State::Drift => (
            "drift",
            format!("{reason}; {} brings the index up to date", route("sync")),
        ),
        State::Corrupt if unknown => (
            "unknown",
            format!("the index state could not be decided: {reason}"),
        ),
        State::Corrupt => (
            "corrupt",
            format!(
                "the index is unusable ({reason}); nothing was changed. {} with {{\"consent\": true}} rebuilds it",
                route("rebuild")
            ),
        ),
        State::Busy => ("busy", format!("index maintenance is skipped: {reason}")),
        State::Unavailable => ("unavailable", format!("loci is unavailable here: {reason}")),
        State::Indexing | State::Syncing | State::Rebuilding | State::Clean => return Vec::new(),
    };
    vec![RemoteNotice {
        id: nid.into(),
        message,
    }]
}

/// The absolute paths of a workspace, each with what a remote caller sees instead,
/// longest first (so an index path inside the root goes before the root).
pub fn paths_of(entry: &WorkspaceEntry, canonical_root: &str) -> Vec<(String, &'static str)> {
    let mut paths = vec![
        (entry.index_path.clone(), "<index>"),
        (entry.root.clone(), "<workspace>"),
        (canonical_root.to_string(), "<workspace>"),
    ];
    if let Ok(real) = std::fs::canonicalize(&entry.root) {
        paths.push((real.to_string_lossy().into_owned(), "<workspace>"));
    }
    paths.retain(|(p, _)| !p.is_empty());
    paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    paths.dedup();
    paths
}

/// `text` with each path replaced: a path followed by `/` disappears (what is under
/// it reads as relative to it), the path alone becomes its placeholder. An empty path
/// replaces nothing.
pub fn scrub(text: &str, paths: &[(String, &str)]) -> String {
    let mut out = text.to_string();
    for (path, shown) in paths.iter().filter(|(p, _)| !p.is_empty()) {
        out = out
            .replace(&format!("{path}/"), "")
            .replace(path.as_str(), shown);
    }
    scrub_host_paths(&scrub_quoted_paths(&out))
}

/// `e` with `f` applied to its message, hint and detail: the one walk over an error's
/// text that every door redacting paths uses.
pub fn map_error_text(mut e: ApiError, f: impl Fn(&str) -> String) -> ApiError {
    e.message = f(&e.message);
    e.hint = e.hint.as_deref().map(&f);
    e.detail = e
        .detail
        .take()
        .and_then(|d| serde_json::from_str(&f(&d.to_string())).ok());
    e
}

/// `e` with each of `paths` replaced by its placeholder, in order (see [`scrub`]).
pub fn redact_error(e: ApiError, paths: &[(String, &str)]) -> ApiError {
    map_error_text(e, |t| scrub(t, paths))
}

/// `text` with every unquoted absolute path of this machine replaced by `<path>`: a
/// word that starts with `/` (at the start, or after a space, a quote, a bracket, `=`,
/// `:` or `,`) and whose first component names an entry of `/` here (`/tmp/...`,
/// `/home/...`, `/usr/...`), up to the next space or quote. Routes (`/api/...`,
/// `/health`) name nothing at the top of the filesystem and stay.
pub fn scrub_host_paths(text: &str) -> String {
    const BEFORE: &[char] = &[
        ' ', '\t', '\n', '"', '\'', '`', '(', '[', '{', '=', ':', ',',
    ];
    const AFTER: &[char] = &[' ', '\t', '\n', '"', '\'', '`', ')', ']', '}', ','];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut at_boundary = true;
    while let Some(c) = rest.chars().next() {
        if c == '/' && at_boundary {
            let end = rest.find(AFTER).unwrap_or(rest.len());
            let word = &rest[..end];
            if names_a_top_level_entry(word) {
                out.push_str("<path>");
                rest = &rest[end..];
                at_boundary = false;
                continue;
            }
        }
        out.push(c);
        at_boundary = BEFORE.contains(&c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Whether `word`'s first component (`/tmp` of `/tmp/x`) is an entry of `/` on this
/// machine (listed once per process).
fn names_a_top_level_entry(word: &str) -> bool {
    static TOP: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let top = TOP.get_or_init(|| {
        std::fs::read_dir("/")
            .map(|dir| {
                dir.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    });
    let first = word[1..].split('/').next().unwrap_or("");
    !first.is_empty() && top.iter().any(|t| t == first)
}

/// `text` with every quoted absolute path (`"/..."`, as errors quote paths) replaced
/// by `"<path>"`: the last barrier for paths no caller knew to name (a symlink's
/// target, a file a child process mentions). Routes (`"/api/...`, `"/health`) stay.
pub fn scrub_quoted_paths(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\"/") {
        let (head, tail) = rest.split_at(at + 1);
        out.push_str(head);
        let body = &tail[1..];
        let end = body.find('"');
        let quoted = &tail[..end.map_or(tail.len(), |e| e + 1)];
        if quoted.starts_with("/api/") || quoted.starts_with("/health") || end.is_none() {
            out.push_str(quoted);
        } else {
            out.push_str("<path>");
        }
        rest = &tail[quoted.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubbing_turns_paths_under_the_root_relative_and_the_root_into_a_placeholder() {
        let paths = vec![
            ("/w/app/.loci/index.db".to_string(), "<index>"),
            ("/w/app".to_string(), "<workspace>"),
        ];
        assert_eq!(
            scrub("cannot open /w/app/.loci/index.db in /w/app", &paths),
            "cannot open <index> in <workspace>"
        );
        assert_eq!(scrub("changed /w/app/src/a.rs", &paths), "changed src/a.rs");
        assert_eq!(
            scrub_quoted_paths(r#""x" resolves to "/tmp/out/side", see "/api/v1/fs" and "/"#),
            r#""x" resolves to "<path>", see "/api/v1/fs" and "/"#
        );
    }

    #[test]
    fn unquoted_paths_of_this_machine_are_replaced_and_routes_and_words_stay() {
        for (text, want) in [
            ("/tmp/x/memory.db is a directory", "<path> is a directory"),
            (
                "cannot copy '/usr/local/share/git-core/templates/a' to 'b'",
                "cannot copy '<path>' to 'b'",
            ),
            ("path=/etc/passwd, then", "path=<path>, then"),
            ("(see /proc/self/fd/7)", "(see <path>)"),
            (
                "GET /api/v1/openapi.json lists routes; /health too",
                "GET /api/v1/openapi.json lists routes; /health too",
            ),
            ("a/tmp/b and 1/2 and / alone", "a/tmp/b and 1/2 and / alone"),
            ("`/tmp`", "`<path>`"),
        ] {
            assert_eq!(scrub_host_paths(text), want, "{text}");
        }
    }
}
