//! The scenario manifest (`tests/scenarios/<name>/manifest.toml`): what a scenario's page does,
//! the bad schedule that shows its error, the oracle that sees the error, the policy that
//! repairs it, and the races that exist. The format is documented in
//! `tests/scenarios/README.md`; unknown keys are errors, and every error names its line and
//! column.

use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// The five application-independent policies of EventRaceCommander, by the names
/// `--policy` takes.
pub const POLICIES: &[&str] = &[
    "init-user",
    "init-user-plus",
    "init-system",
    "async-fifo",
    "async-user",
];

/// Race kinds `shepherd races` prints (`<first>-<second>`).
const SIDES: &[&str] = &["READ", "WRITE", "UPDATE"];

/// Filter tags of `docs/races-json.md`.
pub const TAGS: &[&str] = &[
    "WRITE_SAME_VALUE",
    "ONLY_LOCAL_READS",
    "LATE_EVENT_ATTACH",
    "NO_EVENT_ATTACHED",
    "MAYBE_LAZY_INIT",
    "COOKIE_OR_CLASSNAME",
    "RACE_WITH_UNLOAD",
    "NEVER_READ",
    "NO_CHANGE_WRITE",
    "AUTOFOCUS_YIELDS",
    "USER_EVENTS_ONLY",
    "INITIALIZATION_RACE",
    "READYSTATECHANGE_RACE",
];

/// Lanes a known limit may name.
pub const LANES: &[&str] = &["detect", "repair", "explore", "reach"];

/// A parsed, checked manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// One line: what goes wrong.
    pub title: String,
    /// The paper the scenario re-creates (`EventRacer`, `EventRaceCommander`, `R4`,
    /// `EM-DPOR`), or `Shepherd` for event sources and detection gaps no paper covered.
    pub paper: Paper,
    /// Figure, section or example of the paper (`Fig. 1`, `§V-A iframe load`).
    pub figure: String,
    /// The page to load, relative to the scenario directory.
    #[serde(default = "default_page")]
    pub page: String,
    /// The paper calls every race of the page harmless: the filters must explain them all
    /// (zero false alarms, every listed race filtered).
    #[serde(default)]
    pub harmless_only: bool,
    /// Auto-explore after the schedule (off: only the schedule's input, so a race can only
    /// come from the events the manifest names).
    #[serde(default = "yes")]
    pub auto_explore: bool,
    /// How the origin serves particular resources (delays, holds).
    #[serde(default)]
    pub resources: Vec<Resource>,
    /// The bad schedule: input and releases, in order.
    #[serde(default)]
    pub schedule: Vec<Step>,
    /// What shows the error.
    pub oracle: Oracle,
    /// The policy that repairs it.
    pub repair: Repair,
    /// What the explorer should find; the explore lane runs a scenario that has this
    /// section or a harmful race ([`Manifest::explored`]).
    #[serde(default)]
    pub explore: Option<Explore>,
    /// The reach lane: `record --explore` alone (no schedule, nothing held) must exercise
    /// every control of the page and report every listed race.
    #[serde(default)]
    pub reach: Option<Reach>,
    /// Races that exist in the recorded run.
    #[serde(default)]
    pub races: Vec<Race>,
    /// Locations where no uncovered race may be reported.
    #[serde(default)]
    pub absent: Vec<Absent>,
    /// Real races that a run reports only when its timing reaches them.
    #[serde(default)]
    pub sometimes: Vec<Sometimes>,
    /// Lanes that cannot pass yet, and why.
    #[serde(default)]
    pub known_limit: Vec<KnownLimit>,
}

fn default_page() -> String {
    "index.html".to_string()
}

/// Where a scenario comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Paper {
    /// Raychev et al., race detection (EventRacer).
    EventRacer,
    /// Adamsen et al., repair policies (EventRaceCommander).
    EventRaceCommander,
    /// Jensen et al., stateless model checking (R4).
    R4,
    /// Event-driven multi-queue DPOR.
    #[serde(rename = "EM-DPOR")]
    EmDpor,
    /// Event sources and detection gaps the papers did not cover.
    Shepherd,
}

