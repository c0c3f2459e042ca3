//! The verdicts of `shepherd explore --json` (`docs/explore-json.md`), read back through the
//! report's own types so that race reports can say which races the explorer found harmful.

use shepherd_explore_model::report::{ExploreReport, RaceVerdict};
use shepherd_races::report::{Explored, RaceView};
use std::collections::HashMap;
use std::path::Path;

/// A race's identity across executions: its location with object numbers blanked (they
/// depend on the execution) and the stable ids of its two actions.
type RaceKey = (String, String, String);

/// The explorer's verdicts, by race.
#[derive(Clone, Debug, Default)]
pub struct Verdicts {
    by_race: HashMap<RaceKey, Explored>,
}

impl Verdicts {
    /// Reads the explore report at `path` (its typed form, `docs/explore-json.md`): a file of
    /// another version or shape is an error naming the file.
    pub fn load(path: &Path) -> anyhow::Result<Verdicts> {
        let doc = ExploreReport::read(path)?;
        let mut by_race = HashMap::new();
        for r in doc.races {
            let key = race_key(&r.location, &r.first.stable, &r.second.stable);
            let verdict = Explored {
                verdict: r.verdict.to_string(),
                reason: r.reason,
                sequence: r.sequence.map(u64::from),
            };
            // A harmful verdict wins over others for the same race.
            let keep = by_race
                .get(&key)
                .is_none_or(|old: &Explored| old.verdict != RaceVerdict::Harmful.as_str());
            if keep {
                by_race.insert(key, verdict);
            }
        }
        Ok(Verdicts { by_race })
    }

    /// The verdict on `race`, if the explorer gave one.
    pub fn of(&self, race: &RaceView) -> Option<Explored> {
        self.by_race
            .get(&race_key(
                &race.location,
                &race.first.stable,
                &race.second.stable,
            ))
            .cloned()
    }
}

/// The [`RaceKey`] of a race at `location` between the actions `first` and `second` (stable
/// ids).
fn race_key(location: &str, first: &str, second: &str) -> RaceKey {
    let mut loc = String::with_capacity(location.len());
    let mut digits = false;
    for c in location.chars() {
        if c.is_ascii_digit() && (digits || loc.ends_with('[')) {
            digits = true;
            continue;
        }
        digits = false;
        loc.push(c);
    }
    (loc, first.to_string(), second.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_numbers_are_blanked_and_other_digits_kept() {
        assert_eq!(
            race_key("Object[123].f2", "doc/a#1", "doc/b#2").0,
            "Object[].f2"
        );
        assert_eq!(race_key("DOMNode[7].value", "", "").0, "DOMNode[].value");
        assert_eq!(race_key("Global.x1", "", "").0, "Global.x1");
    }

    #[test]
    fn a_harmful_verdict_wins_and_other_versions_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("explore.json");
        let race = |verdict: &str, n: u32| {
            serde_json::json!({
                "location": format!("Object[{n}].f"),
                "kind": "WRITE-READ",
                "first": {"stable": "doc/a", "access": "WRITE", "code": null, "scope": null, "source": null},
                "second": {"stable": "doc/b", "access": "READ", "code": null, "scope": null, "source": null},
                "verdict": verdict,
                "class": null, "depth": null, "differences": null, "witness": null,
                "reason": verdict,
                "sequence": n,
            })
        };
        let doc = serde_json::json!({
            "version": 1,
            "bound": 1, "complete": true, "disabled": [], "elapsed_s": 1.0, "failures": 0,
            "page": "https://a.test/", "policy": null, "recording": "a.rec",
            "seconds_per_sequence": null, "sequences": 4,
            "pruned": {"enabled_fraction": null, "fraction": null, "racing_pairs": 0, "reversals": 0},
            "summary": {"harmful": 1, "harmless": 2, "not_reordered": 0},
            "races": [race("harmless", 1), race("harmful", 2), race("harmless", 3)],
        });
        std::fs::write(&path, doc.to_string()).unwrap();
        let v = Verdicts::load(&path).unwrap();
        assert_eq!(v.by_race.len(), 1);
        let got = &v.by_race[&race_key("Object[9].f", "doc/a", "doc/b")];
        assert_eq!((got.verdict.as_str(), got.sequence), ("harmful", Some(2)));

        std::fs::write(&path, r#"{"version": 2, "races": []}"#).unwrap();
        let err = Verdicts::load(&path).unwrap_err().to_string();
        assert!(err.contains("version"), "{err}");
    }
}
