//! Finding a repository's transcripts: in Claude Code's project folders, and through
//! [`Homes`] in Codex CLI's and Gemini CLI's folders too (see [`super::codex`] and
//! [`super::gemini`] for where those keep theirs).
//!
//! Claude Code keeps `<config>/projects/<encoded cwd>/<session>.jsonl`, where the encoding
//! replaces every byte that is not an ASCII letter or digit with `-` (and cuts names longer
//! than 200 bytes, adding a hash). The encoding is lossy, so a folder that merely *starts*
//! like ours (a subdirectory of the repository, or `/a/b-c` for `/a/b`) is accepted only when
//! the `cwd` recorded inside its transcripts lies in the repository.

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::record::{Entry, parse_line, text};
use super::root::within;

const MAX_DIR_NAME: usize = 200;
/// How much of a transcript's head is read to find its `cwd` or session id.
const HEAD_BYTES_MAX: u64 = 4 << 20;

/// The folders where each agent keeps its sessions, those that can be named.
#[derive(Debug, Clone, Default)]
pub struct Homes {
    pub claude: Option<PathBuf>,
    pub codex: Option<PathBuf>,
    pub gemini: Option<PathBuf>,
}

impl Homes {
    /// As the environment names them.
    pub fn from_env() -> Homes {
        Homes {
            claude: claude_dir(),
            codex: super::codex::codex_home(),
            gemini: super::gemini::gemini_dir(),
        }
    }

    /// Every transcript of sessions run inside `workdir`, every agent's, in [`reading_order`].
    pub fn transcripts(&self, workdir: &Path, excluded: &[PathBuf]) -> Vec<PathBuf> {
        self.select(workdir, excluded, None, |_| true)
    }

    /// The transcripts of sessions run inside `workdir` written to at `since` or later.
    pub fn recent_transcripts(
        &self,
        workdir: &Path,
        excluded: &[PathBuf],
        since: std::time::SystemTime,
    ) -> Vec<PathBuf> {
        self.select(workdir, excluded, Some(since), |p| {
            fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since)
        })
    }

    /// The transcripts of one session, whichever agent ran it.
    pub fn session_transcripts(
        &self,
        workdir: &Path,
        excluded: &[PathBuf],
        session: &str,
    ) -> Vec<PathBuf> {
        let mut found = match &self.claude {
            Some(claude) => session_transcripts(claude, workdir, excluded, session),
            None => Vec::new(),
        };
        if !found.is_empty() {
            return found;
        }
        // A rollout's name ends with its session's id; a Gemini CLI session's holds the first
        // eight characters of it, and the file the whole.
        if let Some(codex) = &self.codex {
            let named = |p: &Path| {
                p.file_stem()
                    .is_some_and(|s| s.to_string_lossy().ends_with(session))
            };
            found.extend(super::codex::rollouts(
                codex, workdir, excluded, None, &named,
            ));
        }
        if let (Some(gemini), Some(short)) = (&self.gemini, session.get(..8)) {
            found.extend(
                super::gemini::sessions(gemini, workdir, excluded)
                    .into_iter()
                    .filter(|p| {
                        p.file_stem()
                            .is_some_and(|s| s.to_string_lossy().ends_with(short))
                    })
                    .filter(|p| super::gemini::session_id_of(p).as_deref() == Some(session)),
            );
        }
        found
    }

    /// Where the sessions of `workdir` would be: Claude Code's project folder for it, and the
    /// folders of the other agents that are there.
    pub fn looked_in(&self, workdir: &Path) -> Vec<PathBuf> {
        let claude = self
            .claude
            .iter()
            .map(|c| c.join("projects").join(project_dir_name(workdir)));
        let codex = self.codex.iter().map(|c| c.join("sessions"));
        let gemini = self.gemini.iter().map(|g| g.join("tmp"));
        claude
            .chain(codex.chain(gemini).filter(|d| d.is_dir()))
            .collect()
    }

    fn select(
        &self,
        workdir: &Path,
        excluded: &[PathBuf],
        since: Option<std::time::SystemTime>,
        wanted: impl Fn(&Path) -> bool,
    ) -> Vec<PathBuf> {
        let mut found = match &self.claude {
            Some(claude) => select(claude, workdir, excluded, &wanted),
            None => Vec::new(),
        };
        if let Some(codex) = &self.codex {
            found.extend(super::codex::rollouts(
                codex, workdir, excluded, since, &wanted,
            ));
        }
        if let Some(gemini) = &self.gemini {
            let sessions = super::gemini::sessions(gemini, workdir, excluded);
            found.extend(sessions.into_iter().filter(|p| wanted(p)));
        }
        reading_order(&mut found);
        found
    }
}

/// Claude Code's configuration folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn claude_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".claude"))
}

