//! `loci memory export` and `loci memory import`: parse, open the stream, call
//! `loci_api::memory::{export, import}`, print the counts and the digest.

use std::io::{BufReader, Write};
use std::path::PathBuf;

use clap::Args;
use loci_api::memory::{self as api, ExportSummary, ImportReport, StoreTarget};
use loci_api::{ApiError, ErrorKind};

use crate::output;

/// `loci memory export`.
#[derive(Args)]
pub struct ExportArgs {
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// The user-level store instead of the workspace's.
    #[arg(long)]
    pub(crate) user: bool,
}

/// `loci memory import`.
#[derive(Args)]
pub struct ImportArgs {
    /// The export file (`-` reads stdin).
    file: PathBuf,
    /// The user-level store instead of the workspace's.
    #[arg(long)]
    pub(crate) user: bool,
}

/// Exports to the file or stdout; the summary goes to stderr (stdout with `--json`
/// and `--output`), so stdout stays the data.
pub fn export(t: &StoreTarget, a: ExportArgs, json: bool) -> Result<(), ApiError> {
    let s = match &a.output {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| {
                ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("cannot create {}: {e}", path.display()),
                )
            })?;
            let mut out = std::io::BufWriter::new(file);
            api::export(t, &mut out)?
        }
        None => api::export(t, &mut std::io::stdout().lock())?,
    };
    if json && a.output.is_some() {
        output::json(&s);
    } else {
        eprintln!("{}", exported_line(&s));
    }
    Ok(())
}

/// Imports the file (or stdin) and prints what it did.
pub fn import(t: &StoreTarget, a: ImportArgs, json: bool) -> Result<(), ApiError> {
    let r = if a.file.as_os_str() == "-" {
        api::import(t, &mut std::io::stdin().lock())?
    } else {
        let file = std::fs::File::open(&a.file).map_err(|e| {
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("cannot read {}: {e}", a.file.display()),
            )
        })?;
        api::import(t, &mut BufReader::new(file))?
    };
    if json {
        output::json(&r);
    } else {
        imported(&r);
    }
    Ok(())
}

fn exported_line(s: &ExportSummary) -> String {
    format!(
        "exported {} memories ({} versions), {} entities, {} relationships; digest {}",
        s.memories, s.versions, s.entities, s.relationships, s.digest
    )
}

fn imported(r: &ImportReport) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{} memories in the file: {} created ({} versions of history restored), {} already there, {} conflicts; {} relationships added",
        r.file.memories,
        r.created,
        r.versions_restored,
        r.unchanged,
        r.conflicts.len(),
        r.relationships_added
    );
    for c in &r.conflicts {
        let _ = writeln!(
            out,
            "  conflict: {c} exists with other content (left as it is)"
        );
    }
    let _ = writeln!(
        out,
        "digest {} ({})",
        r.digest,
        if r.verified {
            "verified: the store holds the file's content and histories"
        } else {
            "differs from the file's: content or histories"
        }
    );
}
