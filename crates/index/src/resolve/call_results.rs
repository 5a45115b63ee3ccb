//! Receivers that hold a call's result (`let h = Handle::current(); h.spawn(..)`,
//! `rt().handle().spawn(..)`): the type the called function's signature says it returns
//! decides which members are candidates.

use super::{Confidence, Ctx, Sym, overloads, typed};

/// Most calls followed to find the type of a call's result (`rt().handle()` is two).
pub(super) const MAX_RESULT_HOPS: usize = 4;

impl<'a> Ctx<'a> {
    /// `x.name` where `x` holds the result of `call` (`New()`): when the call resolves to
    /// one function whose signature names the type it returns, that type's members named
    /// `name` (not its bases'); else the name-based rules.
    pub(super) fn resolve_on_result(
        &self,
        call: &str,
        name: &str,
        qualifier: Option<&str>,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        if let Some(ty) = self.result_type(call, from, MAX_RESULT_HOPS) {
            let mut members: Vec<&Sym> = self
                .table
                .owned_by(name, ty)
                .filter(|s| wanted(s))
                .collect();
            overloads::one_per_group(&mut members);
            match members.len() {
                // Kotlin's nested type (`FunSpec.Builder`): its bases' members too.
                0 if self.kotlin_nested_type(ty).is_some() => {
                    return self.resolve_on(ty, name, qualifier, from, wanted);
                }
                0 => {}
                1 => return vec![(members[0], Confidence::Exact)],
                _ => return members.into_iter().map(|s| (s, Confidence::Name)).collect(),
            }
        }
        self.resolve(name, qualifier, from, wanted)
    }

    /// The type a call's result has: `New()` → what the function `New` resolves to
    /// returns (the one type all its overloads return); `T#m()` → what `T`'s method `m`
    /// returns (`T` itself a call's result when it ends with `()`, a field's type when
    /// it is a field marker), following at most `hops` calls.
    fn result_type(&self, call: &'a str, from: Option<i64>, hops: usize) -> Option<&'a str> {
        let hops = hops.checked_sub(1)?;
        let function = call.strip_suffix("()")?;
        // One function, or overloads that all return the same type (C++'s `const` and
        // non-`const` accessor pair: `const Buf &buf() const` / `Buf &buf()`).
        let returned = |targets: &[&'a Sym]| {
            let (first, rest) = targets.split_first()?;
            let ty = typed::returned(first)?;
            rest.iter()
                .all(|s| typed::returned(s) == Some(ty))
                .then(|| self.kotlin_returned_in_scope(first, ty))
        };
        match function.rsplit_once('#') {
            Some((base, method)) => {
                let base_type = match base.strip_suffix("()") {
                    Some(_) => self.result_type(base, from, hops)?,
                    // A field's marker (`Holder#key_`, see `static_fields.rs`).
                    None if base.contains('#') => self.field_type(base)?,
                    None => base,
                };
                let methods: Vec<&'a Sym> = self
                    .table
                    .owned_by(method, base_type)
                    .filter(|s| s.kind.is_callable())
                    .collect();
                returned(&methods)
            }
            None => {
                let (fq, fname) = crate::extract::split_qualified(function);
                let callee = self.resolve(fname, fq, from, &|s: &Sym| s.kind.is_callable());
                let targets: Vec<&'a Sym> = callee.into_iter().map(|(s, _)| s).collect();
                returned(&targets)
            }
        }
    }
}
