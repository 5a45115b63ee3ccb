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
    let mut n = 0;
    let mut lines = std::iter::from_fn(|| {
        n += 1;
        read_line(input, n).transpose()
    });
    Ok(transfer::import(&mut *store, &mut lines)?)
}

/// Longest line an import reads: a memory's body is at most 512 KiB, and its line
/// carries every version of it.
pub const MAX_LINE_BYTES: usize = 256 << 20;

/// Line `n` of `input` (without its end of line), `None` at the end; a line past
/// [`MAX_LINE_BYTES`] or not UTF-8 is refused by number, without reading it whole.
fn read_line(input: &mut dyn BufRead, n: usize) -> Result<Option<(usize, String)>, MemoryError> {
    let mut bytes = Vec::new();
    let read = std::io::Read::take(&mut *input, MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', &mut bytes)
        .map_err(|e| MemoryError::Invalid(format!("export line {n}: {e}")))?;
    if read == 0 {
        return Ok(None);
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    } else if bytes.len() > MAX_LINE_BYTES {
        return Err(MemoryError::TooLong {
            what: format!("export line {n}"),
            got: bytes.len(),
            limit: MAX_LINE_BYTES,
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        MemoryError::Invalid(format!(
            "export line {n} is not UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok(Some((n, text)))
}

fn write_failed(e: std::io::Error) -> ApiError {
    ApiError::new(ErrorKind::Failure, format!("cannot write the export: {e}"))
}
