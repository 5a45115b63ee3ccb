//! Selectors that name one overload by its arity: `Pool.interrupt/1` is the `interrupt`
//! a call with one argument reaches, `Pool.log/1+` the one declared with one fixed
//! parameter and a variadic rest. Overloads share a qualified name (Java, C++, C#,
//! Kotlin), so the name alone is ambiguous between them; the arity recorded with each
//! definition (`symbols.params`) tells them apart.

use super::handle::{Graph, QueryError, SymbolInfo};
use crate::extract::Arity;

/// The arity a selector asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// `/N`: the definitions a call passing N arguments fits.
    Arguments(u16),
    /// `/N+`: the definitions declared with N fixed parameters and a variadic rest.
    Variadic(u16),
}

impl Wanted {
    /// How the selector writes it: `2`, `1+`.
    fn text(self) -> String {
        match self {
            Wanted::Arguments(n) => n.to_string(),
            Wanted::Variadic(n) => format!("{n}+"),
        }
    }

    fn fits(self, params: Option<Arity>) -> bool {
        match (self, params) {
            (Wanted::Arguments(n), Some(p)) => p.accepts(n),
            (Wanted::Variadic(n), Some(p)) => p.variadic && p.fixed == n,
            (_, None) => false,
        }
    }
}

/// `text` without a trailing arity (`Pool.interrupt/1` → `Pool.interrupt`, `1`), when it
/// ends with `/` and a count (digits, then `+` for a variadic) after a name.
pub(crate) fn split(text: &str) -> (&str, Option<Wanted>) {
    let trimmed = text.trim();
    let Some((head, tail)) = trimmed.rsplit_once('/') else {
        return (text, None);
    };
    if head.is_empty() || head.ends_with(['/', ':']) {
        return (text, None);
    }
    let (digits, variadic) = match tail.strip_suffix('+') {
        Some(d) => (d, true),
        None => (tail, false),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return (text, None);
    }
    let Ok(n) = digits.parse::<u16>() else {
        return (text, None);
    };
    let wanted = if variadic {
        Wanted::Variadic(n)
    } else {
        Wanted::Arguments(n)
    };
    (head, Some(wanted))
}

/// The definitions of `found` (what the selector without its arity named) that fit
/// `wanted`; none is [`QueryError::NoSuchOverload`], naming every overload there is.
pub(crate) fn keep(
    graph: &Graph,
    text: &str,
    wanted: Wanted,
    found: Vec<SymbolInfo>,
) -> Result<Vec<SymbolInfo>, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let mut stmt = graph
        .conn
        .prepare_cached("SELECT params FROM symbols WHERE id = ?1")
        .map_err(&err)?;
    let mut kept = Vec::with_capacity(found.len());
    let mut overloads = Vec::with_capacity(found.len());
    for s in found {
        let params: Option<String> = stmt.query_row([s.id], |r| r.get(0)).map_err(&err)?;
        let arity = params.as_deref().and_then(Arity::parse);
        let shown = arity.map_or_else(|| "?".to_string(), |a| a.to_text());
        overloads.push(format!("{}:{}/{shown}", s.path, s.qualified_name));
        if wanted.fits(arity) {
            kept.push(s);
        }
    }
    if kept.is_empty() {
        return Err(QueryError::NoSuchOverload {
            selector: text.trim().to_string(),
            arity: wanted.text(),
            overloads,
        });
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::{Wanted, split};

    #[test]
    fn a_trailing_count_after_a_name_is_an_arity() {
        assert_eq!(
            split("Pool.interrupt/1"),
            ("Pool.interrupt", Some(Wanted::Arguments(1)))
        );
        assert_eq!(
            split("src/Pool.java:Pool.log/1+"),
            ("src/Pool.java:Pool.log", Some(Wanted::Variadic(1)))
        );
        assert_eq!(split("Pool.interrupt"), ("Pool.interrupt", None));
        assert_eq!(split("src/a.rs:f"), ("src/a.rs:f", None));
        assert_eq!(split("f/x"), ("f/x", None));
        assert_eq!(split("/2"), ("/2", None));
        assert_eq!(split("f/99999999"), ("f/99999999", None));
    }
}
