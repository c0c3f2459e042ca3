//! How long tests wait for a condition: the patience factor.
//!
//! A wait for a condition (a page flag, a trace record, a child's output, a socket closing)
//! returns as soon as the condition holds, so its limit costs nothing while tests pass: it only
//! says how long a failing run takes to say so. Limits are written as what an idle machine
//! needs with some headroom and pass through [`patience`], which multiplies them by a factor
//! large enough for a loaded shared machine (the tests' machine runs at load averages of 15 on
//! two cores: a busy step takes about seven times as long as on an idle one).
//!
//! `$SHEPHERD_TEST_PATIENCE` overrides the factor (`1` for the idle-machine limits, to see a
//! failure sooner; more on a slower machine). Only waits for something to *happen* are
//! scaled: a wait that checks that something does not happen within a period cannot fail
//! because of load, and a timeout the product applies is the product's, not the test's.

use std::sync::OnceLock;
use std::time::Duration;

/// The environment variable that overrides [`DEFAULT_PATIENCE`].
pub const PATIENCE_VAR: &str = "SHEPHERD_TEST_PATIENCE";

/// The factor when `$SHEPHERD_TEST_PATIENCE` is unset: the limits carry 3 to 10 times what an
/// idle machine needs, so five times that outlasts a sevenfold slowdown with room to spare.
pub const DEFAULT_PATIENCE: f64 = 5.0;

/// The factor every condition wait's limit is multiplied by. Panics when
/// `$SHEPHERD_TEST_PATIENCE` is set to anything but a positive number.
pub fn patience_factor() -> f64 {
    static FACTOR: OnceLock<f64> = OnceLock::new();
    *FACTOR.get_or_init(|| match std::env::var(PATIENCE_VAR) {
        Ok(v) if !v.trim().is_empty() => parse_factor(&v).unwrap_or_else(|e| panic!("{e}")),
        _ => DEFAULT_PATIENCE,
    })
}

/// `limit` (what an idle machine needs, with headroom) times the patience factor: the limit of
/// a wait that ends as soon as its condition holds.
pub fn patience(limit: Duration) -> Duration {
    limit.mul_f64(patience_factor())
}

fn parse_factor(v: &str) -> Result<f64, String> {
    match v.trim().parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 && f <= 1000.0 => Ok(f),
        _ => Err(format!(
            "{PATIENCE_VAR}={v:?}: expected a positive number (a factor for the tests' waits, \
             e.g. 1 on an idle machine, 10 on a very busy one)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_parse_and_nonsense_is_refused() {
        assert_eq!(parse_factor("1"), Ok(1.0));
        assert_eq!(parse_factor(" 2.5 "), Ok(2.5));
        for bad in ["0", "-3", "fast", "inf", "NaN", "1e9"] {
            let err = parse_factor(bad).unwrap_err();
            assert!(err.contains(PATIENCE_VAR), "{err}");
        }
    }

    #[test]
    fn patience_scales_by_the_factor() {
        let f = patience_factor();
        assert!(f > 0.0);
        assert_eq!(
            patience(Duration::from_secs(2)),
            Duration::from_secs(2).mul_f64(f)
        );
    }
}
