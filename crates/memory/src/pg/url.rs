//! The connection string: parsed into the client's configuration, and shown only with
//! its password hidden ([`redacted`]), so no error, log line or answer ever carries it.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use super::tls::{self, SslMode, Tls, TlsSettings};
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
    let mut at = 0;
    for pair in pairs(s)? {
        if s[pair.key.clone()].eq_ignore_ascii_case("password") {
            out.push_str(&s[at..pair.value.start]);
            out.push_str(HIDDEN);
            at = pair.value.end;
        }
    }
    out.push_str(&s[at..]);
    Some(out)
}

/// One `key = value` of a key-value connection string: where its key and its value (as
/// written: quotes and backslashes kept) are.
struct Pair {
    key: Range<usize>,
    value: Range<usize>,
}

impl Pair {
    /// The value as meant: quotes removed, backslash escapes resolved.
    fn value(&self, s: &str) -> String {
        let raw = &s[self.value.clone()];
        let raw = raw
            .strip_prefix('\'')
            .and_then(|r| r.strip_suffix('\''))
            .unwrap_or(raw);
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' {
                chars.next().unwrap_or(c)
            } else {
                c
            });
        }
        out
    }
}

/// The pairs of `key=value key='quoted \' value' ...`; `None` when it does not read as
/// that.
fn pairs(s: &str) -> Option<Vec<Pair>> {
    let mut found = Vec::new();
    let mut chars = s.char_indices().peekable();
    let skip_space = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    };
    loop {
        skip_space(&mut chars);
        let Some(&(start, _)) = chars.peek() else {
            return Some(found);
        };
        let mut key_end = start;
        while let Some((i, c)) = chars.next_if(|(_, c)| *c != '=' && !c.is_whitespace()) {
            key_end = i + c.len_utf8();
        }
        skip_space(&mut chars);
        if chars.next().map(|(_, c)| c) != Some('=') || key_end == start {
            return None;
        }
        skip_space(&mut chars);
        let value_start = chars.peek().map_or(s.len(), |(i, _)| *i);
        let mut value_end = value_start;
        if chars.next_if(|(_, c)| *c == '\'').is_some() {
            let mut closed = false;
            while let Some((i, c)) = chars.next() {
                value_end = i + c.len_utf8();
                match c {
                    '\\' => value_end = chars.next().map(|(i, c)| i + c.len_utf8())?,
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
            while let Some((i, c)) = chars.next_if(|(_, c)| !c.is_whitespace()) {
                value_end = i + c.len_utf8();
                if c == '\\' {
                    value_end = chars.next().map(|(i, c)| i + c.len_utf8())?;
                }
            }
        }
        found.push(Pair {
            key: start..key_end,
            value: value_start..value_end,
        });
    }
}

/// The TLS parameters libpq reads and the client does not (`sslmode`, whose
/// `verify-ca` and `verify-full` it refuses, and `sslrootcert`), taken out of `url`:
/// the rest, which the client parses, and what they said.
fn take_tls(url: &str) -> Result<(String, TlsSettings), String> {
    let lower = url.trim_start().to_ascii_lowercase();
    let mut mode = None;
    let mut ca_file = None;
    let mut take = |key: &str, value: String| -> Result<bool, String> {
        if key.eq_ignore_ascii_case("sslmode") {
            mode = Some(SslMode::parse(&value).ok_or_else(|| {
                format!(
                    "sslmode={value:?} is not one of disable, prefer, require, verify-ca, verify-full"
                )
            })?);
            Ok(true)
        } else if key.eq_ignore_ascii_case("sslrootcert") {
            if value.is_empty() {
                return Err("sslrootcert is empty: name the CA's PEM file".into());
            }
            ca_file = Some(PathBuf::from(value));
            Ok(true)
        } else {
            Ok(false)
        }
    };
    let rest = if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        match url.split_once('?') {
            Some((head, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&') {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(k, percent_decoded(v)?)? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    head.to_string()
                } else {
                    format!("{head}?{}", kept.join("&"))
                }
            }
            None => url.to_string(),
        }
    } else {
        // A string the tokenizer cannot read is left to the client's parser to refuse.
        let Some(pairs) = pairs(url) else {
            return Ok((url.to_string(), TlsSettings::default()));
        };
        let mut out = String::with_capacity(url.len());
        let mut at = 0;
        for pair in pairs {
            if take(&url[pair.key.clone()], pair.value(url))? {
                out.push_str(&url[at..pair.key.start]);
                at = pair.value.end;
            }
        }
        out.push_str(&url[at..]);
        out
    };
    Ok((
        rest,
        TlsSettings {
            mode: mode.unwrap_or(SslMode::Prefer),
            ca_file,
        },
    ))
}

