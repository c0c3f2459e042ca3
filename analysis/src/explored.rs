//! The verdicts of `shepherd explore --json` (`docs/explore-json.md`), read back through the
//! report's own types so that race reports can say which races the explorer found harmful.

use shepherd_explore_model::report::{ExploreReport, RaceVerdict};
use shepherd_explore_model::triage::{RaceKey, race_key};
use shepherd_races::report::{Explored, RaceView};
use std::collections::HashMap;
use std::path::Path;

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
        use shepherd_explore_model::report::json::{Access, Pruned, RaceEntry, Summary};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("explore.json");
        let access = |stable: &str| Access {
            stable: stable.into(),
            access: "WRITE".into(),
            source: None,
            scope: None,
            code: None,
        };
        let race = |verdict: RaceVerdict, n: u32| RaceEntry {
            location: format!("Object[{n}].f"),
            name: format!("Object[{n}].f"),
            kind: "WRITE-READ".into(),
            first: access("doc/a"),
            second: access("doc/b"),
            verdict,
            rule: None,
            reason: verdict.to_string(),
            window: None,
            probe: None,
            repeat_of: None,
            sequence: Some(n),
            depth: None,
            differences: None,
            witness: None,
            covered: false,
            also_at: Vec::new(),
        };
        let doc = ExploreReport {
            version: shepherd_explore_model::report::JSON_VERSION,
            recording: "a.rec".into(),
            page: "https://a.test/".into(),
            bound: 1,
            policy: None,
            complete: true,
            sequences: 4,
            probes: 0,
            failures: 0,
            elapsed_s: 1.0,
            seconds_per_sequence: None,
            pruned: Pruned {
                racing_pairs: 0,
                reversals: 0,
                fraction: None,
                enabled_fraction: None,
                enabled_ceiling: None,
            },
            summary: Summary {
                races: 3,
                harmful: 1,
                harmless: 2,
                invisible: 0,
                not_explored: 0,
                rules: Default::default(),
                covered_harmful: 0,
            },
            locations: Vec::new(),
            races: vec![
                race(RaceVerdict::Harmless, 1),
                race(RaceVerdict::Harmful, 2),
                race(RaceVerdict::Harmless, 3),
            ],
            deeper: Vec::new(),
            disabled: Vec::new(),
        };
        std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
        let v = Verdicts::load(&path).unwrap();
        assert_eq!(v.by_race.len(), 1);
        let got = &v.by_race[&race_key("Object[9].f", "doc/a", "doc/b")];
        assert_eq!((got.verdict.as_str(), got.sequence), ("harmful", Some(2)));

        std::fs::write(&path, r#"{"version": 1, "races": []}"#).unwrap();
        let err = Verdicts::load(&path).unwrap_err().to_string();
        assert!(err.contains("version"), "{err}");
    }
}
