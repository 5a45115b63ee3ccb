//! Kotlin overloads of one arity, told apart by type: what a function's parameters are
//! written as, and what a call's arguments are where the file says it. kotlinpoet's
//! `addAnnotation(AnnotationSpec)`, `addAnnotation(ClassName)`, `addAnnotation(KClass<*>)`
//! all take one argument; `addAnnotation(JvmStatic::class)` is the `KClass` one.
//!
//! Both sides are one text, comma-separated, one entry per parameter or argument:
//! - a type by its last name, type arguments left out (`Map` for `Map<K, V>`,
//!   `Builder` for `FunSpec.Builder`), `?` after a nullable one (`String?`);
//! - [`FUNCTION`] for a function type or a lambda; [`INT_LITERAL`] for an integer
//!   literal (Kotlin gives it an `Int`, `Long`, `Short` or `Byte` as the parameter asks);
//!   [`NULL`] for `null`;
//! - `*` before a `vararg` parameter's element type (`*Any`), `^` before a trailing
//!   lambda (the last parameter's, whatever defaults stand between);
//! - empty where the text says nothing (a parameter of a type the file cannot name, an
//!   argument that is a call's result).
//!
//! Resolution compares them (`resolve/kotlin_overloads.rs`); an unknown entry fits
//! anything.

use tree_sitter::Node;

use super::Collector;
use super::nodes::{has_token, named_children};
use super::written::type_name;

/// A function type (`(Int) -> Unit`) or a lambda argument.
pub(crate) const FUNCTION: &str = "->";
/// An integer literal argument (`2`, `0xFF`).
pub(crate) const INT_LITERAL: &str = "#int";
/// The `null` argument.
pub(crate) const NULL: &str = "null";
/// Before a `vararg` parameter's element type.
pub(crate) const VARARG: char = '*';
/// Before a trailing lambda's entry (`f(a) { .. }`): it is the last parameter's, whatever
/// defaults stand between.
pub(crate) const TRAILING: char = '^';
/// After a nullable parameter's type.
pub(crate) const NULLABLE: char = '?';

/// Longest text recorded: a callable with more parameters keeps no types.
const MAX_TEXT: usize = 512;

/// The parameter types of a function's `function_value_parameters`; `None` when it
/// takes no parameter.
pub(crate) fn param_types(c: &Collector<'_>, params: Node<'_>) -> Option<String> {
    let mut out: Vec<String> = Vec::new();
    let mut vararg = false;
    for p in named_children(params) {
        match p.kind() {
            "parameter_modifiers" => {
                vararg = c.text(p).split_whitespace().any(|w| w == "vararg");
            }
            "parameter" => {
                let ty = named_children(p)
                    .into_iter()
                    .find(|n| n.kind() != "identifier" && n.kind() != "parameter_modifiers");
                let mut entry = ty.map(|t| written_type(c, t)).unwrap_or_default();
                if vararg && !entry.is_empty() {
                    entry.insert(0, VARARG);
                }
                out.push(entry);
                vararg = false;
            }
            _ => {}
        }
    }
    joined(out)
}

