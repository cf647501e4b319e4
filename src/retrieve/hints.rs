//! The files a prompt is about (docs/commands.md, `query`): paths it names — whole, by a tail of the path
//! or by bare file name — files defining the symbols it names, and the files changed in the working
//! tree. Matched against the tree at HEAD and the paths the index knows, never a walk of the tree.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};

use crate::retrieve::head::HeadTree;
use crate::retrieve::index::Index;
use crate::store::Store;

/// Files one name in a prompt may hint (`mod.rs` ends many paths).
const MOST_PER_NAME: usize = 10;
/// Files changed in the working tree taken as hints.
pub const MOST_CHANGED: usize = 20;

/// Why a file is hinted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hint {
    /// Given with `--files` (or by the caller).
    Given,
    /// Named in the prompt.
    Named,
    /// Defines a symbol named in the prompt.
    Symbol,
    /// Changed in the working tree.
    Changed,
}

/// The words of a prompt that may name files or symbols: split on white space and quotes,
/// with surrounding punctuation, an `@` mention's sign and a position (`:12`, `:12-30`,
/// `:12:4`, `#L12-L30`) taken off.
fn words(prompt: &str) -> impl Iterator<Item = &str> {
    mentions(prompt).map(|(word, _)| word)
}

/// The words of a prompt, each with the lines it names after it, if any.
fn mentions(prompt: &str) -> impl Iterator<Item = (&str, Option<Lines>)> {
    prompt
        .split(|c: char| c.is_whitespace() || "`'\"()[]{}<>,;".contains(c))
        .map(|w| w.trim_matches(|c: char| ".:!?*".contains(c)))
        .map(|w| position(w.trim_start_matches('@')))
        .map(|(w, lines)| (w.trim_start_matches("./"), lines))
        .filter(|(w, _)| !w.is_empty())
}

/// The first and last line a mention names.
pub type Lines = (u32, u32);

/// `setup.go:680-706` → `setup.go`, lines 680 to 706; `main.rs#L12` → `main.rs`, line 12: the
/// lines an editor or a web page names after a path (a column after a line, `:12:4`, is
/// dropped).
fn position(word: &str) -> (&str, Option<Lines>) {
    let (path, rest) = match word.split_once("#L") {
        Some(split) => split,
        None => match word.split_once(':') {
            Some(split) => split,
            None => return (word, None),
        },
    };
    let number = |s: &str| {
        s.trim_start_matches('L')
            .split(':')
            .next()?
            .parse::<u32>()
            .ok()
    };
    let lines = match rest.split_once('-') {
        Some((first, last)) => number(first).zip(number(last)),
        None => number(rest).map(|n| (n, n)),
    };
    match lines {
        Some((first, last)) if !path.is_empty() && 0 < first && first <= last => {
            (path, Some((first, last)))
        }
        _ => (word, None),
    }
}

/// Whether a word looks like a file name or path: a folder separator, or a short extension.
fn looks_like_path(word: &str) -> bool {
    if word.contains("://") {
        return false;
    }
    if word.contains('/') {
        return true;
    }
    match word.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.bytes().all(|b| b.is_ascii_alphanumeric())
                && !ext.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// Whether a word looks like a code identifier: `snake_case`, `camelCase`, `Type::method`.
fn looks_like_symbol(word: &str) -> Option<&str> {
    let word = word.trim_end_matches("()");
    let word = word.rsplit("::").next().unwrap_or(word);
    let ident = word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && word.len() >= 3
        && !word.as_bytes()[0].is_ascii_digit();
    let shaped = word.contains('_')
        || word
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    (ident && shaped).then_some(word)
}

/// A file a prompt is about, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hinted {
    pub path: String,
    pub hint: Hint,
    /// The lines the prompt names after the path (`pool.rs:12-30`): first and last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Lines>,
}

impl Hinted {
    pub fn new(path: String, hint: Hint) -> Hinted {
        Hinted {
            path,
            hint,
            lines: None,
        }
    }
}

