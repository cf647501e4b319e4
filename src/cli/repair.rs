//! `repair`: carry the notes of annotated commits that no branch, remote-tracking branch, tag
//! or HEAD reaches any more (a squash merge, a rebase merge, a force-push) to the reachable
//! commits that now hold their lines.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::CmdResult;
use crate::cli::report::{self, Report};
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
    let repaired = Repaired {
        annotated: done.annotated,
        carried: (done.carried.iter())
            .map(|(from, to, score)| Carried {
                from: from.to_string(),
                to: to.to_string(),
                score: *score,
            })
            .collect(),
        left: done.left.iter().map(ToString::to_string).collect(),
    };
    report::print(out, &repaired, args.json)
}

/// What `repair` did.
#[derive(Serialize)]
struct Repaired {
    /// Annotated commits checked.
    annotated: usize,
    carried: Vec<Carried>,
    /// Unreachable annotated commits no reachable commit holds the lines of.
    left: Vec<String>,
}

/// An unreachable commit's note carried to the reachable commit that holds its lines.
#[derive(Serialize)]
struct Carried {
    from: String,
    to: String,
    /// The share of its lines that commit holds.
    score: f32,
}

impl Report for Repaired {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        let unreachable = self.carried.len() + self.left.len();
        writeln!(
            out,
            "{} annotated commit{}, {unreachable} no longer reachable: {} carried, {} left",
            self.annotated,
            if self.annotated == 1 { "" } else { "s" },
            self.carried.len(),
            self.left.len()
        )?;
        for c in &self.carried {
            writeln!(
                out,
                "  {} -> {}  ({:.0}% of its lines)",
                &c.from[..7],
                &c.to[..7],
                c.score * 100.0
            )?;
        }
        for from in &self.left {
            writeln!(
                out,
                "  {}  no reachable commit holds its lines; its note stays",
                &from[..7]
            )?;
        }
        Ok(())
    }
}
