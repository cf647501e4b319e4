//! `man`: the manual pages, made from the clap definitions that `--help` shows, one for
//! `git agent-context` (`git-agent-context.1`) and one per command
//! (`git-agent-context-<command>.1`). `git agent-context --help` has git open
//! `man git-agent-context`; `install` writes the pages where man looks without any
//! configuration (docs/commands.md, `install`).
//!
//! man-db searches, for each folder `<dir>/bin` on PATH, `<dir>/share/man` and `<dir>/man`: the
//! pages beside the binary (`~/.cargo/bin` → `~/.cargo/share/man/man1`) are found wherever the
//! binary is found, without root.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::{Cli, CmdResult, display_path};
use crate::store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write every page (git-agent-context.1 and git-agent-context-<command>.1) into <dir>,
    /// made if need be, instead of printing the first one.
    #[arg(long, value_name = "dir")]
    out: Option<PathBuf>,
}

/// A page: its file name and its roff text.
struct Page {
    name: String,
    text: Vec<u8>,
}

pub fn run(args: Args, out: &mut dyn Write) -> CmdResult {
    let pages = pages()?;
    match args.out {
        None => out.write_all(&pages[0].text)?,
        Some(dir) => {
            let written = write(&dir, &pages)
                .with_context(|| format!("cannot write the manual to {}", dir.display()))?;
            writeln!(
                out,
                "{}: {} pages, {written} of them new or changed",
                display_path(&dir),
                pages.len()
            )?;
        }
    }
    Ok(())
}

/// Write the pages to `<folder of this binary>/../share/man/man1`, where man finds them (see the
/// module's documentation), and say where in one line. A folder that cannot be written is said
/// in one line too: it fails nothing.
pub fn install(out: &mut dyn Write) -> io::Result<()> {
    let dir = match beside_binary() {
        Ok(dir) => dir,
        Err(e) => return writeln!(out, "note: the manual was not written: {e}"),
    };
    let shown = display_path(&dir);
    match pages()
        .map_err(anyhow::Error::from)
        .and_then(|p| write(&dir, &p))
    {
        Ok(0) => writeln!(out, "the manual in {shown} is up to date"),
        Ok(_) => writeln!(
            out,
            "wrote the manual to {shown}: `git agent-context --help` shows it"
        ),
        Err(e) => writeln!(
            out,
            "note: the manual was not written ({e:#}); `git agent-context --help` will not find it"
        ),
    }
}

/// `<dir>/share/man/man1` for the binary `<dir>/bin/git-agent-context`; none for a binary in
/// a folder not named `bin`, whose parent is no prefix man searches (a downloads folder).
fn beside_binary() -> io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .filter(|dir| dir.file_name().is_some_and(|n| n == "bin"));
    let base = bin.and_then(Path::parent).ok_or_else(|| {
        io::Error::other(format!(
            "{} is not in a bin folder, beside which man would look; `git agent-context man \
             --out <dir>` writes the pages where you choose",
            exe.display()
        ))
    })?;
    Ok(base.join("share").join("man").join("man1"))
}

/// Every page, `git-agent-context.1` first, then the commands' in the order `--help` lists them.
fn pages() -> io::Result<Vec<Page>> {
    // No page for `help`, which clap adds: `--help` is the way to it.
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    add_pages(&cmd, &mut pages)?;
    Ok(pages)
}

fn add_pages(cmd: &clap::Command, pages: &mut Vec<Page>) -> io::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut text = Vec::new();
    man.render(&mut text)?;
    pages.push(Page {
        name: man.get_filename(),
        text,
    });
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        add_pages(sub, pages)?;
    }
    Ok(())
}

/// Write each page that is missing or differs into `dir`, made if need be; returns how many
/// were written. A page is replaced whole: man never reads half of one.
fn write(dir: &Path, pages: &[Page]) -> anyhow::Result<usize> {
    let mut written = 0;
    for page in pages {
        let path = dir.join(&page.name);
        if fs::read(&path).is_ok_and(|old| old == page.text) {
            continue;
        }
        store::write_cache(&path, &page.text)?;
        written += 1;
    }
    Ok(written)
}
