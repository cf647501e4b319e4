//! `log [<range>] [-- <path>...]`: one line per commit, like `git log --oneline`, with its
//! decisions, rejections and trade-offs underneath.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::cli::review::{Output, Printed};
use crate::cli::terminal::Look;
use crate::cli::{CmdResult, Failure, repo_path};
use crate::render::{self, markdown, text};
use crate::retrieve::review::{self, LogEntry};
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A revision (its history) or a range (`main..topic`, `main...topic`); HEAD by default.
    range: Option<String>,
    /// Only commits that changed these files or folders.
    #[arg(last = true, value_name = "path")]
    paths: Vec<String>,
    /// At most this many commits.
    #[arg(short = 'n', long, value_name = "number")]
    max_count: Option<usize>,
    /// Only commits with recorded reasoning.
    #[arg(long)]
    reasoned: bool,
    #[command(flatten)]
    output: Output,
}

pub fn run(store: &Store, cwd: &Path, args: Args, look: Look, out: &mut dyn Write) -> CmdResult {
    let paths = args
        .paths
        .iter()
        .map(|p| repo_path(store, cwd, p))
        .collect::<Result<Vec<_>, _>>()?;
    let (range, max) = (args.range.as_deref(), args.max_count);
    if args.output.is_text() {
        // Printed as the walk goes: the first screen of a long history shows at once.
        return args.output.text(store, look, out, |p, out| {
            review::log(store, range, &paths, max, args.reasoned, &mut |e| {
                Ok(text::log_entry(&e, p, out)?)
            })
            .map_err(Failure::from)
        });
    }
    let mut entries = Vec::new();
    review::log(store, range, &paths, max, args.reasoned, &mut |e| {
        entries.push(e);
        Ok(())
    })?;
    args.output
        .emit(store, look, out, &Logged { commits: &entries })
}

/// The commits `log` lists; its JSON is `{"commits": [...]}`.
#[derive(Serialize)]
struct Logged<'a> {
    commits: &'a [LogEntry],
}

impl Printed for Logged<'_> {
    fn text(&self, p: text::Palette, out: &mut dyn Write) -> io::Result<()> {
        self.commits
            .iter()
            .try_for_each(|e| text::log_entry(e, p, out))
    }

    fn markdown(&self, store: &Store, _max_chars: Option<usize>) -> render::Result<String> {
        markdown::log(store, self.commits)
    }
}
