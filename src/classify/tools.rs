//! Tool calls, compressed: what kind of operation each is, a short form of its input, the file
//! it touches, and what a `git commit` in a Bash command said.

use super::redact::Cleaner;
use crate::event::{Event, Kind, Origin, Outcome, ToolCall, truncate_words};
use crate::transcript::record::{ToolInput, text};

/// The longest compressed tool input, in characters.
const INPUT_MAX: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Op {
    Read,
    Write,
    Search,
    Bash,
    Tasks,
    Plan,
    Agent,
    Other,
}

pub fn op_of(tool: &str) -> Op {
    match tool {
        "Read" | "NotebookRead" => Op::Read,
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => Op::Write,
        "Grep" | "Glob" | "LS" | "WebSearch" | "WebFetch" | "ToolSearch" => Op::Search,
        "Bash" => Op::Bash,
        "TodoWrite" | "TaskCreate" | "TaskUpdate" => Op::Tasks,
        "ExitPlanMode" => Op::Plan,
        "Task" | "Agent" => Op::Agent,
        _ => Op::Other,
    }
}

/// The file a tool call reads or writes, if any.
pub fn file_of(input: &ToolInput<'_>) -> Option<String> {
    text(&input.file_path)
        .or(text(&input.notebook_path))
        .map(str::to_owned)
}

/// A one-line form of a tool's input: the command, the path, the pattern — whatever says most.
pub fn compress_input(tool: &str, input: &ToolInput<'_>, clean: &Cleaner<'_>) -> String {
    let main = match op_of(tool) {
        Op::Bash => text(&input.command),
        Op::Read | Op::Write => text(&input.file_path).or(text(&input.notebook_path)),
        Op::Search => text(&input.pattern)
            .or(text(&input.query))
            .or(text(&input.url))
            .or(text(&input.path)),
        Op::Agent => text(&input.description).or(text(&input.prompt)),
        Op::Tasks => text(&input.subject).or(text(&input.task_id)),
        Op::Plan | Op::Other => text(&input.description)
            .or(text(&input.command))
            .or(text(&input.file_path)),
    };
    // Cleaned before it is cut, or a cut could leave part of a secret that no rule recognises.
    let one_line = clean
        .text(main.unwrap_or(""))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    truncate_words(&one_line, INPUT_MAX)
}

/// The longest search pattern kept in an operation's source, in characters.
const PATTERN_MAX: usize = 100;

/// The event of a read or a search (seed 003's operations), cleaned: one per file read and per
/// pattern searched in a session, so it has the same id whoever sees the call first — the
/// `PostToolUse` hook as it happens, or the extractor from the transcript. The id comes from
/// the path or pattern as redacted, which both see alike; what the event says is also scrubbed
/// of what the session saw of excluded files, which one may know before the other. `file` is
/// the file read, relative to the top of the working tree; a read with none (a file outside
/// the repository) and every other tool give nothing.
pub fn operation(
    session: &str,
    tool: &str,
    input: &ToolInput<'_>,
    file: Option<&str>,
    timestamp: &str,
    clean: &Cleaner<'_>,
) -> Option<Event> {
    let (kind, named, tag, files) = match tool {
        "Read" | "NotebookRead" => {
            let file = clean.redactor.redact(file?).into_owned();
            (Kind::Read, file.clone(), "read".to_owned(), vec![file])
        }
        "Grep" | "Glob" => {
            let pattern = clean.redactor.redact(text(&input.pattern)?).into_owned();
            (Kind::Search, pattern, format!("search:{tool}"), Vec::new())
        }
        _ => return None,
    };
    let (id_source, shown, summary) = match kind {
        Kind::Read => {
            let shown = clean.taint.scrub(&named).into_owned();
            (
                format!("{tag}:{named}"),
                shown.clone(),
                format!("Read {shown}"),
            )
        }
        _ => {
            let cut: String = named.chars().take(PATTERN_MAX).collect();
            // Scrubbed whole, then cut at a word: a value cut in two would not be known.
            let shown = truncate_words(&clean.taint.scrub(&named), PATTERN_MAX);
            let summary = format!("Searched for {shown} ({tool})");
            (format!("{tag}:{cut}"), shown, summary)
        }
    };
    let mut event = Event::new(
        session,
        &id_source,
        kind,
        Origin::ToolSequence,
        &summary,
        timestamp,
    );
    event.source = format!("{tag}:{shown}");
    event.files_affected = files;
    event.tool_calls = vec![ToolCall {
        name: tool.to_owned(),
        input: compress_input(tool, input, clean),
        outcome: Outcome::Unknown,
    }];
    clean.event(&mut event);
    Some(event)
}

