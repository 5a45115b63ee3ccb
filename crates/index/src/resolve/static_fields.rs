//! Receivers that are a type's static field (`IsoChronology.INSTANCE.isLeapYear(y)`,
//! marked `IsoChronology#INSTANCE` by the extractor when the file does not declare the
//! field itself): the field's declared type decides which members are candidates.

use super::{Confidence, Ctx, Sym, typed};

/// Whether a receiver is a static field's marker (`Type#FIELD`; `Type#m()` is a call's
/// result, [`super::call_results`]).
pub(super) fn is_static_field(receiver: &str) -> bool {
    receiver.contains('#') && !receiver.ends_with(')')
}

impl<'a> Ctx<'a> {
    /// `Type.FIELD.name(..)`: when one definition of `FIELD` under `Type` says its type,
    /// that type's members (the receiver rule); else the name-based rules, as for any
    /// receiver of unknown type.
    pub(super) fn resolve_on_static_field(
        &self,
        marker: &str,
        name: &str,
        qualifier: Option<&str>,
        from: Option<i64>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<(&'a Sym, Confidence)> {
        match self.field_type(marker) {
            Some(ty) => self.resolve_on(ty, name, qualifier, from, wanted),
            None => self.resolve(name, qualifier, from, wanted),
        }
    }

    /// The type a field marker's last field is declared with: `Type#a` → `a`'s type,
    /// `Type#a#b` → the type of `b` in `a`'s type (C++ `o.inner.key` where the classes
    /// are declared in headers), each field the one definition of its name under the
    /// type before it.
    pub(super) fn field_type(&self, marker: &str) -> Option<&'a str> {
        let (mut owner, fields) = marker.split_once('#')?;
        let mut declared = None;
        for field in fields.split('#') {
            let mut found = self
                .table
                .owned_by(field, owner)
                .filter(|s| !s.kind.is_callable());
            let ty = match (found.next(), found.next()) {
                (Some(one), None) => typed::returned(one)?,
                _ => return None,
            };
            declared = Some(ty);
            owner = ty;
        }
        declared
    }
}

#[cfg(test)]
mod tests {
    use super::is_static_field;

    #[test]
    fn static_field_markers_are_not_call_results() {
        assert!(is_static_field("IsoChronology#INSTANCE"));
        assert!(!is_static_field("Handle#current()"));
        assert!(!is_static_field("New()"));
        assert!(!is_static_field("Engine"));
    }
}
