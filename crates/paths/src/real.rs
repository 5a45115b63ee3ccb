//! From a local path a caller names (an MCP client's root) to the workspace it is
//! inside the configured roots, decided on its real path: a path whose real path lies
//! strictly inside a root's real path is that root's segment (then barrier 3 again);
//! anything else is refused, the base and the managed root themselves included.

use std::path::{Component, Path};

use crate::contain::{inside_or_equal, segment_under};
use crate::{ContainError, ContainedPath, RootKind, Roots, UnderError, contain};

/// Why a local path is not a workspace inside the roots. The messages name no path:
/// they cross the network.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RealError {
    /// Not absolute, or with a `.`/`..` component (refused before the filesystem is
    /// asked anything).
    #[error("the folder is not named by a clean absolute path (no `.` or `..`)")]
    NotClean,
    /// It names nothing on this machine, and lies (lexically) inside a root.
    #[error("no such folder under the {} root", .0.as_str())]
    Missing(RootKind),
    /// Its real path is not strictly inside any configured root (or it names nothing
    /// and is not inside one: outside the roots, nothing is said about what exists).
    #[error("the folder is not inside this server's roots")]
    Outside,
    /// It is inside a root but no valid segment names it.
    #[error("the folder is inside the {} root but cannot be named by a segment: {reason}", .root.as_str())]
    Unnamed {
        /// Which root.
        root: RootKind,
        /// The segment rule it breaks.
        reason: &'static str,
    },
    /// Barrier 3 refused the segment it maps to.
    #[error(transparent)]
    Contain(#[from] ContainError),
}

impl RealError {
    /// A stable snake_case name for this refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotClean => "not_clean",
            Self::Missing(_) => "not_found",
            Self::Outside => "outside_roots",
            Self::Unnamed { reason, .. } => reason,
            Self::Contain(e) => e.kind(),
        }
    }
}

impl Roots {
    /// The workspace `path` is, decided on its real path: the first configured root
    /// whose real path strictly contains it, and the segment that names it there,
    /// proven again by barrier 3. The roots themselves are never workspaces.
    pub fn contain_real(&self, path: &Path) -> Result<ContainedPath, RealError> {
        let clean = path.is_absolute()
            && path
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        if !clean {
            return Err(RealError::NotClean);
        }
        let roots: Vec<_> = [RootKind::Managed, RootKind::Base]
            .into_iter()
            .filter_map(|kind| self.get(kind).ok())
            .filter_map(|root| Some((root, root.real_path().ok()?)))
            .collect();
        let real = match std::fs::canonicalize(path) {
            Ok(real) => real,
            Err(_) => {
                // Only a path inside a root may learn that nothing is there.
                return Err(roots
                    .iter()
                    .find(|(root, real_root)| {
                        inside_or_equal(root.path(), path) || inside_or_equal(real_root, path)
                    })
                    .map_or(RealError::Outside, |(root, _)| {
                        RealError::Missing(root.kind())
                    }));
            }
        };
        for (root, real_root) in &roots {
            match segment_under(real_root, &real) {
                Ok(segment) => return Ok(contain(root, &segment)?),
                Err(UnderError::NotUnder { .. } | UnderError::IsRoot { .. }) => continue,
                Err(e) => {
                    return Err(RealError::Unnamed {
                        root: root.kind(),
                        reason: e.kind(),
                    });
                }
            }
        }
        Err(RealError::Outside)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RootValues;

    fn roots(base: &Path) -> Roots {
        Roots::from_values(
            RootValues::default(),
            RootValues {
                env: Some(base.into()),
                config: None,
            },
        )
        .unwrap()
    }

    #[test]
    fn real_paths_inside_map_to_segments_and_the_rest_is_refused() {
        let (base, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let app = base.path().join("team/app");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::create_dir_all(outside.path().join("victim")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("victim"), base.path().join("out")).unwrap();
        std::os::unix::fs::symlink(&app, outside.path().join("in")).unwrap();
        let r = roots(base.path());
        let seg = |p: &Path| r.contain_real(p).map(|c| c.segment().to_string());
        assert_eq!(seg(&app).unwrap(), "team/app");
        assert_eq!(seg(&outside.path().join("in")).unwrap(), "team/app");
        for (path, kind) in [
            (outside.path().join("victim"), "outside_roots"),
            (base.path().join("out"), "outside_roots"),
            (base.path().to_path_buf(), "outside_roots"),
            (base.path().join("team/../team/app"), "not_clean"),
            (base.path().join("team/./app"), "team/app"),
            (base.path().join("team/none"), "not_found"),
            (outside.path().join("none"), "outside_roots"),
            (Path::new("team/app").to_path_buf(), "not_clean"),
        ] {
            let got = match seg(&path) {
                Ok(s) => s,
                Err(e) => e.kind().to_string(),
            };
            assert_eq!(got, kind, "{}", path.display());
        }
    }
}
