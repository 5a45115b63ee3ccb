//! Kotlin extension functions: `fun String.shout()` is the top-level Function `shout`,
//! called with a receiver (`"x".shout()`, `s.shout()`). Called with a receiver, a
//! top-level Kotlin function can only be an extension (a package-qualified `p.f()` is
//! the package rules'), and it is visible from a file of its own package, through an
//! import of its name (`import p.shout`) or of its package (`import p.*`).
//!
//! A member wins over an extension (as in Kotlin): a receiver whose type the workspace
//! defines reaches that type's member when it has one, else the visible extensions; a
//! receiver of a type the workspace does not define (`String`) reaches the visible
//! extensions when there are any, never a same-named member of some other class; a
//! receiver of unknown type reaches the visible extensions as well as the same-named
//! members the name-based rules find. Each extension records the type it extends
//! ([`Sym::receiver`]): when some visible extensions of the name extend the receiver's
//! type or one of its bases the workspace declares, only those are candidates (as Kotlin
//! picks the most specific), so `kType.asTypeName()` reaches `fun KType.asTypeName()`
//! and not `fun KClass<*>.asTypeName()`; when none does (a receiver of a library type
//! whose bases are unknown here: a `List` value calling `fun Iterable<T>.f()`), every
//! visible one stays a candidate.

use super::{Confidence, Ctx, Sym, SymbolKind};

impl<'a> Ctx<'a> {
    /// Whether the file being resolved is Kotlin.
    pub(super) fn is_kotlin(&self) -> bool {
        self.is_kotlin_file(self.file_id)
    }

    /// Whether file `id` is a Kotlin file.
    fn is_kotlin_file(&self, id: i64) -> bool {
        self.lang_of(id) == Some(crate::Lang::Kotlin)
    }

    /// Whether `s` is a top-level function of a Kotlin file.
    fn is_kotlin_top_level(&self, s: &Sym) -> bool {
        s.parent.is_none() && s.kind == SymbolKind::Function && self.is_kotlin_file(s.file_id)
    }

    /// The extension functions named `name` a call with a receiver (of type `receiver`
    /// when the file says it) from this Kotlin file may reach (see the module doc), with
    /// the confidence of how each is visible; empty outside Kotlin.
    pub(super) fn kotlin_extensions(
        &self,
        name: &str,
        receiver: Option<&str>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        if !self.is_kotlin() {
            return Vec::new();
        }
        let Some(all) = self.table.by_name.get(name) else {
            return Vec::new();
        };
        let java = &self.table.java;
        let own = java
            .package_of(self.file_id)
            .map_or(&[][..], |p| java.files_of(p));
        let mut found: Vec<(&'a Sym, Confidence)> = Vec::new();
        for s in all
            .iter()
            .filter(|s| wanted(s) && self.is_kotlin_top_level(s))
        {
            let confidence = if own.contains(&s.file_id) {
                Confidence::Exact
            } else if self.imports.iter().any(|(imported, _, segs, files)| {
                let by_name = *imported == Some(name) && files.contains(&s.file_id);
                let on_demand = imported.is_none_or(|n| n == "*")
                    && java
                        .package_prefix(segs, segs.len())
                        .is_some_and(|(_, files)| files.contains(&s.file_id));
                by_name || on_demand
            }) {
                Confidence::Import
            } else {
                continue;
            };
            found.push((s, confidence));
        }
        if let Some(ty) = receiver {
            self.keep_extensions_of(ty, &mut found);
        }
        found
    }

    /// Keeps the extensions of `ty` or of a base of it, when there are any.
    fn keep_extensions_of(&self, ty: &str, found: &mut Vec<(&'a Sym, Confidence)>) {
        let extended = self.extended_keys(ty);
        if found.iter().any(|(s, _)| extended.contains(&s.receiver)) {
            found.retain(|(s, _)| extended.contains(&s.receiver));
        }
    }

    /// The visible extensions named `name` of `ty` or of a base of it, only those.
    pub(super) fn kotlin_extensions_of(
        &self,
        name: &str,
        ty: &str,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        let extended = self.extended_keys(ty);
        let mut found = self.kotlin_extensions(name, None, wanted);
        found.retain(|(s, _)| extended.contains(&s.receiver));
        found
    }

    /// The receiver keys of `ty` and its bases, as extensions record them.
    fn extended_keys(&self, ty: &str) -> Vec<u32> {
        // A nested type's own bases when it is known by its path (`FunSpec.Builder`).
        let ty = self
            .kotlin_nested_type(ty)
            .unwrap_or_else(|| crate::extract::split_qualified(ty).1);
        self.with_bases(ty)
            .into_iter()
            .map(|t| Sym::receiver_key(crate::extract::split_qualified(t).1))
            .collect()
    }

    /// Whether `s` is one of the extensions [`Self::kotlin_extensions`] finds (for the
    /// name-based rules, which otherwise drop top-level functions called with a receiver).
    /// Asked of every such candidate in every language: the calling file's language is
    /// checked first.
    pub(super) fn is_visible_kotlin_extension(&self, s: &Sym) -> bool {
        self.is_kotlin()
            && self.is_kotlin_top_level(s)
            && self
                .kotlin_extensions(&s.qualified_name, None, &|c: &Sym| c.id == s.id)
                .iter()
                .any(|(e, _)| e.id == s.id)
    }
}
