//! Receivers of a language's builtin types. Python's `d = {}`, `xs = [..]`, `dict(..)`,
//! a string literal, or a parameter annotated `dict[str, int]` / `List[T]`, is a builtin
//! container whose methods (`d.get()`, `d.items()`, `xs.append()`) are none of the
//! workspace's: when the workspace defines no type of that name, such a call links
//! nothing, instead of every same-named method found by name.

use super::Ctx;

/// Python's builtin types (and their `typing` aliases) a receiver can be declared as.
const PYTHON: &[&str] = &[
    "dict",
    "list",
    "set",
    "frozenset",
    "tuple",
    "str",
    "bytes",
    "bytearray",
    "Dict",
    "List",
    "Set",
    "FrozenSet",
    "Tuple",
];

impl Ctx<'_> {
    /// Whether a receiver of type `ty` in the file being resolved is a builtin the
    /// workspace does not define (its members are not the workspace's).
    pub(super) fn is_builtin_receiver(&self, ty: &str) -> bool {
        let python = self
            .table
            .files
            .get(&self.file_id)
            .is_some_and(|f| matches!(f.ext.as_str(), "py" | "pyi"));
        python
            && PYTHON.contains(&ty)
            && !self
                .table
                .by_name
                .get(ty)
                .is_some_and(|defs| defs.iter().any(|s| s.kind.is_type()))
    }
}
