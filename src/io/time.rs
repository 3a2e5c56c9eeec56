//! Times of documents and of index runs: parsing what users write (RFC 3339 timestamps with
//! an offset, or a date or date-time taken as UTC) into seconds since 1970, and printing
//! seconds back as RFC 3339 in UTC.

use jiff::civil::{Date, DateTime};
use jiff::Timestamp;

/// Seconds since 1970-01-01T00:00:00Z of `text`: an RFC 3339 timestamp
/// (`2026-11-30T09:00:00+03:00`, `2026-11-30T06:00:00Z`), a date-time without an offset
/// (`2026-11-30T06:00:00` or `2026-11-30 06:00:00`, taken as UTC) or a date (`2026-11-30`,
/// midnight UTC). `None` when it is none of these.
pub fn parse_time(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Ok(timestamp) = text.parse::<Timestamp>() {
        return Some(timestamp.as_second());
    }
    let utc = |civil: DateTime| {
        jiff::tz::Offset::UTC
            .to_timestamp(civil)
            .ok()
            .map(|t| t.as_second())
    };
    if let Ok(civil) = text.parse::<DateTime>() {
        return utc(civil);
    }
    if let Ok(date) = text.parse::<Date>() {
        return utc(date.to_datetime(jiff::civil::Time::midnight()));
    }
    None
}

/// True when `text` is a timestamp that says its UTC offset (`Z`, `+03:00`); a date or
/// date-time without one is taken as UTC by [`parse_time`].
pub fn has_offset(text: &str) -> bool {
    text.trim().parse::<Timestamp>().is_ok()
}

/// `seconds` since 1970 as RFC 3339 in UTC, to the second (`2026-11-30T06:00:00Z`).
pub fn format_time(seconds: i64) -> String {
    Timestamp::from_second(seconds)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| seconds.to_string())
}

/// The current time in seconds since 1970.
pub fn now() -> i64 {
    Timestamp::now().as_second()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_dates_and_utc_agree() {
        let utc = parse_time("2026-11-30T06:00:00Z").unwrap();
        assert_eq!(parse_time("2026-11-30T09:00:00+03:00"), Some(utc));
        assert_eq!(parse_time("2026-11-30T06:00:00"), Some(utc));
        assert_eq!(parse_time("2026-11-30 06:00:00"), Some(utc));
        assert_eq!(parse_time("2026-11-30"), Some(utc - 6 * 3600));
        assert_eq!(format_time(utc), "2026-11-30T06:00:00Z");
        assert!(has_offset("2026-11-30T09:00:00+03:00") && has_offset("2026-11-30T06:00:00Z"));
        assert!(!has_offset("2026-11-30T06:00:00") && !has_offset("2026-11-30"));
    }

    #[test]
    fn other_text_is_not_a_time() {
        for text in ["yesterday", "30.11.2026", "2026-13-01", ""] {
            assert_eq!(parse_time(text), None, "{text}");
        }
    }
}