impl fmt::Display for Paper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Paper::EventRacer => "EventRacer",
            Paper::EventRaceCommander => "EventRaceCommander",
            Paper::R4 => "R4",
            Paper::EmDpor => "EM-DPOR",
            Paper::Shepherd => "Shepherd",
        })
    }
}

/// How the origin serves one resource of the scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resource {
    /// Path relative to the scenario directory (`slow.js`, `data/g1.json`).
    pub path: String,
    /// Only requests whose query string contains this text (`v=old`).
    #[serde(default)]
    pub query: Option<String>,
    /// Answer this many milliseconds late.
    #[serde(default)]
    pub delay_ms: u64,
    /// In the good order (which holds nothing), answer this many milliseconds late: a
    /// resource the network is slow to deliver, so the good order's recording is the same
    /// every run.
    #[serde(default)]
    pub good_delay_ms: u64,
    /// Hold the answer until a schedule step releases this path (`release = "slow.js"`), or
    /// at most [`Resource::hold_limit_ms`].
    #[serde(default)]
    pub hold: bool,
    /// Longest hold (a step that never comes must not hang the suite).
    #[serde(default = "default_hold_limit")]
    pub hold_limit_ms: u64,
    /// Send the body up to and including this text at once, and hold the rest until a step
    /// releases this path (as a server that flushes the top of a page early): the parser
    /// stops there, and the user can act on what it has shown. For pages (`index.html`).
    #[serde(default)]
    pub hold_after: Option<String>,
}

fn default_hold_limit() -> u64 {
    4000
}

/// One step of the bad schedule: when it happens and what it does.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// When the step runs (after the previous step).
    pub when: When,
    /// What it does.
    #[serde(rename = "do")]
    pub action: Action,
}

/// When a step runs; steps run in order, each after the previous one.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum When {
    /// This many milliseconds after the previous step (navigation start for the first).
    AfterMs(u64),
    /// As soon as `document.querySelector(selector)` finds an element.
    Element(String),
    /// As soon as the origin has received a request for this path (scenario-relative).
    Request(String),
    /// Once this JavaScript expression is truthy in the page's world (globals).
    Js(String),
    /// Once this JavaScript expression is truthy in an isolated world (the DOM, unlogged).
    Dom(String),
    /// After the window `load` event.
    Load,
}

/// What a step does.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Action {
    /// A trusted click (CDP mouse input) at the element's centre.
    Click(String),
    /// Move the mouse onto the element.
    Hover(String),
    /// Focus the element and type the text as key presses.
    Type {
        /// CSS selector of the field.
        selector: String,
        /// Text typed.
        text: String,
    },
    /// Press one key on the focused element (`Enter`, `a`).
    Key(String),
    /// Type the text as key presses into whatever has focus now (a user who goes on typing
    /// without looking where the caret went).
    Keys(String),
    /// Release the held answers of this resource path.
    Release(String),
    /// Nothing (a pause: the `when` is the point).
    Wait,
}

impl Action {
    /// Whether the step is user input (what a user repeats when the page refused it).
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            Action::Click(_)
                | Action::Hover(_)
                | Action::Type { .. }
                | Action::Key(_)
                | Action::Keys(_)
        )
    }
}

