//! `forget`: take events out of the notes, the decision graph, the pending queue and the local
//! caches (`app::forget`), by session, by id or by what they say, and say what went.
//!
//! The refs get new commits; their history keeps the old text, which docs/security.md says
//! how to purge (the hint printed after a forget points there through the README's "Purging
//! pushed data"). What was forgotten is remembered in this clone only. A notes ref fetched or
//! merged from a clone that still has a forgotten event brings it back (`git notes merge -s
//! cat_sort_uniq` keeps the lines of both sides of a note both changed); `--again` takes out
//! every event forgotten here that is stored again.

use std::io::{self, Write};

use anyhow::anyhow;
use regex::Regex;

use crate::app::forget::{self, Criteria, Forgotten, Outcome};
use crate::cli::report::{self, Report};
use crate::cli::{CmdResult, Failure};
use crate::store::erase::PREFIX_MIN;
use crate::store::{Store, graph, notes};

#[derive(Debug, clap::Args)]
#[command(group(
    clap::ArgGroup::new("which")
        .required(true)
        .multiple(true)
        .args(["session", "event", "pattern", "again"])
))]
pub struct Args {
    /// Forget the events of this session (an id, or a prefix of at least 4 characters naming
    /// one). Repeatable.
    #[arg(long, value_name = "id")]
    session: Vec<String>,
    /// Forget this event (its id, or a prefix of at least 4 hex digits naming one). Repeatable.
    #[arg(long, value_name = "id")]
    event: Vec<String>,
    /// Forget the events whose texts match this regular expression: summary, rationale,
    /// alternatives, the prompt they answered, tool calls, tasks, files. Repeatable. What it
    /// matches is also replaced in the local extraction state (of the --session sessions, or
    /// all) and the store's log.
    #[arg(long = "match", value_name = "regex")]
    pattern: Vec<String>,
    /// Take out again every event forgotten in this clone that is stored again (a fetch or a
    /// notes merge brought it back from a clone that still had it). Alone, or besides the
    /// other criteria (then both are forgotten).
    #[arg(long)]
    again: bool,
    /// List what would be forgotten and change nothing.
    #[arg(long, short = 'n')]
    dry_run: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let criteria = criteria(&args)?;
    let outcome = forget::forget(store, &criteria, args.dry_run)?;
    if outcome.interrupted {
        eprintln!(
            "warning: a forget was interrupted before it finished; the next one completes it"
        );
    }
    if let Some(why) = &outcome.claude_md_failure {
        eprintln!("warning: CLAUDE.md's section was not made again: {why}");
    }
    report::print(out, &outcome, args.json)?;
    if outcome.refs_changed() {
        eprintln!(
            "hint: the refs' history, and every clone and remote they were pushed to, still hold\n\
             hint: the forgotten text: see \"Purging pushed data\" in the README"
        );
    }
    Ok(())
}

/// The criteria, checked and compiled.
fn criteria(args: &Args) -> Result<Criteria, Failure> {
    let usage = |message: String| Failure::usage(anyhow!(message));
    let mut events = Vec::new();
    for id in &args.event {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(usage(format!(
                "--event {id:?}: not an event id (event ids are hex digits)"
            )));
        }
        if id.len() < PREFIX_MIN {
            return Err(usage(format!(
                "--event {id}: too short; give at least {} hex digits",
                PREFIX_MIN
            )));
        }
        events.push(id.to_ascii_lowercase());
    }
    let mut sessions = Vec::new();
    for session in &args.session {
        if session.trim().is_empty() {
            return Err(usage("--session needs a session id".to_owned()));
        }
        sessions.push(session.clone());
    }
    let mut patterns = Vec::new();
    for pattern in &args.pattern {
        if pattern.is_empty() {
            return Err(usage(
                "--match needs a regular expression (an empty one matches every event)".to_owned(),
            ));
        }
        let re = Regex::new(pattern).map_err(|e| {
            // The regex crate's message spans lines (the pattern, a caret, the reason): the
            // reason is its last line.
            let text = e.to_string();
            let reason = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid")
                .trim()
                .trim_start_matches("error: ")
                .to_owned();
            usage(format!(
                "--match {pattern:?}: not a valid regular expression: {reason}"
            ))
        })?;
        patterns.push(re);
    }
    Ok(Criteria {
        sessions,
        events,
        patterns,
        again: args.again,
    })
}

