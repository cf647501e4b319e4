//! `status`: what is stored, and how far each transcript was read.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::json;

use crate::app::install::survey::{Installation, survey};
use crate::cli::report::{self, Report};
use crate::cli::{CmdResult, display_path};
use crate::config;
use crate::deliver::hookup::git_hooks::Found;
use crate::event::Kind;
use crate::ingest::Saved;
use crate::store::distill_state::Spent;
use crate::store::{self, Store, graph, notes, pending, state};
use crate::transcript::cursor::LineCounts;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// How many (commit, session) links each signal made, from the notes: the session event on
/// each commit says how the commit was found. A note that cannot be read counts for nothing
/// here (the commands that need it say so).
fn links(store: &Store) -> Result<BTreeMap<String, usize>, store::Error> {
    let repo = store.repo();
    let mut reader = notes::Reader::new(&repo)?;
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    for commit in notes::annotated(&repo)? {
        for e in reader.events(commit).unwrap_or_default() {
            if let (Kind::Session, Some(link)) = (e.kind, e.link) {
                let signal = serde_json::to_value(link.signal)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                *out.entry(signal).or_default() += 1;
            }
        }
    }
    Ok(out)
}

/// What `status` shows.
#[derive(Serialize)]
struct StatusReport {
    store: String,
    initialized: bool,
    pending: Pending,
    /// The sessions of the transcripts read.
    sessions: usize,
    links: BTreeMap<String, usize>,
    graph: Option<Graph>,
    /// Sessions whose graph nodes are behind their notes: a run that changed the notes died
    /// before it updated the graph, or the graph cannot be written.
    graph_owed_sessions: usize,
    lines: LineCounts,
    unreadable_cursors: usize,
    installed: Installation,
    distill: Distill,
    transcripts: Vec<Transcript>,
    config: Vec<Setting>,
    redact: Vec<Addition>,
    refused: Vec<Refused>,
}

#[derive(Serialize)]
struct Pending {
    events: usize,
    sessions: usize,
    by_kind: BTreeMap<Kind, usize>,
    unreadable_lines: usize,
}

#[derive(Serialize)]
struct Graph {
    #[serde(rename = "ref")]
    refname: &'static str,
    commit: String,
    sessions: usize,
    decisions: usize,
}

#[derive(Serialize)]
struct Distill {
    mode: &'static str,
    today: Spent,
    total: Spent,
    last_failure: Option<store::distill_state::Failure>,
}

/// A transcript read, and how far.
#[derive(Serialize)]
struct Transcript {
    path: String,
    session_id: String,
    /// The agent that wrote it (`codex`, `gemini-cli`); absent for Claude Code.
    #[serde(skip_serializing_if = "String::is_empty")]
    agent: String,
    offset: u64,
    /// Its size now; `None` when it is gone.
    size: Option<u64>,
    lines: LineCounts,
    tail_bytes: u64,
    compactions: u32,
    last_seen: String,
}

/// Transcripts `status` lists, at most; `--json` has every one.
const TRANSCRIPTS_SHOWN: usize = 10;

impl Transcript {
    /// Lines written since it was read.
    fn waiting(&self) -> bool {
        self.size
            .is_some_and(|size| size > self.offset + self.tail_bytes)
    }

    /// Gone, with lines not read yet, or with lines skipped.
    fn wants_a_look(&self) -> bool {
        self.size.is_none() || self.waiting() || self.lines.skipped() > 0
    }
}

/// A configuration key, its value (a text redacted) and where it came from.
#[derive(Serialize)]
struct Setting {
    key: String,
    value: serde_json::Value,
    source: String,
}

#[derive(Serialize)]
struct Addition {
    key: String,
    value: String,
    source: String,
}

#[derive(Serialize)]
struct Refused {
    key: String,
    value: String,
    source: String,
    reason: &'static str,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    report::print(out, &gather(store)?, args.json)
}

