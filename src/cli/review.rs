//! `review <range>`: a branch's change set as a reviewer reads it, with the reasoning of its
//! commits beside the diff. Also the output options `show` and `log` share with it.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::CmdResult;
use crate::cli::report;
use crate::cli::terminal::{self, Look};
use crate::render::{self, markdown, text};
use crate::retrieve::review;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// `<base>..<head>` (diff base's tree with head's), `<base>...<head>` (diff their merge
    /// base with head: what a pull request shows), or `<base>` for `<base>..HEAD`.
    range: String,
    #[command(flatten)]
    output: Output,
}

/// How `show`, `review` and `log` print.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For a terminal: git's diff with the reasoning beside it.
    #[default]
    Text,
    /// A pull-request comment: a collapsible section per file, fenced diffs.
    Markdown,
    /// The data, with a schema_version.
    Json,
}

#[derive(Debug, clap::Args)]
pub struct Output {
    #[arg(long, value_enum, default_value_t, value_name = "format")]
    format: Format,
    /// Print JSON (the same as --format json).
    #[arg(long)]
    json: bool,
    /// Markdown of show and review: leave out the diffs of the largest files (never their
    /// reasoning) until the text fits this many characters, and cut it after the last file
    /// that fits if the reasoning alone is longer; GitHub's comments take 65536.
    #[arg(long, value_name = "n")]
    max_chars: Option<usize>,
}

/// What `show`, `review` and `log` print: a report (its JSON is its fields) with two more
/// forms, coloured text and Markdown.
pub trait Printed: Serialize {
    fn text(&self, p: text::Palette, out: &mut dyn Write) -> io::Result<()>;
    fn markdown(&self, store: &Store, max_chars: Option<usize>) -> render::Result<String>;
}

impl Output {
    /// Whether the text format was asked for.
    pub fn is_text(&self) -> bool {
        !self.json && self.format == Format::Text
    }

    /// Whether JSON was asked for: it holds what the sessions explored or thought without
    /// deciding, which text and Markdown leave out.
    pub fn is_json(&self) -> bool {
        self.json || self.format == Format::Json
    }

    /// Print text with `body`, coloured as git would.
    pub fn text(
        &self,
        store: &Store,
        look: Look,
        out: &mut dyn Write,
        body: impl FnOnce(text::Palette, &mut dyn Write) -> CmdResult,
    ) -> CmdResult {
        let color = terminal::use_color(store, look.color, look.paging);
        body(text::Palette { color }, out)
    }

    /// Print in the format asked for, coloured as git would.
    pub fn emit(
        &self,
        store: &Store,
        look: Look,
        out: &mut dyn Write,
        printed: &impl Printed,
    ) -> CmdResult {
        if self.is_text() {
            return self.text(store, look, out, |p, out| Ok(printed.text(p, out)?));
        }
        if self.json || self.format == Format::Json {
            return report::print_json(out, printed);
        }
        let mut md = printed.markdown(store, self.max_chars)?;
        // Templates lose their last newline (minijinja's default); a file keeps one.
        if !md.ends_with('\n') {
            md.push('\n');
        }
        Ok(out.write_all(md.as_bytes())?)
    }
}

/// A review, or a commit shown (`show`); its JSON is the review's.
#[derive(Serialize)]
pub struct Reviewed<'a> {
    #[serde(flatten)]
    pub review: &'a review::Review,
    #[serde(skip)]
    pub show: bool,
}

impl Printed for Reviewed<'_> {
    fn text(&self, p: text::Palette, out: &mut dyn Write) -> io::Result<()> {
        if self.show {
            text::show(self.review, p, out)
        } else {
            text::review(self.review, p, out)
        }
    }

    fn markdown(&self, store: &Store, max_chars: Option<usize>) -> render::Result<String> {
        markdown::review(store, self.review, self.show, max_chars)
    }
}

pub fn run(store: &Store, args: Args, look: Look, out: &mut dyn Write) -> CmdResult {
    let review = review::review(store, &args.range, args.output.is_json())?;
    let printed = Reviewed {
        review: &review,
        show: false,
    };
    args.output.emit(store, look, out, &printed)
}