/// The folder name Claude Code uses for a session started in `cwd`. Claude Code replaces each
/// UTF-16 code unit, so a character outside the BMP (an emoji) becomes two dashes.
pub fn project_dir_name(cwd: &Path) -> String {
    let mut name = String::new();
    for c in cwd.to_string_lossy().chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else {
            name.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    name
}

/// Every Claude Code transcript of sessions run inside `workdir`: main sessions, subagents (current
/// `<session>/subagents/agent-*.jsonl` and legacy `agent-*.jsonl`), sorted by path.
pub fn transcripts(claude_dir: &Path, workdir: &Path, excluded: &[PathBuf]) -> Vec<PathBuf> {
    select(claude_dir, workdir, excluded, &|_| true)
}

/// The transcripts of one Claude Code session (its main file and its subagents).
fn session_transcripts(
    claude_dir: &Path,
    workdir: &Path,
    excluded: &[PathBuf],
    session: &str,
) -> Vec<PathBuf> {
    select(
        claude_dir,
        workdir,
        excluded,
        &|p| match session_of_path(p) {
            Some(s) => s == session,
            None => session_in(p).as_deref() == Some(session),
        },
    )
}

/// The subagent transcripts of the session whose main transcript is `main`
/// (`<session>/subagents/agent-*.jsonl` beside it), sorted by path.
pub fn subagents_of(main: &Path) -> Vec<PathBuf> {
    let mut out = jsonl_files(&main.with_extension("").join("subagents"));
    out.sort();
    out
}

/// Whether `id` can be a subagent's id: a short plain name (Claude Code's are `a0853aa`), which
/// names a file and nothing else.
pub fn is_agent_id(id: &str) -> bool {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    !id.is_empty() && id.len() <= 64 && id.chars().all(plain)
}

/// Whether the subagent `agent` of the session whose transcript (main or subagent) is at `path`
/// has a transcript of its own: `<session>/subagents/agent-<agent>.jsonl`, or, as Claude Code
/// 2.0 kept them, `agent-<agent>.jsonl` beside the session's. An id that could not be such a
/// name has none.
pub fn has_own_transcript(path: &Path, agent: &str) -> bool {
    if !is_agent_id(agent) {
        return false;
    }
    let Some(dir) = path.parent() else {
        return false;
    };
    let (subagents, project) = if dir.file_name().is_some_and(|n| n == "subagents") {
        (dir.to_path_buf(), dir.parent().and_then(Path::parent))
    } else {
        (path.with_extension("").join("subagents"), Some(dir))
    };
    let name = format!("agent-{agent}.jsonl");
    subagents.join(&name).is_file() || project.is_some_and(|p| p.join(&name).is_file())
}

/// `paths` in the order to read them: by path, except that a session's subagents come before
/// its main transcript, which may quote what they saw of a file never to capture (their reader
/// records it for the main one's, see `store::seen`).
pub fn reading_order(paths: &mut [PathBuf]) {
    paths.sort_by_cached_key(|p| {
        let session_dir = p
            .parent()
            .filter(|d| d.file_name().is_some_and(|n| n == "subagents"))
            .and_then(Path::parent);
        match session_dir {
            Some(dir) => (dir.to_path_buf(), 0, p.clone()),
            None => (p.with_extension(""), 1, p.clone()),
        }
    });
}

/// The transcripts in `workdir`'s project folders that `wanted` keeps, in [`reading_order`]. The
/// folder name is lossy (`/a/my-app` and `/a/my.app` share one), so the cwd recorded inside
/// decides, read only for the files `wanted` kept; a file that records none yet belongs to
/// the folder whose name matches exactly. Sessions run in `excluded` folders — other worktrees
/// nested inside this one, such as `.claude/worktrees/<name>` — are theirs, not ours.
fn select(
    claude_dir: &Path,
    workdir: &Path,
    excluded: &[PathBuf],
    wanted: &impl Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in project_dirs(claude_dir, workdir) {
        for path in jsonl_files(&dir.path).into_iter().filter(|p| wanted(p)) {
            let inside = match cwd_of(&path) {
                Some(cwd) => within(Path::new(&cwd), workdir, excluded),
                None => dir.exact,
            };
            if inside {
                out.push(path);
            }
        }
    }
    reading_order(&mut out);
    out
}

/// The session id a transcript path belongs to, from its location.
pub fn session_of_path(path: &Path) -> Option<&str> {
    let stem = path.file_stem()?.to_str()?;
    if !stem.starts_with("agent-") {
        return Some(stem);
    }
    // <session>/subagents/agent-x.jsonl
    let parent = path.parent()?;
    if parent.file_name()? == "subagents" {
        return parent.parent()?.file_name()?.to_str();
    }
    // Legacy agent-x.jsonl beside the session files: the session is only known from inside.
    None
}

struct ProjectDir {
    path: PathBuf,
    exact: bool,
}

fn project_dirs(claude_dir: &Path, workdir: &Path) -> Vec<ProjectDir> {
    let name = project_dir_name(workdir);
    let prefix: String = name.chars().take(MAX_DIR_NAME).collect();
    let Ok(entries) = fs::read_dir(claude_dir.join("projects")) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for entry in entries.flatten() {
        let Some(dir_name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let exact = dir_name == name;
        let maybe = dir_name.starts_with(&format!("{name}-"))
            || (name.len() > MAX_DIR_NAME && dir_name.starts_with(&prefix));
        if exact || maybe {
            dirs.push(ProjectDir {
                path: entry.path(),
                exact,
            });
        }
    }
    dirs
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "jsonl") && path.is_file() {
            out.push(path);
        } else if path.is_dir() {
            out.extend(jsonl_files(&path.join("subagents")));
        }
    }
    out
}

