//! The files a prompt is about (docs/commands.md, `query`): paths it names — whole, by a tail of the path
//! or by bare file name — files defining the symbols it names, and the files changed in the working
//! tree. Matched against the tree at HEAD and the paths the index knows, never a walk of the tree.

use std::cell::OnceCell;
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
/// lines an editor or GitHub names after a path (a column, `:12:4` or `#L12C4`, is dropped).
/// The position is looked for after the path's last `/`, so that a drive letter (`C:/src/a.rs:4`)
/// is not taken for one. A position that names no lines (`a.rs:0`, `a.rs:30-12`) leaves the
/// path, without lines.
fn position(word: &str) -> (&str, Option<Lines>) {
    let name_at = word.rfind('/').map_or(0, |i| i + 1);
    let name = &word[name_at..];
    let Some((path_end, rest)) = name
        .find("#L")
        .map(|i| (i, &name[i + 2..]))
        .or_else(|| name.find(':').map(|i| (i, &name[i + 1..])))
    else {
        return (word, None);
    };
    let path = &word[..name_at + path_end];
    if path.is_empty() || rest.is_empty() || !rest.bytes().all(|b| b"0123456789-:LC".contains(&b)) {
        return (word, None);
    }
    // `12`, `L12`, `12:4`, `L12C4`: the line's digits.
    let number = |s: &str| {
        let s = s.trim_start_matches('L');
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        s[..digits].parse::<u32>().ok()
    };
    let lines = match rest.split_once('-') {
        Some((first, last)) => number(first).zip(number(last)),
        None => number(rest).map(|n| (n, n)),
    };
    (
        path,
        lines.filter(|&(first, last)| 0 < first && first <= last),
    )
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

/// Commits a prompt points at as a whole, by the words people use for them rather than by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commits {
    /// The branch's own work: "review the changes in this branch", "the PR's comments".
    Branch,
    /// HEAD and the commits before it along its first parents, this many in all: "the last
    /// commit", "the last 3 commits".
    Last(usize),
}

/// Last commits a prompt may point at, at most.
const MOST_LAST: usize = 20;

