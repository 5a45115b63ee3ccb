//! Where a workspace's index lives: the one rule every operation uses (queries, sync,
//! watch, rebuild, status, the gate's background runs).
//!
//! The `.loci/` marker directory in the workspace decides first (and then no probe is
//! asked, seed 004); else a probe (the registry, later the HTTP chain) may place the
//! index elsewhere, e.g. outside a read-only tree; else the index belongs at the
//! default place, `<root>/.loci/index.db`, where a first index will create it.

use std::path::{Path, PathBuf};

use crate::probe::{IndexednessProbe, ProbeOutcome};
use crate::state::Decider;

/// A workspace and the index file that belongs to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The workspace root, as given (canonical when the caller canonicalised it).
    pub root: PathBuf,
    /// The index file (it may not exist yet when `decider` is [`Decider::None`]).
    pub index_path: PathBuf,
    /// What decided: the marker, the registry, or nothing (the default place).
    pub decider: Decider,
}

impl Located {
    /// The directory holding the index, its lock and its side files.
    pub fn index_dir(&self) -> &Path {
        self.index_path.parent().unwrap_or(Path::new("."))
    }
}

/// Why the index's place could not be decided.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LocateError {
    /// The probe met a lock held by another process.
    #[error("cannot tell where the index of {root} lives: {why}")]
    Busy {
        /// The workspace.
        root: PathBuf,
        /// What the probe said.
        why: String,
    },
    /// The probe failed.
    #[error("cannot tell where the index of {root} lives: {why}")]
    Unknown {
        /// The workspace.
        root: PathBuf,
        /// What the probe said.
        why: String,
    },
}

/// The index of the workspace at `root`: the marker's, else the probe's, else the
/// default place.
pub fn locate(root: &Path, probe: &dyn IndexednessProbe) -> Result<Located, LocateError> {
    locate_decided(root, probe).map(|(located, _)| located)
}

/// [`locate`], with the name of the probe that decided (`None` for the marker), which
/// the lifecycle's reasons show.
pub fn locate_decided(
    root: &Path,
    probe: &dyn IndexednessProbe,
) -> Result<(Located, Option<String>), LocateError> {
    let at_default = |decider| Located {
        root: root.to_path_buf(),
        index_path: loci_store::index_path_for(root),
        decider,
    };
    if root.join(loci_store::INDEX_DIR).is_dir() {
        return Ok((at_default(Decider::Marker), None));
    }
    match probe.lookup(root) {
        ProbeOutcome::Found {
            index_path,
            decider,
        } => Ok((
            Located {
                root: root.to_path_buf(),
                index_path,
                decider: Decider::Registry,
            },
            Some(decider),
        )),
        ProbeOutcome::Absent { decider } => Ok((at_default(Decider::None), Some(decider))),
        ProbeOutcome::Busy { why, decider } => Err(LocateError::Busy {
            root: root.to_path_buf(),
            why: format!("{why} (decided by {decider})"),
        }),
        ProbeOutcome::Unknown(why) => Err(LocateError::Unknown {
            root: root.to_path_buf(),
            why,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(ProbeOutcome);
    impl IndexednessProbe for Fixed {
        fn lookup(&self, _: &Path) -> ProbeOutcome {
            self.0.clone()
        }
    }

    #[test]
    fn the_marker_decides_before_any_probe() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".loci")).unwrap();
        let probe = Fixed(ProbeOutcome::Found {
            index_path: "/elsewhere/index.db".into(),
            decider: "registry".into(),
        });
        let l = locate(dir.path(), &probe).unwrap();
        assert_eq!(l.decider, Decider::Marker);
        assert_eq!(l.index_path, dir.path().join(".loci/index.db"));
    }

    #[test]
    fn without_a_marker_the_registry_places_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let probe = Fixed(ProbeOutcome::Found {
            index_path: "/elsewhere/index.db".into(),
            decider: "registry".into(),
        });
        let l = locate(dir.path(), &probe).unwrap();
        assert_eq!(l.decider, Decider::Registry);
        assert_eq!(l.index_path, Path::new("/elsewhere/index.db"));
        assert_eq!(l.index_dir(), Path::new("/elsewhere"));
    }

    #[test]
    fn an_unknown_workspace_gets_the_default_place() {
        let dir = tempfile::tempdir().unwrap();
        let l = locate(
            dir.path(),
            &Fixed(ProbeOutcome::Absent {
                decider: "registry (cli)".into(),
            }),
        )
        .unwrap();
        assert_eq!(l.decider, Decider::None);
        assert_eq!(l.index_path, dir.path().join(".loci/index.db"));
    }

    #[test]
    fn a_failing_probe_is_an_error_not_a_guess() {
        let dir = tempfile::tempdir().unwrap();
        let e = locate(dir.path(), &Fixed(ProbeOutcome::Unknown("boom".into()))).unwrap_err();
        assert!(matches!(e, LocateError::Unknown { .. }), "{e}");
        let busy = ProbeOutcome::Busy {
            why: "locked".into(),
            decider: "registry (cli)".into(),
        };
        let e = locate(dir.path(), &Fixed(busy)).unwrap_err();
        assert!(matches!(e, LocateError::Busy { .. }), "{e}");
    }
}
