//! The order of the rules that pick a reference's candidates (see the module doc of
//! [`super`]): the receiver rule ([`Ctx::resolve_on`]) and every other
//! ([`Ctx::resolve`]), each language's rule written in its own module.

use super::candidates::{self, Wanted};
use super::ctx::{Ctx, SELF_QUALIFIERS};
use super::def_index::among;
use super::sym::Sym;
use super::{go_calls, java_rules, overloads};
use crate::extract::SymbolKind;
use crate::vocab::Confidence;

/// Most candidates linked by name alone before a reference is left unresolved as too ambiguous.
pub(super) const MAX_NAME_ONLY: usize = 3;

impl<'a> Ctx<'a> {
    /// `x.name` where the file says `x` is a `ty`: only members of `ty` or of its bases
    /// (followed by name, a few levels up) are candidates; same-named members of other
    /// types are never linked. Rust paths (`module::f()`) keep their own rule first.
    pub(super) fn resolve_on(
        &self,
        ty: &str,
        name: &str,
        qualifier: Option<&str>,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        // Kotlin: a nested type by its path (`FunSpec.Builder`) has its own members and
        // bases ([`super::kotlin_nested`]); the other rules know a type by its last name.
        let kotlin = self.is_kotlin();
        let nested_sym = kotlin.then(|| self.kotlin_nested_sym(ty)).flatten();
        let nested = nested_sym.map(|s| s.qualified_name.as_str());
        let path = nested.unwrap_or(ty);
        let ty = if kotlin {
            crate::extract::split_qualified(ty).1
        } else {
            ty
        };
        // A type the workspace does not define (`Vec`, a generic parameter): its members
        // are unknown here, so the name-based rules decide. So do an interface's or a
        // trait's: a call through one reaches its implementations (Go's are not even
        // declared).
        let abstract_kind = |s: &Sym| matches!(s.kind, SymbolKind::Trait | SymbolKind::Interface);
        let concrete = match nested_sym {
            // That one type, not every type of its last name.
            Some(s) => !abstract_kind(s),
            None => self.table.by_name.get(ty).is_some_and(|defs| {
                defs.iter().any(|s| s.kind.is_type()) && !defs.iter().any(abstract_kind)
            }),
        };
        // Java/Kotlin: the types of that name the file's imports and package bind it to
        // (none: a type outside the workspace).
        let java_files = (concrete && nested.is_none())
            .then(|| self.java_receiver_files(ty))
            .flatten();
        // Kotlin: a type the workspace does not define (`String`) has none of its
        // members, but may have its extensions ([`kotlin_extensions`]).
        let extensions = || self.kotlin_extensions(name, Some(path), wanted);
        if !concrete && self.is_builtin_receiver(ty) {
            return extensions();
        }
        // Rust: a type the workspace does not define ([`super::foreign`]).
        if !concrete && self.lang() == Some(crate::Lang::Rust) && !self.defines_type(ty) {
            return self.resolve_on_foreign(Some(ty), name, wanted);
        }
        // C++: a type the workspace does not define (`std::string`, a library's class):
        // its members are the library's, never a same-named method of a workspace class.
        if !concrete
            && matches!(self.lang(), Some(crate::Lang::C | crate::Lang::Cpp))
            && !self.defines_type(ty)
        {
            return Vec::new();
        }
        // Java: a type the workspace does not define ([`super::java_foreign`]).
        if !concrete && let Some(found) = self.resolve_on_java_foreign(ty, name, wanted) {
            return found;
        }
        // C#: a type the workspace does not define ([`super::cs_receivers`]).
        if !concrete && let Some(found) = self.resolve_on_cs_foreign(ty, name, wanted) {
            return found;
        }
        if !concrete && self.is_kotlin() && !self.defines_type(ty) {
            let found = extensions();
            if !found.is_empty() {
                return found;
            }
        }
        if !concrete {
            return self
                .resolve_on_interface(ty, name, qualifier, from, wanted)
                .unwrap_or_else(|| self.resolve(name, qualifier, from, wanted));
        }
        if java_files.as_ref().is_some_and(Vec::is_empty) {
            return self.resolve(name, qualifier, from, wanted);
        }
        if !self.table.by_name.contains_key(name) {
            return Vec::new();
        }
        let types = self.with_bases(if nested.is_some() { path } else { ty });
        // The nearest type that has the member wins (an override hides its base's).
        for t in &types {
            let mut members: Vec<&Sym> = self
                .table
                .owned_by(name, t)
                .filter(|s| wanted(s))
                .filter(|s| *t != ty || java_files.as_ref().is_none_or(|f| f.contains(&s.file_id)))
                .collect();
            overloads::one_per_group(&mut members);
            if members.is_empty() {
                continue;
            }
            // Several types of that name (in other files or crates): the one in this
            // file, else the ones this file imports, else all of them by name.
            if members.len() == 1 {
                return vec![(members[0], Confidence::Exact)];
            }
            if let Some(s) = members.iter().find(|s| s.file_id == self.file_id) {
                return vec![(s, Confidence::Exact)];
            }
            let imported: Vec<&Sym> = members
                .iter()
                .copied()
                .filter(|s| {
                    self.imports
                        .iter()
                        .any(|(_, _, _, files)| files.contains(&s.file_id))
                })
                .collect();
            if !imported.is_empty() {
                return imported
                    .into_iter()
                    .map(|s| (s, Confidence::Import))
                    .collect();
            }
            return members.into_iter().map(|s| (s, Confidence::Name)).collect();
        }
        // No member: an extension (Kotlin, C#), else nothing.
        if self.is_csharp() {
            return self.cs_extensions(name, Some(ty), wanted);
        }
        extensions()
    }