/// The commits a prompt points at as a whole, if it does: its last commits ("the last commit",
/// "my previous two commits", "the recent commits") before its branch ("this branch", "our
/// branch", "the PR", "this pull request"). A determiner must come first, so that "a branch",
/// "open a PR" or "which branch" point at nothing.
pub fn commits_named(prompt: &str) -> Option<Commits> {
    let lower = prompt.to_lowercase();
    let words: Vec<&str> = (lower.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    let word = |i: usize| words.get(i).copied().unwrap_or("");
    let last = (0..words.len()).find_map(|i| {
        if !matches!(word(i), "last" | "latest" | "previous" | "recent") {
            return None;
        }
        let (count, at) = match count(word(i + 1)) {
            Some(n) => (Some(n), i + 2),
            None => (None, i + 1),
        };
        match word(at) {
            "commit" => Some(count.unwrap_or(1)),
            "commits" => Some(count.unwrap_or(LAST_UNCOUNTED)),
            _ => None,
        }
    });
    if let Some(n) = last {
        return Some(Commits::Last(n.clamp(1, MOST_LAST)));
    }
    let branch = (0..words.len()).any(|i| {
        matches!(word(i), "this" | "the" | "my" | "our" | "current" | "your")
            && match word(i + 1) {
                "branch" | "pr" | "mr" | "changeset" => true,
                "pull" | "merge" => word(i + 2) == "request",
                _ => false,
            }
    });
    branch.then_some(Commits::Branch)
}

/// Last commits "the last commits" points at, their number unsaid.
const LAST_UNCOUNTED: usize = 5;

/// A count of commits, in digits or words: "3", "three".
fn count(word: &str) -> Option<usize> {
    const WORDS: [&str; 10] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    (word.parse::<usize>().ok()).or_else(|| WORDS.iter().position(|w| *w == word).map(|i| i + 1))
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
    // The index's paths are read only when a word needs them.
    let known = OnceCell::new();
    let mut tracked = |path: &str| head.blob(path).is_some();
    let mut named: BTreeMap<String, Option<Lines>> = BTreeMap::new();
    let mut name = |path: &str, lines: Option<Lines>| {
        let span = named.entry(path.to_owned()).or_insert(lines);
        *span = span.zip(lines).map(|(a, b)| (a.0.min(b.0), a.1.max(b.1)));
    };
    for (word, lines) in mentions(prompt) {
        for path in resolve(word, &mut tracked, || known.get_or_init(|| index.paths())) {
            name(&path, lines);
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

/// The files a word of a prompt names, if it looks like a path: itself; for a path on another
/// machine (`/home/ann/src/project/src/main.rs`) or in a GitHub link (`…/blob/main/src/main.rs`),
/// its longest tail that is a file at HEAD; else the files the index knows that end with it.
fn resolve<'k>(
    word: &str,
    tracked: &mut impl FnMut(&str) -> bool,
    known: impl FnOnce() -> &'k [String],
) -> Vec<String> {
    let linked = linked_path(word);
    let word = linked.unwrap_or(word);
    if !looks_like_path(word) {
        return Vec::new();
    }
    if tracked(word) {
        return vec![word.to_owned()];
    }
    let elsewhere = linked.is_some()
        || word.starts_with(['/', '~'])
        || word.as_bytes().get(1..3) == Some(b":/".as_slice());
    let tails = word.match_indices('/').map(|(i, _)| &word[i + 1..]);
    if let Some(path) = tails
        .filter(|tail| elsewhere || tail.contains('/'))
        .find(|tail| tracked(tail))
    {
        return vec![path.to_owned()];
    }
    let tail = format!("/{word}");
    known()
        .iter()
        .filter(|p| p.ends_with(&tail) && tracked(p))
        .take(MOST_PER_NAME)
        .cloned()
        .collect()
}

/// The path in a GitHub link to a file or folder (`…/blob/main/src/main.rs` → `main/src/main.rs`,
/// whose tails [`resolve`] tries).
fn linked_path(word: &str) -> Option<&str> {
    ["/blob/", "/tree/"]
        .iter()
        .find_map(|at| word.split_once(at))
        .filter(|_| word.contains("://"))
        .map(|(_, rest)| rest)
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
    fn commits_a_prompt_points_at() {
        for (prompt, named) in [
            (
                "can you look at the last commit, can we add a test for it",
                Commits::Last(1),
            ),
            ("Squash my previous two commits", Commits::Last(2)),
            ("what did the last 3 commits change?", Commits::Last(3)),
            (
                "summarise the recent commits",
                Commits::Last(LAST_UNCOUNTED),
            ),
            ("revert the last 500 commits", Commits::Last(MOST_LAST)),
            ("the last commit on this branch broke CI", Commits::Last(1)),
            (
                "Can you review the changes in this branch?",
                Commits::Branch,
            ),
            ("rebase our branch onto main", Commits::Branch),
            (
                "Check the PR comments and fix what is valid",
                Commits::Branch,
            ),
            (
                "write the description of this pull request",
                Commits::Branch,
            ),
        ] {
            assert_eq!(commits_named(prompt), Some(named), "{prompt}");
        }
        for prompt in [
            "open a PR when you are done",
            "which branch is this on?",
            "commit the last change",
            "the branches are out of date",
            "fix the commit message",
            "the previous session left a TODO",
        ] {
            assert_eq!(commits_named(prompt), None, "{prompt}");
        }
    }

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
        // A drive letter is no position; GitHub's columns are dropped.
        assert_eq!(position("C:/src/a.rs:4"), ("C:/src/a.rs", Some((4, 4))));
        assert_eq!(position("a.rs#L12C4-L20C1"), ("a.rs", Some((12, 20))));
        // Lines that are none name the file alone; what is no position stays the word.
        for word in ["d.rs:9-2", "d.rs:0", "d.rs:12-"] {
            assert_eq!(position(word), ("d.rs", None), "{word}");
        }
        for word in ["d.rs:x", "https://x.io/a.rs", "notes:draft"] {
            assert_eq!(position(word), (word, None));
        }
        let symbols: Vec<&str> = words("Fix parse_range() and Cache::evictOld, not the cache")
            .filter_map(looks_like_symbol)
            .collect();
        assert_eq!(symbols, ["parse_range", "evictOld"]);
    }
}
