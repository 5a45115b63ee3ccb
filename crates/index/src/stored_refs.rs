//! A file's references as the index keeps them: one blob per file (`file_refs`), plus
//! the file's distinct referenced names (`ref_names`) for finding the files a changed
//! definition affects.
//!
//! References are only ever read a whole file at a time (resolution, dumps), so a row
//! per reference bought nothing but cost: writing 300k rows and indexing their names
//! took a third of a first index's writer time on a 600k-line tree. The blob is
//! [postcard](https://docs.rs/postcard) (a stable, documented format) of a
//! `Vec<StoredRef>`, in source order.

use rusqlite::{Transaction, params};
use serde::{Deserialize, Serialize};

use crate::extract::{RefKind, Reference};

/// One reference as stored. Borrowed both ways: encoding reads the parsed facts,
/// decoding borrows the blob's strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredRef<'a> {
    /// The symbol id of the innermost enclosing definition.
    pub from: Option<i64>,
    pub name: &'a str,
    pub qualifier: Option<&'a str>,
    pub kind: RefKind,
    pub line: u32,
    pub col: u32,
    /// The qualifier's type, when the file says it ([`Reference::receiver`]).
    pub receiver: Option<&'a str>,
    /// A call's argument count, where overloads are told apart by it ([`Reference::args`]).
    pub args: Option<u16>,
    /// A Kotlin call's argument types, where the file says them ([`Reference::arg_types`]).
    pub arg_types: Option<&'a str>,
}

/// Writes a file's references (the file has none stored: a new file, or one whose
/// facts were just cleared). `symbol_id` maps a reference's enclosing definition
/// (an index into the file's symbols) to its id.
pub(crate) fn write(
    tx: &Transaction<'_>,
    file_id: i64,
    refs: &[Reference],
    symbol_id: impl Fn(Option<u32>) -> Option<i64>,
) -> rusqlite::Result<()> {
    let stored: Vec<StoredRef<'_>> = refs
        .iter()
        .map(|r| StoredRef {
            from: symbol_id(r.from),
            name: &r.name,
            qualifier: r.qualifier.as_deref(),
            kind: r.kind,
            line: r.line,
            col: r.col,
            receiver: r.receiver.as_deref(),
            args: r.args,
            arg_types: r.arg_types.as_deref(),
        })
        .collect();
    let blob = postcard::to_allocvec(&stored)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    tx.prepare_cached("INSERT INTO file_refs (file_id, n, data) VALUES (?1, ?2, ?3)")?
        .execute(params![file_id, refs.len() as i64, blob])?;
    // A receiver's type is a name the file's edges depend on too (its bases decide
    // which members are its).
    let mut names: Vec<&str> = refs
        .iter()
        .flat_map(|r| std::iter::once(r.name.as_str()).chain(r.receiver.as_deref()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut insert = tx.prepare_cached("INSERT INTO ref_names (file_id, name) VALUES (?1, ?2)")?;
    for name in names {
        insert.execute(params![file_id, name])?;
    }
    Ok(())
}

/// Decodes a `file_refs.data` blob (column `column` of the row it came from, for the
/// error): a damaged blob is an error, never a panic.
pub(crate) fn decode(blob: &[u8], column: usize) -> rusqlite::Result<Vec<StoredRef<'_>>> {
    postcard::from_bytes(blob).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Blob, Box::new(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<StoredRef<'static>> {
        vec![
            StoredRef {
                from: Some(42),
                name: "parse",
                qualifier: Some("self.inner"),
                kind: RefKind::Call,
                line: 7,
                col: 13,
                receiver: Some("Parser"),
                args: Some(2),
                arg_types: Some("String,,KClass"),
            },
            StoredRef {
                from: None,
                name: "Ωmega",
                qualifier: None,
                kind: RefKind::TypeUse,
                line: u32::MAX,
                col: 0,
                receiver: None,
                args: None,
                arg_types: None,
            },
        ]
    }

    #[test]
    fn references_round_trip() {
        let blob = postcard::to_allocvec(&sample()).unwrap();
        assert_eq!(decode(&blob, 2).unwrap(), sample());
        assert_eq!(
            decode(&postcard::to_allocvec(&Vec::<StoredRef>::new()).unwrap(), 2).unwrap(),
            []
        );
    }

    #[test]
    fn damaged_blobs_are_errors() {
        let blob = postcard::to_allocvec(&sample()).unwrap();
        // Every truncation, and every single-byte change, decodes to an error or to
        // references (never a panic); truncations and invalid UTF-8 are errors.
        for end in 0..blob.len() {
            assert!(decode(&blob[..end], 2).is_err(), "truncated at {end}");
        }
        for at in 0..blob.len() {
            for byte in [0x00, 0x7f, 0x80, 0xff] {
                let mut damaged = blob.clone();
                damaged[at] = byte;
                let _ = decode(&damaged, 2);
            }
        }
        let mut bad_utf8 = blob.clone();
        let name_at = blob.windows(5).position(|w| w == b"parse").unwrap();
        bad_utf8[name_at] = 0xff;
        assert!(matches!(
            decode(&bad_utf8, 2),
            Err(rusqlite::Error::FromSqlConversionFailure(
                2,
                rusqlite::types::Type::Blob,
                _
            ))
        ));
    }
}
