//! The workspaces page: every registered workspace with its index's state, the
//! progress of a run this server started, its language counts, skipped files and last
//! sync. It calls the `loci_api` functions the JSON routes call
//! (`workspaces::list`, `remote::describe`, `graph::stats`, the server's runs) and
//! renders one table row per workspace with [`row`]; the live stream
//! ([`super::live`]) sends the same rows again when they change, so the page and its
//! updates never disagree.

use axum::Extension;
use axum::extract::State;
use loci_api::graph;
use loci_api::remote::WorkspaceDetail;
use loci_api::runs::{RunState, RunView};
use maud::{Markup, html};

use crate::handler::blocking;
use crate::reply::HttpError;
use crate::state::Shared;
use crate::web::layout::{PageError, PageResult, page};
use crate::web::session::Session;

/// Where the live stream of the workspaces page is served.
pub const EVENTS: &str = "/web/events/workspaces";

/// One workspace's row: what the registry and the lifecycle say, the index's counts,
/// and the run in flight.
#[derive(Clone)]
pub(super) struct Row {
    pub(super) detail: WorkspaceDetail,
    pub(super) stats: Option<graph::StatsAnswer>,
    pub(super) run: Option<RunView>,
}

impl Row {
    /// Whether the row can change on its own soon (a run is queued or working).
    pub(super) fn busy(&self) -> bool {
        self.run.is_some()
            || matches!(
                self.detail.state.as_str(),
                "indexing" | "syncing" | "rebuilding" | "busy"
            )
    }

    /// Whether `other`'s index counts are still this row's: same state and last run.
    fn same_index(&self, other: &WorkspaceDetail) -> bool {
        let d = &self.detail;
        d.state == other.state
            && d.last_indexed_at == other.last_indexed_at
            && d.files == other.files
            && d.symbols == other.symbols
    }

    /// One line for a screen reader's status region: the name, state and progress.
    pub(super) fn says(&self) -> String {
        match &self.run {
            Some(run) => format!("{}: {}", self.detail.name, progress_words(run)),
            None => format!("{}: {}", self.detail.name, self.detail.state),
        }
    }
}

/// Every registered workspace's row. The index counts of a row in `previous` whose
/// state and last run did not change are kept rather than read again (the live
/// stream asks every second).
pub(super) async fn rows(state: &Shared, previous: &[Row]) -> Result<Vec<Row>, HttpError> {
    let ids: Vec<i64> = blocking(loci_api::workspaces::list)
        .await?
        .workspaces
        .iter()
        .map(|w| w.id)
        .collect();
    let mut rows = Vec::with_capacity(ids.len());
    for id in ids {
        let detail = blocking(move || loci_api::remote::describe(id)).await?;
        let kept = previous
            .iter()
            .find(|r| r.detail.id == id && r.same_index(&detail))
            .and_then(|r| r.stats.clone());
        let stats = match kept {
            Some(s) => Some(s),
            None if matches!(
                detail.state.as_str(),
                "clean" | "drift" | "syncing" | "indexing"
            ) =>
            {
                state.read(id, graph::stats).await.ok()
            }
            None => None,
        };
        let run = state.runs.active(id);
        rows.push(Row { detail, stats, run });
    }
    Ok(rows)
}

/// `GET /web/`: every registered workspace with its index's state.
pub async fn workspaces(
    State(state): State<Shared>,
    Extension(session): Extension<Session>,
) -> PageResult {
    let rows = rows(&state, &[])
        .await
        .map_err(PageError::within(&session))?;
    Ok(page("Workspaces", Some(&session), table(&rows)))
}

fn table(rows: &[Row]) -> Markup {
    html! {
        @if rows.is_empty() {
            p { "No workspace is registered yet: run " code { "loci index" } " in one." }
        }
        table {
            caption class="muted" { span data-count { (rows.len()) } " workspaces" }
            thead { tr {
                th scope="col" { "Workspace" } th scope="col" { "State" }
                th scope="col" { "Files" } th scope="col" { "Symbols" }
                th scope="col" { "Languages" } th scope="col" { "Skipped files" }
                th scope="col" { "Last sync" }
            } }
            tbody data-live=(EVENTS) {
                @for r in rows { (row(r)) }
            }
        }
        p id="live-status" class="muted" role="status" aria-live="polite" {}
        script src="/web/static/live.js" defer {}
    }
}

