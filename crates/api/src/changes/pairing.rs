//! The changed definitions of a diff: each side's touched definitions paired by
//! qualified name and kind (their n-th occurrence in the file), then a definition
//! removed from one file and added to another under the same name paired as a move.

use std::collections::HashMap;

use loci_git::LineRange;
use loci_index::extract::Symbol;
use loci_index::{Lang, SymbolKind};

use super::kinds::SymbolChange;
use super::sides::SideFacts;
use super::touched::touched;

/// A definition on one side, with the file it is in.
#[derive(Debug, Clone)]
pub(super) struct Placed {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The definition as the extractor found it.
    pub symbol: Symbol,
    /// Its file's language.
    pub lang: Lang,
}

/// One changed definition: its old side, its new side, or both.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// How it changed.
    pub change: SymbolChange,
    /// Where it was (absent when added).
    pub old: Option<Placed>,
    /// Where it is (absent when removed).
    pub new: Option<Placed>,
}

/// One side of one file for [`pair_file`].
pub(super) struct FileSide<'a> {
    /// Its path.
    pub path: &'a str,
    /// Its definitions and bytes.
    pub facts: &'a SideFacts,
    /// The lines the diff removes (old side) or adds (new side).
    pub ranges: &'a [LineRange],
}

type Key<'a> = (&'a str, SymbolKind, usize);

/// Each definition's key: qualified name, kind, and how many before it in the file
/// share both (so two `new`s of one file pair in order).
fn keys(symbols: &[Symbol]) -> Vec<Key<'_>> {
    let mut seen: HashMap<(&str, SymbolKind), usize> = HashMap::new();
    symbols
        .iter()
        .map(|s| {
            let n = seen.entry((s.qualified_name.as_str(), s.kind)).or_default();
            *n += 1;
            (s.qualified_name.as_str(), s.kind, *n - 1)
        })
        .collect()
}

/// The changed definitions of one file, in the new side's order, then the removed ones.
pub(super) fn pair_file(old: Option<FileSide<'_>>, new: Option<FileSide<'_>>) -> Vec<Entry> {
    let place = |side: &FileSide<'_>, i: usize| Placed {
        path: side.path.to_string(),
        symbol: side.facts.symbols[i].clone(),
        lang: side.facts.lang,
    };
    let old_touched = old
        .as_ref()
        .map(|o| touched(&o.facts.symbols, o.ranges))
        .unwrap_or_default();
    let old_keys: HashMap<Key<'_>, usize> = old
        .as_ref()
        .map(|o| keys(&o.facts.symbols).into_iter().zip(0..).collect())
        .unwrap_or_default();
    let mut old_used = vec![false; old_touched.len()];
    let mut out = Vec::new();
    if let Some(n) = &new {
        let new_touched = touched(&n.facts.symbols, n.ranges);
        for (j, key) in keys(&n.facts.symbols).into_iter().enumerate() {
            let matched = old_keys.get(&key).copied();
            if let Some(i) = matched {
                old_used[i] = true;
            }
            match (matched, &old) {
                (Some(i), Some(o)) if old_touched[i] || new_touched[j] => {
                    let same =
                        text(o.facts, &o.facts.symbols[i]) == text(n.facts, &n.facts.symbols[j]);
                    out.push(Entry {
                        change: if same {
                            SymbolChange::Moved
                        } else {
                            SymbolChange::Changed
                        },
                        old: Some(place(o, i)),
                        new: Some(place(n, j)),
                    });
                }
                (None, _) if new_touched[j] => out.push(Entry {
                    change: SymbolChange::Added,
                    old: None,
                    new: Some(place(n, j)),
                }),
                _ => {}
            }
        }
    }
    if let Some(o) = &old {
        for (i, used) in old_used.iter().enumerate() {
            if !used && old_touched[i] {
                out.push(Entry {
                    change: SymbolChange::Removed,
                    old: Some(place(o, i)),
                    new: None,
                });
            }
        }
    }
    out
}

/// A definition's bytes on its side.
fn text<'a>(facts: &'a SideFacts, s: &Symbol) -> &'a [u8] {
    let (a, b) = (s.span.start_byte as usize, s.span.end_byte as usize);
    facts.bytes.get(a..b).unwrap_or_default()
}

/// A definition removed from one file and added to another with the same qualified
/// name, kind and language becomes one `moved` entry, when that name was removed once
/// and added once (several candidates are left as they are: no guess).
pub(super) fn pair_moves(entries: Vec<Entry>) -> Vec<Entry> {
    let name = |p: &Placed| (p.symbol.qualified_name.clone(), p.symbol.kind, p.lang);
    let mut removed: HashMap<_, Vec<usize>> = HashMap::new();
    let mut added: HashMap<_, Vec<usize>> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        match (e.change, &e.old, &e.new) {
            (SymbolChange::Removed, Some(o), _) => removed.entry(name(o)).or_default().push(i),
            (SymbolChange::Added, _, Some(n)) => added.entry(name(n)).or_default().push(i),
            _ => {}
        }
    }
    let mut old_of: HashMap<usize, usize> = HashMap::new();
    for (key, r) in &removed {
        if let (&[ri], Some(&[ai])) = (r.as_slice(), added.get(key).map(Vec::as_slice)) {
            old_of.insert(ai, ri);
        }
    }
    let moved_from: std::collections::HashSet<usize> = old_of.values().copied().collect();
    let mut old_side: Vec<Option<Placed>> = entries.iter().map(|e| e.old.clone()).collect();
    entries
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !moved_from.contains(i))
        .map(|(i, mut e)| {
            if let Some(&ri) = old_of.get(&i) {
                e.change = SymbolChange::Moved;
                e.old = old_side[ri].take();
            }
            e
        })
        .collect()
}
