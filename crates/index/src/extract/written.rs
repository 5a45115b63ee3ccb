//! Reading what source text writes about names and types, with no tree and no
//! collector: qualified names split at their last separator, generics stripped, the
//! type a written type or a signature's result stands for, and the table of the types a
//! file binds its names to. The ground floor of extraction: the collector and the
//! receiver rules both read it, and it reads neither.

use rustc_hash::FxHashMap;

/// Splits `a::b::C` / `a.b.C` / `a\b\C` into (`Some("a::b")`, `"C"`).
pub(crate) fn split_qualified(written: &str) -> (Option<&str>, &str) {
    let written = written.trim();
    match split_at_last(written, &["::", ".", "\\", "->"]) {
        Some((q, name)) => {
            let q = q.trim();
            (Some(q).filter(|q| !q.is_empty()), name.trim())
        }
        None => (None, written),
    }
}

/// `text` split around the last place one of `separators` starts (`a.b->c` at `->`),
/// neither side trimmed.
pub(crate) fn split_at_last<'t>(text: &'t str, separators: &[&str]) -> Option<(&'t str, &'t str)> {
    let (i, len) = separators
        .iter()
        .filter_map(|sep| text.rfind(sep).map(|i| (i, sep.len())))
        .max_by_key(|(i, _)| *i)?;
    Some((&text[..i], &text[i + len..]))
}

/// `Foo<T, U>` → `Foo`; `Foo[T]` → `Foo`; `Foo(args)` → `Foo`.
pub(crate) fn strip_generics(written: &str) -> &str {
    let end = written.find(['<', '[', '(']).unwrap_or(written.len());
    written[..end].trim()
}

/// The types a file's names are bound to so far. Keyed by the name first, so that a
/// lookup (one per qualified reference, in each enclosing scope) allocates nothing, then
/// by the scope: a name bound in every one of a file's functions (a parameter `x` in
/// 40,000 generated functions) is found in constant time, not by a scan of them all.
#[derive(Default)]
pub(crate) struct Types {
    /// name → enclosing definition → type name.
    vars: FxHashMap<String, FxHashMap<Option<u32>, String>>,
    /// type name → field → type name.
    fields: FxHashMap<String, FxHashMap<String, String>>,
    /// Whether a type's fields may be declared in another file than its methods' bodies
    /// (C++: the class in a header, `void C::f() { m_.g(); }` in a `.cc`): a field this
    /// file does not type is then marked `C#m_` for resolution to type by the field's
    /// definition (see `resolve/static_fields.rs`).
    pub(crate) fields_elsewhere: bool,
    /// Whether `Type.f()` calls a member of the type itself (Kotlin's companion and
    /// object members): a type-like name bound to nothing is then that type, so
    /// `FunSpec.builder().addCode()` is a call on what `FunSpec`'s `builder` returns.
    pub(crate) calls_on_types: bool,
}

impl Types {
    /// Binds `name` in `scope` (the innermost enclosing definition) to `ty`, replacing
    /// what it was bound to there.
    pub(crate) fn bind_var(&mut self, scope: Option<u32>, name: &str, ty: String) {
        let name = name.trim();
        let bound = match self.vars.get_mut(name) {
            Some(bound) => bound,
            None => self.vars.entry(name.to_string()).or_default(),
        };
        bound.insert(scope, ty);
    }

    /// What `name` is bound to in `scope` itself.
    pub(crate) fn var(&self, scope: Option<u32>, name: &str) -> Option<&str> {
        self.vars.get(name)?.get(&scope).map(String::as_str)
    }

    /// Binds field `field` of type `owner` to `ty`.
    pub(crate) fn bind_field(&mut self, owner: String, field: &str, ty: String) {
        self.fields
            .entry(owner)
            .or_default()
            .insert(field.trim().to_string(), ty);
    }

    /// The type of field `field` of type `owner` (a nested type's path, `FunSpec.Builder`,
    /// has the fields bound under its last name).
    pub(crate) fn field(&self, owner: &str, field: &str) -> Option<&str> {
        let fields = self
            .fields
            .get(owner)
            .or_else(|| self.fields.get(split_qualified(owner).1))?;
        fields.get(field).map(String::as_str)
    }
}

/// Wrappers whose methods are their content's (through `Deref`): `Arc<Engine>` is an `Engine` receiver.
const DEREF_WRAPPERS: &[&str] = &[
    "Arc",
    "Rc",
    "Box",
    "Pin",
    "unique_ptr",
    "shared_ptr",
    "scoped_ptr",
];

/// Whether `name` is a pointer whose methods are its pointee's (`Arc`, `Box`, `Pin`, C++'s
/// `unique_ptr`, `shared_ptr` and `scoped_ptr`).
pub(crate) fn is_deref_wrapper(name: &str) -> bool {
    DEREF_WRAPPERS.contains(&name)
}

/// The type name a written type stands for as a receiver (`&mut Engine`, `*gin.Engine`,
/// `Arc<Handle>`, `Optional[Queue]` is none), if it is a plain named type.
pub(crate) fn type_name(written: &str) -> Option<&str> {
    let mut t = written.trim();
    loop {
        let before = t;
        for prefix in ["&", "*", "mut ", "dyn ", "impl ", "const ", "'static "] {
            t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
        }
        if t.starts_with('\'') {
            // A lifetime: `&'a T`.
            t = t.split_once(' ').map_or("", |(_, rest)| rest).trim_start();
        }
        if t == before {
            break;
        }
    }
    let head = strip_generics(t);
    let (_, last) = split_qualified(head);
    if DEREF_WRAPPERS.contains(&last)
        && let (Some(open), Some(close)) = (t.find('<'), t.rfind('>'))
        && open < close
    {
        let inner = &t[open + 1..close];
        if !inner.contains(',') {
            return type_name(inner);
        }
    }
    let name = last.trim_end_matches('?');
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '$')
        && !name.starts_with(|ch: char| ch.is_ascii_digit());
    plain.then_some(name)
}

