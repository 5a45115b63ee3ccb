//! Indexedness when the `.loci/` marker is absent. A probe answers found / absent /
//! busy / unknown and names itself (the decider the reason shows). [`RegistryProbe`]
//! reads loci's own registry (`registry (cli)`); the gate chains the HTTP probe of a
//! loci server in front of it (`loci_api::api_probe`: health → point lookup →
//! repositories list → a loopback server it starts → this registry) with
//! [`ProbeChain`], so the registry stays the fallback.
//!
//! The marker-present path never calls a probe.

use std::path::{Path, PathBuf};

/// What a probe found out about a workspace without a marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// Indexed; the index lives at `index_path`. `decider` names the probe for the
    /// reason ([`DECIDER_CLI`], `registry (api)`, `registry (api list)`).
    Found {
        /// Where the index lives.
        index_path: PathBuf,
        /// Which probe decided.
        decider: String,
    },
    /// Known not to be indexed.
    Absent {
        /// Which probe decided.
        decider: String,
    },
    /// The probe met a lock held by another process.
    Busy {
        /// What the probe met.
        why: String,
        /// Which probe decided.
        decider: String,
    },
    /// The probe could not decide (the text says why): a corrupt-adjacent unknown,
    /// never drift, never work.
    Unknown(String),
}

/// Decides indexedness for a workspace that has no marker.
pub trait IndexednessProbe: Send + Sync {
    /// Looks `root` (canonical) up.
    fn lookup(&self, root: &Path) -> ProbeOutcome;
}

/// The decider named when loci's own registry file decides (the CLI's probe).
pub const DECIDER_CLI: &str = "registry (cli)";

/// The registry of known workspaces (`$LOCI_HOME/registry.db`), read in process.
#[derive(Debug, Default, Clone, Copy)]
pub struct RegistryProbe;

impl IndexednessProbe for RegistryProbe {
    fn lookup(&self, root: &Path) -> ProbeOutcome {
        let busy = |e: loci_store::StoreError| ProbeOutcome::Busy {
            why: e.to_string(),
            decider: DECIDER_CLI.into(),
        };
        let registry = match loci_store::registry::Registry::open_default() {
            Ok(r) => r,
            Err(e) if e.is_busy() => return busy(e),
            Err(e) => return ProbeOutcome::Unknown(format!("{DECIDER_CLI}: {e}")),
        };
        match registry.lookup(root) {
            Ok(Some(entry)) => ProbeOutcome::Found {
                index_path: PathBuf::from(entry.index_path),
                decider: DECIDER_CLI.into(),
            },
            Ok(None) => ProbeOutcome::Absent {
                decider: DECIDER_CLI.into(),
            },
            Err(e) if e.is_busy() => busy(e),
            Err(e) => ProbeOutcome::Unknown(format!("{DECIDER_CLI}: {e}")),
        }
    }
}

/// Tries probes in order; the first that does not say [`ProbeOutcome::Unknown`] decides
/// (the HTTP chain falls back to the registry). When every probe is unknown, the
/// answer is unknown and names each failure, in order.
pub struct ProbeChain(pub Vec<Box<dyn IndexednessProbe>>);

impl IndexednessProbe for ProbeChain {
    fn lookup(&self, root: &Path) -> ProbeOutcome {
        let mut failures = Vec::new();
        for probe in &self.0 {
            match probe.lookup(root) {
                ProbeOutcome::Unknown(why) => failures.push(why),
                decided => return decided,
            }
        }
        if failures.is_empty() {
            failures.push("no probe configured".into());
        }
        ProbeOutcome::Unknown(failures.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Says(ProbeOutcome);
    impl IndexednessProbe for Says {
        fn lookup(&self, _: &Path) -> ProbeOutcome {
            self.0.clone()
        }
    }

    fn unknown(why: &str) -> Box<dyn IndexednessProbe> {
        Box::new(Says(ProbeOutcome::Unknown(why.into())))
    }

    #[test]
    fn the_first_answer_that_is_not_unknown_decides_and_busy_is_an_answer() {
        let busy = ProbeOutcome::Busy {
            why: "locked".into(),
            decider: DECIDER_CLI.into(),
        };
        let chain = ProbeChain(vec![
            unknown("registry (api): no server"),
            Box::new(Says(busy.clone())),
            Box::new(Says(ProbeOutcome::Absent {
                decider: "never asked".into(),
            })),
        ]);
        assert_eq!(chain.lookup(Path::new("/w")), busy);
    }

    #[test]
    fn when_every_probe_is_unknown_the_answer_names_each_failure_in_order() {
        let chain = ProbeChain(vec![
            unknown("registry (api): no server"),
            unknown("registry (cli): not a database"),
        ]);
        assert_eq!(
            chain.lookup(Path::new("/w")),
            ProbeOutcome::Unknown(
                "registry (api): no server; registry (cli): not a database".into()
            )
        );
    }
}