/// A commit made by a Bash command, as far as the command and its output tell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommitInfo {
    pub sha: Option<String>,
    pub branch: Option<String>,
    pub message: String,
}

/// Whether a shell command runs `git commit`.
pub fn runs_git_commit(command: &str) -> bool {
    git_commit_end(command).is_some()
}

/// Where the first `git commit` of `command` ends: `git` as a command's first word (at the
/// start, after white space or one of `;&|(`), any `-c name=value` or `-C folder` options, then
/// `commit` as a word (not followed by a letter, a digit or `_`). Read by hand rather than
/// with a regular expression, whose building was a fifteenth of a committing turn's `Stop`
/// hook (docs/performance.md).
fn git_commit_end(command: &str) -> Option<usize> {
    // A `git` inside options already read (`git -c x git …`) goes on as they did: skipped.
    let mut read_to = 0;
    command.match_indices("git").find_map(|(at, _)| {
        let first_word = command[..at]
            .chars()
            .next_back()
            .is_none_or(|c| matches!(c, ';' | '&' | '|' | '(') || c.is_whitespace());
        if !first_word || at < read_to {
            return None;
        }
        // After `git` and after each option in turn; `commit` may follow any of them, and
        // comes after as many options as it can (`git -c commit commit`).
        let mut ends = vec![at + 3];
        while let Some(end) = git_option_end(command, ends[ends.len() - 1]) {
            ends.push(end);
        }
        read_to = ends[ends.len() - 1];
        ends.iter()
            .rev()
            .find_map(|&end| commit_word_end(command, end))
    })
}

/// Where a `-c <word>` or `-C <word>` that follows white space at `from` ends.
fn git_option_end(text: &str, from: usize) -> Option<usize> {
    let flag = after_space(&text[from..])?;
    let value = flag
        .strip_prefix("-c")
        .or_else(|| flag.strip_prefix("-C"))?;
    let word = after_space(value).filter(|w| !w.is_empty())?;
    let len = word.find(char::is_whitespace).unwrap_or(word.len());
    Some(text.len() - word.len() + len)
}

/// Where the word `commit` that follows white space at `from` ends.
fn commit_word_end(text: &str, from: usize) -> Option<usize> {
    let after = after_space(&text[from..])?.strip_prefix("commit")?;
    let word_goes_on = after
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_');
    (!word_goes_on).then(|| text.len() - after.len())
}

/// `text` after the white space it starts with, when it starts with some.
fn after_space(text: &str) -> Option<&str> {
    let rest = text.trim_start();
    (rest.len() < text.len()).then_some(rest)
}

/// The line `git commit` prints of the commit it made, `[<branch> <sha>] <subject>` (with
/// `(root-commit)` before the hash for a first commit): its branch, hash and subject.
fn commit_line(line: &str) -> Option<(&str, &str, &str)> {
    let rest = line.strip_prefix('[')?;
    let branch_len = rest
        .find(|c: char| c == ']' || c.is_whitespace())
        .unwrap_or(rest.len());
    let (branch, rest) = rest.split_at(branch_len);
    let rest = rest.strip_prefix(" (root-commit)").unwrap_or(rest);
    let (sha, rest) = short_hash(rest.strip_prefix(' ')?)?;
    let subject = rest.strip_prefix("] ")?;
    (!branch.is_empty()).then_some((branch, sha, subject))
}

