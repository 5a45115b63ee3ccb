//! Kotlin receiver types (see [`super::receivers`]): what a Kotlin file writes about the
//! type of a name, so that `x.m()` records `m` with `x`'s type. Parameters
//! (`fun f(w: Widget)`), constructor properties (`class A(val w: Widget)`, a field of
//! `A`), and properties and locals with a declared type (`val w: Widget`) or built by a
//! constructor call (`val w = Widget()`): in a class body a field, else a local of the
//! enclosing function.

use tree_sitter::Node;

use super::Collector;
use super::nodes::named_children;
use super::written::type_path;

/// Records the types `node` (any node the Kotlin walker visits) binds names to.
pub(crate) fn kotlin(c: &mut Collector<'_>, node: Node<'_>) {
    match node.kind() {
        "parameter" => {
            if let Some((name, ty)) = typed_name(c, node) {
                c.bind_path(&name, &ty);
            }
        }
        "class_parameter" => {
            let property = (0..node.child_count())
                .filter_map(|i| node.child(i))
                .any(|n| matches!(n.kind(), "val" | "var"));
            if property && let Some((name, ty)) = typed_name(c, node) {
                c.bind_field_path(&name, &ty);
            }
        }
        "property_declaration" => {
            let Some(variable) = named_children(node)
                .into_iter()
                .find(|n| n.kind() == "variable_declaration")
            else {
                return;
            };
            let ty = typed_name(c, variable).or_else(|| {
                let name = first_identifier(c, variable)?;
                Some((name, constructed(c, node)?))
            });
            let Some((name, ty)) = ty else { return };
            if c.in_type_scope() {
                c.bind_field_path(&name, &ty);
            } else {
                c.bind_path(&name, &ty);
            }
        }
        _ => {}
    }
}

/// A declaration's name and written type: its first identifier and the type after it,
/// as its path of type names ([`type_path`]: `FunSpec.Builder`).
fn typed_name(c: &Collector<'_>, node: Node<'_>) -> Option<(String, String)> {
    let children = named_children(node);
    let at = children.iter().position(|n| n.kind() == "identifier")?;
    let ty = children[at + 1..]
        .iter()
        .find(|n| matches!(n.kind(), "user_type" | "nullable_type"))?;
    let name = c.text(children[at]).to_string();
    Some((name, type_path(c.text(*ty))?.to_string()))
}

fn first_identifier(c: &Collector<'_>, node: Node<'_>) -> Option<String> {
    named_children(node)
        .into_iter()
        .find(|n| n.kind() == "identifier")
        .map(|n| c.text(n).to_string())
}

/// The class a property's initializer constructs (`= Widget()`), by the callee's name
/// (capitalized, as Kotlin classes are named; a function `make()` is not one).
fn constructed(c: &Collector<'_>, property: Node<'_>) -> Option<String> {
    let call = named_children(property)
        .into_iter()
        .find(|n| n.kind() == "call_expression")?;
    let callee = call.named_child(0).filter(|n| n.kind() == "identifier")?;
    let name = c.text(callee);
    name.starts_with(|ch: char| ch.is_ascii_uppercase())
        .then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::extract;

    /// The receiver type recorded for each call named `m`.
    fn receivers(src: &str) -> Vec<Option<String>> {
        let facts = extract(Lang::Kotlin, src).unwrap();
        facts
            .refs
            .iter()
            .filter(|r| r.name == "m")
            .map(|r| r.receiver.clone())
            .collect()
    }

    #[test]
    fn parameters_properties_and_constructed_locals_type_their_receivers() {
        let src = "class A(val f: Field, plain: Plain) {\n    val g = Gauge()\n    fun run(p: Param?, q: List<Q>) {\n        val l: Local = make()\n        val c = Built()\n        val n = make()\n        p.m()\n        q.m()\n        l.m()\n        c.m()\n        n.m()\n        f.m()\n        g.m()\n        plain.m()\n    }\n}\n";
        let want: Vec<Option<String>> = [
            Some("Param"),
            Some("List"),
            Some("Local"),
            Some("Built"),
            None,
            Some("Field"),
            Some("Gauge"),
            // A constructor parameter that is no property is not in scope in methods.
            None,
        ]
        .iter()
        .map(|t| t.map(str::to_string))
        .collect();
        assert_eq!(receivers(src), want);
    }

    #[test]
    fn nested_types_keep_their_path_and_packages_are_left_out() {
        let src = "class A(val f: FunSpec.Builder) {\n    fun run(p: com.x.Outer.Inner<T>?, q: kotlin.collections.List<Q>) {\n        val l: Map.Entry<K, V> = make()\n        p.m()\n        q.m()\n        l.m()\n        f.m()\n    }\n}\n";
        let want: Vec<Option<String>> = [
            Some("Outer.Inner"),
            Some("List"),
            Some("Map.Entry"),
            Some("FunSpec.Builder"),
        ]
        .iter()
        .map(|t| t.map(str::to_string))
        .collect();
        assert_eq!(receivers(src), want);
    }
}
