//! A tool's arguments, parsed by the type that also gives the tool's input schema
//! (`Deserialize` and `JsonSchema` on one type, so the schema and the parser cannot
//! drift). Lenient where clients differ, as the schema says: numbers may come as JSON
//! numbers or strings of digits, booleans as `true` or `"true"` (`tools::wire`); `null`
//! is an absent argument; arguments no tool takes are ignored. A bad argument is
//! `invalid_input` naming it, what it must be and what was sent.

use loci_api::tool_schema::{Side, tool_schema};
use loci_api::{ApiError, ErrorKind};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use serde_path_to_error::Segment;

/// The arguments of one call, as sent.
#[derive(Debug, Default)]
pub struct Args(Map<String, Value>);

/// An argument that does not fit its type: its name (a path inside it, `links[1]`, for
/// an item) and the error that says so.
#[derive(Debug)]
pub struct BadArg {
    /// The argument, as its path (`limit`, `entities[0]`).
    pub name: String,
    /// The `invalid_input` error naming it.
    pub error: ApiError,
}

impl From<BadArg> for ApiError {
    fn from(b: BadArg) -> ApiError {
        b.error
    }
}

impl Args {
    /// The arguments as sent (none is an empty object).
    pub fn new(map: Option<Map<String, Value>>) -> Args {
        Args(map.unwrap_or_default())
    }

    /// One argument as sent; `null` is absent.
    pub fn value(&self, name: &str) -> Option<&Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    /// The arguments as `T`: each required one present (not `null`), each present one
    /// of its type. Arguments `T` does not name are left for others (the budget, the
    /// page, the served `workspace`).
    pub fn parse<T: DeserializeOwned + JsonSchema>(&self) -> Result<T, BadArg> {
        let schema = tool_schema::<T>(Side::Input);
        for name in schema["required"].as_array().into_iter().flatten() {
            let Some(name) = name.as_str() else { continue };
            if self.value(name).is_none() {
                return Err(BadArg {
                    name: name.to_string(),
                    error: missing(name),
                });
            }
        }
        let args = Value::Object(self.0.clone());
        serde_path_to_error::deserialize(&args).map_err(|e| self.bad(e))
    }

    /// `invalid_input`: the argument `name` must be `want`, not what was sent.
    pub fn wrong(&self, name: &str, want: &str) -> ApiError {
        let shown = shown(self.value(name));
        ApiError::new(
            ErrorKind::InvalidInput,
            format!("the argument `{name}` must be {want}, not {shown}"),
        )
    }

    /// The error of an argument that did not deserialize.
    fn bad(&self, e: serde_path_to_error::Error<serde_json::Error>) -> BadArg {
        let name = e.path().to_string();
        let shown = shown(self.at(e.path()));
        let why = e.inner().to_string();
        let message = if let Some(want) = expected(&why) {
            format!("the argument `{name}` must be {want}, not {shown}")
        } else if why.starts_with("unknown variant") {
            format!("`{name}` {shown} is not a known value: {why}")
        } else {
            format!("the argument `{name}` is not valid: {why}")
        };
        BadArg {
            name,
            error: ApiError::new(ErrorKind::InvalidInput, message),
        }
    }

    /// The value at `path` inside the arguments, as sent.
    fn at(&self, path: &serde_path_to_error::Path) -> Option<&Value> {
        let mut segments = path.iter();
        let mut at = match segments.next()? {
            Segment::Map { key } => self.0.get(key)?,
            _ => return None,
        };
        for s in segments {
            at = match s {
                Segment::Seq { index } => at.get(index)?,
                Segment::Map { key } => at.get(key)?,
                _ => return Some(at),
            };
        }
        Some(at)
    }
}

/// The arguments of `v` (an object), for tests.
#[cfg(test)]
pub(crate) fn of(v: Value) -> Args {
    Args::new(v.as_object().cloned())
}

/// An argument only some calls of a tool require (`memory`'s `name` for most actions):
/// `value`, or `invalid_input` naming it as [`Args::parse`] does.
pub fn required<T>(name: &str, value: Option<T>) -> Result<T, ApiError> {
    value.ok_or_else(|| missing(name))
}

/// The error of the required argument `name`, absent or `null`.
fn missing(name: &str) -> ApiError {
    ApiError::new(
        ErrorKind::InvalidInput,
        format!("the argument `{name}` is required"),
    )
    .hint(format!("pass `{name}` as a string"))
}

