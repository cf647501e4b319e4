//! Paths whose content is never captured: `.gitignore`-style globs, matched by gix-glob as git
//! matches them.

use std::borrow::Cow;

use gix_glob::Pattern;
use gix_glob::pattern::Mode;
use gix_glob::wildmatch;

use super::Invalid;

/// Why an exclude glob cannot be used, in one line.
pub fn check_glob(glob: &str) -> Result<(), Invalid> {
    pattern(glob).map(drop)
}

/// A glob read as `.gitignore` reads it — `*` and `?` stay within a path component, `**`
/// crosses them, `[...]` is a class (`[!...]` its complement), `\` quotes the character after it;
/// a glob without a `/` (but a trailing one) matches at any depth, one with a `/` from the top of
/// the working tree — but for a leading `!`, which is part of the name: nothing takes a path
/// back. In lower case, as paths are matched.
fn pattern(glob: &str) -> Result<Pattern, Invalid> {
    let pattern = Pattern::from_bytes_without_negation(glob.to_lowercase().as_bytes())
        .filter(|p| !p.text.is_empty())
        .ok_or_else(|| Invalid::EmptyGlob(glob.to_owned()))?;
    if unclosed_class(&pattern.text) {
        return Err(Invalid::UnclosedClass(glob.to_owned()));
    }
    Ok(pattern)
}

/// Whether `glob` opens a class it never closes: git's matcher gives up there, and the glob
/// would match nothing.
fn unclosed_class(glob: &[u8]) -> bool {
    let mut i = 0;
    while i < glob.len() {
        match glob[i] {
            b'\\' => i += 1,
            b'[' => {
                i += 1;
                if matches!(glob.get(i), Some(b'!' | b'^')) {
                    i += 1;
                }
                // A `]` first is one of the class.
                if glob.get(i) == Some(&b']') {
                    i += 1;
                }
                loop {
                    match glob.get(i) {
                        None => return true,
                        Some(b']') => break,
                        Some(b'\\') => i += 1,
                        Some(_) => {}
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The globs of paths never to capture, matched without regard to case (on macOS and Windows
/// `.ENV` is `.env`).
#[derive(Debug, Clone)]
pub(super) struct Exclude(Vec<Pattern>);

impl Exclude {
    pub(super) fn new(globs: &[String]) -> Result<Exclude, Invalid> {
        globs
            .iter()
            .map(|g| pattern(g))
            .collect::<Result<_, _>>()
            .map(Exclude)
    }

    /// Whether `path` (relative to the top of the working tree) is excluded: a glob matches it
    /// or one of the folders it is in, as git ignores everything in an ignored folder. Whether
    /// `path` is a folder is not known (a command may name one), so a glob for folders only
    /// (`private/`) matches it too.
    pub(super) fn matches(&self, path: &str) -> bool {
        let path = path.strip_prefix("./").unwrap_or(path);
        // gix-glob folds the case of ASCII letters only; the globs are in lower case already.
        let path: Cow<str> = if path.is_ascii() {
            path.into()
        } else {
            path.to_lowercase().into()
        };
        let mode = wildmatch::Mode::NO_MATCH_SLASH_LITERAL | wildmatch::Mode::IGNORE_CASE;
        let ends = path.match_indices('/').map(|(i, _)| i);
        ends.chain([path.len()]).any(|end| {
            let folder_or_file = &path[..end];
            let name = &folder_or_file[folder_or_file.rfind('/').map_or(0, |i| i + 1)..];
            self.0.iter().any(|p| {
                // A glob without a `/` is matched against the name alone, at any depth.
                let anywhere =
                    p.mode.contains(Mode::NO_SUB_DIR) && !p.mode.contains(Mode::ABSOLUTE);
                p.matches((if anywhere { name } else { folder_or_file }).into(), mode)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use super::*;
    use crate::store::parameters::tests::git;

    /// Which of `paths` git ignores when `.gitignore` holds `glob` alone, with case folded
    /// (`core.ignoreCase`, as on macOS).
    fn git_ignores(glob: &str, paths: &[&str]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join(".gitignore"), format!("{glob}\n")).unwrap();
        let mut check = Command::new("git")
            .args(["-c", "core.ignoreCase=true", "check-ignore"])
            .args(["--no-index", "--stdin", "-z"])
            .current_dir(dir.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = check.stdin.take().unwrap();
        stdin.write_all(paths.join("\0").as_bytes()).unwrap();
        drop(stdin);
        let out = check.wait_with_output().unwrap();
        let ignored = String::from_utf8(out.stdout).unwrap();
        ignored
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn globs_match_what_git_check_ignore_ignores() {
        let paths = [
            ".env",
            ".ENV.local",
            "app/.env.production",
            "x/.envrc/y",
            "certs/server.pem",
            "certs.pem/x",
            "home/.ssh/id_rsa",
            "home/.ssh/Id_Rsa.pub",
            "secrets",
            "secrets/prod/db.txt",
            "x/secrets/y",
            "docs/secrets.md",
            "home/.aws/credentials",
            ".aws/credentials/x",
            "docs/aws/credentials.md",
            "config/app.cred",
            "config/sub/app.cred",
            "x/config/app.cred",
            "private/notes.md",
            "x/private/y",
            "top",
            "top/x",
            "q/top",
            "a/b",
            "a/x/y/b",
            "ab",
            "axb",
            "ax/yb",
            "file[1",
            "data1",
            "data12",
            "abc",
            "bbc",
            "q/mid/r",
            "mid/r",
            "!bang",
            "bang",
            "README.md",
        ];
        let globs = crate::classify::redact::DEFAULT_EXCLUDE
            .iter()
            .copied()
            .chain([
                "config/*.cred",
                "private/",
                "/top",
                "a/**/b",
                "a**b",
                r"file\[1",
                "data[0-9]",
                "[!a]bc",
                "*/mid/*",
                r"\!bang",
            ]);
        for glob in globs {
            let exclude = Exclude::new(&[glob.to_owned()]).unwrap();
            let ours: Vec<&str> = paths
                .iter()
                .copied()
                .filter(|p| exclude.matches(p))
                .collect();
            assert_eq!(ours, git_ignores(glob, &paths), "{glob}");
        }
    }

    #[test]
    fn a_leading_bang_is_a_name_a_folder_glob_takes_the_last_name_and_case_folds_beyond_ascii() {
        let exclude = Exclude::new(&["!notes".into(), "private/".into(), "Über*".into()]).unwrap();
        // In git `!notes` would take `notes` back, and `private/` leave a file `private` alone.
        assert!(exclude.matches("!notes") && !exclude.matches("notes"));
        assert!(exclude.matches("private") && exclude.matches("x/PRIVATE"));
        assert!(exclude.matches("übersicht") && exclude.matches("docs/ÜBERSICHT.md"));
    }

    #[test]
    fn a_glob_that_can_match_nothing_is_refused() {
        for unclosed in ["[abc", "a[", "[]", "[!]", r"[a\]"] {
            let e = check_glob(unclosed).unwrap_err().to_string();
            assert!(e.contains("without its ']'"), "{unclosed}: {e}");
        }
        for empty in ["", "/", "//", "  "] {
            let e = check_glob(empty).unwrap_err().to_string();
            assert!(e.contains("matches nothing"), "{empty:?}: {e}");
        }
        for fine in ["[]]", "[!]]", r"\[", r"[\]]", "[[:alpha:]]"] {
            assert_eq!(check_glob(fine), Ok(()), "{fine}");
        }
    }
}