/// What shows that the bad order happened.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "kebab-case")]
pub enum Oracle {
    /// An uncaught exception whose message contains `message`.
    Exception {
        /// Part of the message (`loadThumbs is not defined`).
        message: String,
    },
    /// A JavaScript expression evaluated in the page after the schedule; truthy means the
    /// error shows (`document.querySelector('#out').textContent === 'not ready'`).
    Dom {
        /// The expression.
        expr: String,
    },
    /// Text the user typed is not in the field afterwards.
    LostInput {
        /// CSS selector of the field.
        selector: String,
        /// What was typed.
        typed: String,
    },
    /// The origin saw a request it should not have (or missed one).
    Request {
        /// Scenario-relative path.
        path: String,
        /// Query substring the wrong request carries.
        #[serde(default)]
        query: Option<String>,
        /// `true`: the error is that such a request arrived; `false`: that none did.
        #[serde(default = "yes")]
        seen: bool,
    },
    /// Nothing observable goes wrong (every race is harmless).
    None {
        /// Why no order shows an error.
        reason: String,
    },
}

fn yes() -> bool {
    true
}

/// The policy that repairs the error.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repair {
    /// One of [`POLICIES`], `file:<name>` (a policy file in the scenario directory), or
    /// `none`.
    pub policy: String,
    /// Why, for `none` (required) or for a choice worth explaining.
    #[serde(default)]
    pub reason: Option<String>,
    /// Why `shepherd policy covers` cannot tell that the policy orders the harmful races (a
    /// `js` or time condition, a selector it does not judge); without it, the repair lane
    /// checks that it does, on a run in the good order.
    #[serde(default)]
    pub covers_not: Option<String>,
}

/// What the explorer lane should find.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explore {
    /// Conflict-reversal bound at which the harmful order is found (R4's k).
    #[serde(default = "one")]
    pub bound: u32,
}

fn one() -> u32 {
    1
}

/// What the reach lane runs: the page loaded as a user finds it and exercised as
/// `shepherd record URL --explore` does.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reach {
    /// How long the exercise may run at most (milliseconds); it ends earlier once every
    /// control has had each of its gestures (after a few dozen events).
    #[serde(default = "reach_ms")]
    pub explore_ms: u64,
    /// At most this many user events (`record`'s default).
    #[serde(default = "reach_events")]
    pub max_events: usize,
    /// How many controls the page has (visible and enabled); every one must be exercised.
    pub controls: usize,
}

fn reach_ms() -> u64 {
    60_000
}

fn reach_events() -> usize {
    250
}

/// A race the recorded run has.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Race {
    /// The location as `shepherd races` prints it; `*` matches any run of characters (object
    /// numbers: `BUTTON[*].click`).
    pub location: String,
    /// `<first>-<second>` (`WRITE-READ`, `READ-WRITE`, `WRITE-WRITE`, …); several separated
    /// by `|` when the schedule does not decide which access comes first in every run (the
    /// race is the same either way).
    pub kind: String,
    /// Covered by other races (EventRacer Def. 3.2).
    #[serde(default)]
    pub covered: bool,
    /// For a covered race: `single` (one race covers it, Def. 3.1) or `multi` (only a chain
    /// of races does, Def. 3.2); `any`: covered or not, whichever the run gives (for races
    /// whose covering races come from browser tasks the page cannot order).
    #[serde(default)]
    pub coverage: Option<String>,
    /// Some order of it throws or changes what the user sees (the paper's judgement; the
    /// explorer must call it harmful unless `explored` says otherwise).
    pub harmful: bool,
    /// What Shepherd's explorer must say when its judgement differs from the paper's
    /// (`harmful`): a lost click, or a flag that shows "not ready", is harmful to Shepherd
    /// (the user's input has no effect, or another one) where EventRacer calls it harmless
    /// ad hoc synchronisation. `harmful` or `harmless`; the note says why. `harmless` also
    /// requires an answer: the explorer must have run the race's other order and cleared it.
    #[serde(default)]
    pub explored: Option<String>,
    /// `false`: the location must not be explained away by a harmless filter (its level is
    /// `harmful` or `uncovered`); `true`: it must be.
    #[serde(default)]
    pub filtered: Option<bool>,
    /// Filter tags the location must carry.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Source positions (`late.js:4:`) each of which one side of the race must contain.
    #[serde(default)]
    pub positions: Vec<String>,
    /// Why the race exists (one line).
    #[serde(default)]
    pub note: Option<String>,
    /// `false` for a harmful race the manifest's policy does not order (the bad schedule
    /// forces another race): the repair lane's `policy covers` check leaves it out.
    #[serde(default = "yes")]
    pub repaired: bool,
}