/// `%XX` escapes of a URL's query value resolved.
fn percent_decoded(v: &str) -> Result<String, String> {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = v
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("a bad %-escape in {v:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{v:?} is not UTF-8 once %-decoded"))
}

/// The client configuration `url` names, with loci's defaults where it names none: a
/// connect timeout, the application name, and (over TCP) a bound on how long unanswered
/// data may wait, so a vanished server fails a call instead of hanging it. Its TLS
/// (`sslmode`, `sslrootcert`, else `ca_file`) comes as the connector to open it with.
pub(super) fn config(
    url: &str,
    statement_timeout: Duration,
    ca_file: Option<&Path>,
) -> Result<(postgres::Config, Tls), MemoryError> {
    let bad = |reason: String| MemoryError::PgUrl {
        target: redacted(url),
        reason,
    };
    let (rest, mut settings) = take_tls(url).map_err(bad)?;
    if settings.ca_file.is_none() {
        settings.ca_file = ca_file.map(Path::to_path_buf);
    }
    let mut config = postgres::Config::from_str(&rest).map_err(|e| bad(e.to_string()))?;
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
    let tls = tls::connector(&mut config, &settings, &redacted(url))?;
    Ok((config, tls))
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
            None,
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, MemoryError::PgUrl { .. }), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("password=***"), "{text}");
    }

    #[test]
    fn tls_parameters_are_taken_out_of_both_forms_and_the_rest_kept() {
        let settings = |mode, ca: Option<&str>| TlsSettings {
            mode,
            ca_file: ca.map(PathBuf::from),
        };
        let cases = [
            (
                "postgres://u:p@db/team?sslmode=verify-full&sslrootcert=%2Fetc%2Fca%20x.pem",
                "postgres://u:p@db/team",
                settings(SslMode::VerifyFull, Some("/etc/ca x.pem")),
            ),
            (
                "postgresql://db/team?application_name=a&SSLMODE=verify-ca&connect_timeout=3",
                "postgresql://db/team?application_name=a&connect_timeout=3",
                settings(SslMode::VerifyCa, None),
            ),
            (
                "postgres://db/team",
                "postgres://db/team",
                settings(SslMode::Prefer, None),
            ),
            (
                "host=db sslmode=require sslrootcert='/a b/c\\'d.pem' dbname=team",
                "host=db   dbname=team",
                settings(SslMode::Require, Some("/a b/c'd.pem")),
            ),
            (
                "host=db dbname=team sslmode = disable",
                "host=db dbname=team ",
                settings(SslMode::Disable, None),
            ),
        ];
        for (url, rest, want) in cases {
            assert_eq!(take_tls(url), Ok((rest.to_string(), want)), "{url}");
        }
        for bad in [
            "postgres://db/t?sslmode=allow",
            "postgres://db/t?sslmode=",
            "postgres://db/t?sslrootcert=",
            "postgres://db/t?sslrootcert=%zz",
            "postgres://db/t?sslrootcert=%ff",
            "host=db sslmode=verify_full",
        ] {
            assert!(take_tls(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_unix_socket_never_asks_for_tls_whatever_the_mode() {
        for url in [
            "host=/run/pg dbname=team sslmode=verify-full",
            "postgres://%2Frun%2Fpg/team?sslmode=require&sslrootcert=/nonexistent",
        ] {
            let (config, tls) = config(url, Duration::from_secs(1), None).unwrap();
            assert_eq!(tls.mode, SslMode::Disable, "{url}");
            assert_eq!(config.get_ssl_mode(), postgres::config::SslMode::Disable);
        }
        let missing = Some(Path::new("/nonexistent"));
        let e = config("host=db sslmode=verify-ca", Duration::from_secs(1), missing).unwrap_err();
        assert!(matches!(e, MemoryError::PgTls { .. }), "{e}");
        assert!(e.to_string().contains("/nonexistent"), "{e}");
        let (config, tls) =
            config("host=db sslmode=require", Duration::from_secs(1), None).unwrap();
        assert_eq!(tls.mode, SslMode::Require);
        assert_eq!(config.get_ssl_mode(), postgres::config::SslMode::Require);
    }
}
