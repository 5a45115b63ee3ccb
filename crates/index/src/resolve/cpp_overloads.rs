//! C++ overloads of one arity, told apart by the types a call passes
//! (`crate::extract::cpp_args` writes both sides): `b2Cross(v, 1.0f)` reaches
//! `b2Cross(const b2Vec2&, float32)`, not `b2Cross(const b2Vec2&, const b2Vec2&)`.
//!
//! Only what is certain rules an overload out: an argument fits a parameter unless both
//! types are known here and no implicit conversion turns one into the other. Known are
//! the built-in arithmetic types and the typedefs of one (all one kind: each converts
//! to every other), and the classes, structs and enums of the workspace. A class takes
//! an arithmetic value or another class's only through a constructor of one argument (or
//! as its base); a class gives an arithmetic value only through a conversion operator
//! (`operator bool()`), which [`CONVERSIONS`] names. A type this resolver cannot see
//! through (a template parameter, a typedef of a class or pointer, a standard type)
//! fits everything, as does an argument of unknown type (a field marker, `Joint#m_rA`,
//! is its field's declared type), and every argument fits a
//! `bool` (a name bound to a pointer reads as its pointee's type).

use super::{Ctx, Sym};
use crate::extract::SymbolKind;
use crate::extract::cpp_args::{ARITH, BOOL};

/// Conversion operators to arithmetic types: a class defining one is passed for an
/// arithmetic parameter.
pub(super) const CONVERSIONS: &[&str] = &[
    "operator bool",
    "operator int",
    "operator unsigned",
    "operator long",
    "operator float",
    "operator double",
    "operator char",
    "operator size_t",
];

/// Fixed-width and size types of the standard library: arithmetic, as the built-in ones.
const STD_ARITH: &[&str] = &[
    "size_t",
    "ptrdiff_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "intptr_t",
    "uintptr_t",
];

/// What resolution knows of a type named in an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// A built-in arithmetic type, or a typedef of one.
    Arith,
    /// A class, struct, union or enum of the workspace (and nothing else by that name).
    Class,
    /// Anything else.
    Unknown,
}

impl<'a> Ctx<'a> {
    /// Whether a C++ call whose arguments are `args` (as `cpp_args` writes them) may
    /// reach `s`: false only when some argument's type cannot be its parameter's.
    pub(super) fn cpp_args_may_fit(&self, args: &str, s: &Sym) -> bool {
        let Some(params) = s.param_types.as_deref() else {
            return true;
        };
        let params: Vec<&str> = params.split(',').collect();
        self.cpp_arg_types(args).iter().enumerate().all(|(i, arg)| {
            params
                .get(i)
                .is_none_or(|param| arg.is_empty() || self.cpp_arg_fits(arg, param))
        })
    }

