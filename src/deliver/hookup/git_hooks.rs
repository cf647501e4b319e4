//! Our git hooks, `post-commit`, `post-merge` and `post-rewrite`, and `pre-push` when asked
//! for (`install --sync`) — the scripts of `git-hooks/` — in the folder
//! git runs hooks from: `core.hooksPath` — relative to where git runs hooks, the top of the
//! working tree (`$GIT_DIR` in a bare repository) — else `hooks/` in the common git directory.
//!
//! A hook already there that is not ours is chained, never replaced: it is renamed
//! `<name>.pre-agent-context` ([`CHAINED`]), and ours runs it first with the same arguments and
//! the same standard input (post-rewrite reads the rewritten commits there: both hooks get
//! them), its output going where git sends it, and exits with its status. `uninstall` renames
//! it back. A hook is ours when one of its opening comment lines starts with [`MARK`], as the
//! shipped scripts' do; so a copy of a shipped script is updated, not chained.
//!
//! The shipped scripts run `git-agent-context` from PATH, and do nothing without it (no "not a
//! git command" on every commit). Installed in the git directory, which is this clone's alone,
//! a hook first runs the binary `install` ran as, as the settings it writes for the local scope
//! do, and PATH's only when that one is gone; in a folder of the working tree (a committed
//! `core.hooksPath`) it names no path of this machine.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{Error, Result, io_error, mode_of};
use crate::store::write_atomic_with_mode;

/// The suffix a hook that was there before ours is kept under.
pub const CHAINED: &str = ".pre-agent-context";

/// How our hooks are known: a line of their opening comment starts with it.
pub const MARK: &str = "# git-agent-context:";

/// How a shipped script finds the binary: the line [`script`] puts the installed binary
/// before.
const FIND: &str = "if bin=$(command -v git-agent-context 2>/dev/null); then";

/// The hooks we install, and the shipped scripts they are made from.
const SHIPPED: [(&str, &str); 3] = [
    (
        "post-commit",
        include_str!("../../../git-hooks/post-commit"),
    ),
    ("post-merge", include_str!("../../../git-hooks/post-merge")),
    (
        "post-rewrite",
        include_str!("../../../git-hooks/post-rewrite"),
    ),
];

/// The hook that pushes the notes beside a branch, installed only when asked for.
const PRE_PUSH: (&str, &str) = ("pre-push", include_str!("../../../git-hooks/pre-push"));

/// What installing a hook does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Ours is there, as this build would write it.
    Nothing,
    /// There was no hook: ours is written.
    Create,
    /// Ours is there, from another build (or not executable): it is written again.
    Update,
    /// Another hook is there: it is kept as `<name>.pre-agent-context`, and ours runs it.
    Chain,
}

/// One hook to install.
#[derive(Debug)]
pub struct Step {
    pub path: PathBuf,
    pub action: Action,
    script: String,
}

/// What uninstalling a hook did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// There was no hook of ours.
    Absent,
    /// Ours was removed.
    Removed,
    /// Ours was removed and the hook it ran is back under its name.
    Restored,
    /// The hook there is not ours: left alone.
    NotOurs,
}

/// What installing our hooks in `folder` would do, calling `binary` first when given (an
/// absolute path), `pre-push` among them when `push`; an error, before anything is changed,
/// when a hook cannot be chained.
pub fn plan(folder: &Path, binary: Option<&str>, push: bool) -> Result<Vec<Step>> {
    SHIPPED
        .iter()
        .chain(push.then_some(&PRE_PUSH))
        .map(|(name, shipped)| {
            let path = folder.join(name);
            let script = script(shipped, binary);
            let action = match present(&path)? {
                false => Action::Create,
                true => match fs::read(&path) {
                    Ok(content) if is_ours(&content) => {
                        let executable = mode_of(&path).is_none_or(|m| m & 0o111 != 0);
                        match content == script.as_bytes() && executable {
                            true => Action::Nothing,
                            false => Action::Update,
                        }
                    }
                    // Not ours (or a link to nothing): kept, unless its place is taken.
                    _ => {
                        let saved = chained(&path);
                        if present(&saved)? {
                            return Err(Error::Taken { path, saved });
                        }
                        Action::Chain
                    }
                },
            };
            Ok(Step {
                path,
                action,
                script,
            })
        })
        .collect()
}

/// Do what [`plan`] said.
pub fn apply(step: &Step) -> Result<()> {
    let write = || {
        Ok(write_atomic_with_mode(
            &step.path,
            step.script.as_bytes(),
            Some(0o755),
        )?)
    };
    match step.action {
        Action::Nothing => Ok(()),
        Action::Create | Action::Update => write(),
        Action::Chain => {
            let saved = chained(&step.path);
            fs::rename(&step.path, &saved).map_err(io_error("cannot rename", &step.path))?;
            write().inspect_err(|_| {
                // Put the user's hook back rather than leave no hook.
                let _ = fs::rename(&saved, &step.path);
            })
        }
    }
}

