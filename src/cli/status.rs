//! `status`: what is stored, and how far each transcript was read.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::json;

use crate::cli::install::survey::{Installation, survey};
use crate::cli::{CmdResult, display_path, write_json};
use crate::config;
use crate::deliver::install::git_hooks::Found;
use crate::event::Kind;
use crate::ingest::Saved;
use crate::store::distill::{Spent, Usage};
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

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let pending = pending::summary(store)?;
    let links = links(store)?;
    let graph = graph::summary(store)?;
    let mut cursors = Vec::new();
    let mut unreadable_states = 0;
    for saved in state::all::<Saved>(store) {
        match saved {
            Ok(s) => cursors.push(s),
            Err(_) => unreadable_states += 1,
        }
    }
    let installed = survey(store);
    let usage = store::distill::usage(store);
    let today = usage.on(&crate::distill::today());
    let mut lines = LineCounts::default();
    for s in &cursors {
        lines.add(s.cursor.lines);
    }
    let sessions: std::collections::BTreeSet<&str> = cursors
        .iter()
        .map(|s| s.state.session_id.as_str())
        .filter(|s| !s.is_empty())
        .collect();

    if args.json {
        let by_kind: serde_json::Map<String, serde_json::Value> = pending
            .by_kind
            .iter()
            .map(|(k, n)| (k.to_string(), json!(n)))
            .collect();
        let value = json!({
            "schema_version": 1,
            "store": store.dir().to_string_lossy(),
            "initialized": store.exists(),
            "pending": {
                "events": pending.events,
                "sessions": pending.sessions,
                "by_kind": by_kind,
                "unreadable_lines": pending.unreadable_lines,
            },
            "sessions": sessions.len(),
            "links": links,
            "graph": graph.map(|(commit, sessions, decisions)| json!({
                "ref": graph::REF,
                "commit": commit.to_string(),
                "sessions": sessions,
                "decisions": decisions,
            })),
            "lines": { "read": lines.read, "malformed": lines.malformed, "oversized": lines.oversized },
            "unreadable_cursors": unreadable_states,
            "installed": installed,
            "distill": {
                "mode": store.config().distill_mode(),
                "today": today,
                "total": usage.total,
                "last_failure": usage.last_failure,
            },
            "transcripts": cursors.iter().map(|s| json!({
                "path": s.cursor.path.to_string_lossy(),
                "session_id": s.state.session_id,
                "offset": s.cursor.offset,
                "size": std::fs::metadata(&s.cursor.path).map(|m| m.len()).ok(),
                "lines": s.cursor.lines,
                "tail_bytes": s.cursor.tail_bytes,
                "compactions": s.state.compactions,
                "last_seen": s.state.last_seen,
            })).collect::<Vec<_>>(),
            "config": store.config().settings().iter().map(|c| json!({
                "key": c.key,
                "value": match &c.value {
                    config::Value::Word(w) => json!(w),
                    config::Value::Number(n) => json!(n),
                    config::Value::Text(t) => json!(store.config().redactor().redact(t)),
                },
                "source": match &c.source {
                    config::Source::Default => json!("default"),
                    config::Source::File(path) => json!(path.to_string_lossy()),
                    config::Source::Env(var) => json!(format!("${var}")),
                },
            })).collect::<Vec<_>>(),
            "redact": store.config().additions().iter().map(|a| json!({
                "key": a.key,
                "value": a.value,
                "source": a.source.to_string_lossy(),
            })).collect::<Vec<_>>(),
            "refused": store.config().refused().iter().map(|r| json!({
                "key": r.key,
                "value": r.value,
                "source": r.source.to_string_lossy(),
                "reason": r.reason,
            })).collect::<Vec<_>>(),
        });
        return write_json(out, &value);
    }

    if !store.exists() {
        writeln!(
            out,
            "agent-context is not initialized here (run `git agent-context init` or `extract`)"
        )?;
        print_installation(&installed, out)?;
        return print_config(store, out);
    }
    writeln!(out, "store: {}", store.dir().display())?;
    print_installation(&installed, out)?;
    let kinds: Vec<String> = pending
        .by_kind
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let kinds = if kinds.is_empty() {
        String::new()
    } else {
        format!(" ({})", kinds.join(", "))
    };
    writeln!(
        out,
        "pending: {} events in {} sessions{kinds}",
        pending.events, pending.sessions
    )?;
    if !links.is_empty() {
        let each: Vec<String> = links.iter().map(|(s, n)| format!("{n} {s}")).collect();
        writeln!(
            out,
            "links: {} (commit, session) pairs: {}",
            links.values().sum::<usize>(),
            each.join(", ")
        )?;
    }
    match graph {
        Some((commit, sessions, decisions)) => writeln!(
            out,
            "graph: {} at {}: {sessions} sessions, {decisions} decisions",
            graph::REF,
            commit.to_hex_with_len(7)
        )?,
        None => writeln!(
            out,
            "graph: none yet ({} is made when events reach a commit)",
            graph::REF
        )?,
    }
    writeln!(
        out,
        "transcripts: {} read, {} sessions, {} lines, {} skipped ({} malformed, {} oversized)",
        cursors.len(),
        sessions.len(),
        lines.read,
        lines.skipped(),
        lines.malformed,
        lines.oversized
    )?;
    for s in &cursors {
        let size = std::fs::metadata(&s.cursor.path).map(|m| m.len());
        let progress = match size {
            Ok(size) if size > s.cursor.offset + s.cursor.tail_bytes => {
                format!("{} of {size} bytes (new lines waiting)", s.cursor.offset)
            }
            Ok(size) => format!("{size} bytes"),
            Err(_) => "gone".to_owned(),
        };
        writeln!(
            out,
            "  {}  {progress}, {} skipped",
            display_path(&s.cursor.path),
            s.cursor.lines.skipped()
        )?;
    }
    print_distill(store, &usage, today, out)?;
    print_config(store, out)?;
    if unreadable_states > 0 {
        writeln!(
            out,
            "warning: {unreadable_states} cursor file(s) unreadable; their transcripts will be read again"
        )?;
    }
    if pending.unreadable_lines > 0 {
        writeln!(
            out,
            "warning: {} pending line(s) unreadable (kept as they are)",
            pending.unreadable_lines
        )?;
    }
    Ok(())
}

