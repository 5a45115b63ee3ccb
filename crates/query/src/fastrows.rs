//! A decoder for the answer lines of the worker, specialised for the shapes
//! it writes (the envelope's few keys; rows of null, numbers, strings and
//! one-key tagged objects). It is what keeps 100,000 rows through the worker
//! close to the in-process time: one pass over each line, straight into
//! [`Value`]s, where serde would scan the envelope for a raw `rows` value
//! and then spend most of its time in map visitors for tagged values. Anything it does not expect makes it return
//! `None`, and the caller decodes the same bytes with serde instead, so it
//! can be fast without being the only judge of correctness.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

use crate::protocol::Answer;
use crate::value::Value;

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

/// Index of the first `"` or `\\` in `s`, eight bytes at a time.
fn find_quote_or_backslash(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has = |w: u64, b: u8| {
        let x = w ^ (ONES * b as u64);
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    let mut i = 0;
    while let Some(word) = s.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let hit = has(w, b'"') | has(w, b'\\');
        if hit != 0 {
            return Some(i + (hit.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s[i..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\')
        .map(|p| i + p)
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

    /// A JSON string's raw bytes between the quotes, and whether it holds
    /// escapes. Not checked for UTF-8: callers that need text do that.
    fn raw_string(&mut self) -> Option<(&'a [u8], bool)> {
        self.eat(b'"')?;
        let start = self.i;
        let mut escaped = false;
        loop {
            self.i += find_quote_or_backslash(self.s.get(self.i..)?)?;
            if self.s[self.i] == b'"' {
                break;
            }
            escaped = true;
            self.i += 2;
        }
        let end = self.i;
        self.i += 1;
        Some((&self.s[start..end], escaped))
    }

    /// A JSON string: borrowed when it has no escapes, else decoded by serde.
    fn string(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        let start = self.i;
        let (raw, escaped) = self.raw_string()?;
        if escaped {
            let quoted = &self.s[start..self.i];
            let quoted = &quoted[quoted.iter().position(|&b| b == b'"')?..];
            serde_json::from_slice::<String>(quoted)
                .ok()
                .map(Into::into)
        } else {
            std::str::from_utf8(raw).ok().map(Into::into)
        }
    }

    /// A string known to be plain ASCII when well formed (a tag, base64, a
    /// decimal): no escapes allowed, no UTF-8 check needed.
    fn plain(&mut self) -> Option<&'a [u8]> {
        match self.raw_string()? {
            (raw, false) => Some(raw),
            _ => None,
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
        let text = &self.s[start..self.i];
        if float {
            std::str::from_utf8(text)
                .ok()?
                .parse()
                .ok()
                .map(Value::Real)
        } else {
            parse_i64(text).map(Value::Integer)
        }
    }

    fn u64(&mut self) -> Option<u64> {
        self.ws();
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        let text = &self.s[start..self.i];
        if text.is_empty() || text.len() > 19 {
            return None;
        }
        Some(text.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')))
    }

    fn bool(&mut self) -> Option<bool> {
        self.ws();
        let rest = self.s.get(self.i..)?;
        if rest.starts_with(b"true") {
            self.i += 4;
            Some(true)
        } else if rest.starts_with(b"false") {
            self.i += 5;
            Some(false)
        } else {
            None
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
                let tag = self.plain()?;
                self.eat(b':')?;
                let body = self.plain()?;
                self.eat(b'}')?;
                match tag {
                    b"$blob" => B64.decode(body).ok().map(Value::Blob),
                    b"$int" => parse_i64(body).map(Value::Integer),
                    // Rare: leave infinities and anything else to serde.
                    _ => None,
                }
            }
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// `["a", "b"]`.
    fn strings(&mut self) -> Option<Vec<String>> {
        self.eat(b'[')?;
        let mut out = Vec::new();
        if self.peek()? == b']' {
            self.i += 1;
            return Some(out);
        }
        loop {
            out.push(self.string()?.into_owned());
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    fn rows(&mut self) -> Option<Vec<Vec<Value>>> {
        self.eat(b'[')?;
        let mut rows = Vec::new();
        if self.peek()? == b']' {
            self.i += 1;
            return Some(rows);
        }
        loop {
            self.eat(b'[')?;
            let mut row = Vec::with_capacity(rows.last().map_or(4, Vec::len));
            if self.peek()? == b']' {
                self.i += 1;
            } else {
                loop {
                    row.push(self.value()?);
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            rows.push(row);
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(rows);
                }
                _ => return None,
            }
        }
    }
}

/// A decimal `i64` (optional `-`, digits only), exactly as `str::parse`
/// accepts it for what the worker writes, without the UTF-8 check.
fn parse_i64(text: &[u8]) -> Option<i64> {
    let (neg, digits) = match text.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mag = digits.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })?;
    if neg {
        0i64.checked_sub_unsigned(mag)
    } else {
        i64::try_from(mag).ok()
    }
}

/// Decodes a whole answer line of the shapes the worker streams (a batch, a
/// final answer, the greeting): keys `id`, `ok`, `more`, `ready`,
/// `columns`, `truncated`, `elapsed_us` and `rows`, one pass, no
/// intermediate tree. `None` for anything else (an `error` object, a
/// tagged infinity...), which the caller hands to serde.
pub(crate) fn parse_answer(s: &[u8]) -> Option<Answer> {
    let mut c = Cursor { s, i: 0 };
    let mut a = Answer {
        id: 0,
        ok: false,
        more: false,
        columns: Vec::new(),
        rows: Vec::new(),
        truncated: false,
        error: None,
    };
    let (mut id, mut ok) = (false, false);
    c.eat(b'{')?;
    if c.peek()? != b'}' {
        loop {
            let key = c.plain()?;
            c.eat(b':')?;
            match key {
                b"id" => {
                    a.id = c.u64()?;
                    id = true;
                }
                b"ok" => {
                    a.ok = c.bool()?;
                    ok = true;
                }
                b"more" => a.more = c.bool()?,
                b"ready" => {
                    c.bool()?;
                }
                b"truncated" => a.truncated = c.bool()?,
                b"elapsed_us" => {
                    c.u64()?;
                }
                b"columns" => a.columns = c.strings()?,
                b"rows" => a.rows = c.rows()?,
                _ => return None,
            }
            match c.peek()? {
                b',' => c.i += 1,
                b'}' => break,
                _ => return None,
            }
        }
    }
    c.i += 1;
    (id && ok && c.peek().is_none()).then_some(a)
}

/// Decodes one line from the worker: this fast path for the shapes the worker writes
/// (batches and final answers), serde for everything else and as the reference when
/// the fast path declines.
pub(crate) fn decode(line: &[u8]) -> Result<Answer, String> {
    match parse_answer(line) {
        Some(answer) => Ok(answer),
        None => Answer::parse_with_serde(line),
    }
}

/// Decodes `[[v, ...], ...]`; `None` when the input is anything else.
#[cfg(test)]
pub(crate) fn parse_rows(s: &[u8]) -> Option<Vec<Vec<Value>>> {
    let mut c = Cursor { s, i: 0 };
    let rows = c.rows()?;
    c.peek().is_none().then_some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_the_same_on_the_fast_path_and_through_serde() {
        let lines: [&[u8]; 5] = [
            br#"{"id":3,"ok":true,"columns":["a","b"],"truncated":false,"elapsed_us":5,"rows":[[{"$int":"9223372036854775807"},{"$blob":"AP8="}]]}"#,
            br#"{"id":4,"ok":true,"more":true,"rows":[[1,"x\"y",null,2.5],[]]}"#,
            br#"{"id":0,"ok":true,"ready":true}"#,
            br#"{"id":5,"ok":false,"error":{"kind":"timeout","message":"m"}}"#,
            br#"{"id":6,"ok":true,"rows":[[{"$real":"inf"}]]}"#,
        ];
        for line in lines {
            let serde: crate::protocol::Response = serde_json::from_slice(line).unwrap();
            let rows: Vec<Vec<Value>> = serde
                .rows
                .map(|r| serde_json::from_str(r.get()).unwrap())
                .unwrap_or_default();
            let a = decode(line).unwrap();
            assert_eq!(
                (
                    a.id,
                    a.ok,
                    a.more,
                    &a.columns,
                    &a.rows,
                    a.truncated,
                    &a.error
                ),
                (
                    serde.id,
                    serde.ok,
                    serde.more,
                    &serde.columns,
                    &rows,
                    serde.truncated,
                    &serde.error
                ),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let a = decode(lines[0]).unwrap();
        assert_eq!(
            a.rows,
            vec![vec![Value::Integer(i64::MAX), Value::Blob(vec![0, 255])]]
        );
        assert!(decode(b"{\"id\":").is_err());
    }

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
    fn the_word_scan_finds_the_first_quote_or_backslash_at_every_offset() {
        for len in 0..40 {
            for at in 0..len {
                for b in [b'"', b'\\'] {
                    let mut s = vec![b'a'; len];
                    s[at] = b;
                    if at + 3 < len {
                        s[at + 3] = b'"';
                    }
                    assert_eq!(find_quote_or_backslash(&s), Some(at), "{len} {at}");
                }
            }
            assert_eq!(find_quote_or_backslash(&vec![0xC3; len]), None);
        }
    }

    #[test]
    fn integers_parse_like_std() {
        for t in [
            "0",
            "-0",
            "42",
            "-9223372036854775808",
            "9223372036854775807",
        ] {
            assert_eq!(parse_i64(t.as_bytes()), t.parse().ok(), "{t}");
        }
        for t in [
            "",
            "-",
            "9223372036854775808",
            "-9223372036854775809",
            "1a",
            "+1",
        ] {
            assert_eq!(parse_i64(t.as_bytes()), None, "{t}");
        }
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
