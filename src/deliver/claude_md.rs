//! CLAUDE.md's marked section (docs/commands.md, `claude-md`): the standing decisions, rejected
//! alternatives and trade-offs of the decision graph, grouped by component (the folder of the files
//! they concern), and the work sessions left unfinished — rendered through `claude-md.md.j2`
//! between `<!-- agent-context:begin -->` and `<!-- agent-context:end -->` in the CLAUDE.md at the
//! top of the working tree.
//!
//! Everything outside the markers is kept byte for byte; a file without them gets the section
//! at its end (a repository without CLAUDE.md gets one holding only the section). The section
//! depends on the graph alone — no time, no local state — so regenerating it when nothing
//! changed changes nothing.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use crate::deliver::{Error, Result, links};
use crate::render::templates::{self, CLAUDE_MD};
use crate::store::graph::{self, View};
use crate::store::{Store, write_atomic};

pub const BEGIN: &str = "<!-- agent-context:begin -->";
pub const END: &str = "<!-- agent-context:end -->";
/// The file, at the top of the working tree.
pub const FILE: &str = "CLAUDE.md";
/// Standing decisions shown, at most: the newest.
const DECISIONS_MAX: usize = 60;
/// Sessions whose unfinished work is shown, at most: the newest.
const OPEN_MAX: usize = 5;

/// What [`refresh`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    Created,
    Updated,
    Unchanged,
}

#[derive(Debug, Serialize)]
struct Decision {
    kind: String,
    choice: String,
    rationale: String,
    rejected: Vec<String>,
    tradeoffs: Vec<String>,
    files: Vec<String>,
    commit: String,
    session: String,
}

#[derive(Debug, Serialize)]
struct Open {
    session: String,
    request: String,
    unfinished: Vec<String>,
}

/// Where the graph commit the section was last made from is kept, in the store.
const MADE_FROM: &str = "claude-md.graph";

/// [`refresh`], unless the section was made from the graph as it is and CLAUDE.md is there:
/// the section depends on the graph alone (for a hook, which runs every turn).
pub fn refresh_if_changed(store: &Store) -> Result<Refreshed> {
    let tip = graph::tip(store)?;
    let tip = tip.map(|t| t.to_string()).unwrap_or_default();
    let recorded = store.dir().join(MADE_FROM);
    let present = store.workdir().is_some_and(|w| w.join(FILE).is_file());
    if present && fs::read_to_string(&recorded).is_ok_and(|t| t == tip) {
        return Ok(Refreshed::Unchanged);
    }
    let (_, done) = refresh(store)?;
    write_atomic(&recorded, tip.as_bytes())?;
    Ok(done)
}

/// Regenerate the section in `<worktree>/CLAUDE.md`. Markers out of order or repeated are an
/// error, and the file is left as it is. A CLAUDE.md that is a link is followed only inside the
/// working tree, outside its git directory ([`links`]): a committed link to a file of the
/// user's is refused, neither read nor written.
pub fn refresh(store: &Store) -> Result<(PathBuf, Refreshed)> {
    let top = store.workdir().ok_or(Error::NoWorkTree)?;
    let path = top.join(FILE);
    let target = links::follow(top, Path::new(FILE), Some(store.common_dir()))?;
    let old = match fs::read(&target) {
        Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| Error::NotText(path.clone()))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(Error::Unreadable { path, source }),
    };
    let body = section(store)?;
    let new = match splice(old.as_deref().unwrap_or(""), &body) {
        Ok(new) => new,
        Err(markers) => return Err(Error::Markers { path, markers }),
    };
    if old.as_deref() == Some(new.as_str()) {
        return Ok((path, Refreshed::Unchanged));
    }
    write_atomic(&target, new.as_bytes())?;
    let done = if old.is_some() {
        Refreshed::Updated
    } else {
        Refreshed::Created
    };
    Ok((path, done))
}

/// The section's text, from the graph (without the markers).
pub fn section(store: &Store) -> Result<String> {
    let (components, open) = gather(store)?;
    Ok(templates::render(
        store,
        &CLAUDE_MD,
        &json!({"components": components, "open": open}),
    )?)
}

type Components = BTreeMap<String, Vec<Decision>>;

