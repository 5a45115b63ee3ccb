//! A decoder for the `rows` array of a worker answer, specialised for the
//! shapes [`Value`] serializes to (null, numbers, strings, one-key tagged
//! objects). It is what keeps 100,000 rows through the worker close to the
//! in-process time: the generic serde path spends most of its time in map
//! visitors for tagged values. Anything it does not expect makes it return
//! `None`, and the caller decodes the same bytes with serde instead, so it
//! can be fast without being the only judge of correctness.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

use crate::value::Value;

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.i += 1)
    }

    /// A JSON string: borrowed when it has no escapes, else decoded by serde.
    fn string(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.i;
        let mut escaped = false;
        loop {
            match *self.s.get(self.i)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    self.i += 2;
                }
                _ => self.i += 1,
            }
        }
        let end = self.i;
        self.i += 1;
        if escaped {
            serde_json::from_slice::<String>(&self.s[start - 1..=end])
                .ok()
                .map(Into::into)
        } else {
            std::str::from_utf8(&self.s[start..end])
                .ok()
                .map(Into::into)
        }
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        let mut float = false;
        while let Some(&b) = self.s.get(self.i) {
            match b {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' | b'e' | b'E' => float = true,
                _ => break,
            }
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        if float {
            text.parse().ok().map(Value::Real)
        } else {
            text.parse().ok().map(Value::Integer)
        }
    }

    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'n' => {
                self.s.get(self.i..self.i + 4).filter(|w| *w == b"null")?;
                self.i += 4;
                Some(Value::Null)
            }
            b'"' => self.string().map(|s| Value::Text(s.into_owned())),
            b'{' => {
                self.i += 1;
                let tag = self.string()?;
                self.eat(b':')?;
                let body = self.string()?;
                self.eat(b'}')?;
                match &*tag {
                    "$blob" => B64.decode(body.as_bytes()).ok().map(Value::Blob),
                    "$int" => body.parse().ok().map(Value::Integer),
                    // Rare: leave infinities and anything else to serde.
                    _ => None,
                }
            }
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }
}

/// Decodes `[[v, ...], ...]`; `None` when the input is anything else.
pub(crate) fn parse_rows(s: &[u8]) -> Option<Vec<Vec<Value>>> {
    let mut c = Cursor { s, i: 0 };
    c.eat(b'[')?;
    let mut rows = Vec::new();
    if c.peek()? == b']' {
        c.i += 1;
    } else {
        loop {
            c.eat(b'[')?;
            let mut row = Vec::with_capacity(rows.last().map_or(4, Vec::len));
            if c.peek()? == b']' {
                c.i += 1;
            } else {
                loop {
                    row.push(c.value()?);
                    match c.peek()? {
                        b',' => c.i += 1,
                        b']' => {
                            c.i += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            rows.push(row);
            match c.peek()? {
                b',' => c.i += 1,
                b']' => {
                    c.i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (c.peek().is_none()).then_some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_serde_on_every_value_shape() {
        let rows = vec![
            vec![
                Value::Null,
                Value::Integer(-5),
                Value::Integer(i64::MIN),
                Value::Real(0.1),
                Value::Real(-2.5e-300),
                Value::Text("a \"quoted\" \\ line\nş漢🦀 \u{1}".into()),
                Value::Text(String::new()),
                Value::Blob(vec![0, 1, 255]),
            ],
            vec![],
            vec![Value::Integer(i64::MAX)],
        ];
        let json = serde_json::to_vec(&rows).unwrap();
        assert_eq!(parse_rows(&json), Some(rows));
        assert_eq!(parse_rows(b" [ ] "), Some(vec![]));
    }

    #[test]
    fn declines_what_it_does_not_expect() {
        for bad in [
            &b"[[{\"$real\":\"inf\"}]]"[..],
            b"[[true]]",
            b"[[1]",
            b"[[1]] x",
            b"{}",
        ] {
            assert_eq!(parse_rows(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}
