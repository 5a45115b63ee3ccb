//! C++ overloads of one arity, told apart by the types a call passes: box2d's
//! `b2Cross(const b2Vec2&, const b2Vec2&)`, `b2Cross(const b2Vec2&, float32)` and
//! `b2Cross(float32, const b2Vec2&)` all take two arguments; `b2Cross(v, 1.0f)` is the
//! second.
//!
//! Both sides are one text, comma-separated, one entry per parameter or argument (the
//! format of [`super::kotlin_args`]):
//! - a type by its last name, qualifiers, `const`, `&` and template arguments left out
//!   (`b2Vec2` for `const b2Vec2 &`, `Key` for `ns::Key`);
//! - [`ARITH`] for a built-in arithmetic type (`float`, `unsigned int`, `bool`) or a
//!   number, character or `true`/`false` literal: C++ converts each of them to any other
//!   implicitly, so they are not told apart;
//! - [`BOOL`] for a `bool` parameter, which anything may be passed for;
//! - `Class#field` for a field the file does not declare (the class is in a header),
//!   as the receiver rules mark it;
//! - empty where the text says nothing certain: a pointer or array parameter, a
//!   template parameter, `auto`, an argument that is an expression or a call's result.
//!
//! A typedef of a built-in arithmetic type (`typedef float float32;`) records [`ARITH`]
//! as what it stands for, so resolution reads `float32` as one too. Resolution compares
//! the entries (`resolve/cpp_overloads.rs`); an empty one fits anything.

use tree_sitter::Node;

use super::Collector;
use super::fields::Fields;
use super::nodes::named_children;
use super::written::type_name;

/// A built-in arithmetic type, or a literal of one.
pub(crate) const ARITH: &str = "#n";

/// A `bool` parameter: a pointer converts to one, and the file binds a pointer's name
/// to its pointee's type (`Vec *p` is a `Vec`), so every argument may fit it.
pub(crate) const BOOL: &str = "#b";

/// Longest text recorded: a callable with more parameters keeps no types.
const MAX_TEXT: usize = 512;

/// The parameter types of a function's `parameter_list`; `None` when it takes no
/// parameter or none is named.
pub(crate) fn param_types(c: &Collector<'_>, params: Node<'_>) -> Option<String> {
    let mut out: Vec<String> = Vec::new();
    for p in named_children(params) {
        match p.kind() {
            "parameter_declaration" | "optional_parameter_declaration" => {
                if c.text(p).trim() == "void" {
                    continue;
                }
                out.push(param_type(c, p));
            }
            _ => {}
        }
    }
    joined(out)
}

/// One parameter's entry (see the module doc).
fn param_type(c: &Collector<'_>, p: Node<'_>) -> String {
    let Some(ty) = p.field("type") else {
        return String::new();
    };
    // `T *p`, `T p[4]`, `T (*f)(int)`: a pointer, array or function is no value of `T`.
    if p.field("declarator").is_some_and(|d| !by_value(d)) {
        return String::new();
    }
    written_entry(c, p, ty)
}

/// Whether a parameter's declarator declares a value or a reference (`x`, `&x`, `x = 1`),
/// not a pointer, an array or a function.
fn by_value(mut d: Node<'_>) -> bool {
    for _ in 0..16 {
        match d.kind() {
            "identifier" => return true,
            "reference_declarator" => match d.named_child(0) {
                Some(inner) => d = inner,
                // `const T &` without a name.
                None => return true,
            },
            "abstract_reference_declarator" => return true,
            "init_declarator" => match d.field("declarator") {
                Some(inner) => d = inner,
                None => return false,
            },
            _ => return false,
        }
    }
    false
}

/// The entry of a written type `ty` in declaration `decl`.
fn written_entry(c: &Collector<'_>, decl: Node<'_>, ty: Node<'_>) -> String {
    match ty.kind() {
        "primitive_type" if c.text(ty).trim() == "bool" => BOOL.to_string(),
        "primitive_type" | "sized_type_specifier" => ARITH.to_string(),
        "type_identifier" | "qualified_identifier" | "template_type" => {
            let written = c.text(ty).trim();
            if super::receivers_cpp::is_template_parameter(c, decl, written) {
                return String::new();
            }
            type_name(written).unwrap_or_default().to_string()
        }
        _ => String::new(),
    }
}

/// What a typedef stands for where it is a built-in arithmetic type
/// (`typedef float float32;`, `typedef unsigned int UInt32;`): [`ARITH`].
pub(crate) fn typedef_of_arith(typedef: Node<'_>, declarator: Node<'_>) -> Option<&'static str> {
    let ty = typedef.field("type")?;
    (matches!(ty.kind(), "primitive_type" | "sized_type_specifier")
        && declarator.kind() == "type_identifier")
        .then_some(ARITH)
}

/// The argument types of a call's `argument_list`; `None` when none is known.
pub(crate) fn argument_types(c: &Collector<'_>, args: Node<'_>) -> Option<String> {
    let out: Vec<String> = named_children(args)
        .into_iter()
        .filter(|a| a.kind() != "comment")
        .map(|a| expression_type(c, a))
        .collect();
    if out.iter().all(String::is_empty) {
        return None;
    }
    joined(out)
}