fn gather(store: &Store) -> Result<StatusReport, store::Error> {
    let pending = pending::summary(store)?;
    let mut cursors = Vec::new();
    let mut unreadable_cursors = 0;
    for saved in state::all::<Saved>(store) {
        match saved {
            Ok(s) => cursors.push(s),
            Err(_) => unreadable_cursors += 1,
        }
    }
    let usage = store::distill_state::usage(store);
    let mut lines = LineCounts::default();
    for s in &cursors {
        lines.add(s.cursor.lines);
    }
    let sessions: BTreeSet<&str> = cursors
        .iter()
        .map(|s| s.state.session_id.as_str())
        .filter(|s| !s.is_empty())
        .collect();
    let config = store.config();
    let redactor = config.redactor();
    Ok(StatusReport {
        store: store.dir().to_string_lossy().into_owned(),
        initialized: store.exists(),
        pending: Pending {
            events: pending.events,
            sessions: pending.sessions,
            by_kind: pending.by_kind,
            unreadable_lines: pending.unreadable_lines,
        },
        sessions: sessions.len(),
        links: links(store)?,
        graph: graph::summary(store)?.map(|(commit, sessions, decisions)| Graph {
            refname: graph::REF,
            commit: commit.to_string(),
            sessions,
            decisions,
        }),
        graph_owed_sessions: graph::owed(store).len(),
        lines,
        unreadable_cursors,
        installed: survey(store),
        distill: Distill {
            mode: config.distill_mode(),
            today: usage.on(&crate::distill::today()),
            total: usage.total,
            last_failure: usage.last_failure,
        },
        transcripts: (cursors.iter())
            .map(|s| Transcript {
                path: s.cursor.path.to_string_lossy().into_owned(),
                session_id: s.state.session_id.clone(),
                agent: s.state.meta.agent.clone(),
                offset: s.cursor.offset,
                size: std::fs::metadata(&s.cursor.path).map(|m| m.len()).ok(),
                lines: s.cursor.lines,
                tail_bytes: s.cursor.tail_bytes,
                compactions: s.state.compactions,
                last_seen: s.state.last_seen.clone(),
            })
            .collect(),
        config: (config.settings().iter())
            .map(|c| Setting {
                key: c.key.clone(),
                // A value may hold a secret (a password in `distill.base_url`): redacted.
                value: match &c.value {
                    config::Value::Word(w) => json!(w),
                    config::Value::Number(n) => json!(n),
                    config::Value::Text(t) => json!(redactor.redact(t)),
                },
                source: match &c.source {
                    config::Source::File(path) => path.to_string_lossy().into_owned(),
                    other => other.to_string(),
                },
            })
            .collect(),
        redact: (config.additions().iter())
            .map(|a| Addition {
                key: a.key.clone(),
                value: a.value.clone(),
                source: a.source.to_string_lossy().into_owned(),
            })
            .collect(),
        refused: (config.refused().iter())
            .map(|r| Refused {
                key: r.key.clone(),
                value: r.value.clone(),
                source: r.source.to_string_lossy().into_owned(),
                reason: r.reason,
            })
            .collect(),
    })
}

impl Report for StatusReport {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        if !self.initialized {
            writeln!(
                out,
                "agent-context is not initialized here (run `git agent-context init` or `extract`)"
            )?;
            print_installation(&self.installed, out)?;
            return self.print_config(out);
        }
        writeln!(out, "store: {}", self.store)?;
        print_installation(&self.installed, out)?;
        let kinds: Vec<String> = (self.pending.by_kind.iter())
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        let kinds = match kinds.is_empty() {
            true => String::new(),
            false => format!(" ({})", kinds.join(", ")),
        };
        writeln!(
            out,
            "pending: {} events in {} sessions{kinds}",
            self.pending.events, self.pending.sessions
        )?;
        if !self.links.is_empty() {
            let each: Vec<String> = self.links.iter().map(|(s, n)| format!("{n} {s}")).collect();
            writeln!(
                out,
                "links: {} (commit, session) pairs: {}",
                self.links.values().sum::<usize>(),
                each.join(", ")
            )?;
        }
        self.print_graph(out)?;
        let lines = &self.lines;
        writeln!(
            out,
            "transcripts: {} read, {} sessions, {} lines, {} skipped ({} malformed, {} oversized)",
            self.transcripts.len(),
            self.sessions,
            lines.read,
            lines.skipped(),
            lines.malformed,
            lines.oversized
        )?;
        let sessions = (self.transcripts.iter()).map(|t| (t.agent.as_str(), t.session_id.as_str()));
        if let Some(agents) = crate::render::text::by_agent(sessions) {
            writeln!(out, "  sessions by agent: {agents}")?;
        }
        // The transcripts that want a look first (gone, lines waiting, lines skipped), then
        // the latest read; all of them in `--json`.
        let mut shown: Vec<&Transcript> = self.transcripts.iter().collect();
        shown.sort_by(|a, b| {
            (b.wants_a_look(), &b.last_seen).cmp(&(a.wants_a_look(), &a.last_seen))
        });
        let more = shown.len().saturating_sub(TRANSCRIPTS_SHOWN);
        shown.truncate(TRANSCRIPTS_SHOWN);
        for t in shown {
            let progress = match t.size {
                Some(size) if t.waiting() => {
                    format!("{} of {size} bytes (new lines waiting)", t.offset)
                }
                Some(size) => format!("{size} bytes"),
                None => "gone".to_owned(),
            };
            writeln!(
                out,
                "  {}{}  {progress}, {} skipped",
                display_path(Path::new(&t.path)),
                crate::render::text::ran_by(&t.agent),
                t.lines.skipped()
            )?;
        }
        if more > 0 {
            writeln!(
                out,
                "  … and {more} more (`git agent-context status --json` lists every one)"
            )?;
        }
        self.print_distill(out)?;
        self.print_config(out)?;
        if self.unreadable_cursors > 0 {
            writeln!(
                out,
                "warning: {} cursor file(s) unreadable; their transcripts will be read again",
                self.unreadable_cursors
            )?;
        }
        if self.pending.unreadable_lines > 0 {
            writeln!(
                out,
                "warning: {} pending line(s) unreadable (kept as they are)",
                self.pending.unreadable_lines
            )?;
        }
        Ok(())
    }
}