/// The first `cwd` recorded in a transcript (looking at its first hundred lines).
pub fn cwd_of(path: &Path) -> Option<String> {
    first_field(path, |e| text(&e.cwd))
}

/// The session id recorded in a transcript (legacy subagent files name it only inside).
fn session_in(path: &Path) -> Option<String> {
    first_field(path, |e| text(&e.session_id))
}

fn first_field(
    path: &Path,
    field: impl for<'a> Fn(&'a Entry<'_>) -> Option<&'a str>,
) -> Option<String> {
    // The field is in the first lines; a huge first line is not read whole to find it.
    let file = super::open(path).ok()?.take(HEAD_BYTES_MAX);
    BufReader::new(file)
        .split(b'\n')
        .take(100)
        .filter_map(Result::ok)
        .find_map(|line| parse_line(&line).and_then(|e| field(&e).map(str::to_owned)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_claude_code() {
        assert_eq!(
            project_dir_name(Path::new("/Users/a/my.proj")),
            "-Users-a-my-proj"
        );
        assert_eq!(project_dir_name(Path::new("/tmp/x_y z")), "-tmp-x-y-z");
        assert_eq!(project_dir_name(Path::new("/a/🦀é")), "-a----");
    }

    #[test]
    fn a_subagents_own_transcript_is_found_beside_its_session_or_in_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("s1.jsonl");
        let subagents = dir.path().join("s1/subagents");
        fs::create_dir_all(&subagents).unwrap();
        for name in [
            "s1/subagents/agent-a1.jsonl",
            "agent-old.jsonl",
            "agent-z/w.jsonl",
        ] {
            let path = dir.path().join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "").unwrap();
        }
        // From the main transcript and from another subagent's.
        for from in [main.clone(), subagents.join("agent-a2.jsonl")] {
            assert!(has_own_transcript(&from, "a1"), "{from:?}");
            assert!(has_own_transcript(&from, "old"), "{from:?}");
            assert!(!has_own_transcript(&from, "a2"), "{from:?}");
            // An id is a name, never a path.
            assert!(!has_own_transcript(&from, "z/w"), "{from:?}");
            assert!(!has_own_transcript(&from, ""), "{from:?}");
        }
    }

    #[test]
    fn finds_sessions_subagents_and_subdirectories_but_not_lookalikes() {
        let claude = tempfile::tempdir().unwrap();
        let projects = claude.path().join("projects");
        let write = |dir: &str, file: &str, cwd: &str| {
            let p = projects.join(dir).join(file);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            let line = format!("{{\"type\":\"user\",\"sessionId\":\"s1\",\"cwd\":\"{cwd}\"}}\n");
            fs::write(&p, line).unwrap();
            p
        };
        let main = write("-r-app", "s1.jsonl", "/r/app");
        let sub = write("-r-app", "s1/subagents/agent-a1.jsonl", "/r/app");
        let deeper = write("-r-app-src", "s2.jsonl", "/r/app/src");
        write("-r-app-old", "s3.jsonl", "/r/app-old");
        // /r/app.x encodes like /r/app-x, and /r/app's own folder may hold /r/app.x's sessions
        // only in a lookalike; the cwd inside decides.
        write("-r-app", "s5.jsonl", "/r/app.x");
        let legacy = write("-r-app", "agent-a2.jsonl", "/r/app");
        write("-r-other", "s4.jsonl", "/r/other");
        let found = transcripts(claude.path(), Path::new("/r/app"), &[]);
        assert_eq!(
            found,
            vec![legacy.clone(), sub.clone(), main.clone(), deeper]
        );
        assert_eq!(
            session_transcripts(claude.path(), Path::new("/r/app"), &[], "s1"),
            vec![legacy, sub, main]
        );
    }
}
