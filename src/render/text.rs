//! `show`, `review` and `log` for a terminal: git's diff, with the reasoning in a gutter (`│`)
//! before the hunk it explains, so that it can never be mistaken for a line of the diff.
//! Colours are git's defaults for the diff (bold headers, cyan hunk headers, red and green
//! lines, a yellow commit id) and one colour per kind of reasoning; off, the text is plain.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

use crate::event::Kind;
use crate::retrieve::diff::{FileDiff, Status};
use crate::retrieve::review::{CommitInfo, FileReview, LogEntry, Reason, Review};
use crate::sanitise;
use crate::transcript::agent::Agent;

/// How text is coloured: ANSI SGR codes, or none.
#[derive(Debug, Clone, Copy)]
pub struct Palette {
    pub color: bool,
}

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const RED: Style = AnsiColor::Red.on_default();
const GREEN: Style = AnsiColor::Green.on_default();
const YELLOW: Style = AnsiColor::Yellow.on_default();
const MAGENTA: Style = AnsiColor::Magenta.on_default();
const CYAN: Style = AnsiColor::Cyan.on_default();

/// git's end of a colour; anstyle's (`ESC[0m`) differs by a byte.
const RESET: &str = "\x1b[m";

impl Palette {
    fn paint(&self, style: Style, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("{style}{text}{RESET}")
        } else {
            text.to_owned()
        }
    }

    fn kind(&self, kind: Kind) -> String {
        let (style, label) = label(kind);
        self.paint(style, label)
    }

    /// A commit id, as git log colours it.
    pub fn commit(&self, id: &str) -> String {
        self.paint(YELLOW, id)
    }

    /// `word` in the colour of `kind`.
    pub fn kind_as(&self, kind: Kind, word: &str) -> String {
        self.paint(label(kind).0, word)
    }
}

/// The colour and the word a kind of reasoning is shown with.
fn label(kind: Kind) -> (Style, &'static str) {
    match kind {
        Kind::Decision => (GREEN.bold(), "decision"),
        Kind::Rejection => (RED.bold(), "rejected"),
        Kind::Tradeoff => (YELLOW.bold(), "trade-off"),
        Kind::Feature => (CYAN, "feature"),
        Kind::Bugfix => (CYAN, "bug fix"),
        Kind::Refactor => (CYAN, "refactor"),
        Kind::Discovery => (MAGENTA, "found"),
        Kind::Exploration => (DIM, "explored"),
        other => (DIM, other.as_str()),
    }
}

/// The gutter reasoning lines start with.
const GUTTER: &str = "│ ";

/// `show`: the commit as `git show` prints it, its sessions and the reasoning about it as a
/// whole, then each file's diff with its reasoning.
pub fn show(review: &Review, p: Palette, out: &mut dyn Write) -> io::Result<()> {
    for c in &review.commits {
        commit_header(c, p, out)?;
    }
    if review.commits.iter().any(|c| c.parents.len() > 1)
        && let Some(base) = &review.base
    {
        writeln!(
            out,
            "{}",
            p.paint(
                DIM,
                &format!(
                    "(a merge: the diff is against its first parent {})",
                    &base[..7]
                )
            )
        )?;
        writeln!(out)?;
    }
    reasoning_overview(review, p, out)?;
    files(review, p, out)
}