/// One workspace's table row (`data-ws` is its id: the live script replaces it).
pub(super) fn row(r: &Row) -> Markup {
    let d = &r.detail;
    html! {
        tr data-ws=(d.id) {
            td {
                a href={ "/web/w/" (d.id) "/search" } { (d.name) }
                " · " a href={ "/web/w/" (d.id) "/impact" } { "impact" }
                " · " a href={ "/web/w/" (d.id) "/changes" } { "changes" }
                " · " a href={ "/web/w/" (d.id) "/memories" } { "memories" }
                @if let Some(l) = &d.locator { br; span class="muted" { (l) } }
            }
            td {
                span class="state" { (d.state) } br;
                span class="muted" { (d.reason) }
                @if let Some(run) = &r.run { br; (progress(run)) }
                @if d.state == "corrupt" {
                    br; span { "Rebuilding needs your consent: "
                        code { "POST /api/v1/workspaces/" (d.id) "/rebuild {\"consent\": true}" } }
                }
            }
            td { (d.files.map(|n| n.to_string()).unwrap_or_else(|| "—".into())) }
            td { (d.symbols.map(|n| n.to_string()).unwrap_or_else(|| "—".into())) }
            td {
                @if let Some(s) = &r.stats {
                    @for (lang, n) in &s.stats.languages { (lang) " " (n) br; }
                }
            }
            td {
                @if let Some(s) = &r.stats {
                    (s.stats.skipped.total)
                    @for (reason, n) in &s.stats.skipped.by_reason { br; span class="muted" { (reason) ": " (n) } }
                }
            }
            td { (super::pages::when(d.last_indexed_at)) }
        }
    }
}

/// A run's progress: a bar and the same in words (readable without the bar).
fn progress(run: &RunView) -> Markup {
    let p = run.progress;
    html! {
        span class="progress" {
            @if run.state == RunState::Running && p.files_total > 0 {
                progress max=(p.files_total) value=(p.files_parsed) {}
                " "
            }
            (progress_words(run))
        }
    }
}

fn progress_words(run: &RunView) -> String {
    let p = run.progress;
    match run.state {
        RunState::Queued => format!("{} queued", run.purpose),
        RunState::Running if p.files_total == 0 => format!("{}: reading the tree", run.purpose),
        RunState::Running => format!(
            "{}: {} of {} files parsed ({} %)",
            run.purpose,
            p.files_parsed,
            p.files_total,
            p.files_parsed * 100 / p.files_total
        ),
        RunState::Done => format!("{} done", run.purpose),
        RunState::Failed => format!("{} failed", run.purpose),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loci_api::runs::RunProgressView;

    fn run(state: RunState, total: u64, parsed: u64) -> RunView {
        RunView {
            id: 1,
            workspace: 1,
            purpose: "index".into(),
            state,
            progress: RunProgressView {
                files_total: total,
                files_parsed: parsed,
            },
            queued_at_ms: 0,
            started_at_ms: None,
            ended_at_ms: None,
            error: None,
            url: String::new(),
        }
    }

    #[test]
    fn progress_reads_in_words_with_a_bar_only_once_the_total_is_known() {
        let working = progress(&run(RunState::Running, 400, 100)).into_string();
        assert!(
            working.contains("<progress max=\"400\" value=\"100\">"),
            "{working}"
        );
        assert!(
            working.contains("index: 100 of 400 files parsed (25 %)"),
            "{working}"
        );
        let walking = progress(&run(RunState::Running, 0, 0)).into_string();
        assert!(!walking.contains("<progress"), "{walking}");
        assert!(walking.contains("index: reading the tree"), "{walking}");
        let queued = progress(&run(RunState::Queued, 0, 0)).into_string();
        assert!(queued.contains("index queued"), "{queued}");
    }
}
