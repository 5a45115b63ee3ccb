//! Kotlin's nested types, known by their paths. A tree such as kotlinpoet declares a
//! dozen `Builder`s (`FunSpec.Builder`, `TypeSpec.Builder`, ...) each with its own bases
//! (`Annotatable.Builder<..>`, `Documentable.Builder<..>`): by its last name alone, a
//! receiver `b: FunSpec.Builder` would reach every `Builder`'s members, and a nested
//! type's `super.m()` would walk every `Builder`'s bases, where the base named `Builder`
//! (`Annotatable.Builder`) is lost as the type itself.
//!
//! So, in Kotlin files only: a base is recorded by its path (its qualifier's type names
//! and its name) under the deriving type's name and, for a nested type, under its path
//! too; a receiver type written with its path (`FunSpec.Builder`, kept by the extractor)
//! picks that type's members and bases; and a type named by its last name alone
//! (`Builder` written inside `FunSpec`, or returned by `FunSpec.builder()`) is taken as
//! the one nested type of that name in the types around the declaration that names it.

use super::{Confidence, Ctx, Sym, Wanted, overloads};

impl<'a> Ctx<'a> {
    /// The nested type `path` (`FunSpec.Builder`) when the workspace defines a type of
    /// exactly that qualified name: its qualified name, as the table holds it.
    pub(super) fn kotlin_nested_type(&self, path: &str) -> Option<&'a str> {
        self.kotlin_nested_sym(path)
            .map(|s| s.qualified_name.as_str())
    }

    /// The definition of the nested type `path`, as [`Self::kotlin_nested_type`] finds it.
    pub(super) fn kotlin_nested_sym(&self, path: &str) -> Option<&'a Sym> {
        let (Some(_), last) = crate::extract::split_qualified(path) else {
            return None;
        };
        self.table
            .by_name
            .get(last)?
            .iter()
            .find(|s| s.kind.is_type() && s.qualified_name == path)
    }

    /// A type named by its last name alone (`Builder`) in a Kotlin declaration whose
    /// qualified name is `context` (`FunSpec.Companion.builder`): the nested type of that
    /// name in the nearest type around it (`FunSpec.Builder`), in `file`; `None` when
    /// there is none (a top-level type, another file's: the other rules decide).
    pub(super) fn kotlin_type_in_scope(
        &self,
        ty: &str,
        context: &str,
        file: i64,
    ) -> Option<&'a str> {
        if ty.contains('.') || !context.contains('.') {
            return None;
        }
        let nested: Vec<&'a Sym> = self
            .table
            .by_name
            .get(ty)?
            .iter()
            .filter(|s| s.kind.is_type() && s.file_id == file && s.qualified_name.contains('.'))
            .collect();
        let mut scope = context;
        while let (Some(outer), _) = crate::extract::split_qualified(scope) {
            if let Some(s) = nested.iter().find(|s| {
                s.qualified_name
                    .strip_suffix(ty)
                    .and_then(|q| q.strip_suffix('.'))
                    == Some(outer)
            }) {
                return Some(s.qualified_name.as_str());
            }
            scope = outer;
        }
        None
    }
}

impl<'a> Ctx<'a> {
    /// What a Kotlin function `f` returns, `ty` as its signature writes it, by its path
    /// when it names a type nested around `f` (`fun builder(): Builder` in
    /// `FunSpec.Companion` returns `FunSpec.Builder`); else `ty`.
    pub(super) fn kotlin_returned_in_scope(&self, f: &'a Sym, ty: &'a str) -> &'a str {
        if self.lang_of(f.file_id) != Some(crate::Lang::Kotlin) {
            return ty;
        }
        self.kotlin_type_in_scope(ty, &f.qualified_name, f.file_id)
            .unwrap_or(ty)
    }

    /// A Kotlin receiver type written by its last name (`b: Builder` inside `FunSpec`),
    /// by its path when it names a type nested around the caller `from`; else as written.
    pub(super) fn kotlin_receiver_in_scope<'r>(&self, ty: &'r str, from: Option<i64>) -> &'r str
    where
        'a: 'r,
    {
        if !self.is_kotlin() {
            return ty;
        }
        let Some(caller) = from.and_then(|id| self.own_symbols.get(&id)) else {
            return ty;
        };
        self.kotlin_type_in_scope(ty, &caller.qualified_name, self.file_id)
            .unwrap_or(ty)
    }
}

impl<'a> Ctx<'a> {
    /// A bare call `name()` in the body of an extension of `ty` (`fun FunSpec.Builder.f()
    /// = addAnnotation(..)`): the member of `ty` or of its nearest base that has one, as
    /// Kotlin looks there first, with the visible extensions of `ty` of that name (a
    /// member that does not take the arguments' types leaves the call to them:
    /// `fun PersistentMap.plus(pairs: Array<..>) = puttingAll(pairs)`); else the visible
    /// extensions of `ty` alone (`fun Sequence<T>.toImmutableList() = toPersistentList()`
    /// reaches `Sequence<T>.toPersistentList`, not the `Array` one beside it); else the
    /// rules of any bare call (a top-level function, another extension, the standard
    /// library). The flag says whether the answer went by `ty`: then extensions of other
    /// types are no overloads of the ones found ([`super::overloads::choose`]).
    pub(super) fn resolve_on_implicit_receiver(
        &self,
        ty: &str,
        name: &str,
        from: Option<i64>,
        kind: Wanted,
    ) -> (Vec<(&'a Sym, Confidence)>, bool) {
        let start = self
            .kotlin_nested_type(ty)
            .unwrap_or_else(|| crate::extract::split_qualified(ty).1);
        if self.defines_type(crate::extract::split_qualified(start).1) {
            for t in self.with_bases(start) {
                let mut members: Vec<&'a Sym> = self
                    .table
                    .owned_by(name, t)
                    .filter(|s| kind.accepts(s) && s.parent.is_some())
                    .collect();
                overloads::one_per_group(&mut members);
                let confidence = match members.len() {
                    0 => continue,
                    1 => Confidence::Exact,
                    _ => Confidence::Name,
                };
                let mut found: Vec<(&'a Sym, Confidence)> =
                    members.into_iter().map(|s| (s, confidence)).collect();
                found.extend(self.kotlin_extensions_of(name, start, &|s| kind.accepts(s)));
                return (found, true);
            }
        }
        let extensions = self.kotlin_extensions_of(name, start, &|s| kind.accepts(s));
        if !extensions.is_empty() {
            return (extensions, true);
        }
        (self.resolve_kind(name, None, from, kind), false)
    }
}
