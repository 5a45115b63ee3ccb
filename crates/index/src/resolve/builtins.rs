//! Receivers of a language's builtin types. Python's `d = {}`, `xs = [..]`, `dict(..)`,
//! a string literal, or a parameter annotated `dict[str, int]` / `List[T]`, is a builtin
//! container whose methods (`d.get()`, `d.items()`, `xs.append()`) are none of the
//! workspace's: when the workspace defines no type of that name, such a call links
//! nothing, instead of every same-named method found by name. So does a Kotlin receiver
//! of a builtin type (`s: String`), but for the workspace's extension functions of it,
//! and a JavaScript or TypeScript literal (`/re/.test(x)`, `const re = /x/`).

use super::Ctx;
use crate::Lang;

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

/// Kotlin's builtin types (and the JVM's it maps to) a receiver can be declared as: their
/// members are the standard library's, though the workspace may extend them (`fun
/// String.shout()`).
const KOTLIN: &[&str] = &[
    "String",
    "CharSequence",
    "StringBuilder",
    "Int",
    "Long",
    "Short",
    "Byte",
    "Double",
    "Float",
    "Boolean",
    "Char",
    "Any",
    "Unit",
    "Array",
    "List",
    "MutableList",
    "Set",
    "MutableSet",
    "Map",
    "MutableMap",
    "Collection",
    "Iterable",
    "Sequence",
];

/// JavaScript's and TypeScript's builtin types a literal or a `new` makes (`/re/`, `'s'`,
/// `[..]`, `1`, `new Map()`): `/^\d+$/.test(id)` is no call of the workspace's
/// `Range.test`, nor `this.map.delete(k)` of its `LRUCache.delete`.
const JAVASCRIPT: &[&str] = &[
    "RegExp", "String", "Array", "Number", "Map", "Set", "WeakMap", "WeakSet", "Promise", "Date",
];

impl Ctx<'_> {
    /// Whether a receiver of type `ty` in the file being resolved is a builtin the
    /// workspace does not define (its members are not the workspace's).
    pub(super) fn is_builtin_receiver(&self, ty: &str) -> bool {
        let builtins = match self.lang() {
            Some(Lang::Python) => PYTHON,
            Some(Lang::Kotlin) => KOTLIN,
            Some(Lang::JavaScript | Lang::TypeScript | Lang::Tsx) => JAVASCRIPT,
            _ => return false,
        };
        builtins.contains(&ty) && !self.defines_type(ty)
    }
}
