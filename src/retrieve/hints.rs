//! The files a prompt is about (docs/commands.md, `query`): paths it names — whole, by a tail of the path
//! or by bare file name — files defining the symbols it names, and the files changed in the working
//! tree. Matched against the tree at HEAD and the paths the index knows, never a walk of the tree.

use std::collections::BTreeSet;
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
    prompt
        .split(|c: char| c.is_whitespace() || "`'\"()[]{}<>,;".contains(c))
        .map(|w| w.trim_matches(|c: char| ".:!?*".contains(c)))
        .map(|w| without_position(w.trim_start_matches('@')))
        .map(|w| w.trim_start_matches("./"))
        .filter(|w| !w.is_empty())
}

/// `setup.go:680-706` → `setup.go`; `main.rs#L12` → `main.rs`: the lines an editor or a web
/// page names after a path.
fn without_position(word: &str) -> &str {
    let lines = |rest: &str| {
        !rest.is_empty()
            && rest.bytes().any(|b| b.is_ascii_digit())
            && rest
                .bytes()
                .all(|b| b.is_ascii_digit() || b"-:L".contains(&b))
    };
    if let Some((path, rest)) = word.split_once("#L")
        && lines(rest)
    {
        return path;
    }
    match word.split_once(':') {
        Some((path, rest)) if !path.is_empty() && lines(rest) => path,
        _ => word,
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

/// The hinted files of a prompt, each with why, in order of trust (files changed in the
/// working tree come from [`Changed`]).
pub fn hinted(
    head: &mut HeadTree<'_>,
    index: &Index,
    prompt: &str,
    given: &[String],
) -> Vec<(String, Hint)> {
    let mut out: Vec<(String, Hint)> = given.iter().map(|p| (p.clone(), Hint::Given)).collect();
    let known = index.paths();
    let mut tracked = |path: &str| head.blob(path).is_some();
    let mut named: BTreeSet<String> = BTreeSet::new();
    for word in words(prompt) {
        if looks_like_path(word) {
            if tracked(word) {
                named.insert(word.to_owned());
                continue;
            }
            // A path on another machine (`/home/ann/src/project/src/main.rs`): the longest
            // tail of it that is a file at HEAD.
            if let Some(path) = word
                .match_indices('/')
                .map(|(i, _)| &word[i + 1..])
                .find(|tail| tail.contains('/') && tracked(tail))
            {
                named.insert(path.to_owned());
                continue;
            }
            let tail = format!("/{word}");
            named.extend(
                known
                    .iter()
                    .filter(|p| p.ends_with(&tail) && tracked(p))
                    .take(MOST_PER_NAME)
                    .cloned(),
            );
        }
    }
    out.extend(named.into_iter().map(|p| (p, Hint::Named)));
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
    out.extend(defined.into_iter().map(|p| (p, Hint::Symbol)));
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
        let paths: Vec<&str> = words("@src/cache.rs:12-30, lib/a.go:7:2, b.rs#L3-L9 and c.md:")
            .filter(|w| looks_like_path(w))
            .collect();
        assert_eq!(paths, ["src/cache.rs", "lib/a.go", "b.rs", "c.md"]);
        let symbols: Vec<&str> = words("Fix parse_range() and Cache::evictOld, not the cache")
            .filter_map(looks_like_symbol)
            .collect();
        assert_eq!(symbols, ["parse_range", "evictOld"]);
    }
}
