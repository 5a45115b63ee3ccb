//! `codex exec --json`: argv and the parser of its JSONL event stream.

use std::ffi::OsString;

use serde_json::{Value, json};

use super::{OutputParser, Parsed};

/// The runner's own arguments (the trailing `-` that makes codex read the
/// prompt from stdin is added after any extra arguments).
pub(super) fn args(model: Option<&str>) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![
        "exec".into(),
        "--json".into(),
        "--skip-git-repo-check".into(),
    ];
    if let Some(m) = model {
        a.push("--model".into());
        a.push(m.into());
    }
    a
}

/// Splits stdout into lines as it streams and handles each event at once, so
/// memory holds only the current line and the latest answer.
#[derive(Default)]
pub(super) struct Parser {
    line: Vec<u8>,
    text: Option<String>,
    error: Option<String>,
    usage: Option<Value>,
    thread_id: Option<Value>,
    events: u64,
    invalid_lines: u64,
}

impl Parser {
    fn event(&mut self, line: &[u8]) {
        let line = line.trim_ascii();
        if line.is_empty() {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            self.invalid_lines += 1;
            return;
        };
        self.events += 1;
        let text = |v: &Value| v.as_str().map(str::to_owned);
        match v["type"].as_str() {
            Some("item.completed") => {
                let item = &v["item"];
                if matches!(
                    item["type"].as_str(),
                    Some("agent_message" | "assistant_message")
                ) {
                    self.text = text(&item["text"]).or_else(|| self.text.take());
                }
            }
            Some("turn.completed") => self.usage = Some(v["usage"].clone()),
            Some("thread.started") => self.thread_id = Some(v["thread_id"].clone()),
            Some("turn.failed") => {
                self.error = text(&v["error"]["message"]).or(Some("turn failed".into()))
            }
            Some("error") => self.error = text(&v["message"]).or(Some("error".into())),
            _ => {
                // Older codex: {"id": .., "msg": {"type": .., ..}}.
                let msg = &v["msg"];
                match msg["type"].as_str() {
                    Some("agent_message") => {
                        self.text = text(&msg["message"]).or_else(|| self.text.take())
                    }
                    Some("task_complete") => {
                        if let Some(t) = text(&msg["last_agent_message"]) {
                            self.text = Some(t);
                        }
                    }
                    Some("error") => self.error = text(&msg["message"]).or(Some("error".into())),
                    _ => {}
                }
            }
        }
    }
}

impl OutputParser for Parser {
    fn feed(&mut self, mut chunk: &[u8]) {
        while let Some(nl) = chunk.iter().position(|&b| b == b'\n') {
            if self.line.is_empty() {
                self.event(&chunk[..nl]);
            } else {
                self.line.extend_from_slice(&chunk[..nl]);
                let line = std::mem::take(&mut self.line);
                self.event(&line);
            }
            chunk = &chunk[nl + 1..];
        }
        self.line.extend_from_slice(chunk);
    }

    fn finish(&mut self) -> Result<Parsed, String> {
        let rest = std::mem::take(&mut self.line);
        self.event(&rest);
        if self.events == 0 {
            return Err(format!(
                "no JSON events ({} unparsable lines)",
                self.invalid_lines
            ));
        }
        Ok(Parsed {
            text: self.text.take(),
            details: json!({
                "usage": self.usage.take(),
                "thread_id": self.thread_id.take(),
                "events": self.events,
            }),
            tool_error: self.error.take(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(stream: &str, chunk: usize) -> Result<Parsed, String> {
        let mut p = Parser::default();
        for c in stream.as_bytes().chunks(chunk) {
            p.feed(c);
        }
        p.finish()
    }

    const EVENTS: &str = concat!(
        r#"{"type":"thread.started","thread_id":"t1"}"#,
        "\n",
        r#"{"type":"item.completed","item":{"type":"reasoning","text":"hmm"}}"#,
        "\n",
        r#"{"type":"item.completed","item":{"type":"agent_message","text":"answer"}}"#,
        "\n",
        r#"{"type":"turn.completed","usage":{"input_tokens":3}}"#,
        "\n"
    );

    #[test]
    fn events_in_any_chunking_give_the_last_agent_message() {
        for chunk in [1, 7, 64, 4096] {
            let p = parse(EVENTS, chunk).unwrap();
            assert_eq!(p.text.as_deref(), Some("answer"), "chunk {chunk}");
            assert_eq!(p.details["usage"]["input_tokens"], 3);
            assert_eq!(p.details["events"], 4);
        }
    }

    #[test]
    fn turn_failed_is_a_tool_error() {
        let p = parse(
            "{\"type\":\"turn.failed\",\"error\":{\"message\":\"quota\"}}",
            5,
        )
        .unwrap();
        assert_eq!(p.tool_error.as_deref(), Some("quota"));
    }

    #[test]
    fn legacy_msg_events_are_understood() {
        let p = parse(
            "{\"id\":\"0\",\"msg\":{\"type\":\"agent_message\",\"message\":\"old\"}}\n",
            3,
        )
        .unwrap();
        assert_eq!(p.text.as_deref(), Some("old"));
    }

    #[test]
    fn no_events_is_a_parse_error() {
        assert!(parse("banner\n", 4).is_err());
    }
}
