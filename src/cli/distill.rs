//! `distill`: have a small model read what sessions said since the last time and turn their
//! decisions, rejections, trade-offs and constraints into pending events (`crate::distill`).
//! Exit 1 when a session could not be distilled: a failure, a budget, no transcript. With
//! `distill.mode` off it says so and sends nothing.

use std::io::Write;

use anyhow::anyhow;
use serde_json::json;

use crate::cli::{CmdResult, Failure, claude_dir, write_json};
use crate::distill::{self, Client, Outcome};
use crate::ingest::commit::Environment;
use crate::store::{Store, sessions};

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
    if !config.distill_on() {
        if args.json {
            return write_json(
                out,
                &json!({ "schema_version": 1, "mode": config.distill_mode(), "sessions": [] }),
            );
        }
        writeln!(
            out,
            "distillation is off (distill.mode = {}): nothing sent; set `[distill] mode = \"api\"` \
             in $GIT_DIR/agent-context/config.toml to turn it on",
            config.distill_mode()
        )?;
        return Ok(());
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
        claude_dir: claude_dir(),
    };
    let key = std::env::var("ANTHROPIC_API_KEY").ok();
    let client = Client {
        api_key: key.as_deref().filter(|k| !k.trim().is_empty()),
    };
    let mut results = Vec::new();
    for id in ids {
        let outcome = distill::session(store, &env, &id, &client)?;
        // Of every session, those whose transcripts are gone have nothing to say.
        if !(every && outcome == Outcome::NoTranscripts) {
            results.push((id, outcome));
        }
    }
    let failed = results.iter().any(|(_, o)| o.failed());
    if args.json {
        let sessions: Vec<_> = (results.iter())
            .map(|(id, outcome)| {
                let mut value = json!(outcome);
                value["session_id"] = json!(id);
                value
            })
            .collect();
        let mode = config.distill_mode();
        write_json(
            out,
            &json!({ "schema_version": 1, "mode": mode, "sessions": sessions }),
        )?;
    } else if results.is_empty() {
        writeln!(
            out,
            "no session with a transcript is known here (run `extract` first)"
        )?;
    } else {
        for (id, outcome) in &results {
            writeln!(out, "{id}: {}", describe(outcome))?;
        }
    }
    match failed {
        true => Err(Failure::failed(anyhow!(
            "not every session could be distilled"
        ))),
        false => Ok(()),
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
