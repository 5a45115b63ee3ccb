//! The tool table as `tools/list` sends it: small, annotated, every schema an object.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

/// What the tool definitions may cost a client's context at most, as the MCP Python
/// SDK's `json.dumps` of the listed tools counts it: no more than the 15,123 the
/// hand-written schemas took before they were generated from types, although the
/// generated ones type every vocabulary and `relations` gained its filters, grouping
/// and unresolved uses (the shared `page` and `index` parts are named, not typed).
const TOOLS_LIST_MAX_BYTES: usize = 15_123 + CHANGES_TOOL_BYTES + MEANING_MODE_BYTES;

/// What the `changes` tool (a git diff's files and changed definitions) added to the
/// served `tools/list` when it came: its bytes there, nothing more.
pub const CHANGES_TOOL_BYTES: usize = 1_560;

/// What the `search` tool's `meaning` mode (search by meaning, issue #33) added to the
/// served `tools/list` past the 5 bytes the list had left: 218 bytes for its two
/// arguments (`meaning`, the `signals` enum), one sentence of description and the four
/// fields a unit's hit has that a line's has not (`name`, `kind`, `score`, `why`), less
/// the `required` the tool lost (either `pattern` or `meaning` now).
pub const MEANING_MODE_BYTES: usize = 213;

/// JSON as Python's `json.dumps` writes it by default: `", "` and `": "` between
/// items, every non-ASCII character as a `\uXXXX` escape.
struct PythonDefault;