/// `review`: a summary of the range, its sessions and commits, the reasoning about the
/// change as a whole, then each file's net diff with its reasoning.
pub fn review(review: &Review, p: Palette, out: &mut dyn Write) -> io::Result<()> {
    let t = &review.totals;
    let from = review
        .base
        .as_deref()
        .map_or("the empty tree".to_owned(), |b| b[..7].to_owned());
    writeln!(
        out,
        "{} {}  {}",
        p.paint(BOLD, "review"),
        p.paint(BOLD, &review.range),
        p.paint(DIM, &format!("({from}..{})", &review.head[..7]))
    )?;
    if review.commits.is_empty() {
        writeln!(out, "no commits in this range")?;
    }
    writeln!(
        out,
        "{}, {}, {}, {}, {}; {} changed (+{} -{})",
        count(t.commits, "commit"),
        count(t.sessions, "session"),
        count(t.decisions, "decision"),
        count(t.rejections, "rejection"),
        count(t.tradeoffs, "trade-off"),
        count(t.files, "file"),
        t.additions,
        t.deletions
    )?;
    if t.reasons == 0 {
        writeln!(out, "no reasoning was recorded for these commits")?;
    } else if !t.files_without_reasoning.is_empty() {
        writeln!(
            out,
            "files without reasoning: {}",
            sanitise::line(&t.files_without_reasoning.join(", "))
        )?;
    }
    if !review.sessions.is_empty() {
        writeln!(out)?;
        writeln!(out, "{}", p.paint(BOLD, "sessions"))?;
        for s in &review.sessions {
            let request = if s.request.is_empty() {
                String::new()
            } else {
                format!("  {}", sanitise::line(&s.request))
            };
            writeln!(
                out,
                "  {}{request}  {}",
                p.paint(MAGENTA, &sanitise::line(&s.id)),
                p.paint(DIM, &format!("({})", s.commits.join(", ")))
            )?;
        }
    }
    if !review.commits.is_empty() {
        writeln!(out)?;
        writeln!(out, "{}", p.paint(BOLD, "commits"))?;
        for c in &review.commits {
            let subject = sanitise::line(&c.subject);
            writeln!(out, "  {} {subject}", p.paint(YELLOW, &c.short))?;
        }
    }
    writeln!(out)?;
    if !review.general.is_empty() {
        writeln!(out, "{}", p.paint(BOLD, "about the change as a whole"))?;
        reasons(review.general.iter(), p, out)?;
        writeln!(out)?;
    }
    files(review, p, out)
}

/// A commit of `log`: its line, its standing reasoning under it.
pub fn log_entry(e: &LogEntry, p: Palette, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{} {}",
        p.paint(YELLOW, &e.commit.short),
        sanitise::line(&e.commit.subject)
    )?;
    for r in &e.reasons {
        write!(
            out,
            "    {}: {}",
            p.kind(r.kind),
            sanitise::line(&r.summary)
        )?;
        superseded(r, p, out)?;
        writeln!(out)?;
        for c in &r.considered {
            writeln!(out, "      {}", considered(c, p))?;
        }
    }
    Ok(())
}

fn commit_header(c: &CommitInfo, p: Palette, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", p.paint(YELLOW, &format!("commit {}", c.id)))?;
    if c.parents.len() > 1 {
        let shorts: Vec<&str> = c.parents.iter().map(|p| &p[..7]).collect();
        writeln!(out, "Merge: {}", shorts.join(" "))?;
    }
    writeln!(out, "Author: {}", sanitise::line(&c.author))?;
    writeln!(out, "Date:   {}", c.date)?;
    writeln!(out)?;
    for line in sanitise::text(&c.message).lines() {
        if line.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "    {line}")?;
        }
    }
    writeln!(out)
}

/// The sessions of a shown commit and its reasoning about the change as a whole.
fn reasoning_overview(review: &Review, p: Palette, out: &mut dyn Write) -> io::Result<()> {
    for s in &review.sessions {
        let request = if s.request.is_empty() {
            String::new()
        } else {
            format!(": {}", sanitise::line(&s.request))
        };
        writeln!(
            out,
            "{} {}{}{request}",
            p.paint(BOLD, "session"),
            p.paint(MAGENTA, &sanitise::line(&s.id)),
            ran_by(&s.agent)
        )?;
    }
    if review.totals.reasons == 0 {
        writeln!(out, "{}", p.paint(DIM, "no reasoning was recorded"))?;
    }
    if !review.general.is_empty() {
        reasons(review.general.iter(), p, out)?;
    }
    writeln!(out)
}

fn files(review: &Review, p: Palette, out: &mut dyn Write) -> io::Result<()> {
    for f in &review.files {
        file(f, p, out)?;
    }
    Ok(())
}