/// A line `git log --oneline` prints, `<sha> <subject>`: its hash and subject.
fn oneline(line: &str) -> Option<(&str, &str)> {
    let (sha, rest) = short_hash(line)?;
    let subject = rest.strip_prefix(' ').filter(|s| !s.is_empty())?;
    Some((sha, subject))
}

/// The commit hash `text` starts with, 7 to 40 lower-case hexadecimal digits, and what follows.
fn short_hash(text: &str) -> Option<(&str, &str)> {
    let len = text
        .find(|c: char| !matches!(c, '0'..='9' | 'a'..='f'))
        .unwrap_or(text.len());
    (7..=40).contains(&len).then(|| text.split_at(len))
}

/// What a `git commit` run by `command` produced, from the `[branch sha] subject` line in its
/// output (absent with `-q`) and the message in the command (`-m`, heredoc).
pub fn commit_info(command: &str, stdout: &str) -> Option<CommitInfo> {
    let end = git_commit_end(command)?;
    let mut info = CommitInfo {
        message: message_after(&command[end..]),
        ..CommitInfo::default()
    };
    if let Some((branch, sha, subject)) = stdout.split('\n').find_map(commit_line) {
        info.branch = Some(branch.to_owned());
        info.sha = Some(sha.to_owned());
        if info.message.is_empty() {
            info.message = subject.to_owned();
        }
    } else if !info.message.is_empty() {
        // `git commit -q … && git log --oneline -1` prints `<sha> <subject>` instead.
        let wanted = info.message.lines().next().unwrap_or("").trim();
        info.sha = stdout
            .split('\n')
            .filter_map(oneline)
            .find(|(_, subject)| subject.trim() == wanted)
            .map(|(sha, _)| sha.to_owned());
    }
    Some(info)
}

/// The commit message written in `segment`, what follows `git commit` in a command line: the
/// `-m` arguments joined by blank lines, or the heredoc body (`-F - <<EOF`, `-m "$(cat <<EOF
/// …)"`). Only the words of the `git commit` itself count (`python -m pytest && git commit …`
/// has one message flag).
fn message_after(segment: &str) -> String {
    let mut parts = Vec::new();
    let mut from_stdin = false;
    let mut rest = segment;
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t', '\\', '\n']);
        if trimmed.is_empty() || trimmed.starts_with([';', '&', '|', ')']) {
            break;
        }
        let (word, remaining) = shell_word(trimmed);
        rest = remaining;
        if word.is_empty() && remaining.len() == trimmed.len() {
            break;
        }
        if word == "--message"
            || word == "--file"
            || short_flags_ending_in(&word, 'm')
            || short_flags_ending_in(&word, 'F')
        {
            let (arg, remaining) = shell_word(rest.trim_start());
            rest = remaining;
            if word == "--file" || word.ends_with('F') {
                from_stdin |= arg == "-";
            } else {
                parts.push(arg);
            }
        } else if let Some(message) = word.strip_prefix("--message=") {
            parts.push(message.to_owned());
        } else if word == "--file=-" || word == "-F-" {
            from_stdin = true;
        }
    }
    if from_stdin || parts.iter().any(|p| p.contains("<<")) {
        return heredoc(segment).unwrap_or_default();
    }
    parts.join("\n\n")
}

/// `-m`, `-am`, `-qm`…: a cluster of short flags whose last one takes the next word.
fn short_flags_ending_in(word: &str, flag: char) -> bool {
    word.len() >= 2
        && word.starts_with('-')
        && !word.starts_with("--")
        && word.ends_with(flag)
        && word[1..].chars().all(|c| c.is_ascii_alphabetic())
}

