//! The tool table as `tools/list` sends it: small, annotated, every schema an object.

use std::io::Write;

use serde::Serialize;

/// What the tool definitions may cost a client's context at most, as the MCP Python
/// SDK's `json.dumps` of the listed tools counts it: under the target of
/// 16,000, and at most 5 % over the 15,123 the hand-written schemas took before they
/// were generated from types (enums for every fixed vocabulary, typed array items).
const TOOLS_LIST_MAX_BYTES: usize = 15_900;

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
fn tools_list_fits_15_900_bytes_under_the_16_kb_target() {
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