impl serde_json::ser::Formatter for PythonDefault {
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        for c in fragment.chars() {
            if c.is_ascii() {
                w.write_all(&[c as u8])?;
            } else {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(w, "\\u{u:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// The size of the tools as the Python SDK's client measures them.
fn python_json_len(tools: &[rmcp::model::Tool]) -> usize {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonDefault);
    tools.serialize(&mut ser).unwrap();
    out.len()
}

#[test]
fn tools_list_costs_no_more_than_the_hand_written_schemas() {
    // Served, every tool also takes the `workspace` locator: the larger list.
    let served = python_json_len(loci_mcp::server::tool_list(true));
    assert!(
        served <= TOOLS_LIST_MAX_BYTES,
        "the served tools/list is {served} bytes, over {TOOLS_LIST_MAX_BYTES}"
    );
    let tools = loci_mcp::server::tool_list(false);
    let bytes = python_json_len(tools);
    for t in tools {
        eprintln!(
            "{}: {} bytes",
            t.name,
            python_json_len(std::slice::from_ref(t))
        );
    }
    assert!(
        bytes <= TOOLS_LIST_MAX_BYTES,
        "tools/list is {bytes} bytes, over {TOOLS_LIST_MAX_BYTES}"
    );
    let n = loci_mcp::tools::TOOLS.len();
    assert!(
        n <= 10,
        "{n} tools: the default set with memory must stay at most 10"
    );
    let memory = ["remember", "recall", "memory"];
    let memory_tools = loci_mcp::tools::TOOLS
        .iter()
        .filter(|t| memory.contains(&t.name))
        .count();
    assert_eq!(memory_tools, 3, "the memory is at most 3 tools");
}

/// The compact JSON of `tools/list`'s tools may take at most this many characters: the
/// 14,083 of the hand-written schemas they replaced, and the 1,412 the `changes` tool
/// added.
const TOOLS_LIST_MAX_CHARS: usize = 14_083 + 1_412;

#[test]
fn tools_list_is_no_larger_than_the_hand_written_schemas() {
    let chars = serde_json::to_string(loci_mcp::server::tool_list(false))
        .unwrap()
        .len();
    assert!(
        chars <= TOOLS_LIST_MAX_CHARS,
        "tools/list is {chars} chars, over {TOOLS_LIST_MAX_CHARS}"
    );
}

/// Every schema within `v` that may be an array, with the path to it, lacking `items`.
fn untyped_arrays(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            let array = match m.get("type") {
                Some(Value::String(t)) => t == "array",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
                _ => false,
            };
            if array && !m.contains_key("items") && !m.contains_key("prefixItems") {
                out.push(at.to_string());
            }
            for (k, sub) in m {
                untyped_arrays(sub, &format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, sub) in items.iter().enumerate() {
                untyped_arrays(sub, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn no_schema_has_an_array_without_items_nor_a_reference() {
    for tool in loci_mcp::server::tool_list(true) {
        let input = Value::Object((*tool.input_schema).clone());
        let output = Value::Object((*tool.output_schema.clone().expect("output")).clone());
        for (side, schema) in [("input", &input), ("output", &output)] {
            let mut found = Vec::new();
            untyped_arrays(schema, "", &mut found);
            assert!(
                found.is_empty(),
                "{} {side}: untyped arrays at {found:?}",
                tool.name
            );
            let text = schema.to_string();
            for noise in ["$ref", "$defs", "$schema", "\"title\"", "\"format\""] {
                assert!(
                    !text.contains(noise),
                    "{} {side} has {noise}: {text}",
                    tool.name
                );
            }
        }
    }
}

/// The `enum` of input `arg` of tool `name`.
fn input_enum(name: &str, arg: &str) -> Vec<String> {
    let tool = loci_mcp::tools::tool(name).expect("the tool");
    let schema = loci_mcp::tools::input_schema(tool);
    let values = schema["properties"][arg]["enum"].as_array().cloned();
    values
        .unwrap_or_else(|| panic!("{name}'s `{arg}` is not an enum: {schema}"))
        .iter()
        .map(|v| v.as_str().expect("a string value").to_string())
        .collect()
}

#[test]
fn fixed_vocabularies_are_enums_of_their_values() {
    let kinds = input_enum("find", "kind");
    assert!(kinds.iter().any(|k| k == "type_alias"), "{kinds:?}");
    assert_eq!(kinds.len(), 12, "{kinds:?}");
    let langs = input_enum("find", "lang");
    assert!(langs.iter().any(|l| l == "javascript"), "{langs:?}");
    assert_eq!(
        input_enum("relations", "direction"),
        ["callers", "callees", "refs", "impact"]
    );
    for tool in ["remember", "recall", "memory"] {
        assert_eq!(input_enum(tool, "scope"), ["workspace", "user"], "{tool}");
    }
    assert_eq!(input_enum("remember", "llm"), ["claude", "codex"]);
    assert_eq!(input_enum("memory", "action").len(), 13);
}

#[test]
fn graph_tools_are_read_only_memory_writers_say_so_and_all_have_object_schemas_and_a_budget() {
    for tool in loci_mcp::server::tool_list(false) {
        let a = tool.annotations.as_ref().expect("annotations");
        let (read_only, destructive) = match tool.name.as_ref() {
            "remember" => (false, false),
            "memory" => (false, true),
            _ => (true, false),
        };
        assert_eq!(a.read_only_hint, Some(read_only), "{}", tool.name);
        assert_eq!(a.destructive_hint, Some(destructive), "{}", tool.name);
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        assert!(
            tool.input_schema["properties"].get("max_chars").is_some(),
            "{} has no max_chars",
            tool.name
        );
        let out = tool.output_schema.as_ref().expect("output schema");
        assert_eq!(out["type"], "object", "{}", tool.name);
        let required = out["required"].as_array().unwrap();
        assert!(
            required.iter().any(|r| r == "index"),
            "{}: freshness is not required in its output",
            tool.name
        );
    }
}

#[test]
fn purge_is_not_an_action_of_the_memory_tool() {
    let memory = loci_mcp::tools::tool("memory").expect("the memory tool");
    let actions = loci_mcp::tools::input_schema(memory)["properties"]["action"]["enum"].clone();
    let actions: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for a in [
        "read", "list", "edit", "rename", "forget", "restore", "history", "link", "unlink",
        "related", "stats",
    ] {
        assert!(actions.contains(&a), "{a} missing from {actions:?}");
    }
    assert!(!actions.contains(&"purge"), "{actions:?}");
}

#[test]
fn the_tool_table_is_built_once_per_process() {
    let a = loci_mcp::server::tool_list(false).as_ptr();
    let b = loci_mcp::server::tool_list(false).as_ptr();
    assert_eq!(a, b);
}
