//! Java and Kotlin packages. A file's `package a.b;` (its Module definition) puts its
//! top-level definitions in package `a.b`, whatever folder the file sits in, and a name
//! in a Java/Kotlin file is bound as the languages bind it: by the file itself, by a
//! single-name import (`import a.b.C;`, `import static a.b.C.m;`, Kotlin's `import
//! a.b.C as D`), by the file's own package (no import needed), by an on-demand import
//! (`import a.b.*;`, and the packages every file imports implicitly: `java.lang`, and
//! Kotlin's defaults), or written in full (`a.b.C.m()`). So `C.m()`, `new C()` and a
//! receiver of type `C` reach that package's `C`, never a same-named class of another
//! package; a name an import binds to a package the workspace does not hold
//! (`import org.other.Util;`) reaches nothing.
//!
//! Qualified names of Java/Kotlin definitions do not include the package (`Util.help`),
//! so a name written from its first segment (`Util.help`, `Outer.Inner`) is matched
//! against qualified names exactly, within the files of the package that binds it.

use super::ctx::{Ctx, SELF_QUALIFIERS};
use super::sym::Sym;
use crate::vocab::Confidence;

/// The packages every Java file imports on demand without writing it.
const JAVA_DEFAULTS: &[&str] = &["java.lang"];

/// The packages every Kotlin file imports on demand without writing it.
const KOTLIN_DEFAULTS: &[&str] = &[
    "kotlin",
    "kotlin.annotation",
    "kotlin.collections",
    "kotlin.comparisons",
    "kotlin.io",
    "kotlin.ranges",
    "kotlin.sequences",
    "kotlin.text",
    "kotlin.jvm",
    "java.lang",
];

