//! Human output of the memory commands (`--json` prints the API's answers as they are).

use loci_api::memory::{
    EmbedReport, EntitiesAnswer, HistoryAnswer, ImpactAnswer, ListAnswer, MemoryStats, MemoryView,
    RelatedAnswer,
};
use loci_api::vocab::memory::CheckedLink;
use loci_api::vocab::memory::LinkState;
use loci_api::vocab::memory::{Extraction, ExtractionState};
use loci_api::vocab::memory::{RecallAnswer, VectorsState, Why};
use loci_api::vocab::memory::{StoreKind, VectorSearch};

use crate::output;

pub fn remembered(v: &MemoryView) {
    println!(
        "remembered `{}` ({}, namespace {}, v{})",
        v.memory.name, v.memory.memory_type, v.memory.namespace, v.memory.version
    );
    for m in &v.mentions {
        let code: Vec<String> = m.code.iter().map(|k| k.to_string()).collect();
        println!("  mention {:<30} {} {}", m.text, m.status, code.join(", "));
    }
    links(&v.checked_links);
    vectors_of(v);
}

pub fn changed(what: &str, v: &MemoryView) {
    let forgotten = if v.memory.deleted_at.is_some() {
        " (forgotten)"
    } else {
        ""
    };
    println!(
        "{what} `{}`: now v{}{forgotten}",
        v.memory.name, v.memory.version
    );
    links(&v.checked_links);
    vectors_of(v);
}

pub fn view(v: &MemoryView) {
    let m = &v.memory;
    let forgotten = if m.deleted_at.is_some() {
        " (forgotten)"
    } else {
        ""
    };
    println!("{} [{}] v{}{forgotten}", m.name, m.memory_type, m.version);
    if !m.description.is_empty() {
        println!("{}", m.description);
    }
    if !m.entities.is_empty() {
        println!("entities: {}", m.entities.join(", "));
    }
    if let Some(x) = &m.extraction {
        println!("extraction: {}", extraction(x));
    }
    links(&v.checked_links);
    vectors_of(v);
    println!();
    println!("{}", m.body);
}

/// `done by claude (3 entities, 1 relationships)` or `failed by codex: REASON`.
fn extraction(x: &Extraction) -> String {
    match x.state {
        ExtractionState::Done => format!(
            "done by {} ({} entities, {} relationships)",
            x.tool, x.entities, x.relationships
        ),
        ExtractionState::Failed => format!(
            "FAILED by {}: {} (`loci memory enrich` retries)",
            x.tool,
            x.reason.as_deref().unwrap_or("unknown")
        ),
    }
}

fn links(links: &[CheckedLink]) {
    for l in links {
        let state = match &l.status {
            LinkState::Fresh { line } => format!("fresh (line {line})"),
            LinkState::Changed { reason, .. } => format!("STALE: {reason}"),
            LinkState::Missing { reason } => format!("STALE: {reason}"),
            LinkState::Followed { from, to } => format!("moved: {from} -> {to} (link followed)"),
            LinkState::Unchecked => "unchecked (no index)".into(),
        };
        println!("  link {}  {state}", l.link.key);
    }
}

pub fn list(l: &ListAnswer) {
    for m in &l.memories {
        let forgotten = if m.deleted_at.is_some() {
            " (forgotten)"
        } else {
            ""
        };
        let failed = match &m.extraction {
            Some(x) if x.state == ExtractionState::Failed => " (extraction failed)",
            _ => "",
        };
        println!(
            "{:<30} {:<10} v{:<3} {}{forgotten}{failed}",
            m.name,
            m.memory_type.name(),
            m.version,
            m.description
        );
    }
    output::more(&l.page, l.memories.len());
}

fn why(w: &Why) -> String {
    let mut parts = Vec::new();
    if let Some(f) = &w.fts {
        parts.push(format!("fts #{} (bm25 {:.2})", f.rank, f.score));
    }
    if let Some(v) = &w.vector {
        parts.push(format!("vector #{} (distance {:.3})", v.rank, v.score));
    }
    if let Some(g) = &w.graph {
        parts.push(format!("graph #{} via {}", g.rank, g.path.join(" ")));
    }
    parts.join("; ")
}