/// What is installed where: each scope, the git hooks, the notes config.
fn print_installation(installed: &Installation, out: &mut dyn Write) -> io::Result<()> {
    use crate::sanitise::line;
    writeln!(out, "installed:")?;
    for s in &installed.scopes {
        let mut parts = Vec::new();
        if !s.hooks.is_empty() {
            let commands: Vec<String> = s.commands.iter().map(|c| line(c)).collect();
            parts.push(format!(
                "hooks for {} events, running {}",
                s.hooks.len(),
                commands.join(" and ")
            ));
        }
        if let Some(mcp) = &s.mcp {
            parts.push(format!(
                "MCP server in {}, running {}",
                mcp.file,
                line(&mcp.command)
            ));
        }
        for plugin in &s.plugins {
            parts.push(format!("plugin {} enabled", line(plugin)));
        }
        for e in &s.errors {
            parts.push(format!("unreadable: {}", line(e)));
        }
        if parts.is_empty() {
            parts.push("nothing".to_owned());
        }
        let scope = s.scope.as_str();
        let settings = match s.settings.as_str() {
            "" => String::new(),
            file => format!(" ({file})"),
        };
        writeln!(out, "  {scope}{settings}: {}", parts.join("; "))?;
    }
    for a in &installed.agents {
        let trusted = match a.trusted {
            Some(true) => ", trusted",
            Some(false) => ", not trusted (Codex CLI runs none of them)",
            None => "",
        };
        writeln!(
            out,
            "  {} {} ({}): hooks for {} events{trusted}",
            a.agent.title(),
            a.scope.as_str(),
            a.settings,
            a.hooks.len()
        )?;
    }
    let git = &installed.git_hooks;
    let ours: Vec<&str> = (git.hooks.iter())
        .filter(|h| h.found == Found::Ours)
        .map(|h| h.name)
        .collect();
    let running = match &git.runs {
        _ if ours.is_empty() => String::new(),
        Some(binary) => format!(", running {}", line(binary)),
        None => ", which find no git-agent-context to run".to_owned(),
    };
    let hooks = match ours.is_empty() {
        true => "none of ours".to_owned(),
        false => ours.join(", "),
    };
    writeln!(out, "  git hooks ({}): {hooks}{running}", git.folder)?;
    writeln!(
        out,
        "  notes follow amend and rebase: {}",
        if installed.notes_rewrite { "yes" } else { "no" }
    )?;
    Ok(())
}

impl StatusReport {
    /// The graph's line, and one saying it is behind the notes when it is.
    fn print_graph(&self, out: &mut dyn Write) -> io::Result<()> {
        match &self.graph {
            Some(g) => writeln!(
                out,
                "graph: {} at {}: {} sessions, {} decisions",
                g.refname,
                &g.commit[..7],
                g.sessions,
                g.decisions
            )?,
            None => writeln!(
                out,
                "graph: none yet ({} is made when events reach a commit)",
                graph::REF
            )?,
        }
        if self.graph_owed_sessions > 0 {
            writeln!(
                out,
                "graph: behind the notes for {} sessions (the next update takes them in; \
                 `git agent-context rebuild` does at once)",
                self.graph_owed_sessions
            )?;
        }
        Ok(())
    }

    /// Distillation: its mode, what it spent today and in all, its last failure.
    fn print_distill(&self, out: &mut dyn Write) -> io::Result<()> {
        let spent = |s: Spent| {
            format!(
                "{} calls, {} tokens, ${:.4}",
                s.calls,
                s.tokens(),
                s.cost_usd
            )
        };
        let d = &self.distill;
        writeln!(
            out,
            "distill: {}; today {}; in all {} (estimated cost)",
            d.mode,
            spent(d.today),
            spent(d.total)
        )?;
        if let Some(f) = &d.last_failure {
            let line = format!("session {}: {}", f.session_id, f.message);
            writeln!(
                out,
                "  last failure, {}: {}",
                crate::sanitise::line(&f.time),
                crate::sanitise::line(&line)
            )?;
        }
        Ok(())
    }

    /// Each configuration key, its value and where the value came from; what the files add
    /// to redaction, and what the shared file set that was left out.
    fn print_config(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "config:")?;
        for s in &self.config {
            let value = match &s.value {
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            writeln!(out, "  {} = {value}  ({})", s.key, shown(&s.source))?;
        }
        if !self.redact.is_empty() {
            writeln!(out, "redaction, beyond the defaults:")?;
            for a in &self.redact {
                let (key, value) = (&a.key, quoted(&a.value));
                writeln!(out, "  {key} += {value}  ({})", shown(&a.source))?;
            }
        }
        for r in &self.refused {
            let (key, value) = (&r.key, quoted(&r.value));
            writeln!(
                out,
                "warning: {} sets {key} = {value}, left out: {}",
                shown(&r.source),
                r.reason
            )?;
        }
        Ok(())
    }
}

/// Where a value came from, as the text shows it: a file relative to the home folder.
fn shown(source: &str) -> String {
    display_path(Path::new(source))
}

/// A configured pattern on one line, as TOML would quote it.
fn quoted(value: &str) -> String {
    toml_edit::Value::from(value).to_string().trim().to_owned()
}
