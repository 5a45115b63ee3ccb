//! The argument and answer shapes that only MCP has: numbers and booleans read
//! leniently (some clients send every argument as a string), one string or several,
//! and a tool's schema says so. Each is declared once here, with the schema and the
//! parse side by side, and named by the tools' input and output types.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserialize, Deserializer, SeqAccess, Unexpected, Visitor};
use serde_json::Value;

/// A type named `$name` (its fields `$fields`) whose schema is `$schema`.
macro_rules! schema_type {
    ($(#[$doc:meta])* $name:ident $fields:tt, $($schema:tt)+) => {
        $(#[$doc])*
        pub(crate) struct $name $fields;

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($($schema)+)
            }
        }
    };
}

schema_type!(
    /// A non-negative integer, sent as a JSON number or a string of digits.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    Number(pub u64),
    {"type": ["integer", "string"]}
);

schema_type!(
    /// A boolean, sent as `true`/`false` or `"true"`/`"false"`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    Flag(pub bool),
    {"type": ["boolean", "string"]}
);

schema_type!(
    /// One string or an array of them, as sent.
    #[derive(Debug, Clone, PartialEq, Eq)]
    Strings(pub OneOrMany),
    {"type": ["array", "string"], "items": {"type": "string"}}
);

schema_type!(
    /// SQL parameters: an array binds `?`, an object binds `:name`. Taken as sent: the
    /// SQL layer checks them and names what is wrong (`invalid_params`).
    #[derive(Debug, Clone, PartialEq)]
    Params(pub Value),
    {"type": ["array", "object"], "items": true}
);

schema_type!(
    /// An object whose fields the tool's description and docs/mcp.md name (a memory,
    /// a hit): typed field by field it would cost every client's context more than it
    /// says. Schema only: such a field is a typed value described as this.
    Object(),
    {"type": "object"}
);

/// [`Strings`]' value: one string, or an array of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OneOrMany {
    /// A string.
    One(String),
    /// An array of strings.
    Many(Vec<String>),
}

impl Strings {
    /// Every string sent.
    pub(crate) fn into_vec(self) -> Vec<String> {
        match self.0 {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Number, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative integer")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Number, E> {
                Ok(Number(n))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Number, E> {
                u64::try_from(n)
                    .map(Number)
                    .map_err(|_| E::invalid_value(Unexpected::Signed(n), &self))
            }
            /// A whole float (`2000.0`) is its integer; a huge one saturates.
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Number, E> {
                if n.fract() == 0.0 && n >= 0.0 {
                    Ok(Number(n as u64))
                } else {
                    Err(E::invalid_value(Unexpected::Float(n), &self))
                }
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Number, E> {
                s.trim()
                    .parse()
                    .map(Number)
                    .map_err(|_| E::invalid_value(Unexpected::Str(s), &self))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flag, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a boolean")
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Flag, E> {
                Ok(Flag(b))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Flag, E> {
                match s {
                    "true" => Ok(Flag(true)),
                    "false" => Ok(Flag(false)),
                    _ => Err(E::invalid_value(Unexpected::Str(s), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strings, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Strings;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of strings")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Strings, E> {
                Ok(Strings(OneOrMany::One(s.to_string())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strings, A::Error> {
                let mut all = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    all.push(s);
                }
                Ok(Strings(OneOrMany::Many(all)))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Params, D::Error> {
        Value::deserialize(d).map(Params)
    }
}