pub fn recalled(a: &RecallAnswer) {
    for h in &a.hits {
        println!(
            "{:.4}  {} [{}]  {}",
            h.score, h.memory.name, h.memory.memory_type, h.memory.description
        );
        println!("        why: {}", why(&h.why));
        if let Some(s) = &h.snippet {
            println!("        | {s}");
        }
        if let Some(x) = h
            .memory
            .extraction
            .as_ref()
            .filter(|x| x.state == ExtractionState::Failed)
        {
            println!("        extraction: {}", extraction(x));
        }
        for r in &h.stale_reasons {
            println!("        STALE: {r}");
        }
    }
    if a.hits.is_empty() {
        println!("no memories matched");
    }
    eprintln!("{}", vectors_line(&a.vectors));
}

/// `vectors: on (MODEL)`, `vectors: pending (N chunks; hint)`, `vectors: off (hint)`...
pub fn vectors_line(v: &VectorsState) -> String {
    let mut parts = Vec::new();
    if let Some(m) = &v.model {
        parts.push(m.clone());
    }
    if let Some(n) = v.pending.filter(|n| *n > 0) {
        parts.push(format!("{n} chunks pending"));
    }
    if let Some(e) = &v.error {
        parts.push(e.clone());
    }
    if let Some(h) = &v.hint {
        parts.push(h.clone());
    }
    if parts.is_empty() {
        format!("vectors: {}", v.state)
    } else {
        format!("vectors: {} ({})", v.state, parts.join("; "))
    }
}

fn vectors_of(v: &MemoryView) {
    if let Some(s) = &v.vectors {
        println!("{}", vectors_line(s));
    }
}

pub fn embedded(r: &EmbedReport) {
    println!(
        "{}: embedded {} chunks with {} ({:.1} chunks/s), {} still missing",
        r.path, r.embedded, r.model, r.chunks_per_s, r.remaining
    );
}

pub fn history(h: &HistoryAnswer) {
    for v in &h.versions {
        let deleted = if v.deleted { " (forgotten)" } else { "" };
        println!(
            "v{:<3} {:<8} {} [{}] {}{deleted}",
            v.version,
            v.op_name(),
            v.name,
            v.memory_type,
            v.description
        );
    }
}

pub fn related(r: &RelatedAnswer) {
    for m in &r.related {
        println!("{}  {}  via {}", m.depth, m.memory.name, m.path.join(" "));
    }
    if r.related.is_empty() {
        println!("nothing shares an entity with `{}`", r.name);
    }
}

pub fn entities(e: &EntitiesAnswer) {
    for x in &e.entities {
        let aliases = if x.aliases.is_empty() {
            String::new()
        } else {
            format!(" (aka {})", x.aliases.join(", "))
        };
        println!(
            "{:<30} {:<12} degree {}{aliases}",
            x.name, x.entity_type, x.degree
        );
    }
}

pub fn stats(s: &MemoryStats) {
    let st = &s.stats;
    let store = &s.store;
    let kind = match store.kind {
        StoreKind::Sqlite => "sqlite",
        StoreKind::Postgres => "postgres",
    };
    let search = match store.vector_search {
        VectorSearch::Exact => "exact",
        VectorSearch::Pgvector => "pgvector",
    };
    match &store.scope {
        Some(scope) => println!(
            "{kind} {} (repository {scope}; vector search: {search})",
            s.path
        ),
        None => println!("{kind} {} (vector search: {search})", s.path),
    }
    println!(
        "{} memories ({} forgotten), {} versions, {} chunks ({} embedded), {} entities, {} relationships, {} code links",
        st.memories,
        st.forgotten,
        st.versions,
        st.chunks,
        st.embedded_chunks,
        st.entities,
        st.relationships,
        st.code_links
    );
    if st.extraction_failed > 0 {
        println!(
            "{} memories whose LLM extraction failed (`loci memory enrich --all` retries)",
            st.extraction_failed
        );
    }
    for (t, n) in &st.types {
        println!("  {t:<12} {n}");
    }
    println!("{}", vectors_line(&s.vectors));
}

/// The memories an impact answer touches, after the traversal's own lines.
pub fn impact_memories(a: &ImpactAnswer) {
    if let Some(why) = &a.memories_unavailable {
        eprintln!("warning: {why}");
    }
    if a.memories.is_empty() {
        return;
    }
    println!("memories linked to what this reaches:");
    for m in &a.memories {
        println!(
            "  {:>2}  {}  [{}]  linked to {}",
            m.depth, m.memory.name, m.memory.memory_type, m.linked
        );
        for r in &m.stale_reasons {
            println!("        STALE: {r}");
        }
    }
}
