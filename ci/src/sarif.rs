//! SARIF 2.1.0 (`serde-sarif`'s types): one run of the `shepherd` tool, a rule per race class,
//! one result per finding with both accesses' positions as its locations, its status as the
//! level, the verdict and witness in the message, and a fingerprint that stays the same
//! across runs of the same page.

use crate::class::RaceClass;
use crate::finding::{Finding, Side, Status};
use crate::position::UrlMap;
use serde_sarif::sarif::{
    ArtifactContent, ArtifactLocation, Invocation, Location, LogicalLocation, Message,
    MultiformatMessageString, Notification, PhysicalLocation, PropertyBag, Region,
    ReportingConfiguration, ReportingDescriptor, Result as SarifResult, ResultKind, ResultLevel,
    Run, Sarif, Tool, ToolComponent,
};
use std::collections::BTreeMap;

/// The schema a log names (the OASIS standard's, errata 01).
pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The key of [`Finding::fingerprint`] in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "shepherdRace/v1";

/// What the log says about the run beside its results.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// The tool's version (`shepherd --version`).
    pub version: String,
    /// The command that made the report (`races`, `explore`), for the run's properties and
    /// `automationDetails`-like grouping in viewers.
    pub command: String,
    /// The page the report is about.
    pub page: Option<String>,
    /// Where page URLs are in the repository.
    pub urls: UrlMap,
    /// Run-wide facts worth a warning in the log (an exploration stopped by its budget,
    /// executions that failed): `toolExecutionNotifications`.
    pub notes: Vec<String>,
    /// Other run-wide figures (`properties` of the run).
    pub properties: BTreeMap<String, serde_json::Value>,
}

/// The SARIF log of `findings`.
pub fn log(findings: &[Finding], info: &RunInfo) -> Sarif {
    let rules: Vec<ReportingDescriptor> = RaceClass::ALL.iter().map(|&c| rule(c)).collect();
    let driver = ToolComponent::builder()
        .name("shepherd")
        .full_name("Shepherd event race detector")
        .version(info.version.clone())
        .semantic_version(info.version.clone())
        .rules(rules)
        .build();
    let results: Vec<SarifResult> = findings.iter().map(|f| result(f, &info.urls)).collect();
    let notifications: Vec<Notification> = info
        .notes
        .iter()
        .map(|n| {
            Notification::builder()
                .level(serde_json::json!("warning"))
                .message(text(n))
                .build()
        })
        .collect();
    let mut invocation = Invocation::builder().execution_successful(true).build();
    if !notifications.is_empty() {
        invocation.tool_execution_notifications = Some(notifications);
    }
    let mut props = info.properties.clone();
    props.insert("command".into(), serde_json::json!(info.command));
    if let Some(page) = &info.page {
        props.insert("page".into(), serde_json::json!(page));
    }
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .invocations(vec![invocation])
        .column_kind(serde_json::json!("utf16CodeUnits"))
        .properties(PropertyBag::builder().additional_properties(props).build())
        .build();
    Sarif::builder()
        .schema(SCHEMA)
        .version(serde_json::json!("2.1.0"))
        .runs(vec![run])
        .build()
}

/// The log of `findings` as pretty JSON, ending with a newline.
pub fn to_string(findings: &[Finding], info: &RunInfo) -> String {
    // Serialising plain data with string keys cannot fail; an empty log would still be
    // valid SARIF-shaped output if it somehow did.
    let mut s = serde_json::to_string_pretty(&log(findings, info)).unwrap_or_else(|_| {
        format!("{{\"version\":\"2.1.0\",\"$schema\":\"{SCHEMA}\",\"runs\":[]}}")
    });
    s.push('\n');
    s
}

fn text(s: &str) -> Message {
    Message::builder().text(s.to_string()).build()
}

