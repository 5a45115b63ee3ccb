//! What a configuration key is (its type, range, default) and what a value is: the
//! vocabulary both the key table (`keys.rs`) and the layered reader use.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// The type and valid range of a key.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// `true`/`false` (env: `1/0`, `true/false`, `yes/no`, `on/off`).
    Bool,
    /// An integer in `min..=max`.
    Int {
        /// Smallest valid value.
        min: u64,
        /// Largest valid value.
        max: u64,
    },
    /// A non-empty path.
    Path,
    /// A non-empty text.
    Text,
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`). Its password is
    /// never shown: not by `loci config show`, not in a warning, not in an error.
    DatabaseUrl,
}

/// One configuration key.
#[derive(Debug, Clone)]
pub struct KeyDef {
    /// Dotted name, as in the TOML files: `lifecycle.autoCreate`.
    pub key: &'static str,
    /// The environment variable that overrides it.
    pub env: &'static str,
    /// Type and range.
    pub kind: Kind,
    /// Built-in default (`None`: unset unless a layer sets it).
    pub default: Option<Value>,
    /// One line for `loci config show`.
    pub doc: &'static str,
}

/// A configured value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(u64),
    /// A path.
    Path(PathBuf),
    /// A text.
    Text(String),
    /// A URL holding a credential, shown with its password masked.
    Secret(SecretUrl),
}

/// A connection URL whose password only [`SecretUrl::expose`] gives: its `Display`,
/// `Debug` and serialised forms mask it, so no listing or log can leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(String);

impl SecretUrl {
    /// Wraps a URL.
    pub fn new(url: impl Into<String>) -> SecretUrl {
        SecretUrl(url.into())
    }

    /// The URL with its password, for the one place that connects.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL with the password of its user part and any `password=` parameter
    /// replaced by `***`.
    pub fn masked(&self) -> String {
        mask_password(&self.0)
    }
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked())
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretUrl({:?})", self.masked())
    }
}

impl Serialize for SecretUrl {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.masked())
    }
}

/// `scheme://user:secret@host/db?password=secret` with both secrets as `***`. The
/// user part ends at the last `@` before the path, so a password holding `@` or `/`
/// (percent-encoding is optional in practice) is masked whole.
pub fn mask_password(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => (&url[..i + 3], &url[i + 3..]),
        None => ("", url),
    };
    let (authority_end, tail) = match rest.find('?') {
        Some(q) => (q, &rest[q..]),
        None => (rest.len(), ""),
    };
    let before_query = &rest[..authority_end];
    let masked_user = match before_query.rfind('@') {
        Some(at) => {
            let user = &before_query[..at];
            let user = match user.find(':') {
                Some(colon) => format!("{}:***", &user[..colon]),
                None => user.to_string(),
            };
            format!("{user}{}", &before_query[at..])
        }
        None => before_query.to_string(),
    };
    let params: Vec<String> = tail
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
            _ => p.to_string(),
        })
        .collect();
    let query = if params.is_empty() {
        String::new()
    } else {
        format!("?{}", params.join("&"))
    };
    format!("{scheme}{masked_user}{query}")
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Path(p) => write!(f, "{}", p.display()),
            Value::Text(t) => f.write_str(t),
            Value::Secret(u) => write!(f, "{u}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_form_of_a_secret_url_shows_its_password() {
        let cases = [
            (
                "postgres://loci:s3cr3t@db.example:5432/team",
                "postgres://loci:***@db.example:5432/team",
            ),
            (
                "postgresql://loci:p@ss/w:rd@db/team?sslmode=require",
                "postgresql://loci:***@db/team?sslmode=require",
            ),
            (
                "postgres://db/team?user=loci&password=s3cr3t&sslmode=disable",
                "postgres://db/team?user=loci&password=***&sslmode=disable",
            ),
            ("postgres://loci@db/team", "postgres://loci@db/team"),
            (
                "postgres:///team?host=/run/pg",
                "postgres:///team?host=/run/pg",
            ),
        ];
        for (url, masked) in cases {
            let secret = SecretUrl::new(url);
            assert_eq!(secret.masked(), masked);
            assert_eq!(secret.to_string(), masked);
            assert_eq!(Value::Secret(secret.clone()).to_string(), masked);
            for shown in [
                format!("{secret:?}"),
                serde_json::to_string(&Value::Secret(secret.clone())).unwrap(),
            ] {
                assert!(
                    !shown.contains("s3cr3t") && !shown.contains("p@ss"),
                    "{shown}"
                );
            }
            assert_eq!(secret.expose(), url);
        }
    }
}
