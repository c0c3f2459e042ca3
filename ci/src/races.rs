//! Findings of the race report (`shepherd races`): one per race group, a race and the races
//! that repeat it at the same location (`shepherd_races::report::group_repeats`, as the text
//! report lists them).

use crate::class::RaceClass;
use crate::finding::{Finding, Side, Status};
use crate::position::Position;
use shepherd_races::report::{AccessView, RaceReport, RaceView, group_repeats, reason};

/// The findings of `report`, in its order (harmful locations first).
pub fn findings(report: &RaceReport) -> Vec<Finding> {
    let mut out = Vec::new();
    for group in report.races.chunk_by(|x, y| x.location == y.location) {
        let refs: Vec<&RaceView> = group.iter().collect();
        for (k, repeats) in group_repeats(&refs) {
            let members: Vec<&RaceView> = std::iter::once(k)
                .chain(repeats)
                .filter_map(|i| group.get(i))
                .collect();
            if let Some(f) = finding(&members) {
                out.push(f);
            }
        }
    }
    out
}

/// The finding of one group (`members[0]` shown, the rest repeats).
fn finding(members: &[&RaceView]) -> Option<Finding> {
    let race = members.first()?;
    // A harmful verdict on any repeat makes the group harmful: the repeat is the same race.
    let harmful_verdict = members
        .iter()
        .find(|r| r.explored.as_ref().is_some_and(|x| x.verdict == "harmful"));
    let shown = harmful_verdict.copied().unwrap_or(race);
    let verdict = shown.explored.as_ref();
    let status = if race.harmful || harmful_verdict.is_some() {
        Status::Harmful
    } else if verdict.is_some_and(|x| x.verdict == "harmless") {
        Status::Harmless
    } else if race.covered {
        Status::Covered
    } else if race.level == "filtered" {
        Status::Filtered
    } else {
        Status::Uncovered
    };
    let mut why = reason(&race.tags, race.covered);
    if let Some(x) = verdict
        && x.verdict == "not-explored"
    {
        why.push_str(&format!("; the explorer did not explore it: {}", x.reason));
    }
    Some(Finding {
        class: RaceClass::of_location(&race.location),
        location: race.location_name.clone(),
        trace_location: race.location.clone(),
        kind: race.kind.clone(),
        status,
        first: side(&race.first),
        second: side(&race.second),
        reason: why,
        verdict: verdict.map(|x| match x.sequence {
            Some(n) => format!("{} in sequence {n}: {}", x.verdict, x.reason),
            None => format!("{}: {}", x.verdict, x.reason),
        }),
        witness: None,
        details: None,
        repaired_by: race.repaired_by.clone(),
        ids: members.iter().map(|r| r.id as u64).collect(),
        repeats: members.len() - 1,
    })
}

/// A side as outputs show it: the source lines' own file and line when the report attached
/// them (inline code is then the document's line, not the script key's), else the position.
fn side(a: &AccessView) -> Side {
    let from_code = a.code.as_ref().and_then(|c| {
        Some(Position {
            url: c.url.clone(),
            line: u32::try_from(c.line).ok().filter(|&l| l > 0)?,
            col: u32::try_from(c.col).ok().filter(|&c| c > 0)?,
        })
    });
    Side {
        access: a.access.to_string(),
        stable: a.stable.clone(),
        position: from_code.or_else(|| a.source.as_deref().and_then(Position::parse)),
        scope: a.scope_name.clone().or_else(|| a.scope.clone()),
        line_text: a
            .code
            .as_ref()
            .and_then(|c| c.hit())
            .map(|t| t.trim_end().to_string()),
    }
}
