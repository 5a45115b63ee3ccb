//! What a search reads of the vectors file on every query, kept in memory between
//! queries on one workspace handle: the installed model's vectors as one matrix, the
//! unit counts and the embedded files' hashes. A long-lived process (`loci mcp`,
//! `loci serve`) then scans memory, not SQLite, for each query.
//!
//! Invariant: a snapshot is used only when the file's stamp (its random instance and
//! write generation, read in the query's own read transaction) is the one it was
//! loaded at, so vectors a later `loci embed` replaced are never served; a changed
//! stamp reloads (single-flight per handle).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::matrix::Matrix;
use super::store::{Stamp, UnitStore};
use crate::error::ApiError;

/// An embedded file's content hash and the model that embedded it, by path.
pub type EmbeddedFiles = HashMap<String, (Vec<u8>, String)>;

/// One load of the vectors file.
#[derive(Debug)]
pub struct Snapshot {
    stamp: Stamp,
    model: Option<String>,
    /// The model's vectors (empty without a model).
    pub matrix: Matrix,
    /// Units stored.
    pub units: u64,
    /// Units the snapshot's model embedded (all of them when loaded without a model).
    pub of_model: u64,
    /// The embedded files.
    pub files: EmbeddedFiles,
}

/// The snapshot a workspace handle keeps.
#[derive(Debug, Default)]
pub struct Resident {
    held: Mutex<Option<Arc<Snapshot>>>,
}

impl Resident {
    /// The snapshot for `model` as `st` sees the file (call [`UnitStore::begin_read`]
    /// first, so it and the query's other reads agree): the kept one when the stamp
    /// matches and it holds `model`'s vectors (any kept one for full text alone, which
    /// reads no vector), else loaded now and kept.
    pub fn get(&self, st: &UnitStore, model: Option<&str>) -> Result<Arc<Snapshot>, ApiError> {
        let stamp = st.stamp()?;
        // A poisoned lock only means a load panicked: the slot is replaced below.
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = held.as_ref()
            && s.stamp == stamp
            && (model.is_none() || s.model.as_deref() == model)
        {
            return Ok(Arc::clone(s));
        }
        *held = None;
        let (units, of_model) = st.counts(model)?;
        let matrix = match model {
            Some(m) => st.matrix(m)?,
            None => Matrix::default(),
        };
        let files = st
            .files()?
            .into_iter()
            .map(|(p, h, m)| (p, (h, m)))
            .collect();
        let snap = Arc::new(Snapshot {
            stamp,
            model: model.map(str::to_string),
            matrix,
            units,
            of_model,
            files,
        });
        *held = Some(Arc::clone(&snap));
        Ok(snap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meaning::store::{FILE_NAME, NewUnit};

    fn batch(file: &str, name: &str, v: [f32; 2]) -> Vec<(String, Vec<u8>, Vec<NewUnit>)> {
        vec![(
            file.to_string(),
            vec![1],
            vec![NewUnit {
                name: name.into(),
                qualified_name: name.into(),
                kind: "function".into(),
                line: 1,
                end_line: 2,
                text: name.into(),
                fts_name: name.into(),
                fts_body: String::new(),
                vector: v.to_vec(),
            }],
        )]
    }

    #[test]
    fn a_snapshot_is_kept_until_another_connection_writes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let mut writer = UnitStore::open(&path, true).unwrap().unwrap();
        writer
            .replace_files("m", &batch("a.py", "a", [1.0, 0.0]))
            .unwrap();
        let resident = Resident::default();
        let read = || {
            let st = UnitStore::open(&path, false).unwrap().unwrap();
            st.begin_read().unwrap();
            resident.get(&st, Some("m")).unwrap()
        };
        let first = read();
        assert_eq!(first.matrix.len(), 1);
        assert!(Arc::ptr_eq(&first, &read()), "nothing written: kept");
        writer
            .replace_files("m", &batch("b.py", "b", [0.0, 1.0]))
            .unwrap();
        let second = read();
        assert_eq!(second.matrix.len(), 2, "the write is seen");
        assert_eq!(second.files.len(), 2);
        let best = second.matrix.nearest(&[0.0, 1.0], 1)[0].0;
        let st = UnitStore::open(&path, false).unwrap().unwrap();
        assert_eq!(st.units(&[best]).unwrap()[0].name, "b");
        // Full text alone reads no vector: the kept snapshot serves it.
        let st = UnitStore::open(&path, false).unwrap().unwrap();
        st.begin_read().unwrap();
        assert!(Arc::ptr_eq(&second, &resident.get(&st, None).unwrap()));
        // Another model is another snapshot.
        assert!(resident.get(&st, Some("other")).unwrap().matrix.is_empty());
    }
}
