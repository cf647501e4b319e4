//! `show`, `review` and `log` as Markdown for a pull-request comment, through the templates
//! `review.md.j2` and `log.md.j2` (a repository may override them).
//!
//! The context is the review itself with what a template cannot easily work out made ready:
//! each reasoning list grouped by session, commit and prompt; each hunk's text with a fence
//! longer than any backtick run in it; each file's one-line summary. Templates escape every
//! recorded string with the `md` filter (or `code`, or `e` inside HTML), so that nothing an
//! agent wrote becomes markup.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::{Value, json};

use crate::event::Kind;
use crate::render::Result;
use crate::render::templates::{self, LOG, REVIEW, code_fence};
use crate::render::text;
use crate::retrieve::diff::Status;
use crate::retrieve::review::{LogEntry, Reason, Review};
use crate::store::Store;

/// Reasons that share a session, a commit and a prompt.
#[derive(Serialize)]
struct Group<'a> {
    session: &'a str,
    agent: &'a str,
    commit: &'a str,
    prompt: &'a str,
    reasons: Vec<Value>,
}

/// The word a kind of reasoning is introduced by.
pub fn label(kind: Kind) -> &'static str {
    match kind {
        Kind::Decision => "Decision",
        Kind::Rejection => "Rejected",
        Kind::Tradeoff => "Trade-off",
        Kind::Feature => "Feature",
        Kind::Bugfix => "Bug fix",
        Kind::Refactor => "Refactor",
        Kind::Discovery => "Found",
        Kind::Exploration => "Explored",
        _ => "Note",
    }
}

fn reason(r: &Reason) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["label"] = json!(label(r.kind));
    v
}

fn groups<'a>(reasons: impl IntoIterator<Item = &'a Reason>) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for r in reasons {
        match out.last_mut() {
            Some(g) if (g.session, g.commit, g.prompt) == (&r.session, &r.commit, &r.prompt) => {
                g.reasons.push(reason(r));
            }
            _ => out.push(Group {
                session: &r.session,
                agent: &r.agent,
                commit: &r.commit,
                prompt: &r.prompt,
                reasons: vec![reason(r)],
            }),
        }
    }
    out
}

/// `show` (`is_show`) or `review` as Markdown, within `max_chars` characters if it can be:
/// the diffs of the largest files are left out (their reasoning never is) until it fits —
/// GitHub refuses a comment over 65,536 characters.
pub fn review(
    store: &Store,
    review: &Review,
    is_show: bool,
    max_chars: Option<usize>,
) -> Result<String> {
    let render = |omitted: &HashSet<usize>| {
        templates::render(store, &REVIEW, &context(review, is_show, omitted))
    };
    let mut omitted = HashSet::new();
    let mut text = render(&omitted)?;
    let Some(max) = max_chars else {
        return Ok(text);
    };
    // Each diff's text, which the comment holds verbatim: leaving a file's out saves at least
    // that, less the line said instead.
    let mut largest: Vec<(usize, usize)> = review
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.diff.hunks.is_empty())
        .map(|(i, f)| {
            let chars = f.diff.hunks.iter().flat_map(|h| &h.lines);
            (chars.map(|l| l.chars().count() + 1).sum(), i)
        })
        .collect();
    largest.sort_by(|a, b| b.cmp(a));
    let mut largest = largest.into_iter();
    loop {
        let over = text.chars().count().saturating_sub(max);
        if over == 0 {
            return Ok(text);
        }
        // As many of the largest diffs as make up the excess, then measure again: a render or
        // two, not one per file.
        let (before, mut saved) = (omitted.len(), 0);
        while saved < over {
            let Some((size, i)) = largest.next() else {
                break;
            };
            omitted.insert(i);
            saved += size.saturating_sub(OMITTED_LINE);
        }
        if omitted.len() == before {
            // No diff left to leave out: the reasoning itself is too long.
            return Ok(cut(&text, max));
        }
        text = render(&omitted)?;
    }
}

/// `text` cut to at most `max` characters after the last file (`</details>`) that fits, else
/// after the last paragraph, with a line that says so.
fn cut(text: &str, max: usize) -> String {
    let note = format!(
        "\n\n*Cut here: the comment would run past {max} characters; \
         `git agent-context review` prints it whole.*\n"
    );
    let room = max.saturating_sub(note.chars().count());
    let fits = text
        .char_indices()
        .nth(room)
        .map_or(text.len(), |(at, _)| at);
    let head = &text[..fits];
    let end = head
        .rfind("\n</details>\n")
        .map(|i| i + "\n</details>".len())
        .or_else(|| head.rfind("\n\n"))
        .unwrap_or(fits);
    format!("{}{note}", text[..end].trim_end())
}

/// About how long the line that stands for a left-out diff is.
const OMITTED_LINE: usize = 80;