/// One file: git's extended header, the file's own reasoning, then each hunk after the
/// reasoning placed before it.
fn file(f: &FileReview, p: Palette, out: &mut dyn Write) -> io::Result<()> {
    let d = &f.diff;
    for line in header(d) {
        writeln!(out, "{}", p.paint(BOLD, &line))?;
    }
    reasons(f.reasons_at(None), p, out)?;
    if d.binary {
        let (a, b) = names(d);
        writeln!(out, "Binary files {a} and {b} differ")?;
    }
    for (i, h) in d.hunks.iter().enumerate() {
        reasons(f.reasons_at(Some(i)), p, out)?;
        writeln!(out, "{}", p.paint(CYAN, &h.header))?;
        for line in &h.lines {
            let styled = match line.as_bytes().first() {
                Some(b'+') => p.paint(GREEN, line),
                Some(b'-') => p.paint(RED, line),
                _ => line.clone(),
            };
            writeln!(out, "{styled}")?;
        }
    }
    Ok(())
}

/// The names `--- ` and `+++ ` give the two sides.
fn names(d: &FileDiff) -> (String, String) {
    let old = d.old_path.as_deref().unwrap_or(&d.path);
    let a = match d.status {
        Status::Added => "/dev/null".to_owned(),
        _ => quoted("a/", old),
    };
    let b = match d.status {
        Status::Deleted => "/dev/null".to_owned(),
        _ => quoted("b/", &d.path),
    };
    (a, b)
}

/// `prefix` and `path` as git writes a path in a diff's header: in double quotes with C
/// escapes when it holds a double quote, a backslash or a control character (a newline in a
/// file name must not end the line). Other characters are written as they are, as git does
/// with `core.quotePath=false`.
fn quoted(prefix: &str, path: &str) -> String {
    if !path
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control())
    {
        return format!("{prefix}{path}");
    }
    let mut out = format!("\"{prefix}");
    for c in path.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\{b:03o}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `diff --git` and the extended header lines git writes for a file.
pub fn header(d: &FileDiff) -> Vec<String> {
    let old = d.old_path.as_deref().unwrap_or(&d.path);
    let mut lines = vec![format!(
        "diff --git {} {}",
        quoted("a/", old),
        quoted("b/", &d.path)
    )];
    let short = |id: &Option<String>| {
        id.as_deref()
            .map_or("0000000".to_owned(), |i| i[..7].to_owned())
    };
    match d.status {
        Status::Added => lines.push(format!(
            "new file mode {}",
            d.new_mode.as_deref().unwrap_or("")
        )),
        Status::Deleted => lines.push(format!(
            "deleted file mode {}",
            d.old_mode.as_deref().unwrap_or("")
        )),
        Status::Renamed | Status::Modified => {
            if d.old_mode != d.new_mode {
                lines.push(format!("old mode {}", d.old_mode.as_deref().unwrap_or("")));
                lines.push(format!("new mode {}", d.new_mode.as_deref().unwrap_or("")));
            }
        }
    }
    if d.status == Status::Renamed {
        lines.push(format!("similarity index {}%", d.similarity.unwrap_or(100)));
        lines.push(format!("rename from {}", quoted("", old)));
        lines.push(format!("rename to {}", quoted("", &d.path)));
    }
    if d.old_id != d.new_id {
        let mode = match (d.status, &d.old_mode, &d.new_mode) {
            (Status::Modified | Status::Renamed, Some(a), Some(b)) if a == b => {
                format!(" {a}")
            }
            _ => String::new(),
        };
        lines.push(format!(
            "index {}..{}{mode}",
            short(&d.old_id),
            short(&d.new_id)
        ));
    }
    if !d.hunks.is_empty() {
        let (a, b) = names(d);
        // git ends a name holding a space with a tab, so that patch can tell where it ends.
        let tab = |name: &str| if name.contains(' ') { "\t" } else { "" };
        lines.push(format!("--- {a}{}", tab(&a)));
        lines.push(format!("+++ {b}{}", tab(&b)));
    }
    lines
}

