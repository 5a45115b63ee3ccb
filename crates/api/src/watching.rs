//! `loci watch` as a front end runs it: the index kept fresh by
//! [`crate::maintain::watch`] and, when the workspace has a vectors file, its code units
//! too, each clean sync asking [`crate::meaning::refresh`] for a background embed. Apart
//! from `maintain` so that keeping an index never depends on search by meaning.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use loci_lifecycle::Config;
use loci_lifecycle::watch::WatchEvent;

use crate::error::ApiError;
use crate::handle::Workspace;
use crate::maintain::{self, locate};
use crate::meaning::refresh::{RefreshEvent, Refresher};

/// Keeps the index fresh until `stop` is set, calling `report` after every sync, and
/// re-embeds what each clean sync changed on a background thread that reports through
/// `meaning`, so no sync waits for the model.
pub fn watch(
    path: &Path,
    cfg: &Config,
    stop: &AtomicBool,
    report: &mut dyn FnMut(&WatchEvent),
    meaning: Box<dyn Fn(&RefreshEvent) + Send + Sync>,
) -> Result<(), ApiError> {
    let refresher = Refresher::new(Workspace::new(locate(path)?), meaning);
    let mut and_embed = |e: &WatchEvent| {
        report(e);
        // A clean sync that changed the index (or the catch-up, which may find the
        // vectors behind an index another process synced) re-embeds in the background.
        if e.error.is_none() && (e.wrote || e.trigger == "catch_up") {
            refresher.index_changed();
        }
    };
    maintain::watch(path, cfg, stop, &mut and_embed)
}
