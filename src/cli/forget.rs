//! `forget`: take events out of the notes, the decision graph, the pending queue and the local
//! caches (docs/security.md, "Forgetting, and purging what was pushed"), by session, by id or by
//! what they say.
//!
//! As with `git log --author --grep`, each kind of criterion given narrows the choice and
//! several values of one kind are alternatives: `--session A --match KEY` forgets the events of
//! A that mention KEY. Every `--session` and `--event` given must name something stored, or
//! nothing is forgotten (as `git rm` with a pathspec that matches no file). The refs get new
//! commits; their history keeps the old text, which docs/security.md says how to purge (the
//! hint printed after a forget points there through the README's "Purging pushed data").
//!
//! What was forgotten is remembered in this clone only. A notes ref fetched or merged from a
//! clone that still has a forgotten event brings it back (`git notes merge -s cat_sort_uniq`
//! keeps the lines of both sides of a note both changed); `--again` takes out every event
//! forgotten here that is stored again.

use std::collections::BTreeSet;
use std::io::Write;

use anyhow::anyhow;
use regex::Regex;
use serde_json::json;

use crate::cli::failure::Code;
use crate::cli::{CmdResult, Failure, write_json};
use crate::deliver::{claude_md, continuation};
use crate::retrieve::index;
use crate::store::forget::{self, Inventory, RawLine, Removed, Resolved, Scrubbed, Stored};
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

/// The criteria, checked and compiled.
struct Criteria {
    sessions: Vec<String>,
    events: Vec<String>,
    patterns: Vec<Regex>,
    again: bool,
}

impl Criteria {
    /// Whether a `--session`, `--event` or `--match` was given.
    fn any(&self) -> bool {
        !(self.sessions.is_empty() && self.events.is_empty() && self.patterns.is_empty())
    }
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let criteria = criteria(&args)?;
    if args.dry_run {
        let inventory = forget::inventory(store, &criteria.patterns)?;
        let chosen = choose(store, &inventory, &criteria)?;
        if forget::interrupted(store) {
            eprintln!(
                "warning: a forget was interrupted before it finished; the next one completes it"
            );
        }
        let scrubbed = forget::scrub(store, &criteria.patterns, &chosen.sessions, false)?;
        if chosen.is_empty() && scrubbed.is_empty() {
            return Err(Failure::failed(nothing(&args)));
        }
        let outcome = Outcome {
            emptied: inventory.notes_emptied(&chosen.events),
            choice: chosen,
            removed: None,
            scrubbed,
            completed: None,
            nothing: None,
            claude_md: None,
        };
        return report(&outcome, args.json, out);
    }

    // Without a store, nothing is written before the choice is known to be good.
    if !store.exists() {
        let inventory = forget::inventory(store, &criteria.patterns)?;
        if choose(store, &inventory, &criteria)?.is_empty() {
            return Err(Failure::failed(nothing(&args)));
        }
    }
    let lock = store.lock()?;
    let completed = complete_interrupted(store)?;
    let inventory = forget::inventory(store, &criteria.patterns)?;
    // The same command run again after it died finds what it named gone: the completed forget
    // was its work.
    let (chosen, unresolved) = match choose(store, &inventory, &criteria) {
        Ok(chosen) => (chosen, None),
        // Its text is replaced in the states of the sessions it named, as given (none given:
        // every session's); never in every session's because one it named is gone.
        Err(failure) if completed.is_some() && failure.code() == Code::Failed => {
            let why = failure.into_error();
            let named = Choice {
                sessions: criteria.sessions.clone(),
                ..Choice::default()
            };
            (named, Some(why))
        }
        Err(e) => return Err(e),
    };
    let emptied = inventory.notes_emptied(&chosen.events);
    let removed = match chosen.is_empty() {
        true => Removed::default(),
        false => forget::remove(store, &chosen.events, &chosen.lines)?,
    };
    // Only what it changes is written: with nothing chosen and nothing replaced, nothing was.
    let scrubbed = forget::scrub(store, &criteria.patterns, &chosen.sessions, true)?;
    let nothing = (chosen.is_empty() && scrubbed.is_empty())
        .then(|| unresolved.unwrap_or_else(|| nothing(&args)));
    let nothing = match (nothing, completed) {
        (Some(why), None) => return Err(Failure::failed(why)),
        (nothing, _) => nothing,
    };
    if !chosen.is_empty() {
        let sessions: BTreeSet<&str> = chosen.events.iter().map(|e| e.session.as_str()).collect();
        clear_caches(store, removed.notes_commit.is_some(), sessions)?;
    }
    // CLAUDE.md quotes the graph, and may be committed: it is made again before the forget is
    // marked done, so that a forget killed before then is completed up to it.
    let claude_md = match chosen.is_empty() && completed.is_none() {
        true => None,
        false => refresh_claude_md(store),
    };
    if forget::interrupted(store) {
        forget::finish(store)?;
    }
    drop(lock);
    let outcome = Outcome {
        choice: chosen,
        emptied,
        removed: Some(removed),
        scrubbed,
        completed,
        nothing,
        claude_md,
    };
    report(&outcome, args.json, out)
}

