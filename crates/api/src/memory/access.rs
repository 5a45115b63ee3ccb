//! Which memory namespaces a caller may use: every one (the CLI, `loci mcp` on stdio,
//! and an API key without a scope), or the namespaces of a scoped API key (`loci
//! serve`, docs/http.md "Keys scoped to namespaces"). Every memory operation resolves
//! the namespace it was asked for through [`MemoryAccess::namespace`] before it touches
//! the store, so nothing crosses: a namespace outside the scope is refused with
//! `forbidden_namespace` whether or not it holds anything, and a request that names no
//! namespace gets the scope's first one.
//!
//! Namespaces compare as the stores compare them: byte for byte, no trimming, no case
//! or Unicode folding (`Team`, ` team` and a decomposed `é` are other namespaces).

use std::sync::Arc;

use crate::error::{ApiError, ErrorKind};

/// The namespaces a scoped key may use: at least one, each a valid namespace, none
/// twice, in the order configured (the first is the default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceScope(Arc<[String]>);

impl NamespaceScope {
    /// A scope of `namespaces`, checked: not empty, each a valid namespace name
    /// (`invalid_input` naming it otherwise), no duplicate.
    pub fn new(namespaces: Vec<String>) -> Result<NamespaceScope, ApiError> {
        if namespaces.is_empty() {
            return Err(ApiError::new(
                ErrorKind::InvalidInput,
                "the list of namespaces is empty: a key scoped to none could use no memory",
            )
            .hint("name at least one namespace, or leave `namespaces` out for an unscoped key"));
        }
        for (i, n) in namespaces.iter().enumerate() {
            loci_memory::model::namespace(Some(n)).map_err(|e| {
                ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("namespace {n:?} is not a namespace name: {e}"),
                )
            })?;
            if n.trim() != n {
                return Err(ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("namespace {n:?} starts or ends with whitespace"),
                )
                .hint("namespaces are compared byte for byte: write the name without it"));
            }
            if namespaces[..i].contains(n) {
                return Err(ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("namespace {n:?} is listed twice"),
                ));
            }
        }
        Ok(NamespaceScope(namespaces.into()))
    }

    /// The namespaces, the default first.
    pub fn namespaces(&self) -> &[String] {
        &self.0
    }
}

/// What a caller may do with memory namespaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum MemoryAccess {
    /// Every namespace; a request without one means `default`.
    #[default]
    All,
    /// Only these; a request without one means the first.
    Scoped(NamespaceScope),
}

impl MemoryAccess {
    /// The namespace an operation uses when asked for `asked`: checked as a name, and
    /// within the scope (else `forbidden_namespace`, 403, whatever the namespace holds).
    pub fn namespace(&self, asked: Option<&str>) -> Result<String, ApiError> {
        match self {
            MemoryAccess::All => Ok(loci_memory::model::namespace(asked)?),
            MemoryAccess::Scoped(scope) => {
                let Some(asked) = asked else {
                    return Ok(scope.0[0].clone());
                };
                if scope.0.iter().any(|n| n == asked) {
                    return Ok(asked.to_string());
                }
                Err(ApiError::new(
                    ErrorKind::ForbiddenNamespace,
                    format!(
                        "this API key may not use the memory namespace {asked:?}: it is scoped to {}",
                        quoted(scope.namespaces())
                    ),
                )
                .hint("name one of the key's namespaces, or leave `namespace` out for its first")
                .detail(serde_json::json!({ "namespaces": scope.namespaces() })))
            }
        }
    }

    /// A namespace for an operation whose absent namespace means "every namespace"
    /// (`stats`): `None` stays `None` only for [`MemoryAccess::All`].
    pub fn namespace_or_all(&self, asked: Option<&str>) -> Result<Option<String>, ApiError> {
        match (self, asked) {
            (MemoryAccess::All, None) => Ok(None),
            _ => self.namespace(asked).map(Some),
        }
    }
}

fn quoted(namespaces: &[String]) -> String {
    namespaces
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(names: &[&str]) -> MemoryAccess {
        MemoryAccess::Scoped(
            NamespaceScope::new(names.iter().map(|s| s.to_string()).collect()).unwrap(),
        )
    }

    #[test]
    fn a_scoped_key_gets_its_namespaces_and_nothing_else() {
        let a = scope(&["team-a", "shared"]);
        assert_eq!(a.namespace(None).unwrap(), "team-a");
        assert_eq!(a.namespace(Some("shared")).unwrap(), "shared");
        // Case, whitespace, Unicode look-alikes and decompositions are other namespaces.
        for other in [
            "team-b",
            "Team-A",
            "TEAM-A",
            "team-a ",
            " team-a",
            "team-a\u{200b}",
            "team\u{2010}a",
            "tеam-a",
            "default",
            "",
            "team-a\n",
            "shared\0",
        ] {
            let e = a.namespace(Some(other)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::ForbiddenNamespace, "{other:?}: {e}");
        }
        assert_eq!(a.namespace_or_all(None).unwrap().as_deref(), Some("team-a"));
        assert_eq!(MemoryAccess::All.namespace_or_all(None).unwrap(), None);
        assert_eq!(MemoryAccess::All.namespace(None).unwrap(), "default");
    }

    #[test]
    fn a_scope_is_checked_when_made() {
        for bad in [
            vec![],
            vec!["a", "a"],
            vec![" a"],
            vec!["a\u{7}"],
            vec![" "],
            vec!["x".repeat(101).as_str()],
        ] {
            let names: Vec<String> = bad.iter().map(|s| s.to_string()).collect();
            let e = NamespaceScope::new(names.clone()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidInput, "{names:?}: {e}");
        }
        let decomposed = "caf\u{65}\u{301}";
        let s = scope(&["caf\u{e9}"]);
        assert!(s.namespace(Some(decomposed)).is_err());
    }
}
