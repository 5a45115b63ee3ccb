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
        let declared = marker.split_once('#').and_then(|(ty, field)| {
            let mut fields = self
                .table
                .by_name
                .get(field)?
                .iter()
                .filter(|s| s.owned_by(ty, field));
            match (fields.next(), fields.next()) {
                (Some(one), None) => typed::returned(one),
                _ => None,
            }
        });
        match declared {
            Some(ty) => self.resolve_on(ty, name, qualifier, from, wanted),
            None => self.resolve(name, qualifier, from, wanted),
        }
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