/// The template's context; the files in `omitted` without their hunks.
fn context(review: &Review, is_show: bool, omitted: &HashSet<usize>) -> Value {
    let files: Vec<Value> = review
        .files
        .iter()
        .enumerate()
        .map(|(index, f)| {
            let d = &f.diff;
            let omit = omitted.contains(&index);
            let hunks: Vec<Value> = d
                .hunks
                .iter()
                .enumerate()
                .filter(|_| !omit)
                .map(|(i, h)| {
                    // A CR would end the line in the comment: Markdown has no way to show it.
                    let lines: Vec<&str> =
                        h.lines.iter().map(|l| l.trim_end_matches('\r')).collect();
                    let body = format!("{}\n{}", h.header, lines.join("\n"));
                    json!({
                        "header": h.header,
                        "groups": groups(f.reasons_at(Some(i))),
                        "fence": code_fence(&body),
                        "diff": body,
                    })
                })
                .collect();
            let status = match (d.status, &d.old_path) {
                (Status::Renamed, Some(old)) => format!("renamed from {old}"),
                (Status::Added, _) => "added".to_owned(),
                (Status::Deleted, _) => "deleted".to_owned(),
                _ => "modified".to_owned(),
            };
            let mode = match (&d.old_mode, &d.new_mode) {
                (Some(a), Some(b)) if a != b => format!(", mode {a} → {b}"),
                _ => String::new(),
            };
            let size = if d.binary {
                "binary".to_owned()
            } else {
                format!("+{} −{}", d.additions, d.deletions)
            };
            let mut summary = format!("{} — {status}{mode}, {size}", d.path);
            if !f.reasons.is_empty() {
                summary.push_str(&format!(" · {}", counted(&f.reasons)));
            }
            json!({
                "path": d.path,
                "old_path": d.old_path,
                "status": d.status,
                "binary": d.binary,
                "additions": d.additions,
                "deletions": d.deletions,
                "summary": summary,
                "header": text::header(d),
                "groups": if omit {
                    groups(&f.reasons)
                } else {
                    groups(f.reasons_at(None))
                },
                "reasons": f.reasons.len(),
                "hunks": hunks,
                // Reasoning placed at a left-out hunk goes with the file's.
                "omitted": omit.then(|| d.hunks.iter().map(|h| h.lines.len()).sum::<usize>()),
            })
        })
        .collect();
    let commits: Vec<Value> = review
        .commits
        .iter()
        .map(|c| {
            let body: Vec<&str> = c
                .message
                .lines()
                .skip(1)
                .skip_while(|l| l.is_empty())
                .collect();
            json!({
                "id": c.id,
                "short": c.short,
                "subject": c.subject,
                "author": c.author,
                "date": c.date,
                "merge": c.parents.len() > 1,
                "body": body,
            })
        })
        .collect();
    json!({
        "kind": if is_show { "show" } else { "review" },
        "range": review.range,
        "base": review.base.as_deref().map(|b| &b[..7]),
        "head": &review.head[..7],
        "commits": commits,
        "sessions": review.sessions,
        "totals": review.totals,
        "general": groups(&review.general),
        "files": files,
    })
}

/// `log` as Markdown.
pub fn log(store: &Store, entries: &[LogEntry]) -> Result<String> {
    let commits: Vec<Value> = entries
        .iter()
        .map(|e| {
            json!({
                "id": e.commit.id,
                "short": e.commit.short,
                "subject": e.commit.subject,
                "date": e.commit.timestamp,
                "sessions": e.sessions,
                "reasons": e.reasons.iter().map(reason).collect::<Vec<_>>(),
            })
        })
        .collect();
    templates::render(store, &LOG, &json!({ "commits": commits }))
}

/// `2 decisions, 1 rejection`: the reasoning of a file, counted by kind (rejections folded
/// under a decision included).
fn counted(reasons: &[Reason]) -> String {
    let mut counts: Vec<(Kind, usize)> = Vec::new();
    let mut add = |kind: Kind| match counts.iter_mut().find(|(k, _)| *k == kind) {
        Some((_, n)) => *n += 1,
        None => counts.push((kind, 1)),
    };
    for r in reasons {
        add(r.kind);
        for _ in r.considered.iter().filter(|c| c.rejection.is_some()) {
            add(Kind::Rejection);
        }
    }
    counts.sort();
    counts
        .iter()
        .map(|&(kind, n)| {
            let (one, many) = match kind {
                Kind::Decision => ("decision", "decisions"),
                Kind::Rejection => ("rejection", "rejections"),
                Kind::Tradeoff => ("trade-off", "trade-offs"),
                Kind::Feature => ("feature", "features"),
                Kind::Bugfix => ("bug fix", "bug fixes"),
                Kind::Refactor => ("refactor", "refactors"),
                Kind::Discovery => ("finding", "findings"),
                Kind::Exploration => ("exploration", "explorations"),
                _ => ("note", "notes"),
            };
            format!("{n} {}", if n == 1 { one } else { many })
        })
        .collect::<Vec<_>>()
        .join(", ")
}
