//! `claude -p`: argv and the parser of its `--output-format json` result.

use std::ffi::OsString;
use std::path::Path;

use super::{OutputParser, Parsed};

/// The runner's own arguments; the prompt is not among them (it goes to
/// stdin).
pub(super) fn args(mcp_config: &Path, model: Option<&str>) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![
        "-p".into(),
        "--output-format".into(),
        "json".into(),
        "--strict-mcp-config".into(),
        "--mcp-config".into(),
        mcp_config.into(),
    ];
    if let Some(m) = model {
        a.push("--model".into());
        a.push(m.into());
    }
    a
}

/// Collects stdout in a growable buffer as it streams (the result is one JSON
/// document, complete only at the end) and parses it once.
#[derive(Default)]
pub(super) struct Parser {
    buf: Vec<u8>,
}

impl OutputParser for Parser {
    fn feed(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    fn finish(&mut self) -> Result<Parsed, String> {
        let value: serde_json::Value =
            serde_json::from_slice(self.buf.trim_ascii()).map_err(|e| e.to_string())?;
        // `--verbose` makes claude print the whole message list; the result
        // is its last `"type": "result"` element.
        let mut result = match value {
            serde_json::Value::Array(items) => items
                .into_iter()
                .rev()
                .find(|v| v["type"] == "result")
                .ok_or("no result message in the output")?,
            v => v,
        };
        let obj = result
            .as_object_mut()
            .ok_or("the result is not a JSON object")?;
        let text = match obj.remove("result") {
            Some(serde_json::Value::String(s)) => Some(s),
            _ => None,
        };
        let is_error = obj
            .get("is_error")
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
            || obj
                .get("subtype")
                .and_then(|v| v.as_str())
                .is_some_and(|s| s.starts_with("error"));
        let tool_error = is_error.then(|| {
            text.clone().unwrap_or_else(|| {
                obj.get("subtype")
                    .and_then(|v| v.as_str())
                    .unwrap_or("error")
                    .to_owned()
            })
        });
        Ok(Parsed {
            text,
            details: result,
            tool_error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&str]) -> Result<Parsed, String> {
        let mut p = Parser::default();
        for c in chunks {
            p.feed(c.as_bytes());
        }
        p.finish()
    }

    #[test]
    fn result_split_across_chunks_is_parsed() {
        let p = parse(&[
            r#"{"type":"result","is_e"#,
            r#"rror":false,"result":"hi"}"#,
            "\n",
        ])
        .unwrap();
        assert_eq!(p.text.as_deref(), Some("hi"));
        assert!(p.tool_error.is_none());
        assert!(p.details.get("result").is_none());
    }

    #[test]
    fn is_error_becomes_a_tool_error() {
        let p = parse(&[r#"{"type":"result","is_error":true,"result":"quota"}"#]).unwrap();
        assert_eq!(p.tool_error.as_deref(), Some("quota"));
    }

    #[test]
    fn verbose_array_uses_the_last_result() {
        let p = parse(&[r#"[{"type":"system"},{"type":"result","result":"ok"}]"#]).unwrap();
        assert_eq!(p.text.as_deref(), Some("ok"));
    }

    #[test]
    fn garbage_is_a_parse_error() {
        assert!(parse(&["not json"]).is_err());
    }
}