/// What serde's "invalid type" or "invalid value" error says was expected: `a string`,
/// `a non-negative integer`. An enum sent as another type is expected as a string.
fn expected(why: &str) -> Option<&str> {
    if !(why.starts_with("invalid type: ") || why.starts_with("invalid value: ")) {
        return None;
    }
    let (_, want) = why.rsplit_once(", expected ")?;
    Some(match want {
        // serde_json's expectation for any enum; loci's are names.
        "string or map" => "a string",
        want => want,
    })
}

/// A value as an error shows it: its JSON, cut at 80 characters.
fn shown(v: Option<&Value>) -> String {
    let Some(v) = v else {
        return "that".to_string();
    };
    let shown = v.to_string();
    if shown.chars().count() > 80 {
        return format!("{}...", shown.chars().take(80).collect::<String>());
    }
    shown
}

#[cfg(test)]
mod tests {
    use loci_api::ErrorKind;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::Args;
    use crate::tools::wire::{Flag, Number, Strings};

    fn args(v: serde_json::Value) -> Args {
        Args::new(v.as_object().cloned())
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "read by Debug in the assertions")]
    struct Sample {
        pattern: String,
        limit: Option<Number>,
        regex: Option<Flag>,
        links: Option<Strings>,
    }

    fn parse(v: serde_json::Value) -> Result<Sample, super::BadArg> {
        args(v).parse::<Sample>()
    }

    #[test]
    fn numbers_and_booleans_given_as_strings_are_accepted() {
        let s = parse(json!({"pattern": "p", "limit": "25", "regex": "true"})).unwrap();
        assert_eq!(s.limit.map(|n| n.0), Some(25));
        assert_eq!(s.regex.map(|f| f.0), Some(true));
        let s = parse(json!({"pattern": "p", "limit": 2000.0, "regex": false})).unwrap();
        assert_eq!(s.limit.map(|n| n.0), Some(2000));
        assert_eq!(s.regex.map(|f| f.0), Some(false));
        let s = parse(json!({"pattern": "p", "limit": " 7 "})).unwrap();
        assert_eq!(s.limit.map(|n| n.0), Some(7));
    }

    #[test]
    fn null_is_absent_and_unknown_arguments_are_ignored() {
        let s = parse(json!({"pattern": "p", "limit": null, "regex": null, "other": 1})).unwrap();
        assert!(s.limit.is_none() && s.regex.is_none() && s.links.is_none());
        let e = parse(json!({"pattern": null})).unwrap_err();
        assert_eq!(e.name, "pattern");
        assert_eq!(e.error.message, "the argument `pattern` is required");
    }

    #[test]
    fn a_missing_required_argument_is_named_with_a_hint() {
        let e = parse(json!({})).unwrap_err();
        assert_eq!(e.error.kind, ErrorKind::InvalidInput);
        assert_eq!(e.error.message, "the argument `pattern` is required");
        assert_eq!(e.error.hint.as_deref(), Some("pass `pattern` as a string"));
    }

    #[test]
    fn a_bad_value_names_the_argument_what_it_must_be_and_what_was_sent() {
        let cases = [
            (
                json!({"pattern": "p", "limit": "ten"}),
                "the argument `limit` must be a non-negative integer, not \"ten\"",
            ),
            (
                json!({"pattern": "p", "limit": -1}),
                "the argument `limit` must be a non-negative integer, not -1",
            ),
            (
                json!({"pattern": "p", "limit": 2.5}),
                "the argument `limit` must be a non-negative integer, not 2.5",
            ),
            (
                json!({"pattern": 3}),
                "the argument `pattern` must be a string, not 3",
            ),
            (
                json!({"pattern": "p", "regex": "yes"}),
                "the argument `regex` must be a boolean, not \"yes\"",
            ),
            (
                json!({"pattern": "p", "links": ["a", 1]}),
                "the argument `links[1]` must be a string, not 1",
            ),
            (
                json!({"pattern": "p", "links": 5}),
                "the argument `links` must be a string or an array of strings, not 5",
            ),
        ];
        for (sent, want) in cases {
            let e = parse(sent.clone()).unwrap_err();
            assert_eq!(e.error.kind, ErrorKind::InvalidInput, "{sent}");
            assert_eq!(e.error.message, want, "{sent}");
        }
    }

    #[test]
    fn a_long_value_is_cut_in_the_message() {
        let e = parse(json!({"pattern": "x".repeat(500)})).err();
        assert!(e.is_none());
        let e = parse(json!({"pattern": ["x".repeat(500)]})).unwrap_err();
        assert!(e.error.message.ends_with("...") && e.error.message.len() < 200);
    }
}
