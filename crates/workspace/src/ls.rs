//! `ls`: the folder picker, contained in a root.

use loci_paths::{Listing, RootKind, Roots, Segment, list_dirs};

use crate::ListError;

/// The real directories directly under `segment` of the root `root` (the
/// root itself when `None`). Never lists outside the root: the segment is
/// validated and contained, and the listing is read through the root handle.
/// The result holds segments, never absolute paths.
pub fn ls(roots: &Roots, root: RootKind, segment: Option<&str>) -> Result<Listing, ListError> {
    let root = roots.get(root).map_err(ListError::NoRoot)?;
    let segment =
        segment
            .map(Segment::parse)
            .transpose()
            .map_err(|e| ListError::InvalidSegment {
                reason: e.kind(),
                message: e.to_string(),
            })?;
    Ok(list_dirs(root, segment.as_ref())?)
}
