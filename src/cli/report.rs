//! What a command prints: one value, a [`Report`], shown as text for people or, with
//! `--json`, as JSON for programs — its own fields beside `schema_version`, the envelope every
//! command's JSON shares. A command builds its report and hands it to [`print`]; it never
//! writes the two forms side by side.

use std::io::{self, Write};

use serde::Serialize;

use super::{CmdResult, write_json};

/// The version of every command's JSON; it changes when a field changes meaning or goes.
pub const SCHEMA_VERSION: u32 = 1;

/// What a command found or did, as a value.
pub trait Report: Serialize {
    /// The report as text for people.
    fn text(&self, out: &mut dyn Write) -> io::Result<()>;
}

/// A report's JSON: `schema_version`, then the report's fields.
#[derive(Serialize)]
struct Envelope<'a, R> {
    schema_version: u32,
    #[serde(flatten)]
    report: &'a R,
}

/// Print `report`: as JSON (one object, pretty, then a newline) or as text.
pub fn print<R: Report>(out: &mut dyn Write, report: &R, json: bool) -> CmdResult {
    match json {
        true => print_json(out, report),
        false => Ok(report.text(out)?),
    }
}

/// Print `report` as JSON, in the envelope: for a report with more forms than text (`show`,
/// `review` and `log` have Markdown too).
pub fn print_json<R: Serialize>(out: &mut dyn Write, report: &R) -> CmdResult {
    let envelope = Envelope {
        schema_version: SCHEMA_VERSION,
        report,
    };
    let value = serde_json::to_value(&envelope).map_err(io::Error::from)?;
    write_json(out, &value)
}
