//! The connection string: parsed into the client's configuration, and shown only with
//! its password hidden ([`redacted`]), so no error, log line or answer ever carries it.

use std::str::FromStr;
use std::time::Duration;

use crate::MemoryError;

/// What stands in for a hidden password.
const HIDDEN: &str = "***";

/// `url` with its password hidden, for messages: a libpq URL's `user:PASSWORD@` and
/// `?password=...`, or a key-value string's `password=...` (quoted or not). A string
/// that cannot be read as either and mentions a password is replaced whole.
pub fn redacted(url: &str) -> String {
    let lower = url.trim_start().to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        redact_url(url)
    } else {
        redact_key_values(url).unwrap_or_else(|| {
            if lower.contains("password") {
                "<a connection string that could not be read>".into()
            } else {
                url.to_string()
            }
        })
    }
}

/// `scheme://[user[:password]@]host[:port][/db][?key=value&...]`.
fn redact_url(url: &str) -> String {
    let scheme_end = url.find("://").map_or(0, |i| i + 3);
    let (scheme, rest) = url.split_at(scheme_end);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let (userinfo, host) = authority.split_at(at);
            match userinfo.find(':') {
                Some(colon) => format!("{}:{HIDDEN}{host}", &userinfo[..colon]),
                None => authority.to_string(),
            }
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}={HIDDEN}"),
                    _ => pair.to_string(),
                })
                .collect();
            format!("{path}?{}", pairs.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}{authority}{tail}")
}

/// `key=value key='quoted \' value' ...`; `None` when it does not read as that.
fn redact_key_values(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.char_indices().peekable();
    loop {
        while let Some((_, c)) = chars.peek() {
            if c.is_whitespace() {
                out.push(*c);
                chars.next();
            } else {
                break;
            }
        }
        let Some(&(start, _)) = chars.peek() else {
            return Some(out);
        };
        let mut key_end = start;
        while let Some(&(i, c)) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key_end = i + c.len_utf8();
            chars.next();
        }
        let key = &s[start..key_end];
        out.push_str(key);
        while let Some((_, c)) = chars.peek() {
            if c.is_whitespace() {
                out.push(*c);
                chars.next();
            } else {
                break;
            }
        }
        if chars.next().map(|(_, c)| c) != Some('=') || key.is_empty() {
            return None;
        }
        out.push('=');
        while let Some((_, c)) = chars.peek() {
            if c.is_whitespace() {
                out.push(*c);
                chars.next();
            } else {
                break;
            }
        }
        let hide = key.eq_ignore_ascii_case("password");
        let mut value = String::new();
        if chars.peek().map(|(_, c)| *c) == Some('\'') {
            chars.next();
            value.push('\'');
            let mut closed = false;
            while let Some((_, c)) = chars.next() {
                value.push(c);
                match c {
                    '\\' => value.push(chars.next()?.1),
                    '\'' => {
                        closed = true;
                        break;
                    }
                    _ => {}
                }
            }
            if !closed {
                return None;
            }
        } else {
            while let Some(&(_, c)) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                value.push(c);
                chars.next();
                if c == '\\' {
                    value.push(chars.next()?.1);
                }
            }
        }
        out.push_str(if hide { HIDDEN } else { &value });
    }
}

/// The client configuration `url` names, with loci's defaults where it names none: a
/// connect timeout, the application name, and (over TCP) a bound on how long unanswered
/// data may wait, so a vanished server fails a call instead of hanging it.
pub(super) fn config(
    url: &str,
    statement_timeout: Duration,
) -> Result<postgres::Config, MemoryError> {
    let mut config = postgres::Config::from_str(url).map_err(|e| MemoryError::PgUrl {
        target: redacted(url),
        reason: e.to_string(),
    })?;
    if config.get_hosts().is_empty() {
        return Err(MemoryError::PgUrl {
            target: redacted(url),
            reason: "it names no host (`host=/socket/dir` or `postgres://user@host/db`)".into(),
        });
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    if config.get_application_name().is_none() {
        config.application_name("loci");
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(statement_timeout + Duration::from_secs(10));
    }
    config.notice_callback(|notice| {
        tracing::debug!(target: "memory", "postgres notice: {}", notice.message());
    });
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_hidden_in_every_form_of_connection_string() {
        let cases = [
            (
                "postgres://loci:s3cret@db.example:5432/team",
                "postgres://loci:***@db.example:5432/team",
            ),
            (
                "postgresql://loci:s3cret@db/team?sslmode=require&password=s3cret",
                "postgresql://loci:***@db/team?sslmode=require&password=***",
            ),
            ("postgres://loci@db/team", "postgres://loci@db/team"),
            (
                "postgres://db/team?Password=s3cret",
                "postgres://db/team?Password=***",
            ),
            // an `@` in the password (it should be percent-encoded, but is not always)
            (
                "postgres://loci:s3@cret@db/team",
                "postgres://loci:***@db/team",
            ),
            (
                "host=/run/pg port=5432 user=loci password=s3cret dbname=team",
                "host=/run/pg port=5432 user=loci password=*** dbname=team",
            ),
            (
                "host=db password = 's3 \\' cret' dbname=team",
                "host=db password = *** dbname=team",
            ),
            ("host=/run/pg dbname=team", "host=/run/pg dbname=team"),
        ];
        for (url, want) in cases {
            let got = redacted(url);
            assert_eq!(got, want, "{url}");
            assert!(!got.contains("s3"), "{got}");
        }
    }

    #[test]
    fn an_unreadable_string_that_names_a_password_is_hidden_whole() {
        for url in [
            "host=db password='s3cret",
            "password",
            "host=db =x password=s3cret",
        ] {
            let got = redacted(url);
            assert!(!got.contains("s3cret"), "{url}: {got}");
        }
        assert_eq!(redacted("nonsense"), "nonsense");
    }

    #[test]
    fn a_bad_connection_string_is_refused_without_its_password() {
        let e = config(
            "host=db password=s3cret bogus_option=1",
            Duration::from_secs(1),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, MemoryError::PgUrl { .. }), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("password=***"), "{text}");
    }
}
