//! `extract`: read what is new in transcripts and store it as pending events; `import`: read
//! every past transcript of this repository, its linked worktrees and its subfolders, showing
//! its progress. Both resume where the last run stopped, by each transcript's cursor.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use serde::Serialize;

use crate::cli::progress::Transcripts;
use crate::cli::report::{self, Report};
use crate::cli::{CmdResult, Failure, display_path, warn_unread};
use crate::ingest::{self, TranscriptReport};
use crate::render::text::{by_agent, ran_by};
use crate::retrieve::index;
use crate::store::link::Signals;
use crate::store::{Store, graph};
use crate::transcript::locate::{self, Homes};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Extract these transcript files only (a teammate's, say): repeat the flag for several.
    #[arg(long, value_name = "path", conflicts_with = "session")]
    transcript: Vec<PathBuf>,
    /// Extract the transcripts (main and subagents) of this session only.
    #[arg(long, value_name = "id")]
    session: Option<String>,
    /// Print a JSON report.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Print a JSON report (as extract's).
    #[arg(long)]
    json: bool,
}

/// A bar for an extraction of at least this many bytes on a terminal.
const BAR_BYTES: u64 = 8 << 20;

/// `cwd` is where the command runs (after `-C`): relative paths are taken from there.
pub fn run(store: &Store, cwd: &Path, args: Args, out: &mut dyn Write) -> CmdResult {
    let paths = transcripts(store, cwd, &args)?;
    let progress = Transcripts::new(&paths, BAR_BYTES, false);
    let reports = read(store, &paths, !args.transcript.is_empty(), progress)?;
    let mut extracted = Extracted::of(reports);
    if extracted.transcripts.is_empty() && args.transcript.is_empty() && args.session.is_none() {
        extracted.after = nothing_found(store);
    }
    report::print(out, &extracted, args.json)
}

/// `import`: every transcript of the repository, with a line per transcript when stderr is not
/// a terminal (a bar when it is).
pub fn import(store: &Store, cwd: &Path, args: ImportArgs, out: &mut dyn Write) -> CmdResult {
    let every = Args {
        transcript: Vec::new(),
        session: None,
        json: args.json,
    };
    let paths = transcripts(store, cwd, &every)?;
    let progress = Transcripts::new(&paths, 0, true);
    let reports = read(store, &paths, false, progress)?;
    let skipped = paths.len() - reports.len();
    let mut extracted = Extracted::of(reports);
    extracted.after = match (extracted.transcripts.is_empty(), skipped) {
        (true, _) => nothing_found(store),
        (false, 0) => {
            vec![imported("every transcript of this repository is read")]
        }
        (false, n) => vec![imported(&format!(
            "{n} transcript{} could not be read (above)",
            if n == 1 { "" } else { "s" }
        ))],
    };
    report::print(out, &extracted, args.json)
}

/// The last line of an import's text: `what` became of the transcripts.
fn imported(what: &str) -> String {
    format!("{what}; an import cut short goes on where it stopped when run again")
}

/// What an extraction read and stored.
#[derive(Serialize)]
struct Extracted {
    events_added: usize,
    events_updated: usize,
    events_linked: usize,
    transcripts: Vec<TranscriptReport>,
    /// Lines the text ends with: where to look when nothing was found, how an import went.
    #[serde(skip)]
    after: Vec<String>,
}

impl Extracted {
    fn of(transcripts: Vec<TranscriptReport>) -> Extracted {
        Extracted {
            events_added: transcripts.iter().map(|r| r.events_added).sum(),
            events_updated: transcripts.iter().map(|r| r.events_updated).sum(),
            events_linked: transcripts.iter().map(|r| r.events_linked).sum(),
            transcripts,
            after: Vec::new(),
        }
    }
}

/// Read `paths` in turn under the store's lock, then bring the index up to date. A file
/// `named` by the user must be readable; in a scan, one unreadable file does not stop the others.
fn read(
    store: &Store,
    paths: &[PathBuf],
    named: bool,
    mut progress: Transcripts,
) -> Result<Vec<TranscriptReport>, Failure> {
    let lock = store.lock()?;
    // So that a commit in the hours of several sessions goes by time only where no session
    // holds it by a surer signal, whichever is read first, every session is linked by the other
    // signals before any by time.
    let several = paths.len() > 1;
    let options = ingest::Options {
        link: Some(match several {
            true => Signals::ButTime,
            false => Signals::All,
        }),
        ..ingest::Options::default()
    };
    let mut reports = Vec::new();
    for path in paths {
        progress.start(path);
        match ingest::transcript(store, path, options) {
            Ok(r) => {
                progress.read(
                    path,
                    &format!("+{} ~{} events", r.events_added, r.events_updated),
                );
                reports.push(r);
            }
            Err(e @ ingest::Error::Transcript { .. }) if named => {
                return Err(Failure::usage(e));
            }
            Err(ingest::Error::Transcript { path, source }) => {
                progress.read(&path, "skipped");
                progress.warn(&format!(
                    "warning: skipped {}: {source}",
                    display_path(&path)
                ));
            }
            Err(e) => return Err(e.into()),
        }
    }
    if several {
        let mut done = std::collections::HashSet::new();
        for report in &mut reports {
            if !report.session_id.is_empty() && done.insert(report.session_id.clone()) {
                ingest::link_session(store, report, Signals::Time)?;
            }
        }
    }
    // A transcript skipped after it changed notes leaves the graph owed.
    graph::settle(store)?;
    drop(lock);
    drop(progress);
    // The events are stored: an index that cannot follow is said, not fatal (the next read
    // tries again).
    match index::refresh(store) {
        Ok(()) => warn_unread(store),
        Err(e) => eprintln!("warning: the retrieval index was not updated: {e}"),
    }
    Ok(reports)
}

