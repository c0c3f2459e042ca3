//! Date shifting of replayed response headers.

use shepherd_recording::*;
use std::time::{Duration, UNIX_EPOCH};

const DAY: i64 = 86_400;

#[test]
fn shifts_every_date_header_and_cookie_expiry_by_the_same_offset() {
    let recorded = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let replay = recorded + Duration::from_secs(30 * DAY as u64);
    let shift = DateShift::new(recorded, replay);
    assert_eq!(shift.seconds, 30 * DAY);
    let mut headers = vec![
        Header::new("Date", "Tue, 14 Nov 2023 22:13:20 GMT"),
        Header::new("expires", "Wed, 15 Nov 2023 22:13:20 GMT"),
        Header::new("Last-Modified", "Mon, 13 Nov 2023 22:13:20 GMT"),
        Header::new(
            "Set-Cookie",
            "sid=abc; Path=/; Expires=Thu, 16 Nov 2023 22:13:20 GMT; HttpOnly",
        ),
        Header::new("Set-Cookie", "old=1; expires=Thu, 16-Nov-23 22:13:20 GMT"),
        Header::new("Set-Cookie", "rel=1; Max-Age=3600"),
        Header::new("Cache-Control", "max-age=60"),
        Header::new("Expires", "0"),
    ];
    shift.apply(&mut headers);
    let v: Vec<String> = headers.iter().map(|h| h.value_str().into_owned()).collect();
    assert_eq!(v[0], "Thu, 14 Dec 2023 22:13:20 GMT");
    assert_eq!(v[1], "Fri, 15 Dec 2023 22:13:20 GMT");
    assert_eq!(v[2], "Wed, 13 Dec 2023 22:13:20 GMT");
    assert_eq!(
        v[3],
        "sid=abc; Path=/; Expires=Sat, 16 Dec 2023 22:13:20 GMT; HttpOnly"
    );
    assert_eq!(v[4], "old=1; expires=Sat, 16 Dec 2023 22:13:20 GMT");
    assert_eq!(v[5], "rel=1; Max-Age=3600", "relative lifetimes untouched");
    assert_eq!(v[6], "max-age=60");
    assert_eq!(v[7], "0", "invalid dates untouched");
}

#[test]
fn negative_and_zero_shifts() {
    assert_eq!(
        shift_http_date("Tue, 14 Nov 2023 22:13:20 GMT", -DAY).as_deref(),
        Some("Mon, 13 Nov 2023 22:13:20 GMT")
    );
    assert_eq!(
        shift_http_date("Thu, 01 Jan 1970 00:00:10 GMT", -DAY).as_deref(),
        Some("Thu, 01 Jan 1970 00:00:00 GMT"),
        "clamped at the epoch"
    );
    assert_eq!(shift_http_date("yesterday", DAY), None);
    let mut h = vec![Header::new("Date", "Tue, 14 Nov 2023 22:13:20 GMT")];
    DateShift::default().apply(&mut h);
    assert_eq!(h[0].value_str(), "Tue, 14 Nov 2023 22:13:20 GMT");
    assert_eq!(shift_set_cookie("a=b", DAY), "a=b");
    assert_eq!(
        shift_set_cookie("expires=Tue, 14 Nov 2023 22:13:20 GMT", DAY),
        "expires=Tue, 14 Nov 2023 22:13:20 GMT",
        "a cookie *named* expires is not the attribute"
    );
    assert_eq!(shift_set_cookie("a=ü; é", DAY), "a=ü; é");
}

#[test]
fn since_recorded_moves_a_recent_date_to_about_now() {
    let now_us = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    let shift = DateShift::since_recorded_us(now_us - 3_600 * 1_000_000);
    assert!(
        (3_599..=3_601).contains(&shift.seconds),
        "{}",
        shift.seconds
    );
}
