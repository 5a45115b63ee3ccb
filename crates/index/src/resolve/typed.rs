//! Receivers whose type the file does not write but resolution can still find:
//! the parameter of a callback passed to a function whose declaration types it
//! (`operate((source, subscriber) => subscriber.next(v))`), and `super` (`super.m()`,
//! `super().m()`), whose members are the enclosing class's bases'; and `this` where a
//! function declares it (`function f(this: Subscriber<T>) { this.next() }`), which is
//! then that type, not the enclosing class.

use super::{Confidence, Ctx, Sym};
use crate::extract::SymbolKind;

/// Most types (a receiver's and its bases') looked through for a member.
const MAX_BASE_TYPES: usize = 16;

/// What a declared function's stored `returns` holds: the type it returns, then each
/// callback's parameter types after `;` (`OperatorFunction;0:Observable,Subscriber`).
pub(super) fn returned(s: &Sym) -> Option<&str> {
    let text = s.returns.as_deref()?;
    let ty = text.split(';').next().unwrap_or(text);
    (!ty.is_empty()).then_some(ty)
}

/// The type `s` declares for parameter `param` of the callback it takes as argument
/// `arg`, if any.
fn callback_parameter(s: &Sym, arg: usize, param: usize) -> Option<&str> {
    let text = s.returns.as_deref()?;
    text.split(';').skip(1).find_map(|cb| {
        let (i, types) = cb.split_once(':')?;
        (i.parse::<usize>().ok()? == arg)
            .then(|| types.split(',').nth(param))
            .flatten()
            .filter(|t| !t.is_empty())
    })
}

/// A receiver marker `callee(@arg.param)` (see `extract/javascript.rs`), split.
fn parse_marker(marker: &str) -> Option<(&str, usize, usize)> {
    let (callee, rest) = marker.rsplit_once("(@")?;
    let (arg, param) = rest.strip_suffix(')')?.split_once('.')?;
    Some((callee, arg.parse().ok()?, param.parse().ok()?))
}

/// Whether a receiver is a callback parameter's marker.
pub(super) fn is_callback_marker(receiver: &str) -> bool {
    parse_marker(receiver).is_some()
}

/// Whether `this.m()` has a receiver type of its own: the function it is in declares
/// `this: T` (TypeScript), which then decides instead of the enclosing class.
pub(super) fn is_typed_this(qualifier: &str, receiver: Option<&str>) -> bool {
    qualifier == "this" && receiver.is_some()
}

/// Whether a written qualifier is the enclosing class's base: `super` (TypeScript,
/// JavaScript, Java, Kotlin, Swift), `super()` / `super(C, self)` (Python).
pub(super) fn is_super(qualifier: &str) -> bool {
    qualifier == "super" || qualifier.starts_with("super(")
}

impl<'a> Ctx<'a> {
    /// `x.name` where `x` is the parameter of a callback that `marker` names: when the
    /// callee resolves to one function whose declaration types that parameter, that
    /// type's members (its bases' too); else the name-based rules.
    pub(super) fn resolve_on_callback(
        &self,
        marker: &str,
        name: &str,
        qualifier: Option<&str>,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        let typed = parse_marker(marker).and_then(|(callee, arg, param)| {
            let f = match callee.strip_prefix("new ") {
                Some(class) => self.constructor_of(class, from)?,
                None => {
                    let (fq, fname) = crate::extract::split_qualified(callee);
                    match self.resolve(fname, fq, from, &|s: &Sym| s.kind.is_callable())[..] {
                        [(f, _)] => f,
                        _ => return None,
                    }
                }
            };
            callback_parameter(f, arg, param)
        });
        match typed {
            Some(ty) => self.resolve_on(ty, name, qualifier, from, wanted),
            None => self.resolve(name, qualifier, from, wanted),
        }
    }