/// A parameter's written type as an entry (see the module doc).
fn written_type(c: &Collector<'_>, ty: Node<'_>) -> String {
    match ty.kind() {
        "function_type" => FUNCTION.to_string(),
        "nullable_type" => {
            let inner = named_children(ty).into_iter().next();
            match inner.map(|n| written_type(c, n)) {
                Some(name) if !name.is_empty() && name != FUNCTION => format!("{name}{NULLABLE}"),
                Some(name) => name,
                None => String::new(),
            }
        }
        "user_type" => type_name(c.text(ty)).unwrap_or_default().to_string(),
        "parenthesized_type" | "type" | "non_nullable_type" => named_children(ty)
            .into_iter()
            .next()
            .map(|n| written_type(c, n))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// What a `call_expression` passes: its `value_argument`s, then its trailing lambdas
/// (`f(a) { .. }` passes two), which this grammar puts on the call itself or on a call
/// around it. The one walk both the argument count and the argument types read.
pub(crate) struct CallArguments<'t> {
    /// The `value_argument` nodes, in order.
    pub(crate) values: Vec<Node<'t>>,
    /// How many trailing lambdas follow them.
    pub(crate) trailing_lambdas: usize,
}

/// The arguments `call` passes (see [`CallArguments`]).
pub(crate) fn call_arguments<'t>(c: &Collector<'t>, call: Node<'t>) -> CallArguments<'t> {
    let mut passed = CallArguments {
        values: Vec::new(),
        trailing_lambdas: 0,
    };
    for part in named_children(call) {
        match part.kind() {
            "value_arguments" => passed.values.extend(
                named_children(part)
                    .into_iter()
                    .filter(|a| a.kind() == "value_argument"),
            ),
            "annotated_lambda" => passed.trailing_lambdas += 1,
            _ => {}
        }
    }
    if let Some(outer) = c.parent_of(call)
        && outer.kind() == "call_expression"
        && outer.named_child(0) == Some(call)
    {
        passed.trailing_lambdas += named_children(outer)
            .iter()
            .filter(|p| p.kind() == "annotated_lambda")
            .count();
    }
    passed
}

/// The argument types of a `call_expression` (its `value_arguments` and a trailing
/// lambda); `None` when none is known or an argument is named (`f(b = 1)`: its
/// position says nothing).
pub(crate) fn argument_types(c: &Collector<'_>, call: Node<'_>) -> Option<String> {
    let passed = call_arguments(c, call);
    let mut out: Vec<String> = Vec::with_capacity(passed.values.len());
    for arg in passed.values {
        let children = named_children(arg);
        if children.len() != 1 || has_token(arg, "=") || has_token(arg, "*") {
            return None;
        }
        out.push(expression_type(c, children[0]));
    }
    out.extend((0..passed.trailing_lambdas).map(|_| format!("{TRAILING}{FUNCTION}")));
    if out.iter().all(String::is_empty) {
        return None;
    }
    joined(out)
}

/// What the file says of an argument expression's type (empty when nothing).
fn expression_type(c: &Collector<'_>, e: Node<'_>) -> String {
    let text = c.text(e).trim();
    match e.kind() {
        "string_literal" | "multiline_string_literal" => "String".into(),
        "character_literal" => "Char".into(),
        "number_literal" => {
            if text.ends_with(['L', 'l']) {
                "Long".into()
            } else if text.ends_with(['u', 'U']) {
                String::new()
            } else {
                INT_LITERAL.into()
            }
        }
        "float_literal" => {
            if text.ends_with(['f', 'F']) {
                "Float".into()
            } else {
                "Double".into()
            }
        }
        "lambda_literal" | "anonymous_function" => FUNCTION.into(),
        // `Foo::class` (this grammar reads it as a navigation), `Foo::class.java`.
        "navigation_expression" | "callable_reference" if text.ends_with("::class") => {
            "KClass".into()
        }
        "navigation_expression" if text.ends_with("::class.java") => "Class".into(),
        // A function reference (`::f`, `Foo::bar`) is a function value.
        "callable_reference" => FUNCTION.into(),
        "identifier" => match text {
            "true" | "false" => "Boolean".into(),
            "null" => NULL.into(),
            name => bound_type(c, name),
        },
        "this_expression" if text == "this" => c
            .bound_this()
            .or_else(|| c.enclosing_type().map(str::to_string))
            .and_then(|t| type_name(&t).map(str::to_string))
            .unwrap_or_default(),
        // `AnnotationSpec(type)`: a constructor, by Kotlin's naming (resolution takes it
        // for a type only where the workspace defines a class of that name).
        "call_expression" => e
            .named_child(0)
            .filter(|callee| callee.kind() == "identifier")
            .map(|callee| c.text(callee))
            .filter(|name| name.starts_with(|ch: char| ch.is_ascii_uppercase()))
            .map(str::to_string)
            .unwrap_or_default(),
        "parenthesized_expression" => named_children(e)
            .into_iter()
            .next()
            .map(|inner| expression_type(c, inner))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The type the file gives a name (a parameter, a property, a typed or constructed
/// local, `this`), by its last name; empty when it gives none.
fn bound_type(c: &Collector<'_>, name: &str) -> String {
    c.receiver_of(name)
        .filter(|t| !t.ends_with("()") && !t.contains('#'))
        .and_then(|t| type_name(&t).map(str::to_string))
        .unwrap_or_default()
}

/// The entries joined, `None` when there are none or the text would be too long.
fn joined(entries: Vec<String>) -> Option<String> {
    let text = entries.join(",");
    (!entries.is_empty() && text.len() <= MAX_TEXT).then_some(text)
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::extract;

    fn params_of(src: &str) -> Vec<(String, Option<String>)> {
        extract(Lang::Kotlin, src)
            .unwrap()
            .symbols
            .into_iter()
            .filter(|s| s.params.is_some())
            .map(|s| (s.name, s.param_types))
            .collect()
    }

    fn args_of(src: &str, name: &str) -> Vec<Option<String>> {
        extract(Lang::Kotlin, src)
            .unwrap()
            .refs
            .into_iter()
            .filter(|r| r.name == name)
            .map(|r| r.arg_types)
            .collect()
    }

    #[test]
    fn parameters_are_written_types_by_their_last_name() {
        let src = "class B {\n\
            fun a(x: AnnotationSpec) {}\n\
            fun b(x: KClass<*>, y: FunSpec.Builder?) {}\n\
            fun c(format: String, vararg args: Any) {}\n\
            fun d(f: (Int) -> Unit, g: ((Int) -> Unit)?, t: T) {}\n\
            fun e() {}\n\
            }\n";
        assert_eq!(
            params_of(src),
            [
                ("a".to_string(), Some("AnnotationSpec".to_string())),
                ("b".to_string(), Some("KClass,Builder?".to_string())),
                ("c".to_string(), Some("String,*Any".to_string())),
                ("d".to_string(), Some("->,->,T".to_string())),
                ("e".to_string(), None),
            ]
        );
    }

    #[test]
    fn arguments_say_their_type_where_the_file_does() {
        let src = "class B(val spec: Spec) {\n\
            fun run(p: Param, n: Any?) {\n\
                val made = Made()\n\
                f(\"s\", 'c', 1, 2L, 1.5, 1f, true, null)\n\
                f(Throws::class, Throws::class.java, ::run, { it })\n\
                f(p, made, spec, this, (p))\n\
                f(g(), p.q, n, Made(p))\n\
                f(a = p)\n\
                f(p) { }\n\
                f()\n\
            }\n\
            }\n";
        assert_eq!(
            args_of(src, "f"),
            [
                Some("String,Char,#int,Long,Double,Float,Boolean,null".to_string()),
                Some("KClass,Class,->,->".to_string()),
                Some("Param,Made,Spec,B,Param".to_string()),
                Some(",,Any,Made".to_string()),
                None,
                Some("Param,^->".to_string()),
                None,
            ]
        );
    }
}
