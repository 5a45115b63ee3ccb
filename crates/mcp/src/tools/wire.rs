//! The argument and answer shapes that only MCP has, as schema types: [`Args`] reads
//! numbers and booleans leniently (some clients send every argument as a string), and
//! a tool's schema says so. Each is declared once here and named by the tools' input
//! and output types.
//!
//! [`Args`]: crate::args::Args

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

/// A schema-only type named `$name` whose schema is `$schema`.
macro_rules! schema_type {
    ($(#[$doc:meta])* $name:ident, $($schema:tt)+) => {
        $(#[$doc])*
        pub(crate) struct $name;

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
    Number,
    {"type": ["integer", "string"]}
);

schema_type!(
    /// A boolean, sent as `true`/`false` or `"true"`/`"false"`.
    Flag,
    {"type": ["boolean", "string"]}
);

schema_type!(
    /// One string or an array of them.
    Strings,
    {"type": ["array", "string"], "items": {"type": "string"}}
);

schema_type!(
    /// SQL parameters: an array binds `?`, an object binds `:name`.
    Params,
    {"type": ["array", "object"], "items": true}
);

schema_type!(
    /// An object whose fields the tool's description and docs/mcp.md name (a memory,
    /// a hit): typed field by field it would cost every client's context more than it
    /// says.
    Object,
    {"type": "object"}
);
