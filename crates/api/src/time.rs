//! Times in and out: what a caller gives for `--since`/`--until` (a duration back from
//! now, `7d`, `12h`, `30m`, `45s`; a date, `2026-01-31`, midnight UTC; or unix seconds),
//! and a time as a person reads it (`2026-01-31 09:30 UTC`, the web view's). Both
//! directions of the calendar arithmetic are here, side by side.

use crate::error::{ApiError, ErrorKind};

/// The forms [`parse`] reads, as the schemas state them: unix seconds, a duration
/// (`7d`, `12h`, `30m`, `45s`) or a date (`2026-01-31`).
pub(crate) const PATTERN: &str =
    r"^\s*(-?[0-9]{1,15}[dhms]?|[0-9]{1,6}-(0?[1-9]|1[0-2])-(0?[1-9]|[12][0-9]|3[01]))\s*$";

/// Now, in unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `text` as unix milliseconds.
pub(crate) fn parse(text: &str, now: i64) -> Result<i64, ApiError> {
    let bad = || {
        ApiError::new(ErrorKind::InvalidInput, format!("`{text}` is not a time")).hint(
            "give a duration back from now (7d, 12h, 30m), a date (2026-01-31) or unix seconds",
        )
    };
    let t = text.trim();
    if let Ok(secs) = t.parse::<i64>() {
        return Ok(secs.saturating_mul(1000));
    }
    if let Some((n, unit)) = t.split_at_checked(t.len().saturating_sub(1)) {
        let scale = match unit {
            "d" => 86_400_000,
            "h" => 3_600_000,
            "m" => 60_000,
            "s" => 1_000,
            _ => 0,
        };
        if scale > 0 {
            let n: i64 = n.parse().map_err(|_| bad())?;
            return Ok(now - n.saturating_mul(scale));
        }
    }
    let parts: Vec<&str> = t.split('-').collect();
    if let [y, m, d] = parts[..] {
        let (y, m, d): (i64, i64, i64) = (
            y.parse().map_err(|_| bad())?,
            m.parse().map_err(|_| bad())?,
            d.parse().map_err(|_| bad())?,
        );
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return Err(bad());
        }
        return Ok(days_from_civil(y, m, d) * 86_400_000);
    }
    Err(bad())
}

/// Unix seconds as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_minutes(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let rest = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
/// algorithm; the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_read_back_is_the_date_written() {
        for (y, m, d) in [(1970, 1, 1), (2000, 2, 29), (2026, 12, 31), (1969, 12, 31)] {
            assert_eq!(civil_from_days(days_from_civil(y, m, d)), (y, m, d));
        }
        assert_eq!(utc_minutes(1_767_225_600 + 3_660), "2026-01-01 01:01 UTC");
    }

    #[test]
    fn durations_dates_and_seconds_are_times_and_prose_is_not() {
        assert_eq!(
            parse("2d", 1_000_000_000).unwrap(),
            1_000_000_000 - 172_800_000
        );
        assert_eq!(parse("1970-01-02", 0).unwrap(), 86_400_000);
        assert_eq!(parse("2026-01-31", 0).unwrap(), 1_769_817_600_000);
        assert_eq!(parse("60", 0).unwrap(), 60_000);
        assert!(parse("yesterday", 0).is_err());
    }
}
