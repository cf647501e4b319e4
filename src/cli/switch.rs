//! `switch <backend>`: set the default query backend for this clone (`query.backend` in the
//! local config file) and make sure the graph it reads is up to date.

use std::io::{self, Write};

use anyhow::Context;
use serde::Serialize;

use crate::cli::CmdResult;
use crate::cli::rebuild::Rebuilt;
use crate::cli::report::{self, Report};
use crate::config::{self, Backend, Source};
use crate::store::{Store, graph};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// file (file → sessions → decisions), session (sessions, newest first) or decision
    /// (from matching decisions along their edges).
    #[arg(value_parser = ["file", "session", "decision"])]
    backend: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let backend = Backend::parse(&args.backend).expect("clap checked the name");
    let _lock = store.lock()?;
    let was = store.config().backend();
    config::set_local(store.dir(), "query.backend", backend.as_str())
        .context("cannot save the backend")?;
    // Every backend reads the same graph: bring it up to date.
    let updated = graph::rebuild(store)?;
    let overridden = store
        .config()
        .settings()
        .iter()
        .find(|s| s.key == "query.backend")
        .and_then(|s| match &s.source {
            Source::Env(var) => Some(var.clone()),
            _ => None,
        });
    let switched = Switched {
        backend,
        was,
        overridden,
        graph: Rebuilt::from(&updated),
    };
    report::print(out, &switched, args.json)
}

/// What `switch` did: the backend set, and the graph brought up to date (all its JSON says).
#[derive(Serialize)]
struct Switched {
    #[serde(skip)]
    backend: Backend,
    #[serde(skip)]
    was: Backend,
    /// The variable that overrides the file, when one is set.
    #[serde(skip)]
    overridden: Option<String>,
    #[serde(flatten)]
    graph: Rebuilt,
}

impl Report for Switched {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "query backend: {} (was {})", self.backend, self.was)?;
        if let Some(var) = &self.overridden {
            writeln!(out, "note: ${var} is set and overrides it")?;
        }
        self.graph.text(out)
    }
}