/// The hinted files of a prompt, each with why, in order of trust (files changed in the
/// working tree come from [`Changed`]). A file named with lines and without is the whole file;
/// named with several ranges, their span.
pub fn hinted(
    head: &mut HeadTree<'_>,
    index: &Index,
    prompt: &str,
    given: &[String],
) -> Vec<Hinted> {
    let mut out: Vec<Hinted> = given
        .iter()
        .map(|p| Hinted::new(p.clone(), Hint::Given))
        .collect();
    let known = index.paths();
    let mut tracked = |path: &str| head.blob(path).is_some();
    let mut named: BTreeMap<String, Option<Lines>> = BTreeMap::new();
    let mut name = |path: &str, lines: Option<Lines>| {
        let span = named.entry(path.to_owned()).or_insert(lines);
        *span = span.zip(lines).map(|(a, b)| (a.0.min(b.0), a.1.max(b.1)));
    };
    for (word, lines) in mentions(prompt) {
        if looks_like_path(word) {
            if tracked(word) {
                name(word, lines);
                continue;
            }
            // A path on another machine (`/home/ann/src/project/src/main.rs`): the longest
            // tail of it that is a file at HEAD.
            if let Some(path) = word
                .match_indices('/')
                .map(|(i, _)| &word[i + 1..])
                .find(|tail| tail.contains('/') && tracked(tail))
            {
                name(path, lines);
                continue;
            }
            let tail = format!("/{word}");
            let ending: Vec<&String> = known
                .iter()
                .filter(|p| p.ends_with(&tail) && tracked(p))
                .take(MOST_PER_NAME)
                .collect();
            for path in ending {
                name(path, lines);
            }
        }
    }
    out.extend(named.into_iter().map(|(path, lines)| Hinted {
        path,
        hint: Hint::Named,
        lines,
    }));
    let mut defined: BTreeSet<String> = BTreeSet::new();
    for word in words(prompt) {
        if let Some(symbol) = looks_like_symbol(word) {
            defined.extend(
                index
                    .symbol_paths(symbol)
                    .into_iter()
                    .filter(|p| tracked(p)),
            );
        }
    }
    out.extend(defined.into_iter().map(|p| Hinted::new(p, Hint::Symbol)));
    out
}

/// Files changed in the working tree or the index against HEAD, asked of git (`git diff
/// --name-only HEAD`) in the background while the rest of the query runs.
#[derive(Default)]
pub struct Changed(Option<Child>);

impl Changed {
    pub fn start(store: &Store) -> Changed {
        let Some(workdir) = store.workdir() else {
            return Changed(None);
        };
        let child = Command::new("git")
            .arg("-C")
            .arg(workdir)
            .args([
                "--no-optional-locks",
                "diff",
                "--name-only",
                "-z",
                "--no-renames",
                "HEAD",
                "--",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok();
        Changed(child)
    }

    /// The files, once git has answered; none if it could not.
    pub fn files(self) -> Vec<String> {
        let Some(Ok(out)) = self.0.map(Child::wait_with_output) else {
            return Vec::new();
        };
        if !out.status.success() {
            return Vec::new();
        }
        out.stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_symbols_in_prompts() {
        let paths: Vec<&str> =
            words("Why does `src/cache.rs` use a map? See cache.py, v1.2 and https://x.io/a.")
                .filter(|w| looks_like_path(w))
                .collect();
        assert_eq!(paths, ["src/cache.rs", "cache.py"]);
        let paths: Vec<(&str, Option<Lines>)> =
            mentions("@src/cache.rs:12-30, lib/a.go:7:2, b.rs#L3-L9 and c.md:")
                .filter(|(w, _)| looks_like_path(w))
                .collect();
        assert_eq!(
            paths,
            [
                ("src/cache.rs", Some((12, 30))),
                ("lib/a.go", Some((7, 7))),
                ("b.rs", Some((3, 9))),
                ("c.md", None)
            ]
        );
        // Not lines: backwards, none, or not numbers.
        for word in ["d.rs:9-2", "d.rs:0", "d.rs:x", "https://x.io/a.rs"] {
            assert_eq!(position(word), (word, None));
        }
        let symbols: Vec<&str> = words("Fix parse_range() and Cache::evictOld, not the cache")
            .filter_map(looks_like_symbol)
            .collect();
        assert_eq!(symbols, ["parse_range", "evictOld"]);
    }
}
