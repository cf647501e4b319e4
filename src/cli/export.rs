//! `export --format agent-trace <rev|range>` and `export --format md|json <session>`.

use std::io::{self, Write};

use crate::cli::report::{self, Report};
use crate::cli::{CmdResult, write_json_line};
use crate::sanitise;
use crate::share::export::{self, SessionLog};
use crate::store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Agent Trace records, one JSON object a line, for the commits sessions made.
    AgentTrace,
    /// A session's log as Markdown.
    Md,
    /// A session's log as JSON.
    Json,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to write.
    #[arg(long, value_enum, value_name = "format")]
    format: Format,
    /// A revision and its history, or a range (`main..topic`), for agent-trace; a session id
    /// or the start of one for md and json.
    #[arg(value_name = "rev|session")]
    target: String,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    match args.format {
        Format::AgentTrace => {
            for record in export::agent_trace(store, &args.target)? {
                write_json_line(out, &record)?;
            }
            Ok(())
        }
        Format::Md | Format::Json => {
            let log = export::session(store, &args.target)?;
            report::print(out, &log, args.format == Format::Json)
        }
    }
}

/// The session's log as Markdown: a heading, then each event with its time, kind and summary,
/// its rationale quoted, its files and commits. Recorded text is sanitised for Markdown.
impl Report for SessionLog {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        markdown(self, out)
    }
}

fn markdown(log: &SessionLog, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "# Session {}\n", sanitise::line(&log.session))?;
    for logged in &log.events {
        let e = &logged.event;
        writeln!(
            out,
            "- {} **{}**: {}",
            sanitise::line(&e.timestamp),
            e.kind.as_str(),
            sanitise::field(&e.summary)
        )?;
        let rationale = e.rationale.trim();
        if !rationale.is_empty() && rationale != e.summary.trim() {
            for line in rationale.lines().filter(|l| !l.trim().is_empty()) {
                writeln!(out, "  > {}", sanitise::field(line))?;
            }
        }
        for alternative in &e.alternatives {
            writeln!(out, "  - rejected: {}", sanitise::field(alternative))?;
        }
        if !e.files_affected.is_empty() {
            let files: Vec<String> = e.files_affected.iter().map(|f| sanitise::line(f)).collect();
            writeln!(out, "  - files: {}", files.join(", "))?;
        }
        match logged.on.as_slice() {
            [] => writeln!(out, "  - pending: no commit yet")?,
            on => {
                let short: Vec<&str> = on.iter().map(|c| &c[..c.len().min(7)]).collect();
                writeln!(out, "  - on {}", short.join(", "))?;
            }
        }
    }
    Ok(())
}
