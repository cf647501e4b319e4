//! `show [<rev>]`: a commit as `git show` prints it, with its reasoning beside the diff.

use std::io::Write;

use crate::cli::CmdResult;
use crate::cli::review::{Output, Reviewed};
use crate::cli::terminal::Look;
use crate::retrieve::review;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The commit (any revision git understands: a branch, a tag, `HEAD~2`, an id).
    #[arg(default_value = "HEAD")]
    rev: String,
    #[command(flatten)]
    output: Output,
}

pub fn run(store: &Store, args: Args, look: Look, out: &mut dyn Write) -> CmdResult {
    let review = review::show(store, &args.rev, args.output.is_json())?;
    let printed = Reviewed {
        review: &review,
        show: true,
    };
    args.output.emit(store, look, out, &printed)
}
