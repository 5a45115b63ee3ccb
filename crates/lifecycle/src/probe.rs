//! Indexedness when the `.loci/` marker is absent: the seam where seed 004's probe
//! chain plugs in. Today the only probe is loci's own registry; the HTTP chain (health
//! → point lookup → repositories list → loopback server → CLI fallback) comes with the
//! server and implements the same trait, chained in front of [`RegistryProbe`].
//!
//! The marker-present path never calls a probe.

use std::path::{Path, PathBuf};

/// What a probe found out about a workspace without a marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// Indexed; the index lives at `index_path`. `decider` names the probe for the
    /// reason (`registry`, later `registry (http)`...).
    Found {
        /// Where the index lives.
        index_path: PathBuf,
        /// Which probe decided.
        decider: String,
    },
    /// Known not to be indexed.
    Absent,
    /// The probe met a lock held by another process.
    Busy(String),
    /// The probe could not decide (the text says why): a corrupt-adjacent unknown,
    /// never drift, never work.
    Unknown(String),
}

/// Decides indexedness for a workspace that has no marker.
pub trait IndexednessProbe: Send + Sync {
    /// Looks `root` (canonical) up.
    fn lookup(&self, root: &Path) -> ProbeOutcome;
}

/// The registry of known workspaces (`$LOCI_HOME/registry.db`).
#[derive(Debug, Default, Clone, Copy)]
pub struct RegistryProbe;

impl IndexednessProbe for RegistryProbe {
    fn lookup(&self, root: &Path) -> ProbeOutcome {
        let registry = match loci_store::registry::Registry::open_default() {
            Ok(r) => r,
            Err(e) if e.is_busy() => return ProbeOutcome::Busy(e.to_string()),
            Err(e) => return ProbeOutcome::Unknown(format!("registry: {e}")),
        };
        match registry.lookup(root) {
            Ok(Some(entry)) => ProbeOutcome::Found {
                index_path: PathBuf::from(entry.index_path),
                decider: "registry".into(),
            },
            Ok(None) => ProbeOutcome::Absent,
            Err(e) if e.is_busy() => ProbeOutcome::Busy(e.to_string()),
            Err(e) => ProbeOutcome::Unknown(format!("registry: {e}")),
        }
    }
}

/// Tries probes in order; the first that does not say [`ProbeOutcome::Unknown`] decides.
/// (Seed 004: the HTTP chain falls back to the CLI registry.)
pub struct ProbeChain(pub Vec<Box<dyn IndexednessProbe>>);

impl IndexednessProbe for ProbeChain {
    fn lookup(&self, root: &Path) -> ProbeOutcome {
        let mut last = ProbeOutcome::Unknown("no probe configured".into());
        for probe in &self.0 {
            last = probe.lookup(root);
            if !matches!(last, ProbeOutcome::Unknown(_)) {
                return last;
            }
        }
        last
    }
}