/// What is installed where: each scope, the git hooks, the notes config.
fn print_installation(installed: &Installation, out: &mut dyn Write) -> CmdResult {
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

/// Distillation: its mode, what it spent today and in all, its last failure.
fn print_distill(store: &Store, usage: &Usage, today: Spent, out: &mut dyn Write) -> CmdResult {
    let spent = |s: Spent| {
        format!(
            "{} calls, {} tokens, ${:.4}",
            s.calls,
            s.tokens(),
            s.cost_usd
        )
    };
    writeln!(
        out,
        "distill: {}; today {}; in all {} (estimated cost)",
        store.config().distill_mode(),
        spent(today),
        spent(usage.total)
    )?;
    if let Some(f) = &usage.last_failure {
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

/// Each configuration key, its value and where the value came from.
fn print_config(store: &Store, out: &mut dyn Write) -> CmdResult {
    writeln!(out, "config:")?;
    for setting in store.config().settings() {
        let source = match &setting.source {
            config::Source::File(path) => display_path(path),
            other => other.to_string(),
        };
        // A value may hold a secret (a password in `distill.base_url`): shown redacted.
        let value = setting.value.to_string();
        let value = store.config().redactor().redact(&value);
        writeln!(out, "  {} = {value}  ({source})", setting.key)?;
    }
    let config = store.config();
    if !config.additions().is_empty() {
        writeln!(out, "redaction, beyond the defaults:")?;
        for a in config.additions() {
            let (key, value) = (&a.key, quoted(&a.value));
            writeln!(out, "  {key} += {value}  ({})", display_path(&a.source))?;
        }
    }
    for r in config.refused() {
        let (key, value) = (&r.key, quoted(&r.value));
        writeln!(
            out,
            "warning: {} sets {key} = {value}, left out: {}",
            display_path(&r.source),
            r.reason
        )?;
    }
    Ok(())
}

/// A configured pattern on one line, as TOML would quote it.
fn quoted(value: &str) -> String {
    toml_edit::Value::from(value).to_string().trim().to_owned()
}