/// The check a command runs, if it checks the code — builds, tests, lints, type-checks or
/// formats it (`cargo test`, `go build ./...`, `mise run test:ci`, `golangci-lint run`, `npx
/// tsc`, `make`, `./run_tests.sh`) rather than moving files or history around (`git stash
/// pop`, `rm -f x`) or installing a tool (`pip install pytest`). Its failure says something is
/// wrong with the code as it stands. The check is the command without its options, paths and
/// redirections (`cargo test` for `cargo test -p x 2>&1 | tail -30`): a check that passes is
/// the one that failed when it is the same.
pub fn check_of(command: &str) -> Option<String> {
    let segment = segments(command).find(|s| segment_checks(s))?;
    let plain = |w: &&str| {
        !w.starts_with('-')
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '_' | '-'))
    };
    let mut words = segment.split_whitespace();
    let first = words.next()?;
    // The script that runs, else the command and the plain words after it.
    Some(
        std::iter::once(first)
            .chain(words.take_while(plain))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// The simple commands of a shell line, roughly: split at `;`, `&`, `|` and line ends (a
/// quoted one is split too, which a command's name and first words seldom hold).
fn segments(command: &str) -> impl Iterator<Item = &str> {
    command.split([';', '&', '|', '\n'])
}

fn segment_checks(segment: &str) -> bool {
    const NOT_CHECKS: &[&str] = &[
        "git", "cd", "rm", "cp", "mv", "ls", "cat", "echo", "grep", "rg", "head", "tail", "find",
        "mkdir", "touch", "sed", "awk", "wc", "diff", "less", "export", "test", "[",
    ];
    const INSTALLS: &[&str] = &["install", "i", "add", "get", "uninstall", "remove"];
    const INTERPRETERS: &[&str] = &[
        "bash", "sh", "zsh", "python", "python3", "node", "ruby", "perl",
    ];
    let words: Vec<&str> = segment.split_whitespace().collect();
    let Some(first) = words.first() else {
        return false;
    };
    if NOT_CHECKS.contains(first) || words.iter().any(|w| INSTALLS.contains(w)) {
        return false;
    }
    words.iter().enumerate().any(|(at, word)| {
        let name = if word.contains(['.', '/']) {
            // A path names what is checked (`checkpoint_test.go`, `./...`), unless it is the
            // script that runs (`./run_tests.sh`, `bash scripts/lint.sh`).
            let runs = at == 0 || (at == 1 && INTERPRETERS.contains(first));
            if !runs {
                return false;
            }
            let file = word.rsplit('/').next().unwrap_or(word);
            file.split('.').next().unwrap_or(file)
        } else {
            word
        };
        name.split([':', '=', '@', '"', '\'', '_', '-'])
            .any(|part| checks_word(&part.to_ascii_lowercase()))
    })
}

/// A word that names a check: `test`, `pytest`, `lint`, `build`, `xcodebuild`, `check`,
/// `shellcheck`, `tsc`…
fn checks_word(word: &str) -> bool {
    const TOOLS: &[&str] = &[
        "make", "cmake", "ninja", "gradle", "gradlew", "mvn", "vet", "clippy", "tsc", "mypy",
        "pyright", "fmt", "format", "compile", "rspec", "jest", "mocha", "ruff", "prettier",
        "rustc", "gcc", "clang", "javac", "tox", "flake8", "phpunit", "rubocop",
    ];
    const NOT_TESTS: &[&str] = &["latest", "fastest", "contest", "protest", "attest"];
    word.starts_with("test")
        || (word.ends_with("test") && !NOT_TESTS.contains(&word))
        || word.contains("lint")
        || word.starts_with("build")
        || word.ends_with("build")
        || word.ends_with("check")
        || TOOLS.contains(&word)
}

/// Whether a shell command throws away uncommitted changes to files: `git checkout -- f`,
/// `git checkout .`, `git restore f` (not `--staged` alone), `git reset --hard`. Not `git
/// stash`, which puts them aside to be popped again (to see whether a test failed before the
/// change, say), nor a command that makes a repository of its own to try git in (`git init`,
/// `git clone`).
pub fn discards_changes(command: &str) -> bool {
    let git: Vec<(&str, Vec<&str>)> = segments(command)
        .filter_map(|segment| {
            let words: Vec<&str> = segment.split_whitespace().collect();
            // git must be the command of the segment, not an argument (`echo git stash`).
            if words.first() != Some(&"git") {
                return None;
            }
            // Skip `-C dir` and `-c key=value` before the subcommand.
            let mut i = 1;
            while i < words.len() && matches!(words[i], "-C" | "-c") {
                i += 2;
            }
            let sub = *words.get(i)?;
            Some((sub, words[(i + 1).min(words.len())..].to_vec()))
        })
        .collect();
    if git.iter().any(|(sub, _)| matches!(*sub, "init" | "clone")) {
        return false;
    }
    git.iter().any(|(sub, args)| match *sub {
        "checkout" => args.iter().any(|a| *a == "--" || *a == "."),
        "restore" => {
            let staged = args.iter().any(|a| *a == "--staged" || *a == "-S");
            let worktree = args.iter().any(|a| *a == "--worktree" || *a == "-W");
            !staged || worktree
        }
        "reset" => args.contains(&"--hard"),
        _ => false,
    })
}

/// One shell word (quotes removed, backslash escapes in double quotes honoured) and the rest.
fn shell_word(s: &str) -> (String, &str) {
    let mut out = String::new();
    let mut chars = s.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => return (out, &s[i..]),
            (None, ';' | '&' | '|') => return (out, &s[i..]),
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some((_, next)) = chars.next() {
                    if !matches!(next, '"' | '\\' | '$' | '`') {
                        out.push('\\');
                    }
                    out.push(next);
                }
            }
            (_, c) => out.push(c),
        }
    }
    (out, "")
}