impl Race {
    /// The kinds [`Race::kind`] allows.
    pub fn kinds(&self) -> impl Iterator<Item = &str> {
        self.kind.split('|').map(str::trim)
    }

    /// Whether the explorer must call the race harmful: `explored` when given, else
    /// `harmful`.
    pub fn explored_harmful(&self) -> bool {
        match self.explored.as_deref() {
            Some(v) => v == "harmful",
            None => self.harmful,
        }
    }
}

/// A location where no uncovered race may be reported.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Absent {
    /// Location pattern, as for [`Race::location`].
    pub location: String,
    /// Why there is no race (what orders the accesses).
    pub reason: String,
}

/// A real race of the page that a run reports only when its timing reaches it (the
/// exploration's pace against the page's timers and responses): never required, and never
/// counted as a false alarm.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sometimes {
    /// Location pattern, as for [`Race::location`].
    pub location: String,
    /// What the race is and which timing reaches it.
    pub reason: String,
}

/// A lane that cannot pass yet.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownLimit {
    /// `detect`, `repair`, `explore` or `reach`.
    pub lane: String,
    /// What is missing.
    pub reason: String,
}

/// A manifest error with its place in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The manifest file.
    pub file: PathBuf,
    /// 1-based line, when the error has a place.
    pub line: Option<usize>,
    /// 1-based column (characters).
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{}:{l}:{c}: {}", self.file.display(), self.message),
            _ => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ManifestError {}

