//! JSON Schemas for MCP tools, generated from the request and answer types and trimmed
//! for a model's context: `tools/list` is paid for in every client's context, so every
//! subschema is inline (no `$defs`/`$ref` for clients that do not resolve them), and
//! what only tooling reads goes (`$schema`, `title`, integer `format`s, a named type's
//! own doc comment: a property's doc comment is its description). A unit enum is one
//! `enum` list, without a `type` its values already say; an optional property is not
//! also `null`.

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

/// Which side of the wire a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// What a tool accepts (the type's `Deserialize` form).
    Input,
    /// What a tool answers (the type's `Serialize` form).
    Output,
}

/// The compact, inline, draft 2020-12 schema of `T` as an MCP tool states it.
pub fn tool_schema<T: JsonSchema>(side: Side) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings.contract = match side {
        Side::Input => Contract::Deserialize,
        Side::Output => Contract::Serialize,
    };
    let schema: Schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    let mut defs = Map::new();
    if let Value::Object(root) = &mut value {
        // The tool's own description says what the whole is.
        root.remove("description");
        if let Some(Value::Object(d)) = root.remove("$defs") {
            defs = d;
        }
    }
    inline(&mut value, &defs, 0);
    compact(&mut value);
    value
}

/// How deep definitions may nest in one another (a recursive type stops here).
const MAX_INLINE_DEPTH: usize = 16;

/// Replaces every `$ref` to a definition with the definition itself, less its own
/// `description` (the referring property's, if any, stays).
fn inline(schema: &mut Value, defs: &Map<String, Value>, depth: usize) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref")
                && let Some(Value::Object(def)) =
                    r.strip_prefix("#/$defs/").and_then(|name| defs.get(name))
                && depth < MAX_INLINE_DEPTH
            {
                let mut def = Value::Object(def.clone());
                if let Value::Object(d) = &mut def {
                    d.remove("description");
                }
                inline(&mut def, defs, depth + 1);
                map.remove("$ref");
                if let Value::Object(def) = def {
                    for (k, v) in def {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            map.values_mut().for_each(|v| inline(v, defs, depth));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| inline(v, defs, depth)),
        _ => {}
    }
}

/// Trims one schema and, recursively, its subschemas.
fn compact(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    for key in ["$schema", "title"] {
        map.remove(key);
    }
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
    if let Some(format) = map.remove("format") {
        // `uint32` and its kind say "not negative" with a `minimum` of 0 beside them:
        // the model is told the ranges that matter in the description.
        if format.as_str().is_some_and(|f| f.starts_with("uint")) {
            map.remove("minimum");
        }
    }
    for key in ["items", "additionalProperties", "not", "contains"] {
        if let Some(sub) = map.get_mut(key) {
            compact(sub);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(subs)) = map.get_mut(key) {
            subs.iter_mut().for_each(compact);
        }
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        props.values_mut().for_each(compact);
    }
    consts_to_enum(map);
    enum_without_type(map);
    merge_null_alternative(map);
    optional_is_not_null(map);
}

/// `oneOf` of `const`s (a unit enum whose variants have doc comments) as one `enum`.
fn consts_to_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(alts)) = map.get("oneOf") else {
        return;
    };
    let consts: Option<Vec<Value>> = alts.iter().map(|a| a.get("const").cloned()).collect();
    let Some(consts) = consts else { return };
    map.remove("oneOf");
    map.insert("enum".into(), Value::Array(consts));
}

/// An `enum` of strings alone: `"type": "string"` beside it says nothing more.
fn enum_without_type(map: &mut Map<String, Value>) {
    if map.get("type").is_some_and(|t| t == "string")
        && let Some(Value::Array(values)) = map.get("enum")
        && values.iter().all(Value::is_string)
    {
        map.remove("type");
    }
}

/// `anyOf: [S, {"type": "null"}]` as `S` with `null` among its types.
fn merge_null_alternative(map: &mut Map<String, Value>) {
    let Some(Value::Array(alts)) = map.get("anyOf") else {
        return;
    };
    let [some, none] = alts.as_slice() else {
        return;
    };
    if none != &serde_json::json!({"type": "null"}) {
        return;
    }
    let Value::Object(some) = some.clone() else {
        return;
    };
    map.remove("anyOf");
    for (k, v) in some {
        map.entry(k).or_insert(v);
    }
    add_null(map);
}

/// Adds `null` to a schema's types (and to its `enum`).
fn add_null(map: &mut Map<String, Value>) {
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            let t = Value::String(std::mem::take(t));
            map.insert("type".into(), Value::Array(vec![t, "null".into()]));
        }
        Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => ts.push("null".into()),
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.iter().any(Value::is_null)
    {
        values.push(Value::Null);
    }
}

/// A property that is not required is left out when absent, never sent as `null`:
/// its schema does not list `null` (an input's `null` still reads as absent).
fn optional_is_not_null(map: &mut Map<String, Value>) {
    let required: Vec<String> = match map.get("required") {
        Some(Value::Array(r)) => r
            .iter()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let Some(Value::Object(props)) = map.get_mut("properties") else {
        return;
    };
    for (name, prop) in props.iter_mut() {
        if required.contains(name) {
            continue;
        }
        let Value::Object(p) = prop else { continue };
        if let Some(Value::Array(ts)) = p.get_mut("type") {
            ts.retain(|t| t != "null");
            if let [only] = ts.as_slice() {
                let only = only.clone();
                p.insert("type".into(), only);
            }
        }
        if let Some(Value::Array(values)) = p.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
        enum_without_type(p);
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::{Side, tool_schema};

    /// A vocabulary with documented variants.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        /// The first.
        One,
        /// The second.
        TwoWords,
    }

    /// The input.
    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Input {
        /// what to find
        name: String,
        kind: Option<Kind>,
        count: Option<u32>,
        nested: Option<Nested>,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Nested {
        tags: Vec<String>,
    }

    /// The output.
    #[derive(Serialize, JsonSchema)]
    struct Output {
        symbol: Option<String>,
        kind: Option<Kind>,
    }

    #[test]
    fn an_input_is_inline_without_noise_and_its_enums_are_lists() {
        let s = tool_schema::<Input>(Side::Input);
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "what to find"},
                    "kind": {"enum": ["one", "two_words"]},
                    "count": {"type": "integer"},
                    "nested": {
                        "type": "object",
                        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
                        "required": ["tags"]
                    }
                },
                "required": ["name"]
            })
        );
    }

    #[test]
    fn a_required_output_that_may_be_null_says_so() {
        let s = tool_schema::<Output>(Side::Output);
        assert_eq!(s["properties"]["symbol"]["type"], json!(["string", "null"]));
        assert_eq!(
            s["properties"]["kind"],
            json!({"enum": ["one", "two_words", null]})
        );
    }
}