/// The file a command writes from a heredoc, and what it writes, when that is all the command
/// does: `cat > path <<'EOF'`, `cat <<EOF >> path`, `tee path <<EOF`, then the text, then the
/// marker's line, then nothing. A command that does more, a path the shell would expand
/// (`~/x`, `$DIR/x`, `*.go`), or a text it would (an unquoted marker's `$x`) tells no file and
/// no text for sure: `None`.
pub fn heredoc_write(command: &str) -> Option<(String, String)> {
    let (first, rest) = command.trim_start().split_once('\n')?;
    let mut words = first.split_whitespace();
    let tee = match words.next()? {
        "cat" => false,
        "tee" => true,
        _ => return None,
    };
    let (mut path, mut marker): (Option<&str>, Option<(&str, bool)>) = (None, None);
    while let Some(word) = words.next() {
        if let Some(attached) = word.strip_prefix("<<") {
            let (tabs, attached) = match attached.strip_prefix('-') {
                Some(after) => (true, after),
                None => (false, attached),
            };
            let word = if attached.is_empty() {
                words.next()?
            } else {
                attached
            };
            if marker.replace((word, tabs)).is_some() {
                return None;
            }
        } else if let Some(attached) = word.strip_prefix(">>").or(word.strip_prefix('>')) {
            let word = if attached.is_empty() {
                words.next()?
            } else {
                attached
            };
            if path.replace(word).is_some() {
                return None;
            }
        } else if tee && path.is_none() && word != "-a" {
            path = Some(word);
        } else if !(tee && word == "-a") {
            return None;
        }
    }
    let path = unquoted(path?).filter(|p| {
        !p.is_empty()
            && !p.starts_with(['~', '-'])
            && !p.contains(['$', '`', '*', '?', '[', '{', '(', ';', '&', '|', '<', '>'])
            && *p != "/dev/null"
    })?;
    let (word, tabs) = marker?;
    let quoted = word.starts_with(['\'', '"', '\\']);
    let marker = unquoted(word.trim_start_matches('\\'))?;
    if marker.is_empty()
        || !marker
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let mut body = String::new();
    let mut lines = rest.split_inclusive('\n');
    loop {
        let line = lines.next()?;
        let line = if tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        if line.trim_end_matches(['\n', '\r']) == marker {
            break;
        }
        body.push_str(line);
    }
    let after: String = lines.collect();
    if !after.trim().is_empty() || !quoted && body.contains(['$', '`', '\\']) {
        return None;
    }
    Some((path.to_owned(), body))
}

/// A shell word without the quotes around it whole (`'a b'`, `"x"`); `None` for one with
/// quotes elsewhere.
fn unquoted(word: &str) -> Option<&str> {
    for q in ['\'', '"'] {
        if let Some(inner) = word.strip_prefix(q) {
            return inner.strip_suffix(q).filter(|i| !i.contains(q));
        }
    }
    (!word.contains(['\'', '"'])).then_some(word)
}

