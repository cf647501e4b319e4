//! `install` and `uninstall` (docs/commands.md, `install`): our hook entries in a Claude Code
//! settings file ([`settings`]) and our scripts in the repository's git hooks folder
//! ([`git_hooks`]).
//!
//! Both sides share other tools' files, so the invariants are about what is *not* ours: a key,
//! a hook entry or a git hook we did not write is never changed, reordered or lost; `uninstall`
//! takes out exactly what `install` put in; running either twice changes nothing the second
//! time. Every file is replaced atomically (a temporary file in the same folder, then a rename),
//! so a session or a commit reading it meanwhile sees the old or the new file, never a mix.

pub mod codex_trust;
pub mod git_hooks;
pub mod settings;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Why installing or uninstalling failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path} is not valid JSON")]
    NotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: {what}, so there is no telling where hooks go; left untouched")]
    Shape { path: PathBuf, what: String },
    #[error("{path}: {what}; left untouched")]
    Conflict { path: PathBuf, what: String },
    #[error(
        "cannot keep the git hook {path} beside ours: {saved} exists already (from an earlier \
         install?); move one of them away"
    )]
    Taken { path: PathBuf, saved: PathBuf },
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error(transparent)]
    Link(#[from] crate::deliver::links::Error),
    #[error(transparent)]
    Store(#[from] crate::store::Error),
}

impl Error {
    /// Whether the fault is in the input (a file we were asked to edit, a link on the way to
    /// it), not in the machine.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::NotJson { .. } | Error::Shape { .. } | Error::Conflict { .. } | Error::Link(_)
        )
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> Error + use<'a> {
    move |source| Error::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

/// The permission bits of `path` (Unix), if it exists.
#[cfg(unix)]
fn mode_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(_path: &Path) -> Option<u32> {
    None
}

/// `word` as one shell word: as it is when it is plain, else in single quotes.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    match plain {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// The words of a command line as a shell reads them: split at unquoted blanks, quotes and
/// backslash escapes taken out (no expansion).
pub fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let (mut word, mut quote, mut started) = (String::new(), None::<char>, false);
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, '\'' | '"') => (quote, started) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None | Some('"'), '\\') => {
                word.extend(chars.next());
                started = true;
            }
            (_, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_command_is_read_back_into_the_words_it_was_made_of() {
        let path = "/Users/Jo O'Neil/b in/git-agent-context";
        let line = format!("{} hook \"Stop\" a\\ b ''", shell_quote(path));
        assert_eq!(shell_words(&line), [path, "hook", "Stop", "a b", ""]);
        assert!(shell_words("  ").is_empty());
    }
}
