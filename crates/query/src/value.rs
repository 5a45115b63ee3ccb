//! SQLite values and their JSON form, shared by the worker protocol, the
//! CLI's `--json` output and bound parameters.
//!
//! JSON cannot carry every SQLite value exactly, so three kinds cross as
//! tagged one-key objects (a plain JSON value is never an object, so a tag can
//! never be confused with data):
//!
//! | SQLite value | JSON |
//! | --- | --- |
//! | NULL | `null` |
//! | INTEGER within ±(2^53 − 1) | a number |
//! | INTEGER outside that range | `{"$int": "9223372036854775807"}` |
//! | REAL (finite) | a number with a fraction or exponent |
//! | REAL ±infinity | `{"$real": "inf"}` / `{"$real": "-inf"}` |
//! | TEXT | a string |
//! | BLOB | `{"$blob": "<standard base64>"}` |

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use loci_store::rusqlite::types::{ToSqlOutput, ValueRef};
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The largest integer magnitude a JSON number carries exactly in every
/// reader (JavaScript's `Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

const TAG_INT: &str = "$int";
const TAG_BLOB: &str = "$blob";
const TAG_REAL: &str = "$real";

/// One SQLite value, owned.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// NULL.
    Null,
    /// A 64-bit integer.
    Integer(i64),
    /// A 64-bit float.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl Value {
    /// Copies a value SQLite handed out. TEXT that is not valid UTF-8 (SQLite
    /// does not check) is decoded lossily.
    pub fn from_ref(v: ValueRef<'_>) -> Value {
        match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(t) => Value::Text(match std::str::from_utf8(t) {
                Ok(s) => s.to_owned(),
                Err(_) => String::from_utf8_lossy(t).into_owned(),
            }),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        }
    }

    /// How a human reads it in the CLI's table output.
    pub fn display(&self) -> String {
        match self {
            Value::Null => "NULL".into(),
            Value::Integer(i) => i.to_string(),
            Value::Real(f) => f.to_string(),
            Value::Text(s) => s.clone(),
            Value::Blob(b) => format!("x'{}'", hex(b)),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

impl loci_store::rusqlite::ToSql for Value {
    fn to_sql(&self) -> loci_store::rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Integer(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// Appends `i` in decimal, as `Display` writes it, without the formatting
/// machinery (the worker writes one or more per row).
pub(crate) fn push_i64(buf: &mut Vec<u8>, i: i64) {
    let mut digits = [0u8; 20];
    let mut n = i.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        buf.push(b'-');
    }
    buf.extend_from_slice(&digits[at..]);
}

/// Appends the JSON form of `v` (exactly what [`Value`]'s `Serialize`
/// writes) to `buf`, without building a [`Value`] first: the worker's hot
/// path for large results.
pub(crate) fn write_json(buf: &mut Vec<u8>, v: ValueRef<'_>) {
    match v {
        ValueRef::Null => buf.extend_from_slice(b"null"),
        ValueRef::Integer(i) if i.unsigned_abs() <= MAX_SAFE_INTEGER as u64 => push_i64(buf, i),
        ValueRef::Integer(i) => {
            buf.extend_from_slice(b"{\"");
            buf.extend_from_slice(TAG_INT.as_bytes());
            buf.extend_from_slice(b"\":\"");
            push_i64(buf, i);
            buf.extend_from_slice(b"\"}");
        }
        ValueRef::Real(f) => {
            let _ = serde_json::to_writer(&mut *buf, &Value::Real(f));
        }
        ValueRef::Text(t) => {
            let _ = match std::str::from_utf8(t) {
                Ok(s) => serde_json::to_writer(&mut *buf, s),
                Err(_) => serde_json::to_writer(&mut *buf, &String::from_utf8_lossy(t)),
            };
        }
        ValueRef::Blob(b) => {
            buf.extend_from_slice(b"{\"$blob\":\"");
            let start = buf.len();
            buf.resize(start + b.len().div_ceil(3) * 4, 0);
            let n = B64
                .encode_slice(b, &mut buf[start..])
                .expect("the buffer is sized for the encoding");
            buf.truncate(start + n);
            buf.extend_from_slice(b"\"}");
        }
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let tagged = |s: S, tag: &str, v: &str| {
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry(tag, v)?;
            m.end()
        };
        match self {
            Value::Null => s.serialize_unit(),
            Value::Integer(i) if i.unsigned_abs() <= MAX_SAFE_INTEGER as u64 => s.serialize_i64(*i),
            Value::Integer(i) => tagged(s, TAG_INT, &i.to_string()),
            Value::Real(f) if f.is_finite() => s.serialize_f64(*f),
            Value::Real(f) if f.is_nan() => tagged(s, TAG_REAL, "nan"),
            Value::Real(f) => tagged(s, TAG_REAL, if *f > 0.0 { "inf" } else { "-inf" }),
            Value::Text(t) => s.serialize_str(t),
            Value::Blob(b) => tagged(s, TAG_BLOB, &B64.encode(b)),
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(
            "null, a number, a string, a boolean, or {\"$int\"|\"$blob\"|\"$real\": string}",
        )
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Integer(b as i64))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Integer(i))
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        i64::try_from(u)
            .map(Value::Integer)
            .map_err(|_| E::custom(format!("integer {u} does not fit in 64 bits")))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Real(f))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Text(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::Text(s))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Some(tag) = map.next_key::<std::borrow::Cow<'de, str>>()? else {
            return Err(de::Error::custom("an empty object is not a value"));
        };
        let body: std::borrow::Cow<'de, str> = map.next_value()?;
        if map.next_key::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("a tagged value has exactly one key"));
        }
        match &*tag {
            TAG_INT => body
                .parse::<i64>()
                .map(Value::Integer)
                .map_err(|e| de::Error::custom(format!("bad $int {body:?}: {e}"))),
            TAG_BLOB => B64
                .decode(body.as_bytes())
                .map(Value::Blob)
                .map_err(|e| de::Error::custom(format!("bad $blob base64: {e}"))),
            TAG_REAL => match &*body {
                "inf" => Ok(Value::Real(f64::INFINITY)),
                "-inf" => Ok(Value::Real(f64::NEG_INFINITY)),
                "nan" => Ok(Value::Real(f64::NAN)),
                other => other
                    .parse::<f64>()
                    .map(Value::Real)
                    .map_err(|e| de::Error::custom(format!("bad $real {other:?}: {e}"))),
            },
            other => Err(de::Error::custom(format!(
                "unknown tag {other:?} (expected $int, $blob or $real)"
            ))),
        }
    }
}

