//! `query "<prompt>"`: the recorded reasoning that bears on a prompt, as a hook would inject it.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::Path;

use anyhow::anyhow;
use serde::Serialize;

use crate::cli::report::{self, Report};
use crate::cli::{CmdResult, Failure, repo_path};
use crate::config::Backend;
use crate::retrieve::hints::Hinted;
use crate::retrieve::query::{self, Focus, Item, LeftOut, Request};
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The prompt, as the user would give it to Claude Code.
    prompt: String,
    /// Files the prompt is about, besides those it names and those changed in the working tree.
    #[arg(long, num_args = 1.., value_name = "path")]
    files: Vec<String>,
    /// The most tokens the answer may take (an estimate: 3.5 characters a token).
    #[arg(long, default_value_t = 2000, value_name = "tokens")]
    budget: usize,
    /// How the decision graph is searched: file, session or decision (default: `query.backend`).
    #[arg(long, value_parser = ["file", "session", "decision"])]
    backend: Option<String>,
    /// Print JSON: every item with its provenance, liveness and score.
    #[arg(long)]
    json: bool,
}

pub fn run(store: &Store, cwd: &Path, args: Args, out: &mut dyn Write) -> CmdResult {
    if args.prompt.trim().is_empty() {
        return Err(Failure::usage(anyhow!("the prompt is empty")));
    }
    let mut files = Vec::new();
    for f in &args.files {
        files.push(repo_path(store, cwd, f)?);
    }
    let backend = match &args.backend {
        Some(name) => Backend::parse(name).expect("clap checked the name"),
        None => store.config().backend(),
    };
    let answer = query::query(
        store,
        &Request {
            prompt: &args.prompt,
            files,
            budget: args.budget,
            backend,
            focus: Focus::Prompt,
            exclude: &BTreeSet::new(),
            hook: false,
        },
    )?;
    if let Some(line) = &answer.unread {
        eprintln!("warning: {line}");
    }
    let report = QueryReport {
        backend: backend.as_str(),
        budget: args.budget,
        tokens: answer.tokens,
        tokenizer: "estimate: 3.5 ASCII characters a token, 1 per other character",
        hinted_files: answer.hinted,
        items: answer.items,
        left_out: answer.left_out,
        text: answer.text,
    };
    report::print(out, &report, args.json)
}

/// What `query` found within its budget.
#[derive(Serialize)]
struct QueryReport {
    backend: &'static str,
    budget: usize,
    tokens: usize,
    tokenizer: &'static str,
    hinted_files: Vec<Hinted>,
    items: Vec<Item>,
    left_out: LeftOut,
    /// The rendered context.
    text: String,
}

impl Report for QueryReport {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        let over = self.left_out.over_budget;
        if self.items.is_empty() && over > 0 {
            let (s, verb) = if over == 1 { ("", "s") } else { ("s", "") };
            return writeln!(
                out,
                "{over} recorded item{s} bear{verb} on this prompt, none within {} tokens: raise --budget",
                self.budget
            );
        }
        if self.items.is_empty() {
            return writeln!(out, "no recorded reasoning bears on this prompt");
        }
        write!(out, "{}", self.text)
    }
}