/// Say what was (or, in a dry run, would be) forgotten: which events, then where from.
impl Report for Outcome {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        say_events(self, out)?;
        say_places(self, out)
    }
}

fn say_events(outcome: &Outcome, out: &mut dyn Write) -> io::Result<()> {
    let dry_run = outcome.dry_run;
    match outcome.completed {
        Some(c) if c.events > 0 => writeln!(
            out,
            "completed an interrupted forget: {} taken out",
            plural(c.events, "event", "events")
        )?,
        Some(_) => writeln!(
            out,
            "completed an interrupted forget: its events were already taken out"
        )?,
        None => {}
    }
    if let Some(why) = &outcome.nothing {
        writeln!(out, "nothing more to forget: {why}")?;
    }
    let verb = if dry_run { "would forget" } else { "forgot" };
    if !outcome.events.is_empty() {
        writeln!(
            out,
            "{verb} {}:",
            plural(outcome.events.len(), "event", "events")
        )?;
    }
    for e in &outcome.events {
        let id: String = e.id.chars().take(12).collect();
        write!(
            out,
            "  {id}  {}  {}  {}",
            crate::sanitise::line(&e.session),
            places(e).join(","),
            e.kind
        )?;
        if let Some(summary) = &e.summary {
            write!(out, "  {}", crate::sanitise::line(summary))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn say_places(outcome: &Outcome, out: &mut dyn Write) -> io::Result<()> {
    let dry_run = outcome.dry_run;
    let deleted = match outcome.notes.notes_deleted {
        0 => String::new(),
        n => format!(" ({} deleted)", plural(n, "note", "notes")),
    };
    // "would take out 2 events" or "2 events taken out".
    let taken = |what: String| match dry_run {
        true => format!("would take out {what}"),
        false => format!("{what} taken out"),
    };
    let replaced = |what: String| match dry_run {
        true => format!("the text would be replaced in {what}"),
        false => format!("the text replaced in {what}"),
    };
    let entries = plural(outcome.notes.entries, "entry", "entries");
    let touched = plural(outcome.notes.notes, "note", "notes");
    if dry_run && outcome.notes.entries > 0 {
        writeln!(
            out,
            "{}: would take {entries} off {touched}{deleted}, and {} would be made again from the notes",
            notes::REF,
            graph::REF,
        )?;
    }
    if let Some(commit) = &outcome.notes.commit {
        writeln!(
            out,
            "{}: {entries} taken off {touched}{deleted} (commit {})",
            notes::REF,
            &commit[..7]
        )?;
    }
    if let Some(commit) = &outcome.graph.commit {
        writeln!(
            out,
            "{}: made again from the notes (commit {})",
            graph::REF,
            &commit[..7]
        )?;
    }
    if outcome.pending > 0 {
        let events = plural(outcome.pending, "event", "events");
        writeln!(out, "pending queue: {}", taken(events))?;
    }
    if outcome.pending_unreadable_lines > 0 {
        let lines = plural(
            outcome.pending_unreadable_lines,
            "unreadable line",
            "unreadable lines",
        );
        writeln!(
            out,
            "pending queue: {}",
            taken(format!("{lines} that the patterns match"))
        )?;
    }
    if outcome.replaced.extraction_states > 0 {
        let states = plural(
            outcome.replaced.extraction_states,
            "transcript",
            "transcripts",
        );
        writeln!(
            out,
            "extraction state: {}",
            replaced(format!("the saved state of {states}"))
        )?;
    }
    if outcome.replaced.log_lines > 0 {
        let lines = plural(outcome.replaced.log_lines, "line", "lines");
        writeln!(out, "log: {}", replaced(lines))?;
    }
    if outcome.claude_md == Some("updated") {
        writeln!(out, "CLAUDE.md: its section made again")?;
    }
    Ok(())
}

/// Where an event was kept: its commits (abbreviated), and `pending`.
fn places(e: &Forgotten) -> Vec<String> {
    let mut out: Vec<String> = e.commits.iter().map(|c| c[..7].to_owned()).collect();
    if e.pending {
        out.push("pending".to_owned());
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
