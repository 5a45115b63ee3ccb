//! A tool's arguments, read leniently where clients differ: numbers may come as JSON
//! numbers or as strings of digits (some clients send every argument as a string),
//! booleans as `true`/`"true"`. Anything else is `invalid_input` naming the argument.

use loci_api::{ApiError, ErrorKind};
use serde_json::{Map, Value};

/// The arguments of one call.
#[derive(Debug, Default)]
pub struct Args(pub Map<String, Value>);

impl Args {
    /// The arguments as sent (none is an empty object).
    pub fn new(map: Option<Map<String, Value>>) -> Args {
        Args(map.unwrap_or_default())
    }

    fn present(&self, name: &str) -> Option<&Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    /// A required string.
    pub fn string(&self, name: &str) -> Result<String, ApiError> {
        self.opt_string(name)?.ok_or_else(|| {
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("the argument `{name}` is required"),
            )
            .hint(format!("pass `{name}` as a string"))
        })
    }

    /// An optional string.
    pub fn opt_string(&self, name: &str) -> Result<Option<String>, ApiError> {
        match self.present(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(wrong(name, "a string", v)),
        }
    }

    /// An optional non-negative integer: a JSON number or a string of digits.
    pub fn opt_u64(&self, name: &str) -> Result<Option<u64>, ApiError> {
        match self.present(name) {
            None => Ok(None),
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                })
                .map(Some)
                .ok_or_else(|| wrong(name, "a non-negative integer", &Value::Number(n.clone()))),
            Some(Value::String(s)) => s
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| wrong(name, "a non-negative integer", &Value::String(s.clone()))),
            Some(v) => Err(wrong(name, "a non-negative integer", v)),
        }
    }

    /// An optional boolean: `true`/`false` or the strings `"true"`/`"false"`.
    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.present(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s == "true" => Ok(Some(true)),
            Some(Value::String(s)) if s == "false" => Ok(Some(false)),
            Some(v) => Err(wrong(name, "a boolean", v)),
        }
    }

    /// An optional value as sent.
    pub fn opt_value(&self, name: &str) -> Option<&Value> {
        self.present(name)
    }

    /// An optional integer argument that must fit `usize` within `max`.
    pub fn opt_usize_max(&self, name: &str, max: u64) -> Result<Option<usize>, ApiError> {
        match self.opt_u64(name)? {
            None => Ok(None),
            Some(n) if n <= max => Ok(Some(n as usize)),
            Some(n) => Err(ApiError::new(
                ErrorKind::LimitExceeded,
                format!("`{name}` {n} is above its limit {max}"),
            )
            .hint(format!("pass `{name}` at most {max}"))),
        }
    }
}

fn wrong(name: &str, want: &str, got: &Value) -> ApiError {
    let mut shown = got.to_string();
    if shown.len() > 80 {
        shown = format!("{}...", shown.chars().take(80).collect::<String>());
    }
    ApiError::new(
        ErrorKind::InvalidInput,
        format!("the argument `{name}` must be {want}, not {shown}"),
    )
}

#[cfg(test)]
mod tests {
    use super::Args;
    use serde_json::json;

    fn args(v: serde_json::Value) -> Args {
        Args::new(v.as_object().cloned())
    }

    #[test]
    fn numbers_given_as_strings_are_accepted() {
        let a = args(json!({"limit": "25", "depth": 3, "max_chars": 2000.0}));
        assert_eq!(a.opt_u64("limit").unwrap(), Some(25));
        assert_eq!(a.opt_u64("depth").unwrap(), Some(3));
        assert_eq!(a.opt_u64("max_chars").unwrap(), Some(2000));
        assert_eq!(a.opt_u64("absent").unwrap(), None);
    }

    #[test]
    fn a_bad_number_names_the_argument_and_the_value() {
        let e = args(json!({"limit": "ten"})).opt_u64("limit").unwrap_err();
        assert_eq!(e.kind, loci_api::ErrorKind::InvalidInput);
        assert!(
            e.message.contains("`limit`") && e.message.contains("ten"),
            "{}",
            e.message
        );
        let e = args(json!({"limit": -1})).opt_u64("limit").unwrap_err();
        assert!(e.message.contains("-1"), "{}", e.message);
    }
}
