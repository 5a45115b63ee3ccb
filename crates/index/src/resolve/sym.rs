//! A candidate definition as resolution sees it, and how a qualifier written at a call
//! (`Foo::new()`, `pkg.Class.m()`) is matched against its qualified name.

use rustc_hash::FxHashMap as HashMap;

use crate::extract::SymbolKind;

/// Each name's definitions: the candidates a reference by that name is resolved among.
pub(super) type SymbolsByName = HashMap<String, Vec<Sym>>;

#[derive(Debug, Clone)]
pub(super) struct Sym {
    pub(super) id: i64,
    pub(super) file_id: i64,
    pub(super) qualified_name: String,
    pub(super) kind: SymbolKind,
    pub(super) parent: Option<i64>,
    /// The type it returns, for a function whose signature says it.
    pub(super) returns: Option<String>,
    /// The arguments it takes, where overloads are told apart by them (Java).
    pub(super) params: Option<crate::extract::Arity>,
    /// Its parameters' types as written, where overloads of one arity are told apart by
    /// them (Kotlin: `crate::extract::kotlin_args`).
    pub(super) param_types: Option<Box<str>>,
    /// [`segment_key`] of the segment before its name (`Foo` in `a::Foo::new`), 0 if
    /// none: rules that filter a name's candidates by qualifier (`Foo::new()`) compare
    /// this number first instead of each candidate's qualified name.
    pub(super) owner: u32,
    /// Declared in a trait (`trait Ext { fn ext(&self); }`): what a call on a value of a
    /// type the workspace does not define can still reach ([`super::foreign`]).
    pub(super) in_trait: bool,
    /// [`Sym::receiver_key`] of the type a Kotlin extension function extends (`KType` for
    /// `fun KType.asTypeName()`), 0 for none: a call on a `KType` reaches it and not the
    /// same-named extension of `KClass`. A key, not the name, keeps every definition small.
    pub(super) receiver: u32,
}

impl Sym {
    /// The key [`Sym::receiver`] holds for a type name (never 0).
    pub(super) fn receiver_key(ty: &str) -> u32 {
        segment_key(ty).unwrap_or(1)
    }

    /// The key of the segment before `name` in `qualified` (see [`Sym::owner`]).
    pub(super) fn owner_of(qualified: &str, name: &str) -> u32 {
        let Some(head) = qualified.strip_suffix(name) else {
            return 0;
        };
        let head = head.trim_end_matches(SEGMENT_SEPARATORS);
        head.rsplit(SEGMENT_SEPARATORS)
            .next()
            .and_then(segment_key)
            .unwrap_or(0)
    }

    /// Whether this candidate for `name` is qualified by `qualifier`
    /// ([`qualified_ends_with`]), rejecting most candidates by their owner key alone.
    pub(super) fn owned_by(&self, qualifier: &str, name: &str) -> bool {
        if let Some(key) = segment_key(qualifier)
            && key != self.owner
        {
            return false;
        }
        qualified_ends_with(&self.qualified_name, qualifier, name)
    }
}

/// What separates the segments of a qualified name (`::`, `.`, PHP's `\`).
const SEGMENT_SEPARATORS: [char; 3] = [':', '.', '\\'];

/// A non-zero hash of one segment, `None` for an empty text or one with separators (a
/// qualifier such as `a::b` is checked in full). When `qualified_ends_with(q, s, n)`
/// holds for a segment `s`, `s` is the last segment before `n` in `q`, so two different
/// keys prove that it does not.
pub(super) fn segment_key(segment: &str) -> Option<u32> {
    if segment.is_empty() || segment.contains(SEGMENT_SEPARATORS) {
        return None;
    }
    let hash = std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, segment);
    Some((hash >> 32) as u32 | 1)
}

/// Whether `qualified` is `name` under `qualifier`: `a::Foo::new` is `new` under `Foo` and
/// under `a::Foo`.
fn qualified_ends_with(qualified: &str, qualifier: &str, name: &str) -> bool {
    let Some(head) = qualified.strip_suffix(name) else {
        return false;
    };
    let head = head.trim_end_matches(SEGMENT_SEPARATORS);
    if head == qualifier {
        return true;
    }
    head.strip_suffix(qualifier)
        .is_some_and(|rest| rest.ends_with("::") || rest.ends_with('.') || rest.ends_with('\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(qualified: &str, name: &str) -> Sym {
        Sym {
            id: 1,
            file_id: 1,
            owner: Sym::owner_of(qualified, name),
            qualified_name: qualified.to_string(),
            kind: SymbolKind::Function,
            parent: None,
            returns: None,
            params: None,
            param_types: None,
            in_trait: false,
            receiver: 0,
        }
    }

    #[test]
    fn the_owner_key_never_changes_what_a_qualifier_matches() {
        let names = [
            ("a::b::Foo::new", "new"),
            ("Foo::new", "new"),
            ("new", "new"),
            ("pkg.mod.Class.method", "method"),
            ("App\\Http\\Kernel::handle", "handle"),
            ("Outer::Inner::f", "f"),
            ("Foo::do_new", "new"),
            ("a:b", "b"),
            ("x.y", "z"),
        ];
        let qualifiers = [
            "Foo",
            "b",
            "a::b",
            "Inner",
            "Outer::Inner",
            "Class",
            "mod.Class",
            "Kernel",
            "Http\\Kernel",
            "do_",
            "a",
            "",
            "new",
            "x",
            "App",
        ];
        for (qualified, name) in names {
            let s = sym(qualified, name);
            for q in qualifiers {
                assert_eq!(
                    s.owned_by(q, name),
                    qualified_ends_with(qualified, q, name),
                    "{qualified} / {q} / {name}"
                );
            }
        }
        // The key does reject: a candidate of another type is refused before any text.
        assert_ne!(sym("Foo::new", "new").owner, segment_key("Bar").unwrap());
    }
}