/// The body of the first heredoc (`<<EOF`, `<<'EOF'`, `<<-"EOF"`) in a command.
fn heredoc(command: &str) -> Option<String> {
    let start = command.find("<<")?;
    let rest = command[start + 2..].trim_start_matches('-').trim_start();
    let marker: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if marker.is_empty() {
        return None;
    }
    let body_start = rest.find('\n')? + 1;
    let body = &rest[body_start..];
    let lines: Vec<&str> = body.lines().take_while(|l| l.trim() != marker).collect();
    Some(lines.join("\n").trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::redact::{Redactor, Taint};

    #[test]
    fn a_command_that_only_writes_a_heredoc_tells_the_file_and_the_text() {
        let text = "fn main() {}\n    let x = 1;\n";
        for command in [
            "cat > src/main.rs <<'EOF'\nfn main() {}\n    let x = 1;\nEOF",
            "cat <<\"EOF\" >src/main.rs\nfn main() {}\n    let x = 1;\nEOF\n",
            "cat >> 'src/main.rs' << EOF\nfn main() {}\n    let x = 1;\nEOF\n  ",
            "tee -a src/main.rs <<-END_OF_FILE\n\tfn main() {}\n\t    let x = 1;\n\tEND_OF_FILE",
        ] {
            assert_eq!(
                heredoc_write(command),
                Some(("src/main.rs".to_owned(), text.to_owned())),
                "{command}"
            );
        }
        // An unquoted marker's text is the shell's to expand, unless it has nothing to expand.
        assert_eq!(
            heredoc_write("cat > a.txt <<EOF\nplain\nEOF"),
            Some(("a.txt".to_owned(), "plain\n".to_owned()))
        );
        for command in [
            // More than the write, or not a write.
            "cat > a.txt <<'EOF'\nx\nEOF\ngo test ./...",
            "cat > a.txt <<'EOF' && go test\nx\nEOF",
            "cat a.txt <<'EOF'\nx\nEOF",
            "cat <<'EOF'\nx\nEOF",
            "python - <<'EOF'\nprint(1)\nEOF",
            "cat > a.txt > b.txt <<'EOF'\nx\nEOF",
            "cat > a.txt <<'EOF' <<'END'\nx\nEOF",
            // Never ended.
            "cat > a.txt <<'EOF'\nx\n",
            // What the shell would expand.
            "cat > $DIR/a.txt <<'EOF'\nx\nEOF",
            "cat > ~/a.txt <<'EOF'\nx\nEOF",
            "cat > *.txt <<'EOF'\nx\nEOF",
            "cat > a.txt <<EOF\nhome is $HOME\nEOF",
            "cat > /dev/null <<'EOF'\nx\nEOF",
            "cat 2> a.txt <<'EOF'\nx\nEOF",
        ] {
            assert_eq!(heredoc_write(command), None, "{command}");
        }
    }

    #[test]
    fn a_search_summary_stays_short_when_a_cut_makes_a_rule_match() {
        // Found by fuzzing: cut to its length, the pattern ends `DB_PASS=www…`, which reads
        // as a secret (the whole pattern did not, `)` following); the marker is longer.
        let pattern = format!("{}DB_PASS={})", "x".repeat(80), "w".repeat(30));
        let raw = serde_json::json!({ "pattern": pattern }).to_string();
        let input: ToolInput<'_> = serde_json::from_str(&raw).unwrap();
        let clean = Cleaner {
            redactor: &Redactor::default(),
            taint: &Taint::default(),
        };
        let event = operation("s", "Grep", &input, None, "t", &clean).unwrap();
        assert!(event.summary.chars().count() <= crate::event::SUMMARY_MAX);
        assert!(
            event.summary.starts_with("Searched for xxx"),
            "{}",
            event.summary
        );
    }

    #[test]
    fn reads_branch_sha_and_subject_from_real_output() {
        // From entireio-cli e1/2c3e2b3f2a (Claude Code 2.1.14).
        let out = "[alex/ent-109-text-output-checkpoint-flag 5afb02e] feat(explain): implement default checkpoint output format\n 1 file changed, 49 insertions(+), 6 deletions(-)";
        let cmd = "git add -A && git commit -m \"feat(explain): implement default checkpoint output format\n\nDetails here.\n\nCo-Authored-By: Claude Opus 4.5 <noreply@anthropic.com>\"";
        let info = commit_info(cmd, out).unwrap();
        assert_eq!(info.sha.as_deref(), Some("5afb02e"));
        assert_eq!(
            info.branch.as_deref(),
            Some("alex/ent-109-text-output-checkpoint-flag")
        );
        assert!(info.message.starts_with(
            "feat(explain): implement default checkpoint output format\n\nDetails here."
        ));
    }

    #[test]
    fn root_commits_quiet_commits_and_non_commits() {
        let info = commit_info("git commit -qm 'first'", "").unwrap();
        assert_eq!(info.sha, None);
        let info = commit_info("git commit -m init", "[main (root-commit) 0a1b2c3] init").unwrap();
        assert_eq!(info.sha.as_deref(), Some("0a1b2c3"));
        assert_eq!(info.message, "init");
        assert!(commit_info("git log --oneline", "[x 1234567] y").is_none());
        // From claude-code-2.1.330/commit-one-file.jsonl.
        let cmd = "echo hello > a.txt && git add a.txt && git commit -q -m 'add a' && git log --oneline -1";
        assert_eq!(
            commit_info(cmd, "bb16d6b add a").unwrap().sha.as_deref(),
            Some("bb16d6b")
        );
        assert_eq!(commit_info(cmd, "bb16d6b other").unwrap().sha, None);
        assert!(commit_info("echo git committed", "").is_none());
    }

    /// Texts made of `pieces`: every one of up to four pieces (under 60 bytes), and a
    /// pseudo-random 20,000 of up to eight.
    fn made_of(pieces: &[&str]) -> Vec<String> {
        let mut texts: Vec<String> = vec![String::new()];
        let mut round = texts.clone();
        for _ in 0..4 {
            round = round
                .iter()
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .filter(|t| t.len() < 60)
                .collect();
            texts.extend(round.iter().cloned());
        }
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..(seed >> 61) + 1 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            texts.push(text);
        }
        texts
    }

    /// The message of the `git commit` in `command`.
    fn commit_message(command: &str) -> String {
        commit_info(command, "").map_or_else(String::new, |info| info.message)
    }

    #[test]
    fn git_commit_is_found_where_the_pattern_it_replaced_finds_it() {
        let pattern =
            regex::Regex::new(r"(?:^|[;&|(\s])git(?:\s+-[cC]\s+\S+)*\s+commit\b").unwrap();
        let pieces = [
            "git", " ", "\t", "\n", "-c", "-C", "x=y", "commit", "commits", "commit_", ";", "&",
            "|", "(", "a", "é", "\u{a0}", "-cc",
        ];
        for text in made_of(&pieces) {
            let expected = pattern.find(&text).map(|m| m.end());
            assert_eq!(git_commit_end(&text), expected, "{text:?}");
        }
    }

    #[test]
    fn commit_lines_are_read_where_the_patterns_they_replaced_read_them() {
        let line =
            regex::Regex::new(r"(?m)^\[([^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.*)$")
                .unwrap();
        let oneline_pattern = regex::Regex::new(r"(?m)^([0-9a-f]{7,40}) (.+)$").unwrap();
        let pieces = [
            "[",
            "]",
            " ",
            "main",
            "a/b",
            "(root-commit)",
            "0a1b2c3",
            "0a1b2c",
            "9f",
            "0123456789abcdef0123456789abcdef01234567",
            "A",
            "\n",
            "\r",
            "\t",
            "é",
            "x y",
        ];
        for text in made_of(&pieces) {
            let expected = line
                .captures(&text)
                .map(|c| (c.get(1), c.get(2), c.get(3)))
                .map(|(a, b, c)| {
                    (
                        a.unwrap().as_str(),
                        b.unwrap().as_str(),
                        c.unwrap().as_str(),
                    )
                });
            assert_eq!(text.split('\n').find_map(commit_line), expected, "{text:?}");
            let expected: Vec<(&str, &str)> = oneline_pattern
                .captures_iter(&text)
                .map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str()))
                .collect();
            let found: Vec<(&str, &str)> = text.split('\n').filter_map(oneline).collect();
            assert_eq!(found, expected, "{text:?}");
        }
    }

    #[test]
    fn commands_that_check_the_code() {
        for (yes, check) in [
            ("cargo test", "cargo test"),
            ("cargo test -p store 2>&1 | tail -30", "cargo test"),
            ("go build ./... 2>&1", "go build"),
            (
                "mise run fmt && mise run lint && mise run test:ci",
                "mise run fmt",
            ),
            ("golangci-lint run --new=false", "golangci-lint run"),
            ("cd web && npx tsc --noEmit", "npx tsc"),
            ("make", "make"),
            ("python -m pytest -x", "python"),
            ("./run_tests.sh --fast", "./run_tests.sh"),
            ("bash scripts/lint.sh", "bash"),
            ("cd w\ncargo test", "cargo test"),
            (
                "RUST_LOG=debug cargo nextest run",
                "RUST_LOG=debug cargo nextest run",
            ),
            ("xcodebuild -scheme App", "xcodebuild"),
            ("tox -e py311", "tox"),
        ] {
            assert_eq!(check_of(yes).as_deref(), Some(check), "{yes}");
        }
        for no in [
            "git stash pop",
            "git checkout --theirs cmd/checkpoint/checkpoint_test.go",
            "git fetch origin main && git merge origin/main",
            "rm -f /tmp/hook-test.txt",
            "npm i left-pad@latest",
            "cat go_test_output.txt",
            "test -f Cargo.toml",
            "pip install pytest",
            "export RUST_TEST_THREADS=1",
            "sed -n 1,40p tests/cli/main.rs",
            "ls -la fastest",
        ] {
            assert_eq!(check_of(no), None, "{no}");
        }
    }

    #[test]
    fn commands_that_discard_changes() {
        for yes in [
            "git checkout -- a.rs",
            "git checkout .",
            "git restore a.rs",
            "cd x && git reset --hard HEAD",
            "git -C r restore -W --staged a",
        ] {
            assert!(discards_changes(yes), "{yes}");
        }
        for no in [
            "git stash",
            "git stash push -m x",
            "git stash list",
            "git stash pop",
            "git restore --staged a.rs",
            "git checkout -b topic",
            "git checkout main",
            "git reset HEAD~1",
            "echo git stash",
            "git stash && go test ./... ; git stash pop",
            "cd /tmp && git init t && cd t && echo a > f && git restore f",
        ] {
            assert!(!discards_changes(no), "{no}");
        }
    }

    #[test]
    fn messages_from_heredocs_and_several_flags() {
        let cmd = "git commit -F - <<'EOF'\nfix: cursor resets\n\nUse the inode too.\nEOF";
        assert_eq!(
            commit_message(cmd),
            "fix: cursor resets\n\nUse the inode too."
        );
        let cmd = "git commit -m \"$(cat <<'MSG'\nrefactor: split reader\nMSG\n)\"";
        assert_eq!(commit_message(cmd), "refactor: split reader");
        assert_eq!(
            commit_message("git commit -m 'a b' -m \"c \\\"d\\\"\" && git push"),
            "a b\n\nc \"d\""
        );
        // Other commands' flags and heredocs are not the commit's.
        assert_eq!(
            commit_message("python -m pytest -q && git commit -am 'fix: handle empty input'"),
            "fix: handle empty input"
        );
        let cmd = "cat > notes.txt <<'EOF'\nsome notes here\nEOF\ngit add notes.txt && git commit -m 'feat: notes'";
        assert_eq!(commit_message(cmd), "feat: notes");
        assert_eq!(
            commit_message("git -C repo commit --message='x y' -q"),
            "x y"
        );
        assert_eq!(commit_message("git commit --amend --no-edit"), "");
    }
}
