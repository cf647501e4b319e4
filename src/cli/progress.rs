//! Progress of long commands, on stderr so that their output stays as it is: a bar (or a
//! spinner) when stderr is a terminal, cleared when done; plain lines otherwise, for a log, when
//! the command asks for them; else nothing.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::display_path;

/// How progress is shown.
enum Shown {
    Bar(ProgressBar),
    Lines,
    Nothing,
}

/// Progress through transcripts, by their bytes, read in the order given.
pub struct Transcripts {
    shown: Shown,
    count: usize,
    /// Each transcript's size, for a bar.
    sizes: Vec<u64>,
    done: usize,
}

impl Transcripts {
    /// Progress through `paths`: a bar on a terminal when they are at least `min_bytes` in all;
    /// on anything else, a line per transcript if `lines`.
    pub fn new(paths: &[PathBuf], min_bytes: u64, lines: bool) -> Transcripts {
        let terminal = std::io::stderr().is_terminal();
        // Sizes only matter to a bar.
        let sizes: Vec<u64> = (paths.iter())
            .filter(|_| terminal)
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .collect();
        let total: u64 = sizes.iter().sum();
        let shown = match terminal {
            true if total >= min_bytes => {
                let bar = ProgressBar::with_draw_target(
                    Some(total),
                    ProgressDrawTarget::stderr_with_hz(10),
                );
                let style = ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar());
                bar.set_style(style);
                Shown::Bar(bar)
            }
            true => Shown::Nothing,
            false if lines => Shown::Lines,
            false => Shown::Nothing,
        };
        Transcripts {
            shown,
            count: paths.len(),
            sizes,
            done: 0,
        }
    }

    /// A transcript about to be read.
    pub fn start(&mut self, path: &Path) {
        if let Shown::Bar(bar) = &self.shown {
            bar.set_message(format!(
                "[{}/{}] {}",
                self.done + 1,
                self.count,
                file_name(path)
            ));
        }
    }

    /// The next transcript read; `said` is what came of it.
    pub fn read(&mut self, path: &Path, said: &str) {
        let size = self.sizes.get(self.done).copied().unwrap_or(0);
        self.done += 1;
        match &self.shown {
            Shown::Bar(bar) => bar.inc(size),
            Shown::Lines => eprintln!(
                "[{}/{}] {}: {said}",
                self.done,
                self.count,
                display_path(path)
            ),
            Shown::Nothing => {}
        }
    }

    /// Say `line` on stderr without breaking the bar.
    pub fn warn(&self, line: &str) {
        match &self.shown {
            Shown::Bar(bar) => bar.suspend(|| eprintln!("{line}")),
            _ => eprintln!("{line}"),
        }
    }
}

impl Drop for Transcripts {
    /// The bar goes when the reading ends, however it ends.
    fn drop(&mut self) {
        if let Shown::Bar(bar) = &self.shown {
            bar.finish_and_clear();
        }
    }
}

/// A spinner with what is being done, on a terminal; nothing elsewhere.
pub struct Steps(Option<ProgressBar>);

impl Steps {
    pub fn new() -> Steps {
        if !std::io::stderr().is_terminal() {
            return Steps(None);
        }
        let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(10));
        spinner.enable_steady_tick(Duration::from_millis(100));
        Steps(Some(spinner))
    }

    pub fn step(&self, what: &str) {
        if let Some(spinner) = &self.0 {
            spinner.set_message(what.to_owned());
        }
    }

    pub fn finish(self) {
        if let Some(spinner) = self.0 {
            spinner.finish_and_clear();
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}