/// What the file says of an argument expression's type (empty when nothing).
fn expression_type(c: &Collector<'_>, e: Node<'_>) -> String {
    match e.kind() {
        "number_literal" | "char_literal" | "true" | "false" | "sizeof_expression" => {
            ARITH.to_string()
        }
        // A name, `a.b`, `p->b`, `this->b`: the type the file gives it.
        "identifier" | "field_expression" => bound_type(c, c.text(e).trim()),
        // `-x`, `(x)`: x's type (a unary `-` on a class is its operator's, most often the
        // class again).
        "unary_expression"
            if c.field_text(e, "operator")
                .is_some_and(|o| o == "-" || o == "+") =>
        {
            e.field("argument")
                .map(|a| expression_type(c, a))
                .unwrap_or_default()
        }
        "parenthesized_expression" => e
            .named_child(0)
            .map_or_else(String::new, |inner| expression_type(c, inner)),
        _ => String::new(),
    }
}

/// The type the file gives a name (a parameter, a local, a field), as an entry; empty when
/// it gives none.
fn bound_type(c: &Collector<'_>, name: &str) -> String {
    let Some(t) = c.receiver_of(name) else {
        return String::new();
    };
    // A call's result is left out; a field declared in a header is kept as its marker
    // (`Joint#m_rA`), which resolution types by the field's definition.
    if t.ends_with("()") || t.contains(',') {
        return String::new();
    }
    if t.contains('#') {
        return t;
    }
    if is_builtin_arith(t.trim()) {
        return ARITH.to_string();
    }
    type_name(&t).unwrap_or_default().to_string()
}

/// Whether a written type is a built-in arithmetic one (`float`, `const unsigned int`).
fn is_builtin_arith(written: &str) -> bool {
    let words: Vec<&str> = written
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "static" | "constexpr"))
        .collect();
    !words.is_empty()
        && words.iter().all(|w| {
            matches!(
                *w,
                "bool"
                    | "char"
                    | "short"
                    | "int"
                    | "long"
                    | "float"
                    | "double"
                    | "signed"
                    | "unsigned"
            )
        })
}

/// The entries joined, `None` when there are none or the text would be too long.
fn joined(entries: Vec<String>) -> Option<String> {
    let text = entries.join(",");
    (!entries.is_empty() && text.len() <= MAX_TEXT && !entries.iter().all(String::is_empty))
        .then_some(text)
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::extract;

    /// Each callable's name and parameter types, then the argument types of each call
    /// named `call`.
    type Written = (Vec<(String, Option<String>)>, Vec<Option<String>>);

    fn written(src: &str, call: &str) -> Written {
        let facts = extract(Lang::Cpp, src).unwrap();
        let params = facts.symbols.into_iter().filter(|s| s.params.is_some());
        let args = facts.refs.into_iter().filter(|r| r.name == call);
        (
            params.map(|s| (s.name, s.param_types)).collect(),
            args.map(|r| r.arg_types).collect(),
        )
    }

    fn params_of(src: &str) -> Vec<(String, Option<String>)> {
        written(src, "").0
    }

    fn args_of(src: &str, name: &str) -> Vec<Option<String>> {
        written(src, name).1
    }

    #[test]
    fn parameters_are_written_types_by_their_last_name() {
        let src = "struct V { float x; };\n\
            float a(const V &v, float s) { return s; }\n\
            float b(unsigned int n, ns::Key k, V *p, V q[2], bool on) { return 0; }\n\
            template <typename T> T c(T t, const V &) { return t; }\n\
            void d() {}\n\
            void e(int n = 1) {}\n";
        assert_eq!(
            params_of(src),
            [
                ("a".to_string(), Some("V,#n".to_string())),
                ("b".to_string(), Some("#n,Key,,,#b".to_string())),
                ("c".to_string(), Some(",V".to_string())),
                ("d".to_string(), None),
                ("e".to_string(), Some("#n".to_string())),
            ]
        );
    }

    #[test]
    fn arguments_say_their_type_where_the_file_does() {
        let src = "void run(const V &v, float s, V *p) {\n\
                V w;\n\
                f(v, s, 1, 1.5f, 'c', true);\n\
                f(-w, (s), p->x, g(v), v + w);\n\
                f(g(v), v.x, v.m());\n\
            }\n";
        assert_eq!(
            args_of(src, "f"),
            [
                Some("V,#n,#n,#n,#n,#n".to_string()),
                // `V` is declared elsewhere: its fields are markers.
                Some("V,#n,V#x,,".to_string()),
                Some(",V#x,".to_string()),
            ]
        );
    }

    #[test]
    fn a_typedef_of_an_arithmetic_type_says_so() {
        let facts = extract(Lang::Cpp, "typedef float float32;\ntypedef V *VPtr;\n").unwrap();
        let typedefs: Vec<(String, Option<String>)> = facts
            .symbols
            .into_iter()
            .map(|s| (s.name, s.returns))
            .collect();
        assert_eq!(
            typedefs,
            [
                ("float32".to_string(), Some("#n".to_string())),
                ("VPtr".to_string(), None),
            ]
        );
    }
}
