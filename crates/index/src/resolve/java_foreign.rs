//! Java receivers of a type the workspace does not define (`String s; s.charAt(i)`, a
//! field `MutableIntegerModuloP x; x.setValue(..)`, a `StringBuilder buf`): the method
//! called is that type's, the JDK's or a library's, so a same-named method of some
//! workspace class is no candidate. The only workspace methods such a call can reach
//! are overrides in the workspace's own subtypes of that type (a class implementing
//! `CharSequence` and its `charAt`). A type variable (`D date; date.with(..)`, `T`,
//! `E`) is no such type: its bound is unknown here, so the other rules decide.

use super::rules::MAX_NAME_ONLY;
use super::{Confidence, Ctx, Sym};
use crate::Lang;

/// Whether `ty` reads as a type variable: one or two capital letters or digits (`T`,
/// `D`, `K2`), as Java code names them.
fn is_type_variable(ty: &str) -> bool {
    (1..=2).contains(&ty.len())
        && ty.starts_with(|c: char| c.is_ascii_uppercase())
        && ty
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

impl<'a> Ctx<'a> {
    /// `x.name` in a Java file where `x` is declared of type `ty` and the workspace
    /// defines no type `ty`: the workspace's subtypes' members named `name`, else
    /// nothing. `None` when the rule does not apply (another language, a workspace
    /// type, a type variable).
    pub(super) fn resolve_on_java_foreign(
        &self,
        ty: &str,
        name: &str,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Option<Vec<(&'a Sym, Confidence)>> {
        if self.lang() != Some(Lang::Java) || self.defines_type(ty) || is_type_variable(ty) {
            return None;
        }
        Some(self.subtype_members(ty, name, wanted))
    }

    /// The members named `name` of the workspace's subtypes of `ty` (a type it does not
    /// define): what a call on a `ty` may reach there, at most [`MAX_NAME_ONLY`].
    pub(super) fn subtype_members(
        &self,
        ty: &str,
        name: &str,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        let subtypes = self.subtypes_of(ty);
        self.table
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter(|s| wanted(s) && subtypes.iter().any(|t| s.owned_by(t, name)))
            .take(MAX_NAME_ONLY)
            .map(|s| (s, Confidence::Name))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::is_type_variable;

    #[test]
    fn type_variables_are_short_capitals() {
        for t in ["T", "D", "K2", "E"] {
            assert!(is_type_variable(t), "{t}");
        }
        for t in ["String", "Tx", "t", "", "ABC", "List"] {
            assert!(!is_type_variable(t), "{t}");
        }
    }
}
