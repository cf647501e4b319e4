//! `repair`: carry the notes of annotated commits that no branch, remote-tracking branch, tag
//! or HEAD reaches any more (a squash merge, a rebase merge, a force-push) to the reachable
//! commits that now hold their lines.

use std::io::Write;

use serde_json::json;

use crate::cli::{CmdResult, write_json};
use crate::ingest::repair;
use crate::retrieve::index;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let done = repair::repair(store)?;
    // The notes moved: the index follows now rather than at the next read.
    if let Err(e) = index::refresh(store) {
        eprintln!("warning: the retrieval index was not updated: {e}");
    }
    if args.json {
        let carried: Vec<_> = done
            .carried
            .iter()
            .map(|(from, to, share)| {
                json!({"from": from.to_string(), "to": to.to_string(), "score": share})
            })
            .collect();
        let left: Vec<String> = done.left.iter().map(ToString::to_string).collect();
        return write_json(
            out,
            &json!({
                "schema_version": 1,
                "annotated": done.annotated,
                "carried": carried,
                "left": left,
            }),
        );
    }
    let unreachable = done.carried.len() + done.left.len();
    writeln!(
        out,
        "{} annotated commit{}, {unreachable} no longer reachable: {} carried, {} left",
        done.annotated,
        if done.annotated == 1 { "" } else { "s" },
        done.carried.len(),
        done.left.len()
    )?;
    for (from, to, share) in &done.carried {
        writeln!(
            out,
            "  {} -> {}  ({:.0}% of its lines)",
            from.to_hex_with_len(7),
            to.to_hex_with_len(7),
            share * 100.0
        )?;
    }
    for from in &done.left {
        writeln!(
            out,
            "  {}  no reachable commit holds its lines; its note stays",
            from.to_hex_with_len(7)
        )?;
    }
    Ok(())
}
