//! `distill`: have a small model read what sessions said since the last time and turn their
//! decisions, rejections, trade-offs and constraints into pending events (`crate::distill`).
//! Exit 1 when a session could not be distilled: a failure, a budget, no transcript. With
//! `distill.mode` off it says so and sends nothing.

use std::io::{self, Write};

use anyhow::anyhow;
use serde::Serialize;

use crate::cli::report::{self, Report};
use crate::cli::{CmdResult, Failure};
use crate::distill::{self, Client, Outcome};
use crate::ingest::commit::Environment;
use crate::store::{Store, sessions};
use crate::transcript::locate::Homes;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this session (by default, every session the store knows).
    #[arg(long, value_name = "id")]
    session: Option<String>,
    /// Print what became of each session as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let config = store.config();
    let mut distilled = Distilled {
        mode: config.distill_mode(),
        sessions: Vec::new(),
    };
    if !config.distill_on() {
        return report::print(out, &distilled, args.json);
    }
    let every = args.session.is_none();
    let ids = match args.session {
        Some(id) if id.trim().is_empty() => {
            return Err(Failure::usage(anyhow!("--session is empty")));
        }
        Some(id) => vec![id],
        None => (sessions::all(store)?.into_iter())
            .map(|s| s.session_id)
            .collect(),
    };
    let env = Environment {
        session_id: None,
        homes: Homes::from_env(),
    };
    let key = std::env::var("ANTHROPIC_API_KEY").ok();
    let client = Client {
        api_key: key.as_deref().filter(|k| !k.trim().is_empty()),
    };
    for session_id in ids {
        let outcome = distill::session(store, &env, &session_id, &client)?;
        // Of every session, those whose transcripts are gone have nothing to say.
        if !(every && outcome == Outcome::NoTranscripts) {
            distilled.sessions.push(Session {
                outcome,
                session_id,
            });
        }
    }
    report::print(out, &distilled, args.json)?;
    match distilled.sessions.iter().any(|s| s.outcome.failed()) {
        true => Err(Failure::failed(anyhow!(
            "not every session could be distilled"
        ))),
        false => Ok(()),
    }
}

/// What became of each session.
#[derive(Serialize)]
struct Distilled {
    mode: &'static str,
    sessions: Vec<Session>,
}

#[derive(Serialize)]
struct Session {
    #[serde(flatten)]
    outcome: Outcome,
    session_id: String,
}

impl Report for Distilled {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.mode == "off" {
            return writeln!(
                out,
                "distillation is off (distill.mode = {}): nothing sent; set `[distill] mode = \"api\"` \
                 in $GIT_DIR/agent-context/config.toml to turn it on",
                self.mode
            );
        }
        if self.sessions.is_empty() {
            return writeln!(
                out,
                "no session with a transcript is known here (run `extract` first)"
            );
        }
        for s in &self.sessions {
            writeln!(out, "{}: {}", s.session_id, describe(&s.outcome))?;
        }
        Ok(())
    }
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::NoTranscripts => "no transcript known".to_owned(),
        Outcome::NothingNew => "nothing new".to_owned(),
        Outcome::Busy => "being distilled by another run".to_owned(),
        Outcome::OverBudget {
            estimate,
            budget,
            spent,
            limit,
        } => format!(
            "not sent: about {estimate} tokens would pass {budget} ({spent} of {limit} spent)"
        ),
        Outcome::Distilled {
            added,
            dropped,
            input_tokens,
            output_tokens,
            kept: _,
        } => format!(
            "distilled: {added} events added, {dropped} dropped (quote not in the text), \
             {input_tokens} tokens in, {output_tokens} out"
        ),
        Outcome::Failed { message } => format!("failed: {message}"),
    }
}