/// Where a scan that found no transcript looked, and what to do.
/// Where sessions were looked for, and how to have some: when none was found.
fn nothing_found(store: &Store) -> Vec<String> {
    let homes = Homes::from_env();
    let looked: Vec<String> = store
        .worktrees()
        .iter()
        .flat_map(|w| homes.looked_in(w))
        .map(|d| display_path(&d))
        .collect();
    if looked.is_empty() {
        return Vec::new();
    }
    vec![
        format!(
            "no session of this repository yet: looked in {}",
            looked.join(", ")
        ),
        "run `git agent-context install` here, then work with Claude Code, Codex CLI or Gemini \
         CLI in this repository: their sessions are read as they happen (or \
         `extract --transcript <file>` for a transcript kept elsewhere)"
            .to_owned(),
    ]
}

fn transcripts(store: &Store, cwd: &Path, args: &Args) -> Result<Vec<PathBuf>, Failure> {
    if !args.transcript.is_empty() {
        // One file has one cursor, whichever way (link, relative path) it is named.
        let mut paths: Vec<PathBuf> = args
            .transcript
            .iter()
            .map(|p| {
                let path = cwd.join(p);
                std::fs::canonicalize(&path).unwrap_or(path)
            })
            .collect();
        paths.sort();
        paths.dedup();
        locate::reading_order(&mut paths);
        return Ok(paths);
    }
    let workdir = store.workdir().ok_or_else(|| {
        Failure::usage(anyhow!(
            "this repository has no working tree; name a transcript with --transcript"
        ))
    })?;
    let homes = Homes::from_env();
    if homes.claude.is_none() && homes.codex.is_none() && homes.gemini.is_none() {
        return Err(Failure::usage(anyhow!(
            "cannot find the agents' folders: set HOME (or CLAUDE_CONFIG_DIR, CODEX_HOME, \
             GEMINI_CLI_HOME)"
        )));
    }
    // The sessions of every worktree: their notes are shared, whichever worktree reads them.
    let mut found = Vec::new();
    for root in store.worktrees() {
        let nested = store.nested_in(&root);
        found.extend(match &args.session {
            Some(session) => homes.session_transcripts(&root, &nested, session),
            None => homes.transcripts(&root, &nested),
        });
    }
    found.sort();
    found.dedup();
    locate::reading_order(&mut found);
    if let Some(session) = &args.session
        && found.is_empty()
    {
        let looked: Vec<String> = (homes.looked_in(workdir).iter())
            .map(|d| display_path(d))
            .collect();
        return Err(Failure::failed(anyhow!(
            "no transcript of session {session} for {} in {}",
            workdir.display(),
            looked.join(", ")
        )));
    }
    Ok(found)
}

impl Report for Extracted {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        print_human(self, out)?;
        self.after
            .iter()
            .try_for_each(|line| writeln!(out, "{line}"))
    }
}

fn print_human(extracted: &Extracted, out: &mut dyn Write) -> io::Result<()> {
    let reports = &extracted.transcripts;
    let (added, updated) = (extracted.events_added, extracted.events_updated);
    let skipped: u64 = reports.iter().map(|r| r.lines.skipped()).sum();
    let mut line = format!(
        "{added} new event{} from {} transcript{}",
        plural(added),
        reports.len(),
        plural(reports.len())
    );
    if updated > 0 {
        line.push_str(&format!(", {updated} updated"));
    }
    let linked = extracted.events_linked;
    let commits: usize = reports.iter().map(|r| r.commits_linked).sum();
    if linked > 0 {
        line.push_str(&format!(
            ", {linked} attached to {commits} commit{}",
            plural(commits)
        ));
    }
    if skipped > 0 {
        line.push_str(&format!(
            ", {skipped} unreadable line{} skipped",
            plural(skipped as usize)
        ));
    }
    writeln!(out, "{line}")?;
    if let Some(agents) = by_agent(reports.iter().map(|r| (r.agent, r.session_id.as_str()))) {
        writeln!(out, "  sessions by agent: {agents}")?;
    }
    for r in reports.iter().filter(|r| {
        r.events_added + r.events_updated > 0 || r.lines.skipped() > 0 || r.restarted.is_some()
    }) {
        let mut detail = format!(
            "  {}{}  +{} ~{}  {} line{} read",
            display_path(&r.path),
            ran_by(r.agent),
            r.events_added,
            r.events_updated,
            r.lines.read,
            plural(r.lines.read as usize)
        );
        if r.lines.skipped() > 0 {
            detail.push_str(&format!(
                ", {} malformed, {} oversized skipped",
                r.lines.malformed, r.lines.oversized
            ));
        }
        if let Some(why) = r.restarted {
            detail.push_str(&format!(" (read again from the start: {why})"));
        }
        writeln!(out, "{detail}")?;
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
