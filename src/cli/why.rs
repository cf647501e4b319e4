//! `why <path>[:<start>-<end>]`: the commits that own a file's lines, and their reasoning.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::cli::report::{self, Report};
use crate::cli::terminal::{self, Look};
use crate::cli::{CmdResult, repo_path, warn_unread};
use crate::event::{Event, truncate_words};
use crate::render::text::{Palette, ran_by};
use crate::retrieve::why::{self, Lines, Why};
use crate::sanitise;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A file tracked at HEAD, optionally with a line range: `src/cache.rs:10-40`.
    target: String,
    /// Attribute lines with a blame of the file's history (as `git blame` does), however long
    /// it is. Without it, the blame is used when the history back to the file's oldest
    /// annotated commit is short (5,000 commits), and the index of the lines annotated
    /// commits added otherwise.
    #[arg(long, conflicts_with = "fast")]
    exact: bool,
    /// Attribute lines by the index alone, without walking history: as fast on a huge
    /// repository as on a small one, and close to the blame.
    #[arg(long)]
    fast: bool,
    /// Also show what the session explored and thought without deciding (explorations and
    /// unclassified thinking), which is mostly narration; JSON always has it.
    #[arg(long)]
    all: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(store: &Store, cwd: &Path, args: Args, look: Look, out: &mut dyn Write) -> CmdResult {
    let target = why::parse_target(&args.target)?;
    let path = repo_path(store, cwd, target.path)?;
    let by = match (args.exact, args.fast) {
        (true, _) => why::By::Blame,
        (_, true) => why::By::Index,
        _ => why::By::Either,
    };
    let answer = why::why(store, &path, target.range, by)?;
    if !args.exact {
        warn_unread(store);
    }
    let report = WhyReport {
        path: &answer.path,
        lines: answer.lines,
        range: answer.range,
        commits: &answer.owners,
        unexplained_lines: answer.unexplained_lines,
        uncommitted: answer.uncommitted.as_ref(),
        answer: &answer,
        palette: Palette {
            color: !args.json && terminal::use_color(store, look.color, look.paging),
        },
        all: args.all,
    };
    report::print(out, &report, args.json)
}

/// The commits that own the lines asked about, and their reasoning: the answer's fields, its
/// owners as `commits`.
#[derive(Serialize)]
struct WhyReport<'a> {
    path: &'a str,
    lines: u32,
    range: Lines,
    commits: &'a [why::Owner],
    unexplained_lines: u32,
    uncommitted: Option<&'a why::Uncommitted>,
    #[serde(skip)]
    answer: &'a Why,
    #[serde(skip)]
    palette: Palette,
    /// Explorations and unclassified thinking too, in the text (the JSON has them always).
    #[serde(skip)]
    all: bool,
}

impl Report for WhyReport<'_> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        print_human(self.answer, self.palette, self.all, out)
    }
}

/// `answer` as text, its commit ids and kinds of reasoning coloured as `p` says; explorations
/// and unclassified thinking only with `all`.
pub(super) fn print_human(
    answer: &Why,
    p: Palette,
    all: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let Lines { start, end } = answer.range;
    let asked = if (start, end) == (1, answer.lines) {
        format!(
            "{} line{}",
            answer.lines,
            if answer.lines == 1 { "" } else { "s" }
        )
    } else {
        format!("lines {start}-{end} of {}", answer.lines)
    };
    if answer.owners.is_empty() {
        writeln!(
            out,
            "{}: no reasoning recorded for its {asked}",
            sanitise::line(&answer.path)
        )?;
        return print_uncommitted(answer, p, all, out);
    }
    writeln!(
        out,
        "{} ({asked}): {} commit{} with reasoning, {} line{} without",
        sanitise::line(&answer.path),
        answer.owners.len(),
        if answer.owners.len() == 1 { "" } else { "s" },
        answer.unexplained_lines,
        if answer.unexplained_lines == 1 {
            ""
        } else {
            "s"
        },
    )?;
    for owner in &answer.owners {
        let ranges: Vec<String> = owner
            .lines
            .iter()
            .map(|l| {
                if l.start == l.end {
                    l.start.to_string()
                } else {
                    format!("{}-{}", l.start, l.end)
                }
            })
            .collect();
        writeln!(out)?;
        writeln!(
            out,
            "{}  {}  {}",
            p.commit(&owner.commit[..7]),
            owner.date.get(..10).unwrap_or(&owner.date),
            sanitise::line(&owner.subject)
        )?;
        writeln!(out, "  lines {}", ranges.join(", "))?;
        for s in &owner.sessions {
            let by = ran_by(&s.agent);
            match s.request.as_str() {
                "" => writeln!(out, "  session {}{by}", sanitise::line(&s.id))?,
                request => writeln!(
                    out,
                    "  session {}{by}: {}",
                    sanitise::line(&s.id),
                    sanitise::line(request)
                )?,
            }
        }
        let several = owner.sessions.len() > 1;
        // A prompt is shown when it changes; the session's request is shown already.
        let mut last_prompt = match owner.sessions.as_slice() {
            [only] => only.request.as_str(),
            _ => "",
        };
        for e in by_prompt(owner.events.iter().filter(|e| all || shown(e))) {
            print_event(e, several, &mut last_prompt, p, out)?;
        }
    }
    print_uncommitted(answer, p, all, out)
}

