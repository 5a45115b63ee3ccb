//! Printing results: one JSON document on stdout with `--json`, readable text otherwise.

use std::io::Write;

use loci_api::ApiError;
use serde::Serialize;

/// Prints `value` as pretty JSON on stdout.
pub fn json<T: Serialize>(value: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, value);
    let _ = writeln!(out);
}

/// Prints a failure: `{"error": ...}` on stdout with `--json`, else text on stderr.
pub fn failure(e: &ApiError, as_json: bool) {
    if as_json {
        json(&e.envelope());
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {}", e.message);
    if let Some(hint) = &e.hint {
        let _ = writeln!(err, "hint: {hint}");
    }
    let detail = e.detail.as_ref();
    if let Some(candidates) = detail
        .and_then(|d| d.get("candidates"))
        .and_then(|c| c.as_array())
    {
        let _ = writeln!(err, "candidates:");
        for c in candidates {
            let _ = writeln!(
                err,
                "  {}:{}  {} {}  ({}; {} uses)",
                c["path"].as_str().unwrap_or(""),
                c["line"],
                c["kind"].as_str().unwrap_or(""),
                c["qualified_name"].as_str().unwrap_or(""),
                c["module"].as_str().unwrap_or(""),
                c["uses"]
            );
        }
        let count = detail
            .and_then(|d| d.get("candidate_count"))
            .and_then(|n| n.as_u64())
            .unwrap_or(candidates.len() as u64);
        if count > candidates.len() as u64 {
            let _ = writeln!(err, "  ... {} more", count - candidates.len() as u64);
        }
    }
}

/// The text line after a page: how many more there are and how to get them.
pub fn more(page: &loci_api::PageInfo, shown: usize) {
    if let Some(cursor) = &page.next_cursor {
        let total = if page.total_exact {
            page.total.to_string()
        } else {
            format!("at least {}", page.total)
        };
        println!("... {shown} shown of {total}; next page: --cursor {cursor} (or raise --limit)");
    }
}

/// What a graph answer could not link, after its list: one summary line (how many,
/// named `one` or `many`, why, where), then each one when they were asked for.
pub fn unresolved(u: &loci_api::vocab::index::Unresolved, one: &str, many: &str) {
    if u.count == 0 && u.complete {
        return;
    }
    let count = if u.complete {
        u.count.to_string()
    } else {
        format!("at least {}", u.count)
    };
    let reasons: Vec<String> = u
        .reasons
        .iter()
        .map(|r| format!("{} {}", r.reason.name().replace('_', " "), r.count))
        .collect();
    let files: Vec<String> = u
        .files
        .iter()
        .map(|f| format!("{} ({})", f.path, f.count))
        .collect();
    println!(
        "unresolved: {count} {} ({}) in {}",
        if u.count == 1 && u.complete {
            one
        } else {
            many
        },
        reasons.join(", "),
        files.join(", ")
    );
    match &u.sites {
        Some(sites) => {
            for s in sites {
                println!(
                    "  ?  {}:{}  {}  [{}] in {}",
                    s.path,
                    s.line,
                    s.written(),
                    s.reason.name().replace('_', " "),
                    s.from.as_deref().unwrap_or("<top level>")
                );
            }
        }
        None => println!("  (--include-unresolved lists them)"),
    }
}

/// A freshness line when the answer may be partial.
pub fn freshness(f: &loci_api::Freshness) {
    if f.state != loci_api::vocab::index::IndexState::Complete {
        eprintln!(
            "note: the index is {} ({} files not yet resolved): this answer may be partial",
            f.state, f.stale_files
        );
    }
    if let Some(c) = f.commit.as_ref().filter(|c| c.head_now.is_some()) {
        eprintln!(
            "note: the index is {}: `loci sync` brings it to the checkout",
            c.describe()
        );
    }
    if !f.changed_files.is_empty() {
        let shown: Vec<&str> = f.changed_files.iter().take(5).map(String::as_str).collect();
        let more = f.changed_files.len().saturating_sub(shown.len());
        eprintln!(
            "note: {} this answer reads changed since indexed ({}{}): `loci sync` updates the index",
            plural(f.changed_files.len(), "file", "files"),
            shown.join(", "),
            if more > 0 {
                format!(", {more} more")
            } else {
                String::new()
            }
        );
    }
}

/// `n thing` or `n things`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Lists skipped files, a line each with the reason and detail, at most `shown` of
/// them, then how many more there are of `total`.
pub fn skipped_files(files: &[loci_api::Skipped], shown: usize, total: u64) {
    for s in files.iter().take(shown) {
        println!(
            "  {} ({}{})",
            s.path,
            s.reason.name(),
            s.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        );
    }
    let listed = files.len().min(shown) as u64;
    if total > listed {
        println!("  ... {} more", total - listed);
    }
}
