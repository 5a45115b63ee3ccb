//! Files refused as too complex to parse (`SkipReason::TooComplex`), remembered by
//! their fingerprint in `meta`, so that an unchanged refused file is neither parsed
//! again by every run (up to its parse limit each time) nor counted as drift forever.
//! Other skipped files need no record: drift and the run tell them by a cheap test
//! (size, NUL bytes); only a parse can tell this one.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::sync::{meta_get, meta_set};
use crate::vocab::MetaKey;
use crate::walk::{Found, SkipReason, Skipped};

/// The refused files: exact path (hex) → fingerprint and the refusal's detail.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Refused(BTreeMap<String, Entry>);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    size: u64,
    mtime_ns: i64,
    inode: u64,
    detail: String,
}

fn key(found: &Found) -> String {
    found
        .rel
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Refused {
    /// The record of the last run; an absent or unreadable one is empty (the files are
    /// then parsed once more, which rewrites it).
    pub(crate) fn load(conn: &Connection) -> rusqlite::Result<Refused> {
        Ok(meta_get(conn, MetaKey::TooComplex)?
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default())
    }

    /// Why `found` was refused, when it was and has not changed since.
    pub(crate) fn detail_for(&self, found: &Found) -> Option<&str> {
        let e = self.0.get(&key(found))?;
        (e.size == found.stat.size
            && e.mtime_ns == found.stat.mtime_ns
            && e.inode == found.stat.inode)
            .then_some(e.detail.as_str())
    }

    /// The refusals of a run: the walked files its skip list names as too complex.
    pub(crate) fn of_run(files: &[Found], skipped: &[Skipped]) -> Refused {
        let mut out = BTreeMap::new();
        for s in skipped
            .iter()
            .filter(|s| s.reason == SkipReason::TooComplex)
        {
            for found in files.iter().filter(|f| f.rel.display() == s.path.as_str()) {
                out.insert(
                    key(found),
                    Entry {
                        size: found.stat.size,
                        mtime_ns: found.stat.mtime_ns,
                        inode: found.stat.inode,
                        detail: s.detail.clone().unwrap_or_default(),
                    },
                );
            }
        }
        Refused(out)
    }

    /// Stores `self` when it differs from `before`; says whether it wrote.
    pub(crate) fn store_if_changed(
        &self,
        before: &Refused,
        conn: &Connection,
    ) -> rusqlite::Result<bool> {
        if self == before {
            return Ok(false);
        }
        let text = serde_json::to_string(self).unwrap_or_else(|_| "{}".into());
        meta_set(conn, MetaKey::TooComplex, &text)?;
        Ok(true)
    }
}
