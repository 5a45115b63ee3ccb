//! Kotlin overloads of one arity, told apart by the types a call passes
//! (`crate::extract::kotlin_args` writes both sides): `addAnnotation(JvmStatic::class)`
//! reaches `addAnnotation(annotation: KClass<*>)`, not the `ClassName` or
//! `AnnotationSpec` overload beside it.
//!
//! Only what is certain rules an overload out: an argument fits a parameter unless both
//! types are known here and cannot be one another — two different types of
//! [`CLOSED`] (final standard types no workspace type extends), one of them and a
//! workspace class or interface, or two workspace types where the argument's has not
//! the parameter's among its bases. A type this resolver cannot see through (`Any`,
//! `Iterable`, a type parameter, a type alias) fits everything, as does an argument of
//! unknown type.

use super::{Ctx, Sym};
use crate::extract::SymbolKind;
use crate::extract::kotlin_args::{FUNCTION, INT_LITERAL, NULL, NULLABLE, TRAILING, VARARG};

/// Final standard types: no workspace type is one of them, and none of them is a
/// workspace type or another of these.
const CLOSED: &[&str] = &[
    "String", "Int", "Long", "Short", "Byte", "Char", "Boolean", "Double", "Float", "KClass",
    "Class", "Unit",
];

/// The types an integer literal takes, as the parameter asks.
const INTEGERS: &[&str] = &["Int", "Long", "Short", "Byte"];

impl<'a> Ctx<'a> {
    /// Whether a call whose arguments are `args` (as `kotlin_args` writes them) may reach
    /// `s`: false only when some argument's type cannot be its parameter's.
    pub(super) fn kotlin_args_may_fit(&self, args: &str, s: &Sym) -> bool {
        let Some(params) = s.param_types.as_deref() else {
            return true;
        };
        let params: Vec<&str> = params.split(',').collect();
        let vararg = params.iter().position(|p| p.starts_with(VARARG));
        for (i, arg) in args.split(',').enumerate() {
            let (arg, param) = match arg.strip_prefix(TRAILING) {
                Some(lambda) => (lambda, params.last()),
                None => (arg, params.get(vararg.map_or(i, |v| i.min(v)))),
            };
            let Some(param) = param else { continue };
            let param = param.strip_prefix(VARARG).unwrap_or(param);
            if !arg.is_empty() && !self.kotlin_arg_fits(arg, param) {
                return false;
            }
        }
        true
    }

    /// Whether an argument of type `arg` may be passed for a parameter of type `param`
    /// (see the module doc).
    fn kotlin_arg_fits(&self, arg: &str, param: &str) -> bool {
        if param.is_empty() {
            return true;
        }
        let (param, nullable) = match param.strip_suffix(NULLABLE) {
            Some(p) => (p, true),
            None => (param, false),
        };
        if arg == NULL {
            return nullable || !self.kotlin_known_type(param);
        }
        if arg == param {
            return true;
        }
        let arg_known = arg == FUNCTION || arg == INT_LITERAL || self.kotlin_known_type(arg);
        let param_known = param == FUNCTION || self.kotlin_known_type(param);
        if !arg_known || !param_known {
            return true;
        }
        if arg == INT_LITERAL {
            return INTEGERS.contains(&param);
        }
        if arg == FUNCTION {
            // A lambda converts to a functional interface of the workspace.
            return self.kotlin_workspace_type(param, &[SymbolKind::Interface]);
        }
        if param == FUNCTION || CLOSED.contains(&arg) || CLOSED.contains(&param) {
            return false;
        }
        self.with_bases(arg)
            .iter()
            .any(|t| crate::extract::split_qualified(t).1 == param)
    }

    /// Whether this resolver knows what `name` is: a [`CLOSED`] type or a class or
    /// interface of the workspace (a type alias could be anything).
    fn kotlin_known_type(&self, name: &str) -> bool {
        CLOSED.contains(&name)
            || self.kotlin_workspace_type(
                name,
                &[SymbolKind::Class, SymbolKind::Interface, SymbolKind::Enum],
            )
    }

    /// Whether every definition named `name` is a type of one of `kinds` (and there is one).
    fn kotlin_workspace_type(&self, name: &str, kinds: &[SymbolKind]) -> bool {
        let defs = self.table.by_name.get(name);
        let mut types = defs
            .into_iter()
            .flatten()
            .filter(|s| s.kind.is_type())
            .peekable();
        types.peek().is_some() && types.all(|s| kinds.contains(&s.kind))
    }
}
