//! ISO 8601 timestamps (HAR `startedDateTime`) to and from microseconds since the Unix epoch,
//! without a calendar crate.

/// Days since 1970-01-01 for a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

/// Formats as `YYYY-MM-DDTHH:MM:SS.mmmZ` (what browsers write in HAR files).
pub(crate) fn format_us(unix_us: i64) -> String {
    let secs = unix_us.div_euclid(1_000_000);
    let ms = unix_us.rem_euclid(1_000_000) / 1000;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `None` when malformed.
pub(crate) fn parse_us(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = s.get(from..from + len)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_us = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = s.get(start..i)?;
        let mut scaled = String::from(digits);
        scaled.truncate(6);
        while scaled.len() < 6 {
            scaled.push('0');
        }
        frac_us = scaled.parse().ok()?;
    }
    let offset_s = match s.get(i..)? {
        "Z" | "z" | "" => 0,
        tz if tz.len() == 6 && (tz.starts_with('+') || tz.starts_with('-')) => {
            let oh: i64 = tz.get(1..3)?.parse().ok()?;
            let om: i64 = tz.get(4..6)?.parse().ok()?;
            let o = oh * 3600 + om * 60;
            if tz.starts_with('-') { -o } else { o }
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset_s;
    Some(secs * 1_000_000 + frac_us)
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
        assert_eq!(format_us(1_705_314_645_123_000), "2024-01-15T10:30:45.123Z");
        assert_eq!(parse_us("garbage"), None);
        assert_eq!(parse_us("2024-13-01T00:00:00Z"), None);
    }

    #[test]
    fn round_trips_at_millisecond_precision() {
        for us in [
            0i64,
            86_399_999_000,
            951_782_400_000_000,
            4_102_444_800_000_000,
        ] {
            assert_eq!(parse_us(&format_us(us)), Some(us));
        }
    }
}
