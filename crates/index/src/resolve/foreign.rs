//! Rust receivers of a type the workspace does not define (`self.v.len()` where
//! `v: Vec<u8>`, `hasher.finish()` where `hasher = DefaultHasher::new()`, a generic
//! `x: T`): their inherent methods are the standard library's or another crate's, so a
//! same-named inherent method of some workspace struct is no candidate. What the
//! workspace can add to such a type are impls for it (`impl Ext for Vec<u8>`) and its
//! traits' methods (a generic bound, an extension trait): only those are linked. So for
//! a call on what a foreign function returned (`f.debug_tuple("W").finish()`, where no
//! definition of the workspace is named `debug_tuple`).

use super::{Confidence, Ctx, Sym};
use crate::Lang;

impl<'a> Ctx<'a> {
    /// `x.name` where `x` is of the foreign type `ty` (`None`: of some type a foreign
    /// function returned): the workspace's members of `ty` (its impls for it), else the
    /// workspace's trait methods named `name` (by name: which impl runs is not known),
    /// else nothing.
    pub(super) fn resolve_on_foreign(
        &self,
        ty: Option<&str>,
        name: &str,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        let Some(all) = self.table.by_name.get(name) else {
            return Vec::new();
        };
        let members: Vec<&'a Sym> = match ty {
            Some(ty) => self
                .table
                .owned_by(name, ty)
                .filter(|s| wanted(s))
                .collect(),
            None => Vec::new(),
        };
        if let [one] = members.as_slice() {
            return vec![(one, Confidence::Exact)];
        }
        if !members.is_empty() {
            return members.into_iter().map(|s| (s, Confidence::Name)).collect();
        }
        all.iter()
            .filter(|s| wanted(s) && s.in_trait)
            .take(super::rules::MAX_NAME_ONLY)
            .map(|s| (s, Confidence::Name))
            .collect()
    }

    /// Whether `qualifier` (what stands before a method's name) is a call no definition
    /// of the workspace can answer, in a Rust file: `f.debug_tuple("W")`,
    /// `std::env::args()` — its result is foreign.
    pub(super) fn is_foreign_call_result(&self, qualifier: &str) -> bool {
        if self.lang() != Some(Lang::Rust) {
            return false;
        }
        let Some(callee) = called_name(qualifier) else {
            return false;
        };
        !self
            .table
            .by_name
            .get(callee)
            .is_some_and(|defs| defs.iter().any(|s| s.kind.is_callable()))
    }
}

/// The name of the function or method `qualifier` ends by calling (`debug_tuple` in
/// `f.debug_tuple("W")`, `args` in `std::env::args()`); `None` when it is no call.
fn called_name(qualifier: &str) -> Option<&str> {
    let text = qualifier.trim_end();
    let body = text.strip_suffix(')')?;
    // The call's own argument list: the `(` that balances the last `)`.
    let mut depth = 0i32;
    let mut open = None;
    for (i, ch) in body.char_indices().rev() {
        match ch {
            ')' => depth += 1,
            '(' if depth == 0 => {
                open = Some(i);
                break;
            }
            '(' => depth -= 1,
            _ => {}
        }
    }
    let callee = body[..open?].trim_end();
    // A turbofish (`collect::<Vec<_>>`) is no part of the name.
    let callee = callee.split("::<").next().unwrap_or(callee);
    let name = callee.rsplit(['.', ':']).next()?.trim();
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::called_name;

    #[test]
    fn the_name_a_qualifier_ends_by_calling() {
        for (qualifier, want) in [
            ("f.debug_tuple(\"W\")", Some("debug_tuple")),
            ("std::env::args()", Some("args")),
            ("a.b(c(d), e).f(g(h))", Some("f")),
            ("iter.collect::<Vec<_>>()", Some("collect")),
            ("self.inner", None),
            ("(a)", None),
            ("x.y()?", None),
        ] {
            assert_eq!(called_name(qualifier), want, "{qualifier}");
        }
    }
}
