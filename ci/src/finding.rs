//! What every CI output is made of: one finding per race group (a race and its repeats) or per
//! sequence that ran a disabled event, with a status a pipeline can act on.

use crate::class::RaceClass;
use crate::position::Position;
use sha2::{Digest, Sha256};

/// Where a finding stands, from a pipeline's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// The explorer found an order that changes what the page shows or does, or the race
    /// report's filters mark the location harmful (an uninitialised read, a
    /// `readystatechange` race).
    Harmful,
    /// Uncovered and not decided: both orders are possible and nothing showed the other
    /// order harmless (not explored, or the explorer could not reorder it).
    Uncovered,
    /// Uncovered, but a filter explains it as a usually harmless pattern (race report only).
    Filtered,
    /// The explorer ran the other order and the page ended the same.
    Harmless,
    /// Covered: ordered by another race (race report with `--all`).
    Covered,
}

impl Status {
    /// The word outputs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Harmful => "harmful",
            Status::Uncovered => "uncovered",
            Status::Filtered => "filtered",
            Status::Harmless => "harmless",
            Status::Covered => "covered",
        }
    }
}

/// One side of a race.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Side {
    /// `READ`, `WRITE` or `UPDATE`.
    pub access: String,
    /// The action's stable id (`doc/event:click@#go#1`).
    pub stable: String,
    /// The position of the access (or of its innermost scope), in the file that holds it.
    pub position: Option<Position>,
    /// The innermost scope label, named (`fire:click @ input#coupon`).
    pub scope: Option<String>,
    /// The text of the position's line, when the report had the file.
    pub line_text: Option<String>,
}

impl Side {
    /// Where the access is, in words: its position, else its scope, else its action.
    pub fn place(&self) -> String {
        match (&self.position, &self.scope) {
            (Some(p), _) => p.display(),
            (None, Some(s)) => format!("in {s}"),
            (None, None) => format!("in {}", self.stable),
        }
    }

    /// `WRITE at https://a.test/app.js:3:3`.
    pub fn describe(&self) -> String {
        match (&self.position, &self.scope) {
            (Some(p), _) => format!("{} at {}", self.access, p.display()),
            (None, Some(s)) => format!("{} in {s}", self.access),
            (None, None) => format!("{} in {}", self.access, self.stable),
        }
    }
}

/// One race group, or one sequence that ran a disabled event.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// What the race is on.
    pub class: RaceClass,
    /// The location as people find it (`input#coupon.value`); for a disabled event, the
    /// event run first.
    pub location: String,
    /// The trace's own name of the location (object numbers vary between runs and are
    /// blanked in the fingerprint).
    pub trace_location: String,
    /// `WRITE-READ`, … (empty for a disabled event).
    pub kind: String,
    /// Where it stands.
    pub status: Status,
    /// The earlier access (for a disabled event: the event that disabled it).
    pub first: Side,
    /// The later access (for a disabled event: the event run first).
    pub second: Side,
    /// Why it has its status, in words.
    pub reason: String,
    /// The explorer's verdict and its sequence, when one was given (`harmful in sequence 3`).
    pub verdict: Option<String>,
    /// What the other order changed, in one paragraph (harmful findings of an exploration).
    pub witness: Option<String>,
    /// The witness in full (both orders, exceptions, DOM diff, requests, screenshots), for
    /// outputs with room for it (a JUnit failure's text).
    pub details: Option<String>,
    /// Repair policies that order the race.
    pub repaired_by: Vec<String>,
    /// The ids of the races in the group, the one shown first (race report; the explore
    /// report has none).
    pub ids: Vec<u64>,
    /// How many races repeat the one shown (same kind and places).
    pub repeats: usize,
}

impl Finding {
    /// The first line of every output: status, class, location, kind and both places.
    pub fn headline(&self) -> String {
        if self.class == RaceClass::DisabledEvent {
            return format!(
                "{}: {} ran before {}, which disabled it in the recorded order",
                capitalised(self.status.as_str()),
                self.location,
                self.first.stable
            );
        }
        format!(
            "{} event race on {} ({}): {} / {}",
            capitalised(self.status.as_str()),
            self.location,
            self.kind,
            self.first.describe(),
            self.second.describe()
        )
    }

    /// The whole message: the headline, the reason, the verdict and its witness, the
    /// repairing policies, the repeats.
    pub fn message(&self) -> String {
        let mut out = self.headline();
        out.push_str(".\n");
        out.push_str(&self.reason);
        if let Some(v) = &self.verdict {
            out.push_str("\nExplored: ");
            out.push_str(v);
        }
        if let Some(w) = &self.witness {
            out.push_str("\nWitness: ");
            out.push_str(w);
        }
        if !self.repaired_by.is_empty() {
            out.push_str("\nOrdered by repair policy: ");
            out.push_str(&self.repaired_by.join(", "));
        }
        if self.repeats > 0 {
            out.push_str(&format!("\n{} more race(s) repeat it", self.repeats));
            if self.ids.len() > 1 {
                let ids: Vec<String> = self.ids[1..].iter().map(u64::to_string).collect();
                out.push_str(&format!(" (races {})", ids.join(", ")));
            }
        }
        out
    }

    /// A key that stays the same for the same race in another run of the same page (SARIF
    /// `partialFingerprints`, so code scanning tracks one alert across runs): class, location
    /// with object numbers blanked, kind and both places.
    pub fn fingerprint(&self) -> String {
        let mut h = Sha256::new();
        for part in [
            self.class.rule_id(),
            &blank_numbers(&self.trace_location),
            &self.kind,
            &self.first.place(),
            &self.second.place(),
        ] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        hex::encode(&h.finalize()[..16])
    }
}

/// `Object[123].f2` → `Object[].f2`, `NodeTree:12-40` → `NodeTree:-`: the numbers that name
/// objects and actions of one execution.
pub fn blank_numbers(location: &str) -> String {
    let mut out = String::with_capacity(location.len());
    let mut in_number = false;
    for c in location.chars() {
        if c.is_ascii_digit() && (in_number || out.ends_with(['[', ':', '-'])) {
            in_number = true;
            continue;
        }
        in_number = false;
        out.push(c);
    }
    out
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_numbers_are_blanked() {
        assert_eq!(blank_numbers("Object[123].f2"), "Object[].f2");
        assert_eq!(blank_numbers("NodeTree:12-40"), "NodeTree:-");
        assert_eq!(blank_numbers("Global.x1"), "Global.x1");
        assert_eq!(blank_numbers("Timer:7"), "Timer:");
    }
}