/// Take our hooks out of `folder`, putting back the hooks they ran.
pub fn uninstall(folder: &Path) -> Result<Vec<(PathBuf, Removal)>> {
    // `pre-push` only when ours is there, or the hook it ran: another is none of our business.
    let push = pushes(folder) || present(&chained(&folder.join(PRE_PUSH.0)))?;
    SHIPPED
        .iter()
        .chain(push.then_some(&PRE_PUSH))
        .map(|(name, _)| {
            let path = folder.join(name);
            let saved = chained(&path);
            let removal = if present(&path)? {
                if !fs::read(&path).is_ok_and(|content| is_ours(&content)) {
                    return Ok((path, Removal::NotOurs));
                }
                fs::remove_file(&path).map_err(io_error("cannot remove", &path))?;
                Removal::Removed
            } else {
                Removal::Absent
            };
            // Also when ours was removed by hand: the kept hook is the one git should run.
            let removal = match present(&saved)? {
                true => {
                    fs::rename(&saved, &path).map_err(io_error("cannot rename", &saved))?;
                    Removal::Restored
                }
                false => removal,
            };
            Ok((path, removal))
        })
        .collect()
}

/// What is in a hook's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Found {
    Ours,
    NotOurs,
    Absent,
}

/// Each of our hooks' places in `folder`: its path, what is there, and whether a hook it runs
/// first is kept beside it.
pub fn survey(folder: &Path) -> Vec<(&'static str, PathBuf, Found, bool)> {
    SHIPPED
        .iter()
        .map(|(name, _)| {
            let path = folder.join(name);
            // What cannot be read is as good as absent here: `plan` says why when it matters.
            let found = match present(&path).unwrap_or(false) {
                false => Found::Absent,
                true if fs::read(&path).is_ok_and(|c| is_ours(&c)) => Found::Ours,
                true => Found::NotOurs,
            };
            let chained = present(&chained(&path)).unwrap_or(false);
            (*name, path, found, chained)
        })
        .collect()
}

/// Whether our `pre-push` is in `folder`.
pub fn pushes(folder: &Path) -> bool {
    fs::read(folder.join(PRE_PUSH.0)).is_ok_and(|c| is_ours(&c))
}

/// Where the hook that was at `path` is kept.
pub fn chained(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(CHAINED);
    path.with_file_name(name)
}

/// Whether something (a file, a link, even to nothing) is at `path`.
fn present(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_error("cannot read", path)(e)),
    }
}

/// Whether a hook's content is one of ours: a line of its opening comment starts with
/// [`MARK`].
fn is_ours(content: &[u8]) -> bool {
    content
        .split(|&b| b == b'\n')
        .take_while(|line| line.starts_with(b"#"))
        .any(|line| line.starts_with(MARK.as_bytes()))
}

/// The binary an installed hook of ours calls first, if it names one.
pub fn binary_of(hook: &Path) -> Option<String> {
    let text = fs::read_to_string(hook).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("bin="))?;
    Some(unquote(line))
}

/// The text of a shell word [`super::shell_quote`] made.
fn unquote(word: &str) -> String {
    match word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
        Some(inner) => inner.replace(r"'\''", "'"),
        None => word.to_owned(),
    }
}

/// The hook we install: the shipped script's opening lines (`#!` and its comment), then the
/// chaining of the hook that was there before, if any, then the script's body, calling
/// `binary` first when given.
fn script(shipped: &str, binary: Option<&str>) -> String {
    let head_len: usize = shipped
        .split_inclusive('\n')
        .take_while(|line| line.starts_with('#'))
        .map(str::len)
        .sum();
    let (head, body) = shipped.split_at(head_len);
    let body = match binary {
        Some(binary) => body.replace(
            FIND,
            &format!(
                "bin={}\nif [ -x \"$bin\" ] || bin=$(command -v git-agent-context 2>/dev/null); then",
                super::shell_quote(binary)
            ),
        ),
        None => body.to_owned(),
    };
    format!(
        "{head}\
# Installed by `git agent-context install`. A hook that was here before is kept as
# <this hook>{CHAINED} and runs first, with the same arguments and input; its
# exit status is this hook's. `git agent-context uninstall` puts it back.
status=0
chained=\"$0{CHAINED}\"
if [ -x \"$chained\" ]; then
\tif input=$(mktemp 2>/dev/null); then
\t\t# Both hooks read the same input (post-rewrite: the rewritten commits).
\t\tcat >\"$input\"
\t\t\"$chained\" \"$@\" <\"$input\"
\t\tstatus=$?
\t\texec <\"$input\"
\t\trm -f \"$input\"
\telse
\t\t\"$chained\" \"$@\"
\t\tstatus=$?
\tfi
fi
{body}exit $status
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installed_hooks_are_known_as_ours_and_copies_of_the_shipped_ones_too() {
        for (_, shipped) in SHIPPED {
            assert!(is_ours(shipped.as_bytes()));
            assert_eq!(shipped.matches(FIND).count(), 1, "{shipped}");
            let installed = script(shipped, None);
            assert!(is_ours(installed.as_bytes()));
            assert!(installed.starts_with("#!/bin/sh\n"));
            assert!(installed.ends_with("fi\nexit $status\n"), "{installed}");
        }
        assert!(!is_ours(
            b"#!/bin/sh\necho '# git-agent-context: not a comment'\n"
        ));
    }

    #[test]
    fn an_installed_hook_names_the_binary_it_calls_first() {
        let tmp = tempfile::tempdir().unwrap();
        let hook = tmp.path().join("post-commit");
        let binary = "/home/Jo O'Neil/bin/git-agent-context";
        fs::write(&hook, script(SHIPPED[0].1, Some(binary))).unwrap();
        assert_eq!(binary_of(&hook).as_deref(), Some(binary));
        fs::write(&hook, script(SHIPPED[0].1, None)).unwrap();
        assert_eq!(binary_of(&hook), None);
    }
}
