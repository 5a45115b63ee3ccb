//! `memory export` / `memory import`: a store's memories as JSON lines
//! ([`loci_memory::transfer`]) written to or read from a stream, so a workspace can move
//! from its SQLite file to the team's PostgreSQL database (`memory.url`) and back.

use std::io::{BufRead, Write};

use loci_memory::MemoryError;
use loci_memory::transfer::{self, Line};

pub use loci_memory::transfer::{ImportReport, Summary as ExportSummary};

use super::{StoreLocation, StoreTarget};
use crate::error::{ApiError, ErrorKind};

/// Writes every memory of the target's store (all namespaces, forgotten ones too, each
/// with its versions) to `out`, one JSON document per line; answers the counts and
/// digest its last line carries.
pub fn export(target: &StoreTarget, out: &mut dyn Write) -> Result<ExportSummary, ApiError> {
    let (location, _) = StoreLocation::of_target(target)?;
    let store = location.open()?;
    let mut failed: Option<std::io::Error> = None;
    let result = transfer::export(&*store, &mut |line: &Line| {
        let written = serde_json::to_writer(&mut *out, line)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"));
        written.map_err(|e| {
            let why = e.to_string();
            failed = Some(e);
            MemoryError::Invalid(why)
        })
    });
    if let Some(e) = failed {
        return Err(write_failed(e));
    }
    let summary = result?;
    out.flush().map_err(write_failed)?;
    Ok(summary)
}

/// Imports an export read from `input` into the target's store: memories whose name is
/// free are created, the others left alone (reported `unchanged` or as conflicts), so
/// importing twice adds nothing. Answers the counts and whether the store now holds the
/// file's content (its digest).
pub fn import(target: &StoreTarget, input: &mut dyn BufRead) -> Result<ImportReport, ApiError> {
    let (location, _) = StoreLocation::of_target(target)?;
    let mut store = location.open()?;
    let mut lines = input.lines().enumerate().map(|(i, line)| {
        line.map(|l| (i + 1, l))
            .map_err(|e| MemoryError::Invalid(format!("export line {}: {e}", i + 1)))
    });
    Ok(transfer::import(&mut *store, &mut lines)?)
}

fn write_failed(e: std::io::Error) -> ApiError {
    ApiError::new(ErrorKind::Failure, format!("cannot write the export: {e}"))
}
