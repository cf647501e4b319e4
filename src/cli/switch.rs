//! `switch <backend>`: set the default query backend for this clone (`query.backend` in the
//! local config file) and make sure the graph it reads is up to date.

use std::io::Write;

use anyhow::Context;

use crate::cli::{CmdResult, rebuild};
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
    if !args.json {
        writeln!(out, "query backend: {backend} (was {was})")?;
        let overridden = store
            .config()
            .settings()
            .iter()
            .find(|s| s.key == "query.backend")
            .and_then(|s| match &s.source {
                Source::Env(var) => Some(var.clone()),
                _ => None,
            });
        if let Some(var) = overridden {
            writeln!(out, "note: ${var} is set and overrides it")?;
        }
    }
    rebuild::report(&updated, args.json, out)
}