/// Reasoning in the gutter: a line naming the session, commit and prompt whenever they
/// change, then each piece.
fn reasons<'a>(
    list: impl Iterator<Item = &'a Reason>,
    p: Palette,
    out: &mut dyn Write,
) -> io::Result<()> {
    let gutter = p.paint(DIM, GUTTER);
    let mut last: Option<(&str, &str, &str)> = None;
    for r in list {
        let origin = (r.session.as_str(), r.commit.as_str(), r.prompt.as_str());
        if last != Some(origin) {
            let prompt = if r.prompt.is_empty() {
                String::new()
            } else {
                format!(" · prompt: {}", sanitise::line(&r.prompt))
            };
            writeln!(
                out,
                "{gutter}{}",
                p.paint(
                    DIM,
                    &format!(
                        "session {}{} · {}{prompt}",
                        sanitise::line(&r.session),
                        ran_by(&r.agent),
                        r.commit
                    )
                )
            )?;
            last = Some(origin);
        }
        write!(
            out,
            "{gutter}{}: {}",
            p.kind(r.kind),
            sanitise::line(&r.summary)
        )?;
        superseded(r, p, out)?;
        writeln!(out)?;
        if !r.rationale.is_empty() {
            writeln!(out, "{gutter}  why: {}", sanitise::line(&r.rationale))?;
        }
        if let Some(flag) = r.flag {
            writeln!(out, "{gutter}  {}", p.paint(RED, flag))?;
        }
        for c in &r.considered {
            writeln!(out, "{gutter}  {}", considered(c, p))?;
        }
        if !r.files.is_empty() {
            writeln!(
                out,
                "{gutter}  {}",
                p.paint(DIM, &sanitise::line(&r.files.join(", ")))
            )?;
        }
    }
    Ok(())
}

fn superseded(r: &Reason, p: Palette, out: &mut dyn Write) -> io::Result<()> {
    if let Some(s) = &r.superseded_by {
        write!(
            out,
            " {}",
            p.paint(
                YELLOW,
                &format!(
                    "[superseded by {}: {}]",
                    s.commit,
                    sanitise::line(&s.summary)
                )
            )
        )?;
    }
    Ok(())
}

fn considered(c: &crate::retrieve::review::Considered, p: Palette) -> String {
    if c.rejected.is_empty() {
        format!("considered {} — not taken", sanitise::line(&c.option))
    } else {
        format!(
            "considered {} — {} {}",
            sanitise::line(&c.option),
            p.paint(RED, "rejected:"),
            sanitise::line(&c.rejected)
        )
    }
}

fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// ` (Codex CLI)` after a session another agent than Claude Code ran (`agent` as events name
/// it; none for Claude Code).
pub fn ran_by(agent: &str) -> String {
    match Agent::named(agent) {
        Some(Agent::ClaudeCode) => String::new(),
        Some(agent) => format!(" ({})", agent.title()),
        None => format!(" ({})", sanitise::line(agent)),
    }
}

/// How many sessions each agent ran, `Claude Code 2, Codex CLI 1`, of `(agent, session)`
/// pairs; `None` when Claude Code ran them all (as before other agents were read).
pub fn by_agent<'a>(sessions: impl Iterator<Item = (&'a str, &'a str)>) -> Option<String> {
    let mut count: std::collections::BTreeMap<Agent, std::collections::BTreeSet<&str>> =
        Default::default();
    for (agent, session) in sessions {
        let agent = Agent::named(agent).unwrap_or(Agent::ClaudeCode);
        count.entry(agent).or_default().insert(session);
    }
    if count.keys().all(|a| *a == Agent::ClaudeCode) {
        return None;
    }
    let each: Vec<String> = (count.iter())
        .map(|(agent, sessions)| format!("{} {}", agent.title(), sessions.len()))
        .collect();
    Some(each.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colour_ends_as_git_ends_it_and_is_left_out_when_off() {
        let on = Palette { color: true };
        assert_eq!(on.paint(YELLOW, "abc1234"), "\x1b[33mabc1234\x1b[m");
        assert_eq!(on.kind(Kind::Decision), "\x1b[1m\x1b[32mdecision\x1b[m");
        assert_eq!(on.paint(BOLD, ""), "");
        let off = Palette { color: false };
        assert_eq!(off.kind(Kind::Decision), "decision");
    }

    #[test]
    fn paths_are_quoted_as_git_quotes_them() {
        assert_eq!(quoted("a/", "src/café file.rs"), "a/src/café file.rs");
        assert_eq!(quoted("b/", "tab\there"), r#""b/tab\there""#);
        assert_eq!(quoted("a/", "new\nline"), r#""a/new\nline""#);
        assert_eq!(quoted("", r#"say "hi"\"#), r#""say \"hi\"\\""#);
        assert_eq!(quoted("a/", "bell\u{7}"), r#""a/bell\007""#);
    }
}