    /// Every rule but the receiver's, for a reference that may name what `wanted` accepts.
    pub(super) fn resolve(
        &self,
        name: &str,
        qualifier: Option<&str>,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        let base = || {
            self.table
                .by_name
                .get(name)
                .map_or_else(Vec::new, |defs| candidates::base(defs, wanted))
        };
        self.resolve_among(name, qualifier, from, wanted, base)
    }

    /// [`Ctx::resolve`] for a reference of a [`Wanted`] kind: the name's candidates come
    /// from the table's kept list ([`super::candidates`]).
    pub(super) fn resolve_kind(
        &self,
        name: &str,
        qualifier: Option<&str>,
        from: Option<i64>,
        wanted: Wanted,
    ) -> Vec<(&'a Sym, Confidence)> {
        let base = || self.table.candidates(name, wanted);
        self.resolve_among(name, qualifier, from, &|s| wanted.accepts(s), base)
    }

    /// The rules, over the name's candidates as `base` lists them ([`candidates::base`]).
    fn resolve_among(
        &self,
        name: &str,
        qualifier: Option<&str>,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
        base: impl FnOnce() -> Vec<&'a Sym>,
    ) -> Vec<(&'a Sym, Confidence)> {
        // A name bound by `import X as name`: resolve X in the imported files.
        if qualifier.is_none()
            && let Some((imported, _, _, files)) = self
                .imports
                .iter()
                .find(|(n, alias, _, _)| *alias == Some(name) && n.is_some_and(|n| n != name))
        {
            let imported = imported.unwrap_or(name);
            if let Some(s) = self
                .table
                .by_name
                .get(imported)
                .and_then(|c| c.iter().find(|s| wanted(s) && files.contains(&s.file_id)))
            {
                return vec![(s, Confidence::Import)];
            }
        }
        let mut candidates = base();
        // A bare `f()` never reaches a method where methods are reached only through a
        // receiver (`self.m()`, `this.m()`, `t.M()`): Python, JavaScript, TypeScript, Go.
        if qualifier.is_none() && self.methods_need_receiver() {
            candidates.retain(|s| s.kind != SymbolKind::Method);
        }
        // Go: a bare `F()` names a function of the caller's own package (its folder);
        // another package's `F` is reached through its qualifier.
        if qualifier.is_none() && self.lang() == Some(crate::Lang::Go) {
            let own_package = |s: &&Sym| self.in_callers_dir(s);
            if candidates.iter().any(own_package) {
                candidates.retain(own_package);
            }
        }
        if candidates.is_empty() {
            return Vec::new();
        }
        let one = |s: &'a Sym, c| vec![(s, c)];
        let qualifier_last = qualifier.map(|q| crate::extract::split_qualified(q).1);
        // 1. self.name: same parent as the caller's enclosing definition.
        if let (Some(q), Some(from)) = (qualifier_last, from)
            && SELF_QUALIFIERS.contains(&q)
        {
            let caller_parent = self.own_parent.get(&from).copied().flatten();
            let scope = caller_parent.or(Some(from));
            if let Some(s) = candidates
                .iter()
                .find(|s| s.parent.is_some() && s.parent == scope)
            {
                return one(s, Confidence::Exact);
            }
        }
        // Java/Kotlin: the package the written name is bound to (imports, the file's
        // package, on-demand imports, a name written in full).
        let type_like = qualifier.is_some() || candidates.iter().all(|s| s.kind.is_type());
        match self.java_reference(qualifier, name, &candidates, type_like) {
            java_rules::JavaRule::Decided(found) => return found,
            java_rules::JavaRule::Exclude(ids) => {
                candidates.retain(|s| !ids.contains(&s.id));
                if candidates.is_empty() {
                    return Vec::new();
                }
            }
            java_rules::JavaRule::NotApplicable => {}
        }
        if let Some(found) = self.go_package_member(name, qualifier, wanted) {
            return found;
        }
        // Go: `pkg.F()` reaches the package's top-level `F`; `x.F()` only methods.
        match self.go_selector(qualifier) {
            go_calls::Selector::Package(files) => {
                return self.go_package_call(qualifier.unwrap_or_default(), files, &candidates);
            }
            go_calls::Selector::Value => candidates.retain(|s| s.kind == SymbolKind::Method),
            go_calls::Selector::NotGo => {}
        }
        // Rust paths through the module graph (`crate::a::f()`, `loci_index::run()`,
        // `graph::Graph`): the definition the path names, re-exports followed.
        if let Some(q) = qualifier.filter(|q| *q != "Self" && !q.contains(['.', '(', '<']))
            && self.table.rust.paths.contains_key(&self.file_id)
            && let Some(module) = self.table.rust.module(self.rust_scope(from), q)
        {
            let found =
                self.table
                    .rust
                    .item(&self.table.by_name, self.file_id, module, name, wanted);
            if !found.is_empty() {
                return found.into_iter().map(|s| (s, Confidence::Exact)).collect();
            }
        }
        // 3 (before 2 when written): a qualifier that matches the qualified name, or the
        // module (file) the candidate lives in (`parser::run()`, `utils.helper()`).
        if let Some(q) = qualifier_last.filter(|q| !SELF_QUALIFIERS.contains(q))
            && let Some(only) = self.only_owned_or_in_module(name, q, &candidates)
        {
            return one(only, Confidence::Exact);
        }
        // 2. same file, for an unqualified or `self.`-style call only: `x.m()` on a
        // receiver of unknown type is no more likely this file's `m` than another's.
        let on_other = qualifier_last.is_some_and(|q| !SELF_QUALIFIERS.contains(&q));
        let same_file: Vec<&&Sym> = candidates
            .iter()
            .filter(|s| s.file_id == self.file_id && !on_other)
            .collect();
        // Where methods call their siblings unqualified (Java's implicit `this`), the
        // caller's own type's member comes first.
        let own_type = from
            .filter(|_| !on_other && self.implicit_this())
            .map(|f| self.own_parent.get(&f).copied().flatten().unwrap_or(f));
        let sibling = own_type.and_then(|t| same_file.iter().find(|s| s.parent == Some(t)));
        if let Some(s) = sibling.or(same_file.first()) {
            return one(s, Confidence::Exact);
        }
        // 4. through an import: by imported name or alias, or by a qualifier naming the module.
        let qualifier_first = qualifier.map(|q| {
            q.split(['.', ':', '\\', '/'])
                .find(|p| !p.is_empty())
                .unwrap_or(q)
        });
        for (imp_name, alias, segs, files) in self.imports {
            let names_it = *imp_name == Some(name) || *alias == Some(name);
            let qualifies_item =
                qualifier_first.is_some_and(|q| *alias == Some(q) || *imp_name == Some(q));
            // `use crate::runtime::Handle; runtime::spawn_blocking()`: the qualifier names
            // the module the import is from, so only that module's own functions, not
            // the members of what was imported from it.
            let qualifies_module = !qualifies_item
                && qualifier_first.is_some_and(|q| segs.last().is_some_and(|l| *l == q));
            let glob = imp_name.is_none() || *imp_name == Some("*");
            if names_it || qualifies_item || qualifies_module || glob {
                // Several matches in the imported files (a method name on an unknown
                // receiver): link them all, up to the same cap as by-name links.
                let imported: Vec<&Sym> = candidates
                    .iter()
                    .copied()
                    .filter(|s| files.contains(&s.file_id))
                    .filter(|s| !qualifies_module || names_it || glob || s.parent.is_none())
                    .collect();
                if !imported.is_empty() && imported.len() <= MAX_NAME_ONLY {
                    return imported
                        .into_iter()
                        .map(|s| (s, Confidence::Import))
                        .collect();
                }
            }
        }
        // 5. by name alone. A call on some other receiver (`x.find()`) can only reach a
        // member, never a free function of the same name.
        let candidates: Vec<&Sym> = match qualifier_last {
            Some(q) if !SELF_QUALIFIERS.contains(&q) => candidates
                .into_iter()
                .filter(|s| {
                    s.parent.is_some()
                        || s.kind == SymbolKind::Method
                        || self.in_module(s, q)
                        || self.is_visible_kotlin_extension(s)
                })
                .collect(),
            _ => candidates,
        };
        if candidates.is_empty() {
            return Vec::new();
        }
        if candidates.len() == 1 {
            return one(candidates[0], Confidence::Name);
        }
        let mut same_dir = self
            .table
            .in_dir(name, self.dir)
            .filter(|s| among(&candidates, s));
        if let (Some(only), None) = (same_dir.next(), same_dir.next()) {
            return one(only, Confidence::Name);
        }
        if candidates.len() <= MAX_NAME_ONLY {
            return candidates
                .into_iter()
                .map(|s| (s, Confidence::Name))
                .collect();
        }
        Vec::new()
    }

    /// The one of `candidates` (a subsequence of `name`'s definitions) under the
    /// qualifier `q` or top-level in a module named `q`, if exactly one is.
    fn only_owned_or_in_module(
        &self,
        name: &str,
        q: &str,
        candidates: &[&'a Sym],
    ) -> Option<&'a Sym> {
        let mut only: Option<&'a Sym> = None;
        let matching = self
            .table
            .owned_by(name, q)
            .chain(self.table.in_module(name, q));
        for s in matching.filter(|s| among(candidates, s)) {
            match only {
                Some(o) if !std::ptr::eq(o, s) => return None,
                _ => only = Some(s),
            }
        }
        only
    }
}
