//! From a locator to a contained path: the permit-list, the root, then
//! barrier 3.

use crate::{ContainError, ContainedPath, Locator, Mode, ModeError, RootError, Roots, contain};

/// Why a locator could not be resolved to a contained path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The locator is `unavailable` or its mode is not served.
    #[error(transparent)]
    Mode(#[from] ModeError),
    /// Its root is not configured (the error names the variable).
    #[error(transparent)]
    Root(#[from] RootError),
    /// `root + segment` is not contained.
    #[error(transparent)]
    Contain(#[from] ContainError),
}

impl ResolveError {
    /// A stable snake_case name for this refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Mode(e) => e.kind(),
            Self::Root(e) => e.kind(),
            Self::Contain(e) => e.kind(),
        }
    }
}

impl Roots {
    /// Resolves `locator` against this installation's roots: checks the
    /// permit-list `served`, takes the locator's own root (never the other
    /// one), and validates `root + segment` ([`contain`]).
    pub fn resolve(
        &self,
        locator: &Locator,
        served: &[Mode],
    ) -> Result<ContainedPath, ResolveError> {
        let mode = locator.permit(served)?;
        let root = self.get(mode.root_kind())?;
        let segment = locator
            .segment()
            .expect("a permitted locator has a segment");
        Ok(contain(root, &segment)?)
    }
}