/// 1-based line and column of byte offset `at` in `text`.
pub fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl Manifest {
    /// Parses and checks `text` (the contents of `file`, a manifest in directory `dir`).
    pub fn parse(text: &str, file: &Path, dir: &Path) -> Result<Manifest, ManifestError> {
        let m: Manifest = toml::from_str(text).map_err(|e| {
            let (line, column) = match e.span() {
                Some(s) => {
                    let (l, c) = line_col(text, s.start);
                    (Some(l), Some(c))
                }
                None => (None, None),
            };
            ManifestError {
                file: file.to_path_buf(),
                line,
                column,
                message: e.message().to_string(),
            }
        })?;
        m.check(dir).map_err(|(needle, message)| {
            // Checks point at the first occurrence of the offending text.
            let (line, column) = match needle.and_then(|n| text.find(&n)) {
                Some(at) => {
                    let (l, c) = line_col(text, at);
                    (Some(l), Some(c))
                }
                None => (None, None),
            };
            ManifestError {
                file: file.to_path_buf(),
                line,
                column,
                message,
            }
        })?;
        Ok(m)
    }

    /// Reads and checks `dir/manifest.toml`.
    pub fn load(dir: &Path) -> Result<Manifest, ManifestError> {
        let file = dir.join("manifest.toml");
        let text = std::fs::read_to_string(&file).map_err(|e| ManifestError {
            file: file.clone(),
            line: None,
            column: None,
            message: format!("cannot read: {e}"),
        })?;
        Manifest::parse(&text, &file, dir)
    }

    /// Checks beyond the types; an error is (text to point at, message).
    fn check(&self, dir: &Path) -> Result<(), (Option<String>, String)> {
        let quoted = |s: &str| Some(format!("\"{s}\""));
        if self.title.trim().is_empty() || self.figure.trim().is_empty() {
            return Err((None, "title and figure must not be empty".into()));
        }
        if !dir.join(&self.page).is_file() {
            return Err((
                quoted(&self.page),
                format!("page {:?} is not a file of the scenario", self.page),
            ));
        }
        for r in &self.resources {
            if !dir.join(&r.path).is_file() {
                return Err((
                    quoted(&r.path),
                    format!("resource {:?} is not a file of the scenario", r.path),
                ));
            }
            if r.hold && r.delay_ms > 0 {
                return Err((
                    quoted(&r.path),
                    "a resource is held or delayed, not both".into(),
                ));
            }
        }
        for s in &self.schedule {
            if let Action::Release(p) = &s.action
                && !self
                    .resources
                    .iter()
                    .any(|r| (r.hold || r.hold_after.is_some()) && &r.path == p)
            {
                return Err((
                    quoted(p),
                    format!("release {p:?}: no resource with that path is held"),
                ));
            }
        }
        match self.repair.policy.as_str() {
            "none" => {
                if self
                    .repair
                    .reason
                    .as_deref()
                    .is_none_or(|r| r.trim().is_empty())
                {
                    return Err((
                        Some("policy".into()),
                        "policy \"none\" needs a reason".into(),
                    ));
                }
            }
            p if POLICIES.contains(&p) => {}
            p => match p.strip_prefix("file:") {
                Some(f) if dir.join(f).is_file() => {}
                _ => {
                    return Err((
                        quoted(p),
                        format!(
                            "unknown policy {p:?}: one of {}, file:<name in the scenario>, or none",
                            POLICIES.join(", ")
                        ),
                    ));
                }
            },
        }
        if self.repair.policy != "none" && matches!(self.oracle, Oracle::None { .. }) {
            return Err((
                Some("policy".into()),
                "a policy repairs an error the oracle sees: with kind = \"none\" the policy is \"none\""
                    .into(),
            ));
        }
        if self
            .reach
            .as_ref()
            .is_some_and(|r| r.explore_ms == 0 || r.max_events == 0 || r.controls == 0)
        {
            return Err((
                Some("reach".into()),
                "reach needs a positive explore_ms, max_events and controls".into(),
            ));
        }
        if self.explore.as_ref().is_some_and(|e| e.bound == 0) {
            return Err((Some("bound".into()), "explore.bound is at least 1".into()));
        }
        for r in &self.races {
            let ok = r.kinds().all(|k| {
                k.split_once('-')
                    .is_some_and(|(a, b)| SIDES.contains(&a) && SIDES.contains(&b))
            });
            if !ok {
                return Err((
                    quoted(&r.kind),
                    format!(
                        "race kind {:?} is not <READ|WRITE|UPDATE>-<READ|WRITE|UPDATE> (or several, separated by |)",
                        r.kind
                    ),
                ));
            }
            if let Some(c) = &r.coverage
                && c != "any"
                && (!r.covered || (c != "single" && c != "multi"))
            {
                return Err((
                    quoted(c),
                    "coverage is \"any\", or \"single\" or \"multi\" for covered races".into(),
                ));
            }
            if let Some(t) = r.tags.iter().find(|t| !TAGS.contains(&t.as_str())) {
                return Err((quoted(t), format!("unknown filter tag {t:?}")));
            }
            if r.location.trim().is_empty() {
                return Err((Some("location".into()), "empty location".into()));
            }
            if let Some(v) = &r.explored
                && v != "harmful"
                && v != "harmless"
            {
                return Err((quoted(v), "explored is \"harmful\" or \"harmless\"".into()));
            }
        }
        let harmful = self.races.iter().any(|r| r.harmful);
        if harmful == matches!(self.oracle, Oracle::None { .. }) {
            return Err((
                Some("[oracle]".into()),
                if harmful {
                    "a harmful race needs an oracle that sees its error (kind none is for harmless pages)"
                        .into()
                } else {
                    "no race is harmful: the oracle must be kind = \"none\"".into()
                },
            ));
        }
        if self.harmless_only && harmful {
            return Err((
                Some("harmless_only".into()),
                "harmless_only with a harmful race".into(),
            ));
        }
        if harmful && self.schedule.is_empty() {
            return Err((
                None,
                "a harmful race needs a schedule that makes its error observable".into(),
            ));
        }
        for x in &self.sometimes {
            if x.location.trim().is_empty() {
                return Err((Some("location".into()), "empty location".into()));
            }
            if x.reason.trim().is_empty() {
                return Err((
                    quoted(&x.location),
                    "a sometimes race needs a reason".into(),
                ));
            }
        }
        for k in &self.known_limit {
            if !LANES.contains(&k.lane.as_str()) {
                return Err((quoted(&k.lane), format!("unknown lane {:?}", k.lane)));
            }
            if k.reason.trim().is_empty() {
                return Err((quoted(&k.lane), "a known limit needs a reason".into()));
            }
            if k.lane == "repair" && self.repair.policy == "none" {
                return Err((
                    quoted(&k.lane),
                    "a repair known limit needs a policy that fails (with policy \"none\" the lane does not run)"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    /// Whether the explore lane runs this scenario: it has a harmful race or an `[explore]`
    /// section (pages whose races are all harmless opt in, to keep the lane's time down).
    pub fn explored(&self) -> bool {
        self.explore.is_some() || self.races.iter().any(Race::explored_harmful)
    }

    /// The conflict-reversal bound to explore with (1 unless `[explore]` says otherwise).
    pub fn bound(&self) -> u32 {
        self.explore.as_ref().map_or(1, |e| e.bound)
    }

    /// The known limit of `lane`, if any.
    pub fn limit(&self, lane: &str) -> Option<&KnownLimit> {
        self.known_limit.iter().find(|k| k.lane == lane)
    }
}

/// `*`-glob match (`*` is any run of characters, everything else literal, so the brackets of
/// `BUTTON[*].click` are the name's own): the policies' URL-glob rule, one implementation.
pub fn glob(pattern: &str, text: &str) -> bool {
    shepherd_policies::compile::glob_matches(pattern, text)
}

/// Every scenario directory (sorted by name) under `root`.
pub fn scenario_dirs(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_object_numbers() {
        assert!(glob("BUTTON[*].click", "BUTTON[7].click"));
        assert!(!glob("BUTTON[*].click", "BUTTON[7].mouseover"));
        assert!(glob("Global.f", "Global.f"));
        assert!(!glob("Global.f", "Global.ff"));
        assert!(glob("*.value", "DOMNode[12].value"));
        assert!(glob("DOMNode[*].*", "DOMNode[3].checked"));
        assert!(!glob("DOMNode[*].*", "DOMNode3.checked"));
    }

    /// The matcher this module had before it used the policies' globset one.
    fn old_glob(pattern: &str, text: &str) -> bool {
        let parts: Vec<&str> = pattern.split('*').collect();
        if parts.len() == 1 {
            return pattern == text;
        }
        let (first, rest) = (parts[0], &parts[1..]);
        let Some(mut tail) = text.strip_prefix(first) else {
            return false;
        };
        let last = rest.len() - 1;
        for (i, p) in rest.iter().enumerate() {
            if i == last {
                return tail.ends_with(p);
            }
            match tail.find(p) {
                Some(at) => tail = &tail[at + p.len()..],
                None => return false,
            }
        }
        true
    }

    /// Every pattern of up to 4 and every name of up to 5 characters over `a[*.` is decided as
    /// before.
    #[test]
    fn glob_decides_as_the_old_matcher() {
        fn all(max: usize) -> Vec<String> {
            let mut out = vec![String::new()];
            let mut level = vec![String::new()];
            for _ in 0..max {
                level = level
                    .iter()
                    .flat_map(|s| "a[*.".chars().map(move |c| format!("{s}{c}")))
                    .collect();
                out.extend(level.iter().cloned());
            }
            out
        }
        let texts = all(5);
        for pattern in all(4) {
            for text in &texts {
                assert_eq!(
                    glob(&pattern, text),
                    old_glob(&pattern, text),
                    "{pattern:?} {text:?}"
                );
            }
        }
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