/// "Nothing found", naming the criteria.
fn nothing(args: &Args) -> anyhow::Error {
    let mut given = Vec::new();
    given.extend(args.session.iter().map(|s| format!("--session {s}")));
    given.extend(args.event.iter().map(|e| format!("--event {e}")));
    given.extend(args.pattern.iter().map(|p| format!("--match {p:?}")));
    let again = "no event forgotten in this clone is stored again";
    match (given.is_empty(), args.again) {
        (true, _) => anyhow!("nothing to forget: {again}"),
        (false, false) => anyhow!(
            "nothing to forget: no stored event meets {}",
            given.join(" and ")
        ),
        (false, true) => anyhow!(
            "nothing to forget: no stored event meets {}, and {again}",
            given.join(" and ")
        ),
    }
}

fn criteria(args: &Args) -> Result<Criteria, Failure> {
    let usage = |message: String| Failure::usage(anyhow!(message));
    let mut events = Vec::new();
    for id in &args.event {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(usage(format!(
                "--event {id:?}: not an event id (event ids are hex digits)"
            )));
        }
        if id.len() < forget::PREFIX_MIN {
            return Err(usage(format!(
                "--event {id}: too short; give at least {} hex digits",
                forget::PREFIX_MIN
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

/// What the criteria choose: events, and the queue's unreadable lines that `--match` finds;
/// with the sessions `--session` named, in full.
#[derive(Default)]
struct Choice<'i> {
    events: Vec<&'i Stored>,
    lines: Vec<&'i RawLine>,
    sessions: Vec<String>,
}

impl Choice<'_> {
    fn is_empty(&self) -> bool {
        self.events.is_empty() && self.lines.is_empty()
    }
}

/// What the criteria choose. A `--session` or `--event` that names nothing stored is "nothing
/// found" (exit 1); a prefix naming several, bad input.
fn choose<'i>(
    store: &Store,
    inventory: &'i Inventory,
    criteria: &Criteria,
) -> Result<Choice<'i>, Failure> {
    let mut sessions = Vec::new();
    for name in &criteria.sessions {
        match inventory.session(name) {
            Resolved::One(id) => sessions.push(id),
            Resolved::None => {
                return Err(Failure::failed(anyhow!(
                    "no stored event is of session {name}"
                )));
            }
            Resolved::Ambiguous(n) => {
                return Err(Failure::usage(anyhow!(
                    "--session {name} is ambiguous: {n} sessions start with it"
                )));
            }
        }
    }
    let mut events = Vec::new();
    for name in &criteria.events {
        match inventory.event(name) {
            Resolved::One(id) => events.push(id),
            Resolved::None => {
                return Err(Failure::failed(anyhow!("no stored event has id {name}")));
            }
            Resolved::Ambiguous(n) => {
                return Err(Failure::usage(anyhow!(
                    "--event {name} is ambiguous: {n} events start with it"
                )));
            }
        }
    }
    let mut chosen = match criteria.any() {
        true => inventory.select(&sessions, &events, !criteria.patterns.is_empty()),
        false => Vec::new(),
    };
    if criteria.again {
        for e in inventory.already_forgotten(store)? {
            if !chosen.iter().any(|c| c.id == e.id) {
                chosen.push(e);
            }
        }
    }
    let lines = match criteria.events.is_empty() {
        true => inventory.lines(&sessions),
        false => Vec::new(),
    };
    Ok(Choice {
        events: chosen,
        lines,
        sessions,
    })
}

/// What completing a forget that died did.
#[derive(Debug, Clone, Copy)]
struct Completed {
    /// The forgotten events it had left stored, taken out now.
    events: usize,
    /// Whether that changed the refs.
    refs_changed: bool,
}

/// Finish a forget that died part way (its ids are remembered): the same steps for every
/// forgotten event still stored, and the graph and caches made again; the caller makes
/// CLAUDE.md again and marks it done ([`forget::finish`]). `None` when none died.
fn complete_interrupted(store: &Store) -> Result<Option<Completed>, Failure> {
    if !forget::interrupted(store) {
        return Ok(None);
    }
    let inventory = forget::inventory(store, &[])?;
    let left = inventory.already_forgotten(store)?;
    let removed = forget::remove(store, &left, &[])?;
    let forgotten = crate::store::forgotten::all(store)?;
    clear_caches(
        store,
        true,
        forgotten.values().map(String::as_str).collect(),
    )?;
    Ok(Some(Completed {
        events: left.len(),
        refs_changed: removed.notes_commit.is_some() || removed.graph.commit.is_some(),
    }))
}

/// The local caches made from the forgotten events: the retrieval index (made from the notes)
/// is made again when they changed, and the sessions' saved continuation summaries go (they
/// are made again from the store).
fn clear_caches(
    store: &Store,
    notes_changed: bool,
    sessions: BTreeSet<&str>,
) -> Result<(), Failure> {
    if notes_changed {
        index::rebuild(store)?;
    }
    for session in sessions {
        continuation::discard(store, session)?;
    }
    Ok(())
}

/// CLAUDE.md's generated section quotes the graph: when the file has one, it is made again.
/// `None` when there is none; a failure is said, not fatal (the events are forgotten).
fn refresh_claude_md(store: &Store) -> Option<&'static str> {
    let path = store.workdir()?.join(claude_md::FILE);
    let text = std::fs::read_to_string(&path).ok()?;
    if !text.contains(claude_md::BEGIN) {
        return None;
    }
    match claude_md::refresh_if_changed(store) {
        Ok(claude_md::Refreshed::Unchanged) => Some("unchanged"),
        Ok(_) => Some("updated"),
        Err(e) => {
            eprintln!("warning: CLAUDE.md's section was not made again: {e}");
            Some("failed")
        }
    }
}