/// What the package rules decide for one reference.
pub(super) enum JavaRule<'a> {
    /// Not a Java/Kotlin file, or a name the rules do not bind (a variable, the file's
    /// own definition): the other rules decide.
    NotApplicable,
    /// These definitions, and only these (none: the name is bound outside the workspace).
    Decided(Vec<(&'a Sym, Confidence)>),
    /// The other rules decide, without these candidates (same-named definitions of
    /// packages the name is not bound to).
    Exclude(Vec<i64>),
}

/// How the first segment of a written name is bound in a Java/Kotlin file.
enum Binding<'t> {
    /// To a package of the workspace: the name to look for there (a qualified name, as
    /// the package's files define it) and the confidence of what is found.
    Package(&'t [i64], String, Confidence),
    /// By an import, to a package the workspace does not hold: the full name it binds
    /// (`org.other.Obj.member`).
    External(String),
}

impl<'a> Ctx<'a> {
    /// The package rules for `qualifier.name` (see the module doc) among `candidates`
    /// (the definitions named `name` the reference may reach). `type_like`: the
    /// reference names a type or a member through one (a type use, `new C()`, `C.m()`),
    /// so a name bound outside the workspace reaches nothing.
    pub(super) fn java_reference(
        &self,
        qualifier: Option<&str>,
        name: &str,
        candidates: &[&'a Sym],
        type_like: bool,
    ) -> JavaRule<'a> {
        let java = &self.table.java;
        let Some(own_package) = java.package_of.get(&self.file_id) else {
            return JavaRule::NotApplicable;
        };
        let mut path: Vec<&str> = match qualifier {
            Some(q) => q.split('.').collect(),
            None => Vec::new(),
        };
        path.push(name);
        let plain = |s: &&str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
                && !SELF_QUALIFIERS.contains(s)
        };
        if !path.iter().all(plain) {
            return JavaRule::NotApplicable;
        }
        let written = path.join(".");
        let written_qualifier = path[..path.len() - 1].join(".");
        // The file's own definitions (and its classes' members) are the other rules'.
        if candidates.iter().any(|s| {
            s.file_id == self.file_id
                && (written_qualifier.is_empty() || s.owned_by(&written_qualifier, name))
        }) {
            return JavaRule::NotApplicable;
        }
        let exactly = |files: &[i64], qualified: &str, confidence| -> Vec<(&'a Sym, Confidence)> {
            candidates
                .iter()
                .copied()
                .filter(|s| s.qualified_name == qualified && files.contains(&s.file_id))
                .map(|s| (s, confidence))
                .collect()
        };
        // A Kotlin companion's members are named as the class's (`C.create`), and are
        // also written through it (`import a.C.Companion.create`, `C.Named.create()`).
        let found = |files: &[i64], qualified: &str, confidence| -> Vec<(&'a Sym, Confidence)> {
            let hits = exactly(files, qualified, confidence);
            if !hits.is_empty() {
                return hits;
            }
            match self.companion_member(files, qualified) {
                Some(member) => exactly(files, &member, confidence),
                None => hits,
            }
        };
        // Same-named definitions rooted like the written name elsewhere: what a binding
        // that finds nothing excludes.
        let elsewhere = |bound: &[i64]| -> Vec<i64> {
            candidates
                .iter()
                .filter(|s| s.qualified_name == written && !bound.contains(&s.file_id))
                .map(|s| s.id)
                .collect()
        };
        match self.java_binding(&path) {
            Some(Binding::Package(files, qualified, confidence)) => {
                let hits = found(files, &qualified, confidence);
                if !hits.is_empty() {
                    return JavaRule::Decided(hits);
                }
                // Nor is a definition of the very name the import names, elsewhere.
                let mut excluded = elsewhere(files);
                excluded.extend(
                    candidates
                        .iter()
                        .filter(|s| s.qualified_name == qualified && !files.contains(&s.file_id))
                        .map(|s| s.id),
                );
                return JavaRule::Exclude(excluded);
            }
            Some(Binding::External(_)) if type_like || path.len() > 1 => {
                return JavaRule::Decided(Vec::new());
            }
            Some(Binding::External(full)) => {
                // Nor a definition named as what the import names (`import
                // org.other.Obj.member`: no `Obj.member` of the workspace is it).
                let mut excluded = elsewhere(&[]);
                excluded.extend(
                    candidates
                        .iter()
                        .filter(|s| {
                            full.strip_suffix(s.qualified_name.as_str())
                                .is_some_and(|head| head.ends_with('.'))
                        })
                        .map(|s| s.id),
                );
                return JavaRule::Exclude(excluded);
            }
            None => {}
        }
        // Not bound by an import: the file's package, then the on-demand imports.
        if let Some(files) = java.files_of.get(own_package) {
            let hits = found(files, &written, Confidence::Exact);
            if !hits.is_empty() {
                return JavaRule::Decided(hits);
            }
        }
        let mut hits = Vec::new();
        for module in self.on_demand_imports() {
            let segs: Vec<&str> = module.split('.').collect();
            if let Some((k, files)) = java.package_prefix(&segs, 1) {
                let mut qualified: Vec<&str> = segs[k..].to_vec();
                qualified.extend(&path);
                for hit in found(files, &qualified.join("."), Confidence::Import) {
                    if !hits.iter().any(|(s, _): &(&Sym, _)| s.id == hit.0.id) {
                        hits.push(hit);
                    }
                }
            }
        }
        if !hits.is_empty() {
            return JavaRule::Decided(hits);
        }
        // Written in full: `a.b.C.m()`.
        if path.len() > 1
            && let Some((k, files)) = java.package_prefix(&path[..path.len() - 1], 1)
        {
            let hits = found(files, &path[k..].join("."), Confidence::Exact);
            if !hits.is_empty() {
                return JavaRule::Decided(hits);
            }
        }
        let excluded = elsewhere(&[]);
        if excluded.is_empty() {
            JavaRule::NotApplicable
        } else {
            JavaRule::Exclude(excluded)
        }
    }

    /// `C.m` for `C.K.m` when `K` is a class `C.K` of `files` (a Kotlin companion object,
    /// named or `Companion`), whose members the extractor names as `C`'s.
    fn companion_member(&self, files: &[i64], qualified: &str) -> Option<String> {
        let (owner, name) = qualified.rsplit_once('.')?;
        let (outer, companion) = owner.rsplit_once('.')?;
        let is_class = self.table.by_name.get(companion)?.iter().any(|s| {
            s.kind == crate::extract::SymbolKind::Class
                && s.qualified_name == owner
                && files.contains(&s.file_id)
        });
        is_class.then(|| format!("{outer}.{name}"))
    }

    /// How a single-name import binds `path`'s first segment: `import a.b.C` binds `C`
    /// (and `import a.b.C as D` binds `D`) to what package `a.b` defines as `C`;
    /// `import static a.b.C.m` binds `m` to `C.m` in `a.b`.
    fn java_binding(&self, path: &[&str]) -> Option<Binding<'a>> {
        let head = path[0];
        let java = &self.table.java;
        for (name, alias, segs, _) in self.imports {
            let Some(name) = *name else { continue };
            let binds = match alias {
                Some(alias) => *alias == head,
                None => name == head,
            };
            if !binds || name == "*" {
                continue;
            }
            let Some((k, files)) = java.package_prefix(segs, 1) else {
                let mut full: Vec<&str> = segs.to_vec();
                full.push(name);
                full.extend(&path[1..]);
                return Some(Binding::External(full.join(".")));
            };
            let mut qualified: Vec<&str> = segs[k..].to_vec();
            qualified.push(name);
            qualified.extend(&path[1..]);
            return Some(Binding::Package(
                files,
                qualified.join("."),
                Confidence::Import,
            ));
        }
        None
    }

    /// The modules the file imports on demand: its `import a.b.*` (and `import static
    /// a.b.C.*`), then the language's implicit ones.
    fn on_demand_imports(&self) -> Vec<String> {
        let mut modules: Vec<String> = self
            .imports
            .iter()
            .filter(|(name, _, _, _)| name.is_none_or(|n| n == "*"))
            .map(|(_, _, segs, _)| segs.join("."))
            .collect();
        let kotlin = self.is_kotlin();
        let defaults = if kotlin {
            KOTLIN_DEFAULTS
        } else {
            JAVA_DEFAULTS
        };
        modules.extend(defaults.iter().map(|m| m.to_string()));
        modules
    }

    /// The types named `ty` a receiver of that written type can be, in a Java/Kotlin
    /// file: `Some(files)` of the types the file binds it to (empty: bound outside the
    /// workspace, so its members are not the workspace's), `None` when the package
    /// rules do not decide.
    pub(super) fn java_receiver_files(&self, ty: &str) -> Option<Vec<i64>> {
        let (qualifier, name) = crate::extract::split_qualified(ty);
        let types: Vec<&'a Sym> = self
            .table
            .by_name
            .get(name)?
            .iter()
            .filter(|s| s.kind.is_type())
            .collect();
        match self.java_reference(qualifier, name, &types, true) {
            JavaRule::NotApplicable => None,
            JavaRule::Decided(found) => Some(found.iter().map(|(s, _)| s.file_id).collect()),
            JavaRule::Exclude(ids) => {
                let visible: Vec<i64> = types
                    .iter()
                    .filter(|s| !ids.contains(&s.id))
                    .map(|s| s.file_id)
                    .collect();
                Some(visible)
            }
        }
    }
}
