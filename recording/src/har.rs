//! HAR 1.2 export and import.

use crate::error::{Error, Result};
use crate::model::SessionId;
use crate::store::Recording;

/// Writes `session` (or every session) of `rec` as a HAR 1.2 document.
pub fn export(
    rec: &Recording,
    session: Option<SessionId>,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let _ = (rec, session, out);
    Err(Error::Format("HAR export not implemented yet".into()))
}

/// Imports a HAR document into `rec` as a new session labelled `label`; returns the session and
/// the number of entries imported.
pub fn import(
    rec: &Recording,
    input: &mut dyn std::io::Read,
    label: &str,
) -> Result<(SessionId, usize)> {
    let _ = (rec, input, label);
    Err(Error::Format("HAR import not implemented yet".into()))
}