    /// The entries of `args` with each field marker (`Joint#m_rA`) replaced by the type
    /// its field is declared with, empty when none is known.
    fn cpp_arg_types<'t>(&self, args: &'t str) -> Vec<&'t str>
    where
        'a: 't,
    {
        args.split(',')
            .map(|a| match a.find('#') {
                // `#n` is no marker.
                Some(at) if at > 0 => self.field_type(a).unwrap_or_default(),
                _ => a,
            })
            .collect()
    }

    /// Whether overload `s` of `name` may be what a call passing `args` reaches: its
    /// parameters take them ([`Ctx::cpp_args_may_fit`]), and they match it exactly or
    /// match no other overload of it exactly (C++ prefers an exact match to a conversion,
    /// and a function to a template: `b2Min(v1, v2)` on two `b2Vec2` is
    /// `b2Min(const b2Vec2&, const b2Vec2&)`, not `template <T> T b2Min(T, T)`).
    pub(super) fn cpp_overload_fits(&self, args: &str, name: &str, s: &Sym) -> bool {
        if !self.cpp_args_may_fit(args, s) {
            return false;
        }
        let args = self.cpp_arg_types(args);
        if matches_exactly(&args, s) {
            return true;
        }
        !self.table.by_name.get(name).is_some_and(|defs| {
            defs.iter().any(|o| {
                o.id != s.id
                    && o.file_id == s.file_id
                    && o.kind == s.kind
                    && o.qualified_name == s.qualified_name
                    && matches_exactly(&args, o)
            })
        })
    }

    /// Whether an argument of type `arg` may be passed for a parameter of type `param`
    /// (see the module doc).
    fn cpp_arg_fits(&self, arg: &str, param: &str) -> bool {
        if param.is_empty() || param == BOOL || arg == param {
            return true;
        }
        match (self.cpp_known(arg), self.cpp_known(param)) {
            (Known::Arith, Known::Arith) => true,
            (Known::Arith, Known::Class) => self.cpp_converting_constructor(param),
            (Known::Class, Known::Arith) => self
                .with_bases(arg)
                .iter()
                .any(|t| self.cpp_converts_to_arith(t)),
            (Known::Class, Known::Class) => {
                self.cpp_converting_constructor(param)
                    || self
                        .with_bases(arg)
                        .iter()
                        .any(|t| crate::extract::split_qualified(t).1 == param)
            }
            _ => true,
        }
    }

    /// What this resolver knows of the type named `name` (see [`Known`]).
    fn cpp_known(&self, name: &str) -> Known {
        if name == ARITH || STD_ARITH.contains(&name) {
            return Known::Arith;
        }
        let Some(defs) = self.table.by_name.get(name) else {
            return Known::Unknown;
        };
        let mut types = defs.iter().filter(|s| s.kind.is_type()).peekable();
        if types.peek().is_none() || defs.iter().any(|s| s.kind == SymbolKind::Function) {
            return Known::Unknown;
        }
        let mut arith = true;
        let mut class = true;
        for s in types {
            arith &= s.kind == SymbolKind::TypeAlias && s.returns.as_deref() == Some(ARITH);
            class &= matches!(
                s.kind,
                SymbolKind::Class | SymbolKind::Struct | SymbolKind::Enum
            );
        }
        match (arith, class) {
            (true, _) => Known::Arith,
            (_, true) => Known::Class,
            _ => Known::Unknown,
        }
    }

    /// Whether class `class` has a constructor one argument may call (`V(float s)`,
    /// `V(const W &w, int n = 0)`): it converts other values to a `class`.
    fn cpp_converting_constructor(&self, class: &str) -> bool {
        self.table.by_name.get(class).is_some_and(|defs| {
            defs.iter().any(|s| {
                s.kind == SymbolKind::Method
                    && s.owned_by(class, class)
                    && s.params.is_none_or(|p| p.accepts(1))
                    && !is_copy(s, class)
            })
        })
    }

    /// Whether type `ty` (a class or one of its bases) defines a conversion operator to
    /// an arithmetic type.
    fn cpp_converts_to_arith(&self, ty: &str) -> bool {
        let (_, ty) = crate::extract::split_qualified(ty);
        CONVERSIONS.iter().any(|op| {
            self.table
                .by_name
                .get(*op)
                .is_some_and(|defs| defs.iter().any(|s| s.owned_by(ty, op)))
        })
    }
}

/// Whether constructor `s` of `class` takes a `class` first (a copy or move constructor
/// converts nothing).
fn is_copy(s: &Sym, class: &str) -> bool {
    s.param_types
        .as_deref()
        .is_some_and(|t| t.split(',').next() == Some(class))
}

/// Whether every argument of `args` has a named type (not only "arithmetic") that is the
/// type of `s`'s parameter in its place, and `s` takes no more parameters.
fn matches_exactly(args: &[&str], s: &Sym) -> bool {
    let Some(params) = s.param_types.as_deref() else {
        return false;
    };
    let params: Vec<&str> = params.split(',').collect();
    params.len() == args.len()
        && args
            .iter()
            .zip(&params)
            .all(|(a, p)| !a.is_empty() && *a != ARITH && a == p)
}