/// Parameters bound to a statement's placeholders. In JSON: `null`, an
/// array (by position) or an object (by name), values as in the module docs.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Params {
    /// No parameters.
    #[default]
    None,
    /// `?`, `?NNN`: bound by position (the first is 1).
    Positional(Vec<Value>),
    /// `:name`, `@name`, `$name`: bound by name. A name given without its
    /// prefix is tried as `:name`, `@name` and `$name`.
    Named(Vec<(String, Value)>),
}

impl Params {
    /// Parses `--params`: a JSON array (positional) or object (named).
    pub fn from_json(text: &str) -> Result<Params, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("--params is not JSON: {e}"))?;
        Params::from_json_value(v)
    }

    /// Like [`Params::from_json`] on a parsed value.
    pub fn from_json_value(v: serde_json::Value) -> Result<Params, String> {
        let one = |v: serde_json::Value| Value::deserialize(v).map_err(|e| e.to_string());
        match v {
            serde_json::Value::Null => Ok(Params::None),
            serde_json::Value::Array(items) => Ok(Params::Positional(
                items.into_iter().map(one).collect::<Result<_, _>>()?,
            )),
            serde_json::Value::Object(map) => {
                if map.len() == 1
                    && map
                        .keys()
                        .any(|k| [TAG_INT, TAG_BLOB, TAG_REAL].contains(&k.as_str()))
                {
                    return Err("a tagged value is not a set of parameters: wrap it in [ ]".into());
                }
                Ok(Params::Named(
                    map.into_iter()
                        .map(|(k, v)| Ok((k, one(v)?)))
                        .collect::<Result<_, String>>()?,
                ))
            }
            _ => Err("parameters must be a JSON array (by position) or object (by name)".into()),
        }
    }
}