/// Where an event is kept: its commits (abbreviated), and `pending`.
fn places(e: &Stored, short: bool) -> Vec<String> {
    let mut out: Vec<String> = e
        .commits
        .iter()
        .map(|c| match short {
            true => c.to_hex_with_len(7).to_string(),
            false => c.to_string(),
        })
        .collect();
    if e.pending {
        out.push("pending".to_owned());
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What a forget did, or would do.
struct Outcome<'i> {
    choice: Choice<'i>,
    /// How many notes the chosen events leave empty.
    emptied: usize,
    /// `None` in a dry run.
    removed: Option<Removed>,
    scrubbed: Scrubbed,
    /// The forget that died, completed first.
    completed: Option<Completed>,
    /// Why nothing more was chosen, when an interrupted forget was all there was to do.
    nothing: Option<anyhow::Error>,
    /// What became of CLAUDE.md's section, when the file has one.
    claude_md: Option<&'static str>,
}

/// Say what was (or, in a dry run, would be) forgotten. The forgotten text is shown by a dry
/// run only, which is for deciding; a forget lists ids and places.
fn report(outcome: &Outcome<'_>, json: bool, out: &mut dyn Write) -> CmdResult {
    let Outcome {
        choice,
        emptied,
        removed,
        scrubbed,
        completed,
        nothing,
        claude_md,
    } = outcome;
    let emptied = *emptied;
    let removed = removed.as_ref();
    let dry_run = removed.is_none();
    let chosen = &choice.events;
    let lines = removed.map_or(choice.lines.len(), |r| r.lines_from_pending);
    let in_notes: usize = chosen.iter().map(|e| e.commits.len()).sum();
    let notes_touched: BTreeSet<_> = chosen.iter().flat_map(|e| e.commits.iter()).collect();
    let pending = chosen.iter().filter(|e| e.pending).count();
    if json {
        let events: Vec<serde_json::Value> = chosen
            .iter()
            .map(|e| {
                let mut v = json!({
                    "id": e.id,
                    "session": e.session,
                    "kind": e.kind.to_string(),
                    "timestamp": e.timestamp,
                    "commits": e.commits.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "pending": e.pending,
                });
                if dry_run {
                    v["summary"] = json!(e.summary);
                }
                v
            })
            .collect();
        return write_json(
            out,
            &json!({
                "schema_version": 1,
                "dry_run": dry_run,
                "events": events,
                "notes": {
                    "ref": notes::REF,
                    "entries": removed.map_or(in_notes, |r| r.from_notes),
                    "notes": notes_touched.len(),
                    "notes_deleted": emptied,
                    "commit": removed.and_then(|r| r.notes_commit).map(|c| c.to_string()),
                },
                "pending": removed.map_or(pending, |r| r.from_pending),
                "pending_unreadable_lines": lines,
                "graph": {
                    "ref": graph::REF,
                    "commit": removed.and_then(|r| r.graph.commit).map(|c| c.to_string()),
                },
                "replaced": {
                    "extraction_states": scrubbed.states,
                    "log_lines": scrubbed.log_lines,
                },
                "completed_interrupted": completed.map_or(0, |c| c.events),
                "claude_md": claude_md,
            }),
        );
    }
    match completed {
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
    if let Some(why) = nothing {
        let why = why.to_string();
        let why = why.strip_prefix("nothing to forget: ").unwrap_or(&why);
        writeln!(out, "nothing more to forget: {why}")?;
    }
    let verb = if dry_run { "would forget" } else { "forgot" };
    if !chosen.is_empty() {
        writeln!(out, "{verb} {}:", plural(chosen.len(), "event", "events"))?;
    }
    for e in chosen {
        let id: String = e.id.chars().take(12).collect();
        write!(
            out,
            "  {id}  {}  {}  {}",
            crate::sanitise::line(&e.session),
            places(e, true).join(","),
            e.kind
        )?;
        if dry_run {
            write!(out, "  {}", crate::sanitise::line(&e.summary))?;
        }
        writeln!(out)?;
    }
    let deleted = match emptied {
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
    match removed {
        None => {
            if in_notes > 0 {
                writeln!(
                    out,
                    "{}: would take {} off {}{deleted}, and {} would be made again from the notes",
                    notes::REF,
                    plural(in_notes, "entry", "entries"),
                    plural(notes_touched.len(), "note", "notes"),
                    graph::REF,
                )?;
            }
        }
        Some(r) => {
            if let Some(commit) = r.notes_commit {
                writeln!(
                    out,
                    "{}: {} taken off {}{deleted} (commit {})",
                    notes::REF,
                    plural(r.from_notes, "entry", "entries"),
                    plural(notes_touched.len(), "note", "notes"),
                    commit.to_hex_with_len(7)
                )?;
            }
            if let Some(commit) = r.graph.commit {
                writeln!(
                    out,
                    "{}: made again from the notes (commit {})",
                    graph::REF,
                    commit.to_hex_with_len(7)
                )?;
            }
        }
    }
    let pending = removed.map_or(pending, |r| r.from_pending);
    if pending > 0 {
        let events = plural(pending, "event", "events");
        writeln!(out, "pending queue: {}", taken(events))?;
    }
    if lines > 0 {
        let lines = plural(lines, "unreadable line", "unreadable lines");
        writeln!(
            out,
            "pending queue: {}",
            taken(format!("{lines} that the patterns match"))
        )?;
    }
    if scrubbed.states > 0 {
        let states = plural(scrubbed.states, "transcript", "transcripts");
        writeln!(
            out,
            "extraction state: {}",
            replaced(format!("the saved state of {states}"))
        )?;
    }
    if scrubbed.log_lines > 0 {
        let lines = plural(scrubbed.log_lines, "line", "lines");
        writeln!(out, "log: {}", replaced(lines))?;
    }
    if *claude_md == Some("updated") {
        writeln!(out, "CLAUDE.md: its section made again")?;
    }
    let refs_changed = removed
        .is_some_and(|r| r.notes_commit.is_some() || r.graph.commit.is_some())
        || completed.is_some_and(|c| c.refs_changed);
    if refs_changed {
        eprintln!(
            "hint: the refs' history, and every clone and remote they were pushed to, still hold\n\
             hint: the forgotten text: see \"Purging pushed data\" in the README"
        );
    }
    Ok(())
}