/// A Kotlin type as written, reduced to its path of type names: the package left out,
/// the types it is nested in kept (`com.x.FunSpec.Builder<T>?` is `FunSpec.Builder`, so
/// that one of a tree's many `Builder`s is meant); [`type_name`] when it names no nested
/// type.
pub(crate) fn type_path(written: &str) -> Option<&str> {
    let last = type_name(written)?;
    let head = strip_generics(written.trim()).trim_end_matches('?');
    let Some(outer) = head.strip_suffix(last).and_then(|h| h.strip_suffix('.')) else {
        return Some(last);
    };
    let mut start = head.len() - last.len();
    for segment in outer.rsplit('.') {
        let type_like = segment.starts_with(|c: char| c.is_ascii_uppercase())
            && segment.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !type_like {
            break;
        }
        start -= segment.len() + 1;
    }
    Some(&head[start..])
}

/// The type a function's one-line signature says it returns, if plainly: `-> T`
/// (Rust, Python), Go's results (`*T`, `(*T, error)`), `): T` (TypeScript, Kotlin).
pub(crate) fn return_type(signature: &str) -> Option<&str> {
    let sig = signature.trim();
    let written = if let Some(i) = sig.rfind("->") {
        let rest = &sig[i + 2..];
        rest.split(" where ").next().unwrap_or(rest)
    } else if let Some(rest) = sig.strip_prefix("func ") {
        // func (r *T) Name(params) results
        let rest = rest.trim_start();
        let rest = if rest.starts_with('(') {
            after_group(rest)?.trim_start()
        } else {
            rest
        };
        let open = rest.find('(')?;
        let results = after_group(&rest[open..])?.trim();
        match results.strip_prefix('(') {
            Some(list) => list.split([',', ')']).next()?,
            None => results,
        }
    } else if let Some(i) = sig.rfind("):") {
        &sig[i + 2..]
    } else {
        return None;
    };
    let written = written.trim().trim_end_matches(['{', ':', '=']).trim();
    // Go results may be named: `(e *Engine, err error)`.
    let written = match written.split_once(' ') {
        Some((first, rest)) if !first.contains(['*', '&', '<', '[']) && !rest.is_empty() => rest,
        _ => written,
    };
    // `io::Result<Runtime>`, `Option<Handle>`: what `?`/`.unwrap()` leave.
    let head = split_qualified(strip_generics(written)).1;
    if matches!(head, "Result" | "Option" | "Poll")
        && let Some(open) = written.find('<')
    {
        let inner = &written[open + 1..written.rfind('>')?];
        return type_name(inner.split(',').next()?);
    }
    type_name(written)
}

/// The text after the balanced `( .. )` group `text` starts with.
fn after_group(text: &str) -> Option<&str> {
    let mut depth = 0usize;
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(&text[i + 1..]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The receiver a variable bound to a call's result gets: the call as written with
/// `()` (`New()`, `pkg.New()`), which resolution replaces by the return type of the
/// function it resolves to.
pub(crate) fn call_result(function: &str) -> Option<String> {
    let f = function.trim();
    let plain = !f.is_empty()
        && f.chars()
            .all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '$' | '.' | ':'));
    plain.then(|| format!("{f}()"))
}

#[cfg(test)]
mod tests {
    use super::{Types, type_name};
    use crate::extract::collector::tests::{MAX_GROWTH, growth_ratio};

    #[test]
    fn a_name_bound_in_every_scope_is_found_without_a_scan() {
        // A parameter `x` in each of a file's functions.
        let ratio = growth_ratio(5_000, |n| {
            let mut types = Types::default();
            for scope in 0..n as u32 {
                types.bind_var(Some(scope), "x", format!("T{scope}"));
                assert_eq!(
                    types.var(Some(scope), "x"),
                    Some(format!("T{scope}").as_str())
                );
            }
            assert_eq!(types.var(Some(0), "x"), Some("T0"));
        });
        assert!(
            ratio < MAX_GROWTH,
            "16× the scopes took ×{ratio:.1} the time"
        );
    }

    #[test]
    fn signatures_name_the_type_they_return() {
        use super::return_type;
        assert_eq!(return_type("pub fn current() -> Handle"), Some("Handle"));
        assert_eq!(
            return_type("fn build(self) -> Result<Engine, E>"),
            Some("Engine")
        );
        assert_eq!(
            return_type("func New(opts ...OptionFunc) *Engine"),
            Some("Engine")
        );
        assert_eq!(
            return_type("func (e *Engine) Group(p string) (*RouterGroup, error)"),
            Some("RouterGroup")
        );
        assert_eq!(return_type("func (e *Engine) Run()"), None);
        assert_eq!(return_type("def make(n) -> Queue"), Some("Queue"));
        assert_eq!(return_type("function make(): Engine"), Some("Engine"));
        assert_eq!(return_type("def plain(n)"), None);
    }

    #[test]
    fn written_types_name_their_receiver_type() {
        assert_eq!(type_name("&mut Engine"), Some("Engine"));
        assert_eq!(type_name("&'a Handle"), Some("Handle"));
        assert_eq!(type_name("*gin.Engine"), Some("Engine"));
        assert_eq!(type_name("Arc<runtime::Handle>"), Some("Handle"));
        assert_eq!(type_name("Vec<u8>"), Some("Vec"));
        assert_eq!(type_name("[]string"), None);
        assert_eq!(type_name("(A, B)"), None);
    }
}