impl Serialize for Params {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Params::None => s.serialize_unit(),
            Params::Positional(v) => v.serialize(s),
            Params::Named(pairs) => {
                let mut m = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_i64_writes_what_display_writes() {
        for i in [0, 7, -7, 10, -10, 9_007_199_254_740_991, i64::MIN, i64::MAX] {
            let mut buf = Vec::new();
            push_i64(&mut buf, i);
            assert_eq!(buf, i.to_string().into_bytes());
        }
    }

    fn round(v: &Value) -> Value {
        serde_json::from_str(&serde_json::to_string(v).unwrap()).unwrap()
    }

    #[test]
    fn values_round_trip_exactly() {
        for v in [
            Value::Null,
            Value::Integer(0),
            Value::Integer(MAX_SAFE_INTEGER),
            Value::Integer(-MAX_SAFE_INTEGER),
            Value::Integer(MAX_SAFE_INTEGER + 1),
            Value::Integer(i64::MAX),
            Value::Integer(i64::MIN),
            Value::Real(1.0),
            Value::Real(0.1 + 0.2),
            Value::Real(-1.5e300),
            Value::Real(f64::INFINITY),
            Value::Real(f64::NEG_INFINITY),
            Value::Text("{\"$int\": \"1\"}".into()),
            Value::Text("şğüİ 漢字 🦀".into()),
            Value::Blob(vec![0, 255, 10, 13]),
            Value::Blob(vec![]),
        ] {
            assert_eq!(round(&v), v, "{v:?}");
        }
    }

    #[test]
    fn the_direct_encoder_writes_what_serialize_writes() {
        for v in [
            Value::Null,
            Value::Integer(-3),
            Value::Integer(i64::MIN),
            Value::Real(0.1),
            Value::Real(f64::NEG_INFINITY),
            Value::Text("a\"b\\c\n ş🦀".into()),
            Value::Blob(vec![]),
            Value::Blob(vec![1, 2, 3, 4, 5]),
        ] {
            let mut buf = Vec::new();
            let r = match &v {
                Value::Null => ValueRef::Null,
                Value::Integer(i) => ValueRef::Integer(*i),
                Value::Real(f) => ValueRef::Real(*f),
                Value::Text(t) => ValueRef::Text(t.as_bytes()),
                Value::Blob(b) => ValueRef::Blob(b),
            };
            write_json(&mut buf, r);
            assert_eq!(
                String::from_utf8(buf).unwrap(),
                serde_json::to_string(&v).unwrap()
            );
        }
    }

    #[test]
    fn big_integers_and_blobs_are_tagged() {
        assert_eq!(
            serde_json::to_string(&Value::Integer(i64::MAX)).unwrap(),
            r#"{"$int":"9223372036854775807"}"#
        );
        assert_eq!(
            serde_json::to_string(&Value::Integer(MAX_SAFE_INTEGER)).unwrap(),
            "9007199254740991"
        );
        assert_eq!(
            serde_json::to_string(&Value::Blob(b"hi".to_vec())).unwrap(),
            r#"{"$blob":"aGk="}"#
        );
    }

    #[test]
    fn params_parse_positional_and_named() {
        assert_eq!(
            Params::from_json(r#"[1, "a", null, {"$blob":"AA=="}, 2.5]"#).unwrap(),
            Params::Positional(vec![
                Value::Integer(1),
                Value::Text("a".into()),
                Value::Null,
                Value::Blob(vec![0]),
                Value::Real(2.5)
            ])
        );
        assert_eq!(
            Params::from_json(r#"{"name": "x"}"#).unwrap(),
            Params::Named(vec![("name".into(), Value::Text("x".into()))])
        );
        assert!(Params::from_json("3").is_err());
        assert!(Params::from_json(r#"[{"$nope":"1"}]"#).is_err());
    }
}
