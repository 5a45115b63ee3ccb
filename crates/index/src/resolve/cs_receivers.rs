//! C# receivers outside the workspace (`List<Item> items; items.Add(x)`, `string s;
//! s.IndexOf(c)`, the static `File.Exists(p)`): the method called is the framework's,
//! so a same-named method of some workspace class is no candidate. What such a call can
//! still reach is an override in a workspace subtype of that type, or an extension
//! method (`static .. M(this T x)`, which `extract/receivers_cs.rs` records with the type
//! it extends): the ones extending the receiver's type or one of its bases when there
//! are such, else every extension of that name (a `List<T>` is an `IEnumerable<T>`,
//! which this resolver cannot see). A type variable (`T item`, `TKey key`) is no such
//! type: its constraint is unknown here, so the other rules decide.

use super::rules::MAX_NAME_ONLY;
use super::{Confidence, Ctx, Sym};
use crate::Lang;
use crate::extract::SymbolKind;

/// Whether `ty` reads as a type variable: `T`, `K2`, or `T` and a capital (`TKey`).
fn is_type_variable(ty: &str) -> bool {
    let mut chars = ty.chars();
    let (first, second) = (chars.next(), chars.next());
    let short = ty.len() <= 2
        && ty
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    first.is_some_and(|c| c.is_ascii_uppercase())
        && (short || (first == Some('T') && second.is_some_and(|c| c.is_ascii_uppercase())))
}

/// Whether `q` is written like a type: one identifier starting with a capital.
fn type_like(q: &str) -> bool {
    q.starts_with(|c: char| c.is_ascii_uppercase())
        && q.chars().all(|c| c.is_alphanumeric() || c == '_')
}

impl<'a> Ctx<'a> {
    /// Whether the file being resolved is C#.
    pub(super) fn is_csharp(&self) -> bool {
        self.lang() == Some(Lang::CSharp)
    }

    /// `x.name` in a C# file where `x` is declared of type `ty` and the workspace
    /// defines no type `ty`: its workspace subtypes' members named `name`, and the
    /// extension methods [`Ctx::cs_extensions`] finds. `None` when the rule does not
    /// apply (another language, a workspace type, a type variable).
    pub(super) fn resolve_on_cs_foreign(
        &self,
        ty: &str,
        name: &str,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Option<Vec<(&'a Sym, Confidence)>> {
        if !self.is_csharp() || self.defines_type(ty) || is_type_variable(ty) {
            return None;
        }
        let mut found = self.subtype_members(ty, name, wanted);
        if found.is_empty() {
            found = self.cs_extensions(name, Some(ty), wanted);
        }
        Some(found)
    }

    /// `Q.name()` in a C# file where `Q` is written like a type, the file binds no
    /// name `Q`, the workspace defines no type, namespace or constant `Q`, the caller's
    /// class and its bases no property `Q`, and nothing is imported as `Q`: a framework
    /// type's static member (`File.Exists`) or a property the framework's base class
    /// declares (`Items.Add` in a `ToolStrip`), so only an extension method may be it.
    /// `None` when the rule does not apply.
    pub(super) fn resolve_on_cs_unknown_qualifier(
        &self,
        qualifier: Option<&str>,
        name: &str,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Option<Vec<(&'a Sym, Confidence)>> {
        let q = qualifier.filter(|q| type_like(q))?;
        if !self.is_csharp()
            || self
                .imports
                .iter()
                .any(|(_, alias, _, _)| *alias == Some(q))
        {
            return None;
        }
        if let Some(defs) = self.table.by_name.get(q) {
            // A property is a Method (`extract/csharp.rs`): only one of the caller's
            // class or its bases is what `Q` names here.
            let member = |s: &Sym| matches!(s.kind, SymbolKind::Method | SymbolKind::Function);
            if defs.iter().any(|s| !member(s)) {
                return None;
            }
            let owners = self
                .cs_this_type(from)
                .map_or_else(Vec::new, |class| self.with_bases(class));
            if defs.iter().any(|s| owners.iter().any(|t| s.owned_by(t, q))) {
                return None;
            }
        }
        Some(self.cs_extensions(name, None, wanted))
    }

    /// The name of the class around `from` (C#'s `this`), if any.
    pub(super) fn cs_this_type(&self, from: Option<i64>) -> Option<&'a str> {
        if !self.is_csharp() {
            return None;
        }
        let class = self.enclosing_class(from?)?;
        Some(crate::extract::split_qualified(&class.qualified_name).1)
    }

    /// The C# extension methods named `name`: those extending `ty` or one of its bases,
    /// when `ty` is known and some do; else all of them (at most [`MAX_NAME_ONLY`]).
    pub(super) fn cs_extensions(
        &self,
        name: &str,
        ty: Option<&str>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        if !self.is_csharp() {
            return Vec::new();
        }
        let all: Vec<&'a Sym> = self
            .table
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter(|s| s.receiver != 0 && wanted(s))
            .collect();
        let extending: Vec<&'a Sym> = all
            .iter()
            .copied()
            .filter(|s| ty.is_some_and(|t| self.cs_extends(t, s)))
            .collect();
        let found = if extending.is_empty() { all } else { extending };
        if found.len() > MAX_NAME_ONLY {
            return Vec::new();
        }
        found.into_iter().map(|s| (s, Confidence::Name)).collect()
    }

    /// Whether `s`, a C# extension method, extends `ty` or one of its bases (true for
    /// a method that is no extension: it does not rule it out).
    pub(super) fn cs_extends(&self, ty: &str, s: &Sym) -> bool {
        s.receiver == 0
            || self
                .with_bases(ty)
                .into_iter()
                .any(|t| Sym::receiver_key(crate::extract::split_qualified(t).1) == s.receiver)
    }
}

#[cfg(test)]
mod tests {
    use super::{is_type_variable, type_like};

    #[test]
    fn type_variables_are_short_capitals_or_t_and_a_capital() {
        for t in ["T", "D", "K2", "TKey", "TValue"] {
            assert!(is_type_variable(t), "{t}");
        }
        for t in ["String", "Tx", "t", "", "ABC", "List", "Type", "Token"] {
            assert!(!is_type_variable(t), "{t}");
        }
    }

    #[test]
    fn a_type_like_qualifier_is_one_capitalized_identifier() {
        assert!(type_like("File"));
        assert!(!type_like("file"));
        assert!(!type_like("System.IO.File"));
        assert!(!type_like("Get()"));
    }
}
