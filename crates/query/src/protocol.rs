//! The worker's wire protocol: one JSON object per line, each way.
//!
//! Requests: `{"id": 7, "op": "query", "sql": "...", "params": [..] | {..} | null,
//! "timeout_ms": 5000, "max_rows": 1000, "max_bytes": 67108864}`, `{"id": 8, "op": "cancel", "target": 7}`,
//! `{"id": 9, "op": "ping"}`.
//!
//! Responses: a query answers with zero or more batches
//! `{"id": 7, "ok": true, "more": true, "rows": [[..], ..]}` and then one final
//! `{"id": 7, "ok": true, "columns": [..], "rows": [..], "truncated": false,
//! "elapsed_us": 1234}`, or `{"id": 7, "ok": false, "error": {"kind", "message"}}`
//! (rows of earlier batches are then void). `cancel` answers
//! `{"id": 8, "ok": true, "cancelled": bool}`, `ping` `{"id": 9, "ok": true}`.
//! On start the worker sends `{"id": 0, "ok": true, "ready": true}` once its
//! connection is open, or `{"id": 0, "ok": false, "error": ..}` and exits.
//!
//! Values are tagged as in [`crate::value`]. Framing is on bytes: a line ends
//! at the byte `\n` (which never occurs inside a UTF-8 multibyte sequence, and
//! JSON escapes it inside strings), and a line is decoded only once whole, so
//! a character split across two pipe reads is never corrupted.

use serde::{Deserialize, Serialize};

use crate::error::QueryError;
use crate::value::Value;

/// What a request line asks the worker to do. An unknown op fails the line's
/// parse, answered as a bad request line with the line's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Op {
    /// Run `sql`.
    Query,
    /// Cancel request `target`.
    Cancel,
    /// Answer at once (liveness).
    Ping,
}

/// One request line.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    pub id: u64,
    pub op: Op,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub params: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<u64>,
}

/// The error object of a failed response.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct WireError {
    pub kind: String,
    pub message: String,
}

impl From<&QueryError> for WireError {
    fn from(e: &QueryError) -> WireError {
        WireError {
            kind: e.kind().to_string(),
            message: e.message(),
        }
    }
}

/// One response line, as the parent reads it (rows left undecoded).
#[derive(Debug, Deserialize)]
pub(crate) struct Response<'a> {
    pub id: u64,
    pub ok: bool,
    #[serde(default)]
    pub more: bool,
    #[serde(default)]
    pub columns: Vec<String>,
    #[serde(default, borrow)]
    pub rows: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    pub truncated: bool,
    #[serde(default)]
    pub error: Option<WireError>,
}

/// One response line, decoded: what the parent's reader hands over.
#[derive(Debug, PartialEq)]
pub(crate) struct Answer {
    pub id: u64,
    pub ok: bool,
    pub more: bool,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    pub truncated: bool,
    pub error: Option<WireError>,
}

impl Answer {
    /// Decodes one line through serde: the reference decoder, used for every shape the
    /// fast path (`fastrows::decode`) declines.
    pub(crate) fn parse_with_serde(line: &[u8]) -> Result<Answer, String> {
        let r: Response = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        let rows = match r.rows {
            None => Vec::new(),
            Some(raw) => serde_json::from_str(raw.get()).map_err(|e| e.to_string())?,
        };
        Ok(Answer {
            id: r.id,
            ok: r.ok,
            more: r.more,
            columns: r.columns,
            rows,
            truncated: r.truncated,
            error: r.error,
        })
    }
}

/// A failure, as the worker writes it.
#[derive(Serialize)]
pub(crate) struct Failed {
    pub id: u64,
    pub ok: bool,
    pub error: WireError,
}

impl Failed {
    pub(crate) fn new(id: u64, e: &QueryError) -> Failed {
        Failed {
            id,
            ok: false,
            error: e.into(),
        }
    }
}

/// Splits a byte stream into lines. Each call scans only the bytes it is
/// given (never the whole buffer again), so a long line costs linear time.
/// A line that lies whole inside one chunk is handed over without a copy;
/// one that spans chunks is assembled in a buffer that is reused.
#[derive(Debug, Default)]
pub(crate) struct LineSplitter {
    pending: Vec<u8>,
}

impl LineSplitter {
    /// Feeds `chunk`; `emit` gets every completed line without its `\n`.
    pub(crate) fn push(&mut self, mut chunk: &[u8], mut emit: impl FnMut(&[u8])) {
        while let Some(pos) = chunk.iter().position(|&b| b == b'\n') {
            if self.pending.is_empty() {
                emit(&chunk[..pos]);
            } else {
                self.pending.extend_from_slice(&chunk[..pos]);
                emit(&self.pending);
                self.pending.clear();
            }
            chunk = &chunk[pos + 1..];
        }
        self.pending.extend_from_slice(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multibyte_text_split_at_every_byte_survives_framing() {
        let text = "ş漢🦀".repeat(3);
        let line = serde_json::to_vec(&serde_json::json!({ "id": 1, "t": text })).unwrap();
        let mut stream = line.clone();
        stream.push(b'\n');
        stream.extend_from_slice(&line);
        stream.push(b'\n');
        for cut in 0..stream.len() {
            let mut sp = LineSplitter::default();
            let mut got = Vec::new();
            sp.push(&stream[..cut], |l| got.push(l.to_vec()));
            sp.push(&stream[cut..], |l| got.push(l.to_vec()));
            assert_eq!(got, vec![line.clone(), line.clone()], "cut at {cut}");
            for l in &got {
                let v: serde_json::Value = serde_json::from_slice(l).unwrap();
                assert_eq!(v["t"], text);
            }
        }
    }

    #[test]
    fn the_op_is_one_of_three_names_and_anything_else_fails_the_line() {
        for (name, op) in [
            ("query", Op::Query),
            ("cancel", Op::Cancel),
            ("ping", Op::Ping),
        ] {
            let line = format!(r#"{{"id": 3, "op": "{name}"}}"#);
            let r: Request = serde_json::from_str(&line).unwrap();
            assert_eq!((r.id, r.op), (3, op));
            assert_eq!(serde_json::to_value(op).unwrap(), name);
        }
        for bad in ["Query", "", "drop"] {
            let line = format!(r#"{{"id": 4, "op": "{bad}"}}"#);
            let e = serde_json::from_str::<Request>(&line).unwrap_err();
            assert!(e.to_string().contains("unknown variant"), "{bad}: {e}");
        }
    }
}