fn rule(class: RaceClass) -> ReportingDescriptor {
    let mut props = BTreeMap::new();
    props.insert("precision".to_string(), serde_json::json!("medium"));
    ReportingDescriptor::builder()
        .id(class.rule_id())
        .name(class.rule_name())
        .short_description(
            MultiformatMessageString::builder()
                .text(class.short())
                .build(),
        )
        .full_description(
            MultiformatMessageString::builder()
                .text(class.help())
                .build(),
        )
        .help(
            MultiformatMessageString::builder()
                .text(class.help())
                .build(),
        )
        .default_configuration(
            ReportingConfiguration::builder()
                .level(serde_json::json!("warning"))
                .build(),
        )
        .properties(
            PropertyBag::builder()
                .tags(vec![
                    "event-race".to_string(),
                    "concurrency".to_string(),
                    "correctness".to_string(),
                ])
                .additional_properties(props)
                .build(),
        )
        .build()
}

/// How a status shows in code scanning: harmful is an error, undecided races warnings, races
/// a filter explains notes; what was shown harmless or is covered is a passed check.
fn level_and_kind(status: Status) -> (ResultLevel, ResultKind) {
    match status {
        Status::Harmful => (ResultLevel::Error, ResultKind::Fail),
        Status::Uncovered => (ResultLevel::Warning, ResultKind::Fail),
        Status::Filtered => (ResultLevel::Note, ResultKind::Fail),
        Status::Harmless | Status::Covered => (ResultLevel::None, ResultKind::Pass),
    }
}

fn result(f: &Finding, urls: &UrlMap) -> SarifResult {
    let (level, kind) = level_and_kind(f.status);
    let index = RaceClass::ALL
        .iter()
        .position(|&c| c == f.class)
        .unwrap_or_default();
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert(FINGERPRINT_KEY.to_string(), f.fingerprint());
    let mut props = BTreeMap::new();
    props.insert("status".to_string(), serde_json::json!(f.status.as_str()));
    props.insert("location".to_string(), serde_json::json!(f.location));
    if !f.kind.is_empty() {
        props.insert("raceKind".to_string(), serde_json::json!(f.kind));
    }
    if !f.ids.is_empty() {
        props.insert("races".to_string(), serde_json::json!(f.ids));
    }
    if f.repeats > 0 {
        props.insert("repeats".to_string(), serde_json::json!(f.repeats));
    }
    if let Some(v) = &f.verdict {
        props.insert("verdict".to_string(), serde_json::json!(v));
    }
    if !f.repaired_by.is_empty() {
        props.insert("repairedBy".to_string(), serde_json::json!(f.repaired_by));
    }
    let (first_role, second_role) = if f.class == RaceClass::DisabledEvent {
        ("the event that disabled it", "the event run first")
    } else {
        ("first access", "second access")
    };
    SarifResult::builder()
        .rule_id(f.class.rule_id())
        .rule_index(index as i64)
        .level(level)
        .kind(kind)
        .message(text(&f.message()))
        .locations(vec![
            location(&f.first, first_role, &f.location, urls),
            location(&f.second, second_role, &f.location, urls),
        ])
        .partial_fingerprints(fingerprints)
        .properties(PropertyBag::builder().additional_properties(props).build())
        .build()
}

/// A side's location: its file, line and column (with the line's text) when known; always
/// the scope or action it ran in, and the shared location, as logical locations.
fn location(side: &Side, role: &str, shared: &str, urls: &UrlMap) -> Location {
    let mut logical = vec![
        LogicalLocation::builder()
            .name(shared.to_string())
            .kind("variable")
            .build(),
    ];
    let action = side.scope.clone().unwrap_or_else(|| side.stable.clone());
    if !action.is_empty() {
        logical.push(
            LogicalLocation::builder()
                .name(action)
                .kind("function")
                .build(),
        );
    }
    let what = if side.access.is_empty() {
        format!("{role}: {}", side.place())
    } else {
        format!("{role}: {}", side.describe())
    };
    let mut loc = Location::builder()
        .message(text(&what))
        .logical_locations(logical)
        .build();
    if let Some(p) = &side.position {
        let mut region = Region::builder()
            .start_line(i64::from(p.line))
            .start_column(i64::from(p.col))
            .build();
        if let Some(line) = &side.line_text {
            region.snippet = Some(ArtifactContent::builder().text(line.clone()).build());
        }
        loc.physical_location = Some(
            PhysicalLocation::builder()
                .artifact_location(ArtifactLocation::builder().uri(urls.uri(&p.url)).build())
                .region(region)
                .build(),
        );
    }
    loc
}