/// `events` (in the order they are shown: what was decided and ruled out first) with those of
/// each session's prompt together, so that a prompt is named once: those with no prompt
/// recorded first, then the prompt of the first event, each prompt's events in their order.
fn by_prompt<'e>(events: impl Iterator<Item = &'e Event>) -> Vec<&'e Event> {
    let mut groups: Vec<((&str, &str), Vec<&Event>)> = Vec::new();
    for e in events {
        let key = (e.session_id.as_str(), e.prompt_context.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push(e),
            None => groups.push((key, vec![e])),
        }
    }
    groups.sort_by_key(|((_, prompt), _)| !prompt.is_empty());
    groups.into_iter().flat_map(|(_, group)| group).collect()
}

/// Whether an event is shown without `--all`: not an exploration nor unclassified thinking.
fn shown(e: &Event) -> bool {
    !e.kind.is_musing()
}

/// The working tree's changes to the file, and the pending reasoning behind them.
fn print_uncommitted(
    answer: &Why,
    p: Palette,
    all: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let Some(u) = &answer.uncommitted else {
        return Ok(());
    };
    writeln!(out)?;
    writeln!(
        out,
        "uncommitted: {} line{} changed in the working tree{}",
        u.lines,
        if u.lines == 1 { "" } else { "s" },
        if u.events.is_empty() {
            ", by no session this repository knows of"
        } else {
            ""
        }
    )?;
    let several = u.sessions.len() > 1;
    for s in &u.sessions {
        writeln!(
            out,
            "  session {}{}",
            sanitise::line(&s.id),
            ran_by(&s.agent)
        )?;
    }
    let mut last_prompt = "";
    for e in by_prompt(u.events.iter().filter(|e| all || shown(e))) {
        print_event(e, several, &mut last_prompt, p, out)?;
    }
    Ok(())
}

/// Whether two prompts are one, white space folded, where one of them may be the other cut
/// ("…"): a session's request is its first prompt, cut.
fn same_prompt(a: &str, b: &str) -> bool {
    let folded = |s: &str| -> (String, bool) {
        let s = s.trim_end();
        let cut = s.strip_suffix('…');
        let words = cut.unwrap_or(s).split_whitespace();
        (words.collect::<Vec<_>>().join(" "), cut.is_some())
    };
    let ((a, a_cut), (b, b_cut)) = (folded(a), folded(b));
    !a.is_empty()
        && !b.is_empty()
        && (a == b || (a_cut && b.starts_with(&a)) || (b_cut && a.starts_with(&b)))
}

fn print_event<'a>(
    e: &'a Event,
    several_sessions: bool,
    last_prompt: &mut &'a str,
    p: Palette,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if !e.prompt_context.is_empty() && !same_prompt(&e.prompt_context, last_prompt) {
        let prompt = sanitise::line(&e.prompt_context);
        writeln!(out, "  prompt: {}", truncate_words(&prompt, 100))?;
        *last_prompt = &e.prompt_context;
    }
    let who = if several_sessions {
        let id = sanitise::line(&e.session_id);
        format!(" [{}]", id.chars().take(8).collect::<String>())
    } else {
        String::new()
    };
    let kind = p.kind_as(e.kind, e.kind.as_str());
    writeln!(out, "  {kind}{who}: {}", sanitise::line(&e.summary))?;
    for alt in &e.alternatives {
        writeln!(out, "    not taken: {}", sanitise::line(alt))?;
    }
    if let Some(flag) = sanitise::flag(e.texts()) {
        writeln!(out, "    {flag}")?;
    }
    Ok(())
}
