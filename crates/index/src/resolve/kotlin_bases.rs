//! Bases as a file writes them, for the symbol table: in Kotlin files by their paths
//! (`Annotatable.Builder`, not `Builder`), under the deriving type's name and, for a
//! nested type, its path too (see `kotlin_nested.rs`); elsewhere by their names.

/// Whether a file's path is a Kotlin source (`.kt`, `.kts`).
pub(super) fn is_kotlin_path(path: &str) -> bool {
    path.ends_with(".kt") || path.ends_with(".kts")
}

/// A base as a file writes it (`class FunSpec.Builder : Annotatable.Builder<..>`).
pub(super) struct WrittenBase<'b> {
    /// Whether the file is Kotlin: other languages keep bases by their names.
    pub(super) kotlin: bool,
    /// The deriving type's name (`Builder`).
    pub(super) subject: &'b str,
    /// The deriving type's qualified name when it is defined in the file
    /// (`FunSpec.Builder`).
    pub(super) subject_path: Option<&'b str>,
    /// The base's last name (`Builder`).
    pub(super) name: &'b str,
    /// What the base's name is qualified with (`Annotatable`, `com.x.Outer`).
    pub(super) qualifier: Option<&'b str>,
}

/// The (subject, base) entries one written base gives the table's bases: the names
/// alone outside Kotlin; in Kotlin, the base's path (`Annotatable.Builder`), under the
/// subject's name and, for a nested subject, under its path.
pub(super) fn base_entries(b: WrittenBase<'_>) -> Vec<(String, String)> {
    if !b.kotlin {
        return vec![(b.subject.to_string(), b.name.to_string())];
    }
    let outer = b.qualifier.map_or("", type_names_suffix);
    let base = if outer.is_empty() {
        b.name.to_string()
    } else {
        format!("{outer}.{}", b.name)
    };
    let mut out = vec![(b.subject.to_string(), base.clone())];
    if let Some(path) = b
        .subject_path
        .filter(|p| p.contains('.') && *p != b.subject)
    {
        out.push((path.to_string(), base));
    }
    out
}

/// The trailing segments of a qualifier that name types (capitalized): `com.x.Outer` is
/// `Outer`, `Outer.Mid` stays, `com.x` is empty.
fn type_names_suffix(qualifier: &str) -> &str {
    let qualifier = qualifier.trim();
    let mut start = qualifier.len();
    let mut rest = qualifier;
    loop {
        let (head, segment) = match rest.rsplit_once('.') {
            Some((head, segment)) => (Some(head), segment),
            None => (None, rest),
        };
        if !segment.starts_with(|c: char| c.is_ascii_uppercase()) {
            break;
        }
        start = head.map_or(0, |h| h.len() + 1);
        match head {
            Some(head) => rest = head,
            None => break,
        }
    }
    &qualifier[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(
        kotlin: bool,
        subject_path: Option<&str>,
        qualifier: Option<&str>,
    ) -> Vec<(String, String)> {
        base_entries(WrittenBase {
            kotlin,
            subject: "Builder",
            subject_path,
            name: "Builder",
            qualifier,
        })
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn kotlin_bases_keep_their_type_path_under_both_names() {
        assert_eq!(
            entries(true, Some("FunSpec.Builder"), Some("Annotatable")),
            pairs(&[
                ("Builder", "Annotatable.Builder"),
                ("FunSpec.Builder", "Annotatable.Builder")
            ])
        );
        // A package qualifier is no type: the base keeps its name.
        assert_eq!(
            entries(true, Some("Builder"), Some("com.x")),
            pairs(&[("Builder", "Builder")])
        );
        assert_eq!(
            entries(true, None, Some("com.x.Outer.Mid")),
            pairs(&[("Builder", "Outer.Mid.Builder")])
        );
    }

    #[test]
    fn other_languages_keep_bases_by_name() {
        assert_eq!(
            entries(false, Some("FunSpec.Builder"), Some("Annotatable")),
            pairs(&[("Builder", "Builder")])
        );
    }

    #[test]
    fn type_names_suffix_drops_packages() {
        assert_eq!(type_names_suffix("com.x.Outer"), "Outer");
        assert_eq!(type_names_suffix("Outer.Mid"), "Outer.Mid");
        assert_eq!(type_names_suffix("com.x"), "");
        assert_eq!(type_names_suffix(""), "");
    }
}
