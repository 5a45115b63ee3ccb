//! C# receiver types (see [`super::receivers`]): what a C# file writes about the type of
//! a name, so that `x.M()` records `M` with `x`'s type and resolution links only that
//! type's `M` (or an extension method of it), never a same-named method of some other
//! class: parameters, locals (`T x = ..`, `var x = new T()`, `var x = (T)y`,
//! `var x = y as T`), `foreach (T x in ..)`, `out T x` and `is T x`, and a type's fields
//! and properties. An extension method records the type its `this` parameter extends.

use tree_sitter::Node;

use super::Collector;
use super::fields::Fields;
use super::nodes::named_children;
use super::written::type_name;

/// Binds the names `node` declares with a written type (see the module doc).
pub(crate) fn csharp(c: &mut Collector<'_>, node: Node<'_>) {
    match node.kind() {
        "parameter" | "declaration_expression" | "declaration_pattern" => {
            if let (Some(name), Some(ty)) = (c.field_text(node, "name"), c.field_text(node, "type"))
            {
                c.bind(name, ty);
            }
        }
        "foreach_statement" => {
            if let (Some(left), Some(ty)) = (node.field("left"), c.field_text(node, "type"))
                && left.kind() == "identifier"
                && ty != "var"
            {
                let name = c.text(left);
                c.bind(name, ty);
            }
        }
        "property_declaration" => {
            if let (Some(name), Some(ty)) = (c.field_text(node, "name"), c.field_text(node, "type"))
            {
                c.bind_field(name, ty);
            }
        }
        "variable_declaration" => variables(c, node),
        _ => {}
    }
}

/// `T a, b = ..;` as a local (in a method) or a field (of the enclosing type).
fn variables(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(written) = c.field_text(node, "type") else {
        return;
    };
    let field = node
        .parent()
        .is_some_and(|p| matches!(p.kind(), "field_declaration" | "event_field_declaration"));
    for declarator in named_children(node) {
        if declarator.kind() != "variable_declarator" {
            continue;
        }
        let Some(name) = c.field_text(declarator, "name") else {
            continue;
        };
        let ty = if written == "var" {
            match initializer_type(c, declarator) {
                Some(ty) => ty,
                None => continue,
            }
        } else {
            written
        };
        if field {
            c.bind_field(name, ty);
        } else {
            c.bind(name, ty);
        }
    }
}

/// The type `var x = ..` takes when its value writes one: `new T(..)`, `(T)y`, `y as T`.
fn initializer_type<'s>(c: &Collector<'s>, declarator: Node<'_>) -> Option<&'s str> {
    let name = declarator.field("name");
    let value = named_children(declarator)
        .into_iter()
        .find(|n| Some(*n) != name && n.kind() != "bracketed_argument_list")?;
    match value.kind() {
        "object_creation_expression" | "cast_expression" => c.field_text(value, "type"),
        "as_expression" => c.field_text(value, "right"),
        _ => None,
    }
}

/// The type an extension method's `this` parameter extends (`this IList<T> list` →
/// `IList`), if `params` is an extension method's parameter list.
pub(crate) fn extended_type<'s>(c: &Collector<'s>, params: Node<'_>) -> Option<&'s str> {
    let first = named_children(params)
        .into_iter()
        .find(|p| p.kind() == "parameter")?;
    let extension = named_children(first)
        .into_iter()
        .any(|m| m.kind() == "modifier" && c.text(m) == "this");
    if !extension {
        return None;
    }
    type_name(c.field_text(first, "type")?)
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::extract;

    /// Each call's name and recorded receiver type.
    fn receivers(src: &str) -> Vec<(String, Option<String>)> {
        let facts = extract(Lang::CSharp, src).unwrap();
        facts
            .refs
            .iter()
            .filter(|r| r.kind == crate::extract::RefKind::Call)
            .map(|r| (r.name.clone(), r.receiver.clone()))
            .collect()
    }

    #[test]
    fn parameters_locals_fields_and_properties_type_their_receivers() {
        let src = "class A {\n\
            List<int> items;\n\
            StringsHeap Heap { get; set; }\n\
            void M(Writer w, string s) {\n\
              Reader r = Open();\n\
              var b = new Builder();\n\
              var c = (Codec)Get();\n\
              var d = Get() as Decoder;\n\
              var e = Get();\n\
              foreach (Item i in items) i.Run();\n\
              w.Write(); s.Trim(); r.Read(); b.Build(); c.Encode(); d.Decode();\n\
              e.Any(); items.Add(1); Heap.Add(s); File.Exists(s);\n\
              if (w is Stream st) st.Flush();\n\
            }\n\
            }\n";
        let typed: Vec<(String, Option<String>)> = receivers(src)
            .into_iter()
            .filter(|(n, _)| !["Open", "Get", "Builder"].contains(&n.as_str()))
            .collect();
        let want = [
            ("Run", Some("Item")),
            ("Write", Some("Writer")),
            ("Trim", Some("string")),
            ("Read", Some("Reader")),
            ("Build", Some("Builder")),
            ("Encode", Some("Codec")),
            ("Decode", Some("Decoder")),
            ("Any", None),
            ("Add", Some("List")),
            ("Add", Some("StringsHeap")),
            ("Exists", None),
            ("Flush", Some("Stream")),
        ];
        let want: Vec<(String, Option<String>)> = want
            .iter()
            .map(|(n, t)| (n.to_string(), t.map(str::to_string)))
            .collect();
        assert_eq!(typed, want);
    }

    #[test]
    fn an_extension_method_records_the_type_it_extends() {
        let src = "static class X {\n\
            static IEnumerable<T> Safe<T>(this IList<T> list) { return list; }\n\
            static int Plain(IList<int> list) { return 0; }\n\
            }\n";
        let facts = extract(Lang::CSharp, src).unwrap();
        let receivers: Vec<(&str, Option<&str>)> = facts
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.receiver.as_deref()))
            .collect();
        assert_eq!(
            receivers,
            [("X", None), ("Safe", Some("IList")), ("Plain", None)]
        );
    }
}