fn gather(store: &Store) -> crate::store::Result<(Components, Vec<Open>)> {
    let repo = store.repo();
    let mut view = View::open(&repo)?;
    let mut standing = Vec::new();
    for id in view.decision_ids()? {
        let Some(d) = view.decision(&id)? else {
            continue;
        };
        if view.superseded_by(&id)?.is_some() {
            continue;
        }
        standing.push(d);
    }
    standing.sort_by(|a, b| (&b.timestamp, &b.id).cmp(&(&a.timestamp, &a.id)));
    standing.truncate(DECISIONS_MAX);
    standing.reverse();
    let mut components: Components = BTreeMap::new();
    for d in standing {
        let component = d.files.first().map_or_else(
            || "(whole repository)".to_owned(),
            |f| match f.rsplit_once('/') {
                Some((dir, _)) => format!("{dir}/"),
                None => f.clone(),
            },
        );
        components.entry(component).or_default().push(Decision {
            kind: d.kind,
            choice: d.choice,
            rationale: d.rationale,
            rejected: d.rejected,
            tradeoffs: d.tradeoffs,
            files: d.files,
            commit: d.commits.first().cloned().unwrap_or_default(),
            session: d.session,
        });
    }
    let mut sessions = Vec::new();
    for id in view.session_ids()? {
        if let Some(s) = view.session(&id)?.filter(|s| !s.unfinished.is_empty()) {
            sessions.push(s);
        }
    }
    sessions.sort_by(|a, b| (&b.end, &b.session).cmp(&(&a.end, &a.session)));
    let open = sessions
        .into_iter()
        .take(OPEN_MAX)
        .map(|s| Open {
            session: s.session,
            request: s.request,
            unfinished: s.unfinished,
        })
        .collect();
    Ok((components, open))
}

/// `file` with the text between the markers replaced by `body` (the markers and the section
/// appended when the file has none). CRLF files get CRLF in the section too.
/// Why the section cannot be put in place: its markers are out of order or not one each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Markers {
    #[error("{END} comes before {BEGIN}")]
    OutOfOrder,
    #[error("expected one {BEGIN} and one {END}, found {begins} and {ends}")]
    Count { begins: usize, ends: usize },
}

fn splice(file: &str, body: &str) -> Result<String, Markers> {
    let newline = if file.contains("\r\n") { "\r\n" } else { "\n" };
    // A marker quoted in the body (a decision about this very tool) would end the section
    // early; a template's own line endings are made the file's.
    let body = body
        .replace("\r\n", "\n")
        .replace(BEGIN, "<!-- agent-context begin -->")
        .replace(END, "<!-- agent-context end -->");
    let mut block = format!("{BEGIN}\n{}\n{END}", body.trim_end());
    if newline == "\r\n" {
        block = block.replace('\n', "\r\n");
    }
    let begins: Vec<usize> = file.match_indices(BEGIN).map(|(i, _)| i).collect();
    let ends: Vec<usize> = file.match_indices(END).map(|(i, _)| i).collect();
    match (begins.as_slice(), ends.as_slice()) {
        ([], []) => {
            let mut out = file.to_owned();
            if !out.is_empty() {
                if !out.ends_with('\n') {
                    out.push_str(newline);
                }
                out.push_str(newline);
            }
            out.push_str(&block);
            out.push_str(newline);
            Ok(out)
        }
        ([b], [e]) if b < e => Ok(format!("{}{block}{}", &file[..*b], &file[e + END.len()..])),
        ([_], [_]) => Err(Markers::OutOfOrder),
        _ => Err(Markers::Count {
            begins: begins.len(),
            ends: ends.len(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_replaces_only_what_is_between_the_markers() {
        let file = format!("# Notes\r\n\r\nkeep\r\n{BEGIN}\r\nold\r\n{END}\r\ntail  \r\n");
        let out = splice(&file, "new\nlines\n").unwrap();
        assert_eq!(
            out,
            format!("# Notes\r\n\r\nkeep\r\n{BEGIN}\r\nnew\r\nlines\r\n{END}\r\ntail  \r\n")
        );
        assert_eq!(splice(&out, "new\nlines").unwrap(), out, "idempotent");
    }

    #[test]
    fn markers_quoted_in_the_section_do_not_end_it() {
        let body = format!("a decision quoting {END} and {BEGIN}\r\n");
        let out = splice("", &body).unwrap();
        assert_eq!(out.matches(END).count(), 1, "{out}");
        assert_eq!(
            splice(&out, &body).unwrap(),
            out,
            "and it can be made again"
        );
        assert!(!out.contains('\r'), "{out:?}");
    }

    #[test]
    fn a_file_without_markers_gets_the_section_at_its_end() {
        assert_eq!(
            splice("# Notes", "x").unwrap(),
            format!("# Notes\n\n{BEGIN}\nx\n{END}\n")
        );
        assert_eq!(splice("", "x").unwrap(), format!("{BEGIN}\nx\n{END}\n"));
    }

    #[test]
    fn markers_out_of_order_or_repeated_are_refused() {
        let reversed = format!("{END}\n{BEGIN}\n");
        assert!(
            splice(&reversed, "x")
                .unwrap_err()
                .to_string()
                .contains("comes before")
        );
        let twice = format!("{BEGIN}\n{END}\n{BEGIN}\n{END}\n");
        assert!(
            splice(&twice, "x")
                .unwrap_err()
                .to_string()
                .contains("found 2 and 2")
        );
        let lone = format!("{BEGIN}\n");
        assert!(
            splice(&lone, "x")
                .unwrap_err()
                .to_string()
                .contains("found 1 and 0")
        );
    }
}
