//! Selectors written as Rust paths (`tokio::spawn`, `loci_index::index_workspace`,
//! `hir::Semantics::original_range`): the first segment a crate of the workspace (from
//! its `Cargo.toml`), then modules, an item, and members of that item, followed through
//! the same module graph resolution uses, re-exports included.

use rusqlite::Connection;

use super::{Sym, SymbolTable, load_table};

/// The definitions a Rust path names, when its first segment is the name of one of the
/// workspace's crates: the longest prefix that is a module, then the item it holds (its
/// `use`s and `pub use`s followed), then the members of that item named by the rest
/// (`Type::method`, looked for in the item's crate). Empty when the first segment names
/// no crate or the path cannot be followed; the caller then falls back to matching
/// names.
pub(crate) fn rust_path_symbols(conn: &Connection, segs: &[String]) -> rusqlite::Result<Vec<i64>> {
    let Some((first, _)) = segs.split_first() else {
        return Ok(Vec::new());
    };
    if segs.len() < 2 {
        return Ok(Vec::new());
    }
    let crates = crate::crates::load(conn)?;
    if !crates.crates.iter().any(|c| &c.name == first) {
        return Ok(Vec::new());
    }
    let names: Vec<&str> = segs[1..].iter().map(String::as_str).collect();
    let table = load_table(conn, Some(&names))?;
    Ok(follow(&table, segs))
}

/// The definitions a Rust path names relative to one of the workspace's crates
/// (`task::spawn_blocking` for `tokio::task::spawn_blocking`): the path followed from
/// each crate's root as [`rust_path_symbols`] does, for a path whose first segment is
/// no crate. Every crate where it leads somewhere contributes, in crate order.
pub(crate) fn crate_relative_path_symbols(
    conn: &Connection,
    segs: &[String],
) -> rusqlite::Result<Vec<i64>> {
    if segs.len() < 2 {
        return Ok(Vec::new());
    }
    let crates = crate::crates::load(conn)?;
    if crates.crates.iter().any(|c| c.name == segs[0]) {
        return Ok(Vec::new());
    }
    let names: Vec<&str> = segs.iter().map(String::as_str).collect();
    let table = load_table(conn, Some(&names))?;
    let mut found: Vec<i64> = Vec::new();
    let mut seen_names: Vec<&str> = Vec::new();
    for c in &crates.crates {
        if seen_names.contains(&c.name.as_str()) {
            continue;
        }
        seen_names.push(&c.name);
        let mut full = Vec::with_capacity(segs.len() + 1);
        full.push(c.name.clone());
        full.extend(segs.iter().cloned());
        for id in follow(&table, &full) {
            if !found.contains(&id) {
                found.push(id);
            }
        }
    }
    Ok(found)
}

/// [`rust_path_symbols`] over a loaded table: ids in the table's (path) order.
fn follow(table: &SymbolTable, segs: &[String]) -> Vec<i64> {
    let rust = &table.rust;
    let roots = rust.crate_roots_named(&segs[0]);
    for root in roots {
        // The longest module prefix that holds the next segment as an item.
        for split in (1..segs.len()).rev() {
            let module = if split == 1 {
                Some(root)
            } else {
                rust.module(root, &format!("self::{}", segs[1..split].join("::")))
            };
            let Some(module) = module else { continue };
            let items = rust.item(&table.by_name, root.file, module, &segs[split], &|_| true);
            if items.is_empty() {
                continue;
            }
            let rest = &segs[split + 1..];
            if rest.is_empty() {
                return items.into_iter().map(|s| s.id).collect();
            }
            let members = members_of(table, &items, rest);
            if !members.is_empty() {
                return members;
            }
        }
    }
    Vec::new()
}

/// The members `rest` (`[method]`, `[Inner, f]`) of the `items` a path reached: the
/// definitions whose qualified name is the item's own followed by `rest`, in the item's
/// file, else anywhere in its crate (an `impl` block may sit in another file of it;
/// another file's same-named type, `loom`'s `Mutex` beside `sync::Mutex`, is reached
/// only when the item's own file has no such member).
fn members_of(table: &SymbolTable, items: &[&Sym], rest: &[String]) -> Vec<i64> {
    let in_file = members_where(table, items, rest, true);
    if in_file.is_empty() {
        members_where(table, items, rest, false)
    } else {
        in_file
    }
}

fn members_where(
    table: &SymbolTable,
    items: &[&Sym],
    rest: &[String],
    same_file: bool,
) -> Vec<i64> {
    let Some(last) = rest.last() else {
        return Vec::new();
    };
    let Some(candidates) = table.by_name.get(last.as_str()) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for item in items {
        let qualified = format!("{}::{}", item.qualified_name, rest.join("::"));
        let crate_dir = table
            .files
            .get(&item.file_id)
            .and_then(|f| table.rust.crate_dir_of(&f.path));
        for s in candidates {
            let same_crate = table
                .files
                .get(&s.file_id)
                .is_some_and(|f| table.rust.crate_dir_of(&f.path) == crate_dir);
            let here = !same_file || s.file_id == item.file_id;
            if here && same_crate && s.qualified_name == qualified && !found.contains(&s.id) {
                found.push(s.id);
            }
        }
    }
    found
}
