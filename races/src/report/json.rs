//! JSON report (schema: `docs/races-json.md`, version [`super::JSON_VERSION`]).

use super::RaceReport;

/// Renders the report as pretty JSON.
pub fn render(r: &RaceReport) -> String {
    // The view model holds only strings, numbers and booleans: serialisation cannot fail.
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}
