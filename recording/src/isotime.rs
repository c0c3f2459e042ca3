//! ISO 8601 timestamps (HAR `startedDateTime`) to and from microseconds since the Unix epoch,
//! with the `time` crate.

use time::format_description::well_known::Iso8601;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime};

/// Formats as `YYYY-MM-DDTHH:MM:SS.mmmZ` (what browsers write in HAR files). Instants outside
/// years 1..=9999 (only a corrupt recording has them) are written as the epoch.
pub(crate) fn format_us(unix_us: i64) -> String {
    let fmt =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(unix_us) * 1000)
        .ok()
        .filter(|t| t.year() >= 1)
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_string())
}

/// Parses an ISO 8601 date and time (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`); a missing
/// offset means UTC, and a space or lowercase `t`/`z` is accepted as some tools write them.
/// `None` when malformed.
pub(crate) fn parse_us(s: &str) -> Option<i64> {
    let mut s = s.trim().to_string();
    if s.get(10..11).is_some_and(|sep| sep == " " || sep == "t") {
        s.replace_range(10..11, "T");
    }
    if s.ends_with('z') {
        s.replace_range(s.len() - 1.., "Z");
    }
    let t = OffsetDateTime::parse(&s, &Iso8601::PARSING)
        .or_else(|_| PrimitiveDateTime::parse(&s, &Iso8601::PARSING).map(|t| t.assume_utc()))
        .ok()?;
    i64::try_from(t.unix_timestamp_nanos() / 1000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(parse_us("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_us("2024-01-15T10:30:45.123Z"),
            Some(1_705_314_645_123_000)
        );
        assert_eq!(
            parse_us("2024-01-15T11:30:45.123+01:00"),
            Some(1_705_314_645_123_000)
        );
        assert_eq!(
            parse_us("2024-01-15T10:30:45.123456789Z"),
            Some(1_705_314_645_123_456)
        );
        assert_eq!(
            parse_us("2024-01-15 10:30:45Z"),
            Some(1_705_314_645_000_000)
        );
        assert_eq!(
            parse_us("2024-01-15t10:30:45z"),
            Some(1_705_314_645_000_000)
        );
        assert_eq!(parse_us("2024-01-15T10:30:45"), Some(1_705_314_645_000_000));
        assert_eq!(parse_us("1969-12-31T23:59:59.5Z"), Some(-500_000));
        assert_eq!(format_us(1_705_314_645_123_000), "2024-01-15T10:30:45.123Z");
        assert_eq!(format_us(-500_000), "1969-12-31T23:59:59.500Z");
        assert_eq!(format_us(i64::MAX), "1970-01-01T00:00:00.000Z");
        assert_eq!(parse_us("garbage"), None);
        assert_eq!(parse_us("2024-13-01T00:00:00Z"), None);
        assert_eq!(parse_us("2024-02-30T00:00:00Z"), None);
        assert_eq!(parse_us("é"), None);
    }

    #[test]
    fn round_trips_at_millisecond_precision() {
        for us in [
            0i64,
            86_399_999_000,
            951_782_400_000_000,
            4_102_444_800_000_000,
            -62_135_596_800_000_000,
        ] {
            assert_eq!(parse_us(&format_us(us)), Some(us), "{}", format_us(us));
        }
    }
}
