//! Printing results: one JSON document on stdout with `--json`, readable text otherwise.

use std::io::Write;

use serde::Serialize;

use crate::exit::Failure;

/// Prints `value` as pretty JSON on stdout.
pub fn json<T: Serialize>(value: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, value);
    let _ = writeln!(out);
}

/// Prints a failure: a JSON object on stdout with `--json`, else text on stderr.
pub fn failure(f: &Failure, as_json: bool) {
    if as_json {
        json(&serde_json::json!({ "error": f }));
    } else {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "error: {}", f.message);
        if let Some(hint) = &f.hint {
            let _ = writeln!(err, "hint: {hint}");
        }
        if let Some(candidates) = f
            .detail
            .as_ref()
            .and_then(|d| d.get("candidates"))
            .and_then(|c| c.as_array())
        {
            let _ = writeln!(err, "candidates:");
            for c in candidates {
                let _ = writeln!(
                    err,
                    "  {}:{}  {} {}",
                    c["path"].as_str().unwrap_or(""),
                    c["line"],
                    c["kind"].as_str().unwrap_or(""),
                    c["qualified_name"].as_str().unwrap_or("")
                );
            }
        }
    }
}