    /// `this.name()` in a class that does not define `name` itself: the member of the
    /// nearest base that does ([`Ctx::resolve_super`]); `None` when the class has its
    /// own (the same-parent rule links it), no base has one, or only an interface
    /// declares it.
    pub(super) fn resolve_inherited(
        &self,
        name: &str,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Option<Vec<(&'a Sym, Confidence)>> {
        self.class_lacking(name, from?)?;
        // A member only an interface declares is one the class defines some other way
        // (a property holding a function, `now: () => number`): not that declaration.
        let found = self.resolve_super(name, from, wanted)?;
        let declared_only = found.iter().all(|(s, _)| self.owner_is_interface(s));
        (!declared_only).then_some(found)
    }

    /// Java's or C#'s bare `name()` in a class that does not define `name` itself: the member
    /// of the nearest base that does, an interface's default method included
    /// (`compareTo(o)` in a class implementing `ChronoLocalDate`); `None` outside Java,
    /// when the class has its own, or when no base has one (an outer class's method, a
    /// static import: the other rules decide).
    pub(super) fn resolve_java_inherited(
        &self,
        name: &str,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Option<Vec<(&'a Sym, Confidence)>> {
        if !matches!(self.lang(), Some(crate::Lang::Java | crate::Lang::CSharp)) {
            return None;
        }
        self.class_lacking(name, from?)?;
        self.resolve_super(name, from, wanted)
    }

    /// Python's `self.name()` in a class that does not define `name` itself: the
    /// nearest base's, else the subclasses' or their other bases' (a base calling what
    /// its subclasses or a mixin beside it define), else nothing: an attribute holding a
    /// callable (`self._next = it.__next__`) or a foreign base's method is no same-named
    /// method of some other class. `None` outside Python or a class, or when the class
    /// defines `name` (the usual rules link it).
    pub(super) fn resolve_on_python_self(
        &self,
        name: &str,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Option<Vec<(&'a Sym, Confidence)>> {
        if self.lang() != Some(crate::Lang::Python) {
            return None;
        }
        let class = self.class_lacking(name, from?)?;
        if let Some(found) = self.resolve_super(name, from, wanted) {
            return Some(found);
        }
        // The subclasses' own, and their other bases' (a mixin beside this class).
        let class_name = crate::extract::split_qualified(&class.qualified_name).1;
        let mut types: Vec<&str> = Vec::new();
        for sub in self.subtypes_of(class_name) {
            for t in self.with_bases(sub) {
                if t != class_name && !types.contains(&t) {
                    types.push(t);
                }
            }
        }
        let found = self
            .table
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter(|s| wanted(s) && types.iter().any(|t| s.owned_by(t, name)))
            .take(MAX_BASE_TYPES)
            .map(|s| (s, Confidence::Name))
            .collect();
        Some(found)
    }

    /// The class holding `from` when it defines no member `name` itself.
    fn class_lacking(&self, name: &str, from: i64) -> Option<&'a Sym> {
        let class = self.enclosing_class(from)?;
        let own = self
            .table
            .by_name
            .get(name)
            .is_some_and(|defs| defs.iter().any(|s| s.parent == Some(class.id)));
        (!own).then_some(class)
    }

    /// `ty`'s subtypes by name, transitively, at most [`MAX_BASE_TYPES`].
    pub(super) fn subtypes_of<'t>(&'t self, ty: &'t str) -> Vec<&'t str> {
        let mut types = walk_names(ty, &self.table.subtypes);
        types.remove(0);
        types
    }

    /// Whether the type that holds `s` is an interface.
    fn owner_is_interface(&self, s: &Sym) -> bool {
        let Some(owner) = crate::extract::split_qualified(&s.qualified_name).0 else {
            return false;
        };
        let owner = crate::extract::split_qualified(owner).1;
        self.table
            .by_name
            .get(owner)
            .is_some_and(|d| d.iter().any(|t| t.kind == SymbolKind::Interface))
    }

    /// `x.name()` where `x` is of a TypeScript interface type that declares `name` (or
    /// one of its bases does, `SchedulerAction<T> extends Subscription`): that member,
    /// as the type checker names it, and of what the name-based rules find, the members
    /// of types that implement the interface (a call through it reaches them); never a
    /// same-named member of an unrelated type. `None` outside TypeScript, for a type
    /// that is not an interface, or when no interface declares `name`.
    pub(super) fn resolve_on_interface(
        &self,
        ty: &str,
        name: &str,
        qualifier: Option<&str>,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Option<Vec<(&'a Sym, Confidence)>> {
        let typescript = matches!(
            self.lang(),
            Some(crate::Lang::TypeScript | crate::Lang::Tsx)
        );
        let interface = self
            .table
            .by_name
            .get(ty)?
            .iter()
            .any(|s| s.kind == SymbolKind::Interface);
        if !typescript || !interface {
            return None;
        }
        let types = self.with_bases(ty);
        let declared: Vec<&'a Sym> = types.iter().find_map(|t| {
            let members: Vec<&'a Sym> = self
                .table
                .owned_by(name, t)
                .filter(|s| wanted(s) && s.kind == SymbolKind::Method)
                .collect();
            (!members.is_empty()).then_some(members)
        })?;
        let confidence = if declared.len() == 1 {
            Confidence::Exact
        } else {
            Confidence::Name
        };
        let mut out: Vec<(&'a Sym, Confidence)> =
            declared.into_iter().map(|s| (s, confidence)).collect();
        for (s, c) in self.resolve(name, qualifier, from, wanted) {
            let owner = crate::extract::split_qualified(&s.qualified_name).0;
            let owner = owner.map(|o| crate::extract::split_qualified(o).1);
            let implements = owner.is_some_and(|o| self.with_bases(o).contains(&ty));
            if implements && !out.iter().any(|(o, _)| o.id == s.id) {
                out.push((s, c));
            }
        }
        Some(out)
    }

    /// `ty` and its bases, nearest first, at most [`MAX_BASE_TYPES`].
    pub(super) fn with_bases<'t>(&'t self, ty: &'t str) -> Vec<&'t str> {
        walk_names(ty, &self.table.bases)
    }

    /// The constructor of the one class `class` (as written after `new`) resolves to.
    fn constructor_of(&self, class: &str, from: Option<i64>) -> Option<&'a Sym> {
        let (cq, cname) = crate::extract::split_qualified(class);
        let [(class, _)] = self.resolve(cname, cq, from, &|s: &Sym| s.kind.is_type())[..] else {
            return None;
        };
        let id = class.id;
        self.table
            .by_name
            .get("constructor")?
            .iter()
            .find(|s| s.parent == Some(id))
    }

    /// `super.name()`: the member of the nearest base of the caller's class that has
    /// one (never the caller's own override); `None` when the caller is in no class of
    /// this file or its bases define no such member, so the other rules decide.
    pub(super) fn resolve_super(
        &self,
        name: &str,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Option<Vec<(&'a Sym, Confidence)>> {
        let class = self.enclosing_class(from?)?;
        let class_name = crate::extract::split_qualified(&class.qualified_name).1;
        // Its bases, nearest first (the class itself is the walk's first entry).
        for t in self.with_bases(class_name).into_iter().skip(1) {
            let members: Vec<&'a Sym> = self
                .table
                .owned_by(name, t)
                .filter(|s| wanted(s) && s.parent != Some(class.id))
                .collect();
            if !members.is_empty() {
                let confidence = if members.len() == 1 {
                    Confidence::Exact
                } else {
                    Confidence::Name
                };
                return Some(members.into_iter().map(|s| (s, confidence)).collect());
            }
        }
        None
    }

    /// The class (a type of this file) that holds the definition `from`, through any
    /// nesting (`def m(self): def inner(): super()..` is still the class's).
    pub(super) fn enclosing_class(&self, from: i64) -> Option<&'a Sym> {
        let mut at = from;
        for _ in 0..64 {
            let parent = self.own_parent.get(&at).copied().flatten()?;
            if let Some(s) = self.own_symbols.get(&parent)
                && s.kind.is_type()
            {
                return Some(s);
            }
            at = parent;
        }
        None
    }
}

/// `ty` and the names `edges` lead to from it, breadth first, at most
/// [`MAX_BASE_TYPES`] (a cycle of bases or a huge hierarchy stops there).
fn walk_names<'t>(
    ty: &'t str,
    edges: &'t rustc_hash::FxHashMap<String, Vec<String>>,
) -> Vec<&'t str> {
    let mut types = vec![ty];
    let mut i = 0;
    while i < types.len() && types.len() < MAX_BASE_TYPES {
        for next in edges.get(types[i]).into_iter().flatten() {
            if !types.contains(&next.as_str()) {
                types.push(next);
            }
        }
        i += 1;
    }
    types
}
