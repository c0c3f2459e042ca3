//! Shifting dates in replayed responses by the recording's age, so that cookies and cache
//! lifetimes behave as they did when recorded (a cookie whose `Expires` is in the past at replay
//! time is dropped by the browser, whose cookie jar uses the real clock).
//!
//! The shift is a fixed offset chosen once per replay run (`DateShift::new`), not "now" per
//! response, so every response of a run moves by the same amount and runs stay comparable.

use crate::model::Header;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A fixed offset added to every date header of replayed responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DateShift {
    /// Seconds to add (positive when replaying after the recording).
    pub seconds: i64,
}

/// Headers holding a single HTTP date.
const DATE_HEADERS: &[&str] = &["date", "expires", "last-modified"];

impl DateShift {
    /// The shift that moves `recorded` (e.g. the session start) to `replay` (e.g. the replay
    /// run's start).
    pub fn new(recorded: SystemTime, replay: SystemTime) -> DateShift {
        let secs = |t: SystemTime| -> i64 {
            match t.duration_since(UNIX_EPOCH) {
                Ok(d) => d.as_secs() as i64,
                Err(e) => -(e.duration().as_secs() as i64),
            }
        };
        DateShift {
            seconds: secs(replay) - secs(recorded),
        }
    }

    /// The shift from a recording time in microseconds since the epoch to now.
    pub fn since_recorded_us(recorded_unix_us: i64) -> DateShift {
        let recorded = if recorded_unix_us >= 0 {
            UNIX_EPOCH + Duration::from_micros(recorded_unix_us as u64)
        } else {
            UNIX_EPOCH
        };
        DateShift::new(recorded, SystemTime::now())
    }

    /// Shifts `Date`, `Expires`, `Last-Modified` and the `Expires=` attribute of every
    /// `Set-Cookie`. Values that do not parse are left untouched.
    pub fn apply(&self, headers: &mut [Header]) {
        if self.seconds == 0 {
            return;
        }
        for h in headers.iter_mut() {
            let name = h.name.to_ascii_lowercase();
            let Ok(value) = std::str::from_utf8(&h.value) else {
                continue;
            };
            let shifted = if DATE_HEADERS.contains(&name.as_str()) {
                shift_http_date(value, self.seconds)
            } else if name == "set-cookie" {
                Some(shift_set_cookie(value, self.seconds))
            } else {
                None
            };
            if let Some(v) = shifted {
                h.value = v.into_bytes();
            }
        }
    }
}

fn parse_lenient(value: &str) -> Option<SystemTime> {
    let v = value.trim();
    if let Ok(t) = httpdate::parse_http_date(v) {
        return Some(t);
    }
    // Netscape cookie form `Wed, 21-Oct-2015 07:28:00 GMT`, and two-digit years after it.
    let spaced = v.replace('-', " ");
    if let Ok(t) = httpdate::parse_http_date(&spaced) {
        return Some(t);
    }
    let parts: Vec<&str> = spaced.split_whitespace().collect();
    if parts.len() == 6 && parts[3].len() == 2 {
        let year: u32 = parts[3].parse().ok()?;
        let full = if year < 70 { 2000 + year } else { 1900 + year };
        let fixed = format!(
            "{} {} {} {} {} {}",
            parts[0], parts[1], parts[2], full, parts[4], parts[5]
        );
        return httpdate::parse_http_date(&fixed).ok();
    }
    None
}

/// Shifts one HTTP date by `seconds`; `None` if it does not parse. Results before 1970 clamp to
/// the epoch.
pub fn shift_http_date(value: &str, seconds: i64) -> Option<String> {
    let t = parse_lenient(value)?;
    let shifted = if seconds >= 0 {
        t.checked_add(Duration::from_secs(seconds as u64))?
    } else {
        t.checked_sub(Duration::from_secs(seconds.unsigned_abs()))
            .unwrap_or(UNIX_EPOCH)
            .max(UNIX_EPOCH)
    };
    Some(httpdate::fmt_http_date(shifted))
}

/// Shifts the `Expires=` attribute of one `Set-Cookie` value; everything else (including
/// `Max-Age`, which is relative already) is kept byte for byte.
pub fn shift_set_cookie(value: &str, seconds: i64) -> String {
    let mut out = String::with_capacity(value.len());
    for (i, part) in value.split(';').enumerate() {
        if i > 0 {
            out.push(';');
        }
        let trimmed = part.trim_start();
        let lead = &part[..part.len() - trimmed.len()];
        if i > 0
            && let (Some(attr), Some(date)) = (trimmed.get(..8), trimmed.get(8..))
            && attr.eq_ignore_ascii_case("expires=")
            && let Some(new) = shift_http_date(date, seconds)
        {
            out.push_str(lead);
            out.push_str(attr);
            out.push_str(&new);
            continue;
        }
        out.push_str(part);
    }
    out
}
