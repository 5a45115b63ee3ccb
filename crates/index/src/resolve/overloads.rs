//! Overloads (Java, C++, Kotlin, C#): methods of one type that share a name, and so a qualified name,
//! told apart by the arguments they take. The rules of [`super`] pick a definition
//! by name; this widens the pick to the definition's overloads and keeps those a call's
//! argument count fits. When several still fit (overloads by parameter type, which
//! loci does not infer), all of them are kept, with `name` confidence.

use super::sym::Sym;
use super::table::SymbolTable;
use crate::vocab::Confidence;

/// `targets` (what the rules found for a call named `name` passing `args` arguments)
/// with each target's overloads considered: the ones `args` fits (all of them when none
/// does, or when the count is unknown), marked `name` where more than one overload of
/// a definition remains. Targets without overloads are returned as they are. When the
/// rules chose `by_receiver` type, a Kotlin extension's overloads are only those that
/// extend the same type (`fun Box.describe()` is no overload of `fun Panel.describe()`
/// for a call on a `Box`). With `exact_arity` (the caller's language counts arguments
/// exactly: Kotlin), a target none of whose overloads takes `args` arguments is dropped
/// (`Random.nextULong().toString(16)` is no call of a workspace's `toString()`), where
/// otherwise all its overloads are kept. Where several overloads fit the count,
/// `by_types` (whether the call's argument types may fit a definition's parameters:
/// Kotlin's, `super::kotlin_overloads`) keeps those it accepts, when it accepts any; and
/// of several targets left, likewise.
pub(super) fn choose<'a>(
    table: &'a SymbolTable,
    name: &str,
    args: Option<u16>,
    by_receiver: bool,
    exact_arity: bool,
    by_types: &dyn Fn(&Sym) -> bool,
    targets: Vec<(&'a Sym, Confidence)>,
) -> Vec<(&'a Sym, Confidence)> {
    // Only languages that record arities have overloads here: everything else returns
    // at once.
    if targets.iter().all(|(s, _)| s.params.is_none()) {
        return targets;
    }
    let Some(all) = table.by_name.get(name) else {
        return targets;
    };
    let mut out: Vec<(&'a Sym, Confidence)> = Vec::with_capacity(targets.len());
    for (target, confidence) in targets {
        if out.iter().any(|(s, _)| s.id == target.id) {
            continue;
        }
        let group: Vec<&'a Sym> = all
            .iter()
            .filter(|s| s.id == target.id || same_group(s, target))
            .filter(|s| !by_receiver || s.receiver == target.receiver)
            .collect();
        let fits: Vec<&'a Sym> = match args {
            Some(n) => group
                .iter()
                .copied()
                .filter(|s| s.params.is_none_or(|p| p.accepts(n)))
                .collect(),
            None => Vec::new(),
        };
        let kept = match (fits.is_empty(), args) {
            (false, _) => narrowed(fits, by_types),
            (true, Some(_)) if exact_arity => continue,
            (true, _) => group,
        };
        let confidence = if kept.len() > 1 {
            Confidence::Name
        } else {
            confidence
        };
        for s in kept {
            if !out.iter().any(|(o, _)| o.id == s.id) {
                out.push((s, confidence));
            }
        }
    }
    if out.len() > 1 && out.iter().any(|(s, _)| !by_types(s)) {
        let fit: Vec<(&'a Sym, Confidence)> =
            out.iter().copied().filter(|(s, _)| by_types(s)).collect();
        if !fit.is_empty() {
            return fit;
        }
    }
    out
}

/// The definitions of `fits` that `by_types` accepts when there are several and it
/// accepts some, else `fits`.
fn narrowed<'a>(fits: Vec<&'a Sym>, by_types: &dyn Fn(&Sym) -> bool) -> Vec<&'a Sym> {
    if fits.len() < 2 {
        return fits;
    }
    let typed: Vec<&'a Sym> = fits.iter().copied().filter(|s| by_types(s)).collect();
    if typed.is_empty() { fits } else { typed }
}

/// Whether two definitions are overloads of each other: same file, kind and qualified name.
fn same_group(a: &Sym, b: &Sym) -> bool {
    a.file_id == b.file_id && a.kind == b.kind && a.qualified_name == b.qualified_name
}

/// Keeps one definition of each overload group in `candidates` (the first), so the
/// rules count a method with overloads once ([`choose`] brings the others back).
pub(super) fn one_per_group(candidates: &mut Vec<&Sym>) {
    if candidates.len() < 2 || candidates.iter().all(|s| s.params.is_none()) {
        return;
    }
    let mut kept: Vec<&Sym> = Vec::with_capacity(candidates.len());
    candidates.retain(|s| {
        let first = !kept.iter().any(|k| same_group(k, s));
        if first {
            kept.push(s);
        }
        first
    });
}
