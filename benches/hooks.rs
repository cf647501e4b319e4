//! The hooks and commands as a session meets them, on a repository shaped like a real one
//! (`benches/common/realrepo.rs`: 4,000 commits with merges, long-lived files edited often,
//! 30 real sessions from `fixtures/` replayed onto it and extracted), each measure run in turn
//! with git's own commands so that the machine's moods fall on all of them alike:
//!
//! - the floor: a no-op process (`true`), `git rev-parse HEAD`, `git diff --name-only HEAD`,
//!   `git blame --porcelain` on the busiest file;
//! - this binary's own floor: `hook PostCompact`, which opens the repository and answers
//!   nothing;
//! - the Claude Code hooks, whole process from spawn with Claude Code's payload on stdin, each
//!   run a new session: UserPromptSubmit (the sessions' own first prompts), PreToolUse (an Edit
//!   of a long-lived file), PostToolUse (a Read of one), Stop with nothing new; SessionStart
//!   once the committing turn below has ended (what its end left to a process of its own done,
//!   as a session starts after the last one ended; checked to be given the brief kept for it),
//!   and once after a commit made by hand (HEAD moved since any of our processes ran, so the
//!   brief is made, not read);
//! - an agent's commit: `git commit` without hooks, and with our post-commit hook as the
//!   session's Bash tool runs it (`CLAUDE_CODE_SESSION_ID` set, the turn so far appended to its
//!   transcript; what the hook leaves to a process of its own is let finish, as it does while
//!   the model writes its next message); then `hook Stop` at the end of that turn (what it
//!   leaves to a process of its own likewise let finish before the next measure);
//! - `why`, `why --exact` and `query`; the peak memory of `why`, `why --exact` and
//!   `git blame` (through `/usr/bin/time` when there is one);
//! - `extract --transcript` of one session of 1, 4 and 20 MB (the replayed sessions' lines,
//!   repeated, over the last 1, 4 and 20 hours) into a clone with the notes, its store built.
//!
//! Medians and 95th percentiles; last, one line per target with its ratio, to compare a build
//! with the previous one side by side, and each prompt-time hook's work over the floor.
//!
//! Run: `cargo bench --bench hooks` (`-- --rounds N`, default 40; `--bin <path>` measures
//! another build of the binary; `--against <path>` measures a second build beside the first,
//! such as the previous commit's, every round in turn on the same repository, and prints both
//! with their ratio). The repository is built afresh each run under `target/tmp/bench-hooks/`
//! (about 10 s); each build is measured from a copy made at the start.
//!
//! Two builds compare only in one run with `--against`: runs apart differ by more than most
//! changes do, because creating files costs more for minutes after many were deleted (ext4
//! avoids reusing the inodes of files deleted in the last minutes), and each run deletes the
//! last one's repository and clones.

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/input.rs"]
mod input;
#[path = "common/realrepo.rs"]
mod realrepo;
#[path = "common/settle.rs"]
mod settle;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hermetic::succeeded;
use realrepo::RealRepo;
use serde_json::json;

/// The session that commits in the agent's-commit rounds (the fixture's own id).
const SESSION: &str = "487902ab-c2ee-410a-8a06-0870ad0ade0c";
const SIZES_MB: [u64; 3] = [1, 4, 20];

fn main() {
    let mut rounds = 40;
    let mut bin = env!("CARGO_BIN_EXE_git-agent-context").to_owned();
    let mut against = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--rounds takes a number")
            }
            "--bin" => bin = args.next().expect("--bin takes a path"),
            "--against" => against = Some(args.next().expect("--against takes a path")),
            _ => {}
        }
    }
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-hooks");
    // Each build runs from a copy made now: the same bytes start measurably faster or slower
    // from files written at other times (the linker's output, hard-linked by cargo, against a
    // copy), which would be put down to the builds.
    let copies = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-hooks-builds");
    let _ = fs::remove_dir_all(&copies);
    let copy = |n: usize, bin: &str| -> String {
        let to = copies.join(n.to_string()).join("git-agent-context");
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(bin, &to).unwrap_or_else(|e| panic!("copy {bin}: {e}"));
        to.to_str().unwrap().to_owned()
    };
    let repo = realrepo::build(&base, &copy(1, &bin));
    println!("{}", repo.summary);
    let mut builds = vec![Build {
        name: bin,
        bin: repo.bin.clone(),
        hooks: None,
    }];
    if let Some(other) = against {
        let copied = copy(2, &other);
        builds.push(Build::against(&repo, &base, other, copied));
    }
    let mut times: Vec<Times> = builds.iter().map(|_| Times::default()).collect();
    let turn = Turn::new(&repo);
    // Round 0 warms the caches and is not counted. With two builds, each takes its turn first
    // every other round.
    for round in 0..=rounds {
        for b in 0..builds.len() {
            let which = (b + round) % builds.len();
            let slot = round * builds.len() + b;
            let mut took = in_turn(&repo, &builds[which], &turn, round, slot);
            if round > 0 {
                for (name, t) in took.drain(..) {
                    times[which].0.entry(name).or_default().push(t);
                }
            }
        }
    }
    let bins: Vec<&str> = builds.iter().map(|b| b.bin.as_str()).collect();
    let extractions = extraction(&repo, &base, &bins);
    let reports: Vec<Report> = builds
        .iter()
        .zip(&mut times)
        .zip(extractions)
        .map(|((build, times), extraction)| Report {
            name: build.name.clone(),
            stats: stats(times),
            memory: peak_memory(&repo, &build.bin),
            extraction,
        })
        .collect();
    report(&reports, rounds);
}

/// A build of the binary measured: as it was named, the copy that runs, and the git hooks
/// folder that runs it when it is not the one the repository's hooks run (`--against`).
struct Build {
    name: String,
    bin: String,
    hooks: Option<PathBuf>,
}

impl Build {
    /// `name`, run as `bin`, with a copy of the repository's git hooks that runs it.
    fn against(repo: &RealRepo, base: &Path, name: String, bin: String) -> Build {
        let hooks = base.join("hooks-against");
        fs::create_dir_all(&hooks).unwrap();
        for entry in fs::read_dir(repo.dir.join(".git/hooks")).unwrap().flatten() {
            let text = fs::read_to_string(entry.path()).unwrap_or_default();
            if !text.contains("git-agent-context") {
                continue;
            }
            let ours = text.replace(&format!("bin={}\n", repo.bin), &format!("bin={bin}\n"));
            assert_ne!(ours, text, "the hook names the binary: {:?}", entry.path());
            let path = hooks.join(entry.file_name());
            fs::write(&path, ours).unwrap();
            fs::set_permissions(&path, fs::metadata(entry.path()).unwrap().permissions()).unwrap();
        }
        Build {
            name,
            bin,
            hooks: Some(hooks),
        }
    }
}

/// Each measure's times, by its name in the report.
#[derive(Default)]
struct Times(BTreeMap<&'static str, Vec<Duration>>);

const NOOP: &str = "no-op (true)";
const REV_PARSE: &str = "git rev-parse HEAD";
const DIFF: &str = "git diff --name-only HEAD";
const BLAME: &str = "git blame --porcelain <busiest file>";
/// This binary's floor: a hook that reads its payload, opens the repository and answers
/// nothing. What a hook spends over it is its own work; the floor moves between two builds of
/// the same code (docs/performance.md), which the ratios over it set apart.
const FLOOR: &str = "hook PostCompact (answers nothing)";
const PROMPT_HOOKS: [&str; 4] = [
    "hook SessionStart, after the turn's end",
    "hook UserPromptSubmit",
    "hook PreToolUse (Edit)",
    "hook PostToolUse (Read)",
];
const STOP_IDLE: &str = "hook Stop, nothing new";
const START_AFTER_HAND: &str = "hook SessionStart, after a commit by hand";
const PLAIN_COMMIT: &str = "git commit, no hooks";
const AGENT_COMMIT: &str = "git commit by the agent, post-commit hook";
const STOP_TURN: &str = "hook Stop, the turn that committed";
const WHY: &str = "why <busiest file>";
const WHY_EXACT: &str = "why --exact <busiest file>";
const QUERY: &str = "query <a session's first prompt>";

/// One round of one build: every measure once, in turn. `round` chooses the prompt and files
/// (the same for every build), `slot` is this round of this build's own (the new sessions'
/// ids, the commits' words).
fn in_turn(
    repo: &RealRepo,
    build: &Build,
    turn: &Turn,
    round: usize,
    slot: usize,
) -> Vec<(&'static str, Duration)> {
    let busiest = repo.long_lived[0].as_str();
    let file = repo.long_lived[round % repo.long_lived.len()].as_str();
    let prompt = &repo.prompts[round % repo.prompts.len()];
    let session = format!("00000000-0000-4000-8000-{slot:012}");
    let mut took = vec![
        (NOOP, repo.time("true", &[])),
        (REV_PARSE, repo.time("git", &["rev-parse", "HEAD"])),
        (DIFF, repo.time("git", &["diff", "--name-only", "HEAD"])),
        (BLAME, repo.time("git", &["blame", "--porcelain", busiest])),
    ];
    let path = repo.dir.join(file);
    let start = json!({"hook_event_name": "SessionStart", "source": "startup"});
    let payloads = [
        json!({"hook_event_name": "UserPromptSubmit", "prompt": prompt, "permission_mode": "default"}),
        json!({
            "hook_event_name": "PreToolUse", "permission_mode": "default",
            "tool_name": "Edit",
            "tool_input": {"file_path": path, "old_string": "}\n", "new_string": "}\n\n"},
            "tool_use_id": format!("toolu_bench_{slot}"),
        }),
        json!({
            "hook_event_name": "PostToolUse", "permission_mode": "default",
            "tool_name": "Read",
            "tool_input": {"file_path": path},
            "tool_response": {"type": "text", "file": {
                "filePath": path, "content": "package main\n", "numLines": 1,
                "startLine": 1, "totalLines": 1}},
            "tool_use_id": format!("toolu_bench_{slot}"),
        }),
    ];
    let compacted =
        json!({"hook_event_name": "PostCompact", "trigger": "auto", "compact_summary": ""});
    took.push((FLOOR, hook(repo, &build.bin, &session, compacted)));
    for (name, payload) in PROMPT_HOOKS[1..].iter().zip(payloads) {
        took.push((name, hook(repo, &build.bin, &session, payload)));
    }
    let replayed = repo.projects().join(format!(
        "{}.jsonl",
        repo.sessions[round % repo.sessions.len()]
    ));
    took.push((
        STOP_IDLE,
        hook_on(
            repo,
            &build.bin,
            &repo.sessions[round % repo.sessions.len()],
            &replayed,
            json!({
                "hook_event_name": "Stop", "stop_hook_active": false,
                "last_assistant_message": "Done.",
            }),
        ),
    ));
    // What a Stop hook leaves to a process of its own is done while the user reads the
    // answer: not in the way of what is measured next.
    settle::finished(&repo.dir.join(".git/agent-context"));
    took.extend(turn.commit(repo, build, round, slot, &start));
    settle::finished(&repo.dir.join(".git/agent-context"));
    // The next session starts once the turn has ended.
    let next = format!("00000000-0000-4000-9000-{slot:012}");
    took.push((PROMPT_HOOKS[0], hook(repo, &build.bin, &next, start)));
    brief_was_kept(repo);
    took.push((WHY, repo.time(&build.bin, &["why", busiest])));
    took.push((
        WHY_EXACT,
        repo.time(&build.bin, &["why", "--exact", busiest]),
    ));
    took.push((QUERY, repo.time(&build.bin, &["query", prompt])));
    took
}

/// The last `SessionStart` gave the brief the turn's end had kept for it: what
/// "after the turn's end" measures (a brief made there would be the other figure's).
fn brief_was_kept(repo: &RealRepo) {
    let log = fs::read_to_string(repo.dir.join(".git/agent-context/log")).unwrap_or_default();
    let last = log
        .lines()
        .rev()
        .find(|l| l.contains("hook SessionStart"))
        .unwrap_or_default();
    assert!(
        last.contains(": gave the brief as kept, about "),
        "a session starting after the turn's end was not given the brief kept for it: {last}"
    );
}

/// `hook <event>` for a new session whose transcript is not written yet.
fn hook(repo: &RealRepo, bin: &str, session: &str, payload: serde_json::Value) -> Duration {
    let transcript = repo.projects().join(format!("{session}.jsonl"));
    hook_on(repo, bin, session, &transcript, payload)
}

/// `hook <event>` as Claude Code runs it: the payload on stdin, from the repository's top.
fn hook_on(
    repo: &RealRepo,
    bin: &str,
    session: &str,
    transcript: &Path,
    mut payload: serde_json::Value,
) -> Duration {
    payload["session_id"] = session.into();
    payload["transcript_path"] = transcript.to_str().unwrap().into();
    payload["cwd"] = repo.dir.to_str().unwrap().into();
    let event = payload["hook_event_name"].as_str().unwrap().to_owned();
    let start = Instant::now();
    let out = input::output_with(
        repo.command(bin).args(["hook", &event]),
        payload.to_string().as_bytes(),
    );
    let took = start.elapsed();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "hook {event}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// A turn in which the agent commits: the recorded turn of
/// `fixtures/claude-code-2.1.330/commit-one-file.jsonl`, moved into the repository, split
/// where its `git commit` returns.
struct Turn {
    transcript: PathBuf,
    before: String,
    after: String,
    no_hooks: PathBuf,
}

impl Turn {
    fn new(repo: &RealRepo) -> Turn {
        let text = fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/claude-code-2.1.330/commit-one-file.jsonl"),
        )
        .unwrap()
        .replace("/tmp/ccrepo", repo.dir.to_str().unwrap());
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("\"tool_result\"") && l.contains("bb16d6b"))
            .expect("the turn's commit returns");
        let no_hooks = repo.dir.parent().unwrap().join("no-hooks");
        fs::create_dir_all(&no_hooks).unwrap();
        Turn {
            transcript: repo.projects().join(format!("{SESSION}.jsonl")),
            before: lines[..at].join("\n") + "\n",
            after: lines[at..].join("\n") + "\n",
            no_hooks,
        }
    }

    /// A plain commit and a session starting after it (`start`), then the agent's commit (its
    /// turn so far in the transcript), then Stop at the end of that turn.
    fn commit(
        &self,
        repo: &RealRepo,
        build: &Build,
        round: usize,
        slot: usize,
        start: &serde_json::Value,
    ) -> Vec<(&'static str, Duration)> {
        let unique = |text: &str| {
            text.replace("\"msg_", &format!("\"msg_b{slot}_"))
                .replace("\"uuid\":\"", &format!("\"uuid\":\"b{slot}-"))
                .replace("\"toolu_", &format!("\"toolu_b{slot}_"))
        };
        let change = |what: &str| {
            let file = &repo.long_lived[round % repo.long_lived.len()];
            let mut f = fs::OpenOptions::new()
                .append(true)
                .open(repo.dir.join(file))
                .unwrap();
            writeln!(
                f,
                "// {what} {slot}: keep the cache bounded so that replays stay fast"
            )
            .unwrap();
            repo.git(&["add", file]);
        };
        let hooks_off = format!("core.hooksPath={}", self.no_hooks.display());
        change("plain");
        let plain = repo.time(
            "git",
            &[
                "-c",
                &hooks_off,
                "commit",
                "-q",
                "-m",
                &format!("Plain change {slot}"),
            ],
        );
        let session = format!("00000000-0000-4000-a000-{slot:012}");
        let started = hook(repo, &build.bin, &session, start.clone());
        append(&self.transcript, &unique(&self.before));
        change("agent");
        let hooks = build
            .hooks
            .as_ref()
            .map(|h| format!("core.hooksPath={}", h.display()));
        let start = Instant::now();
        let out = repo
            .command("git")
            .args(hooks.iter().flat_map(|h| ["-c", h.as_str()]))
            .args(["commit", "-q", "-m", &format!("Agent change {slot}")])
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .output()
            .unwrap();
        let agent = start.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // What the hook left to a process of its own is done while the model writes its next
        // message, seconds later: not in the way of the Stop hook measured here.
        settle::finished(&repo.dir.join(".git/agent-context"));
        let head = repo.git(&["rev-parse", "--short=7", "HEAD"]);
        append(
            &self.transcript,
            &unique(&self.after.replace("bb16d6b", head.trim())),
        );
        let stop = hook_on(
            repo,
            &build.bin,
            SESSION,
            &self.transcript,
            json!({
                "hook_event_name": "Stop", "stop_hook_active": false,
                "last_assistant_message": "Done. I committed a.txt.",
            }),
        );
        vec![
            (PLAIN_COMMIT, plain),
            (START_AFTER_HAND, started),
            (AGENT_COMMIT, agent),
            (STOP_TURN, stop),
        ]
    }
}

fn append(path: &Path, text: &str) {
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

/// Peak resident memory in KiB (median of 5) of `git blame`, `why` and `why --exact` on the
/// busiest file, through GNU time; empty without it.
fn peak_memory(repo: &RealRepo, bin: &str) -> Vec<(&'static str, u64)> {
    if !Path::new("/usr/bin/time").exists() {
        return Vec::new();
    }
    let busiest = repo.long_lived[0].as_str();
    let runs: [(&str, Vec<&str>); 3] = [
        (BLAME, vec!["git", "blame", "--porcelain", busiest]),
        (WHY, vec![bin, "why", busiest]),
        (WHY_EXACT, vec![bin, "why", "--exact", busiest]),
    ];
    runs.into_iter()
        .map(|(name, argv)| {
            let mut kib: Vec<u64> = (0..5)
                .map(|_| {
                    let out = repo
                        .command("/usr/bin/time")
                        .args(["-f", "%M"])
                        .args(&argv)
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "{argv:?}");
                    let err = String::from_utf8_lossy(&out.stderr);
                    err.lines()
                        .last()
                        .and_then(|l| l.trim().parse().ok())
                        .expect("time's %M")
                })
                .collect();
            kib.sort();
            (name, kib[2])
        })
        .collect()
}

/// `extract --transcript` of one session of each size into a clone of its own with the notes
/// and the store, 5 runs each in turn, each build in turn: per build, (size in bytes, the
/// times).
fn extraction(repo: &RealRepo, base: &Path, bins: &[&str]) -> Vec<Vec<(u64, Vec<Duration>)>> {
    let transcripts: Vec<PathBuf> = SIZES_MB
        .iter()
        .map(|mb| session_of(repo, base, mb << 20))
        .collect();
    let mut out: Vec<Vec<(u64, Vec<Duration>)>> = bins
        .iter()
        .map(|_| {
            transcripts
                .iter()
                .map(|t| (fs::metadata(t).unwrap().len(), Vec::new()))
                .collect()
        })
        .collect();
    for run in 0..5 {
        for (i, transcript) in transcripts.iter().enumerate() {
            for b in 0..bins.len() {
                let which = (b + run) % bins.len();
                let bin = bins[which];
                // A folder of its own each time: creating files where many were just deleted
                // is slow for a while (ext4), and would be measured. No working tree: the
                // extraction reads none, and the next run would delete its thousands of files.
                let clone = base.join(format!("clone-{run}-{i}-{which}"));
                repo.git(&[
                    "clone",
                    "-q",
                    "--no-checkout",
                    repo.dir.to_str().unwrap(),
                    clone.to_str().unwrap(),
                ]);
                // As in a clone where the hooks have been at work: the notes are here and the
                // store and its index built.
                let fetch = ["fetch", "-q", "origin", "refs/notes/*:refs/notes/*"];
                succeeded(repo.command("git").current_dir(&clone).args(fetch));
                succeeded(repo.command(bin).current_dir(&clone).arg("rebuild"));
                let start = Instant::now();
                succeeded(
                    repo.command(bin)
                        .current_dir(&clone)
                        .args(["extract", "--transcript"])
                        .arg(transcript),
                );
                out[which][i].1.push(start.elapsed());
            }
        }
    }
    out
}

/// One session of at least `bytes`: the replayed sessions' lines in turn, ids made unique per
/// repetition, one session id, run over the hours before the last commit (an hour a MB, as
/// real long sessions do). Its folder stays the repository's: to a clone it is a teammate's
/// session.
fn session_of(repo: &RealRepo, base: &Path, bytes: u64) -> PathBuf {
    let id = format!("5e55104e-0000-4000-8000-{:012}", bytes >> 20);
    // Named as Claude Code names its transcripts.
    let path = base.join(format!("{id}.jsonl"));
    let mut lines: Vec<String> = Vec::new();
    let (mut size, mut copy) = (0, 0);
    'fill: loop {
        for session in &repo.sessions {
            let text =
                fs::read_to_string(repo.projects().join(format!("{session}.jsonl"))).unwrap();
            for line in text.lines() {
                let line = line
                    .replace(session.as_str(), &id)
                    .replace("\"msg_", &format!("\"msg_x{copy}_"))
                    .replace("\"uuid\":\"", &format!("\"uuid\":\"x{copy}-"))
                    .replace("\"toolu_", &format!("\"toolu_x{copy}_"));
                size += line.len() as u64 + 1;
                lines.push(line);
            }
            if size >= bytes {
                break 'fill;
            }
        }
        copy += 1;
    }
    let end: i64 = repo
        .git(&["log", "-1", "--format=%ct"])
        .trim()
        .parse()
        .unwrap();
    let span = (bytes >> 20) as i64 * 3600;
    let count = lines.len() as i64;
    let text: String = lines
        .iter()
        .enumerate()
        .map(|(i, line)| realrepo::retimed(line, |_| end - span + span * i as i64 / count) + "\n")
        .collect();
    fs::write(&path, text).unwrap();
    path
}

/// One build's figures.
struct Report {
    /// The build as it was named (it ran from a copy).
    name: String,
    /// Each measure's median and 95th percentile, in milliseconds.
    stats: BTreeMap<&'static str, (f64, f64)>,
    memory: Vec<(&'static str, u64)>,
    extraction: Vec<(u64, Vec<Duration>)>,
}

fn stats(times: &mut Times) -> BTreeMap<&'static str, (f64, f64)> {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    times
        .0
        .iter_mut()
        .map(|(name, t)| {
            t.sort();
            let p95 = t[(t.len() * 95).div_ceil(100) - 1];
            (*name, (ms(t[t.len() / 2]), ms(p95)))
        })
        .collect()
}

/// The table, a column pair per build (and the second's ratio to the first), then each
/// build's ratios to the targets, one line each.
fn report(reports: &[Report], rounds: usize) {
    println!("\n{rounds} rounds, every measure once a round, in turn; whole processes:");
    for (i, r) in reports.iter().enumerate() {
        println!("build {}: {}", i + 1, r.name);
    }
    let mut header = format!("{:<46}", "");
    for i in 1..=reports.len() {
        header.push_str(&format!(" {:>9} {:>9}", format!("median {i}"), "p95"));
    }
    if reports.len() == 2 {
        header.push_str(&format!(" {:>7}", "2 / 1"));
    }
    println!("{header}");
    let order = [NOOP, REV_PARSE, DIFF, BLAME, FLOOR]
        .into_iter()
        .chain(PROMPT_HOOKS)
        .chain([
            START_AFTER_HAND,
            STOP_IDLE,
            PLAIN_COMMIT,
            AGENT_COMMIT,
            STOP_TURN,
            WHY,
            WHY_EXACT,
            QUERY,
        ]);
    for name in order {
        let mut line = format!("{name:<46}");
        for r in reports {
            let (median, p95) = r.stats[name];
            line.push_str(&format!(" {median:>6.1} ms {p95:>6.1} ms"));
        }
        if let [first, second] = reports {
            line.push_str(&format!(
                " {:>6.2}x",
                second.stats[name].0 / first.stats[name].0
            ));
        }
        println!("{line}");
    }
    let median = |runs: &[Duration]| {
        let mut runs = runs.to_vec();
        runs.sort();
        runs[runs.len() / 2].as_secs_f64()
    };
    for (i, (size, _)) in reports[0].extraction.iter().enumerate() {
        let mut line = format!(
            "extract --transcript, one {:.1} MB session",
            *size as f64 / 1e6
        );
        for r in reports {
            let m = median(&r.extraction[i].1);
            line.push_str(&format!(
                " {:>8.1} ms {:>5.0} MB/s",
                m * 1e3,
                *size as f64 / 1e6 / m
            ));
        }
        println!("{line}");
    }
    for (i, (name, _)) in reports[0].memory.iter().enumerate() {
        let mut line = format!("peak memory, {name:<34}");
        for r in reports {
            line.push_str(&format!(" {:>6.1} MiB", r.memory[i].1 as f64 / 1024.0));
        }
        println!("{line}");
    }
    for (i, r) in reports.iter().enumerate() {
        println!("\nratios of build {} (target in brackets):", i + 1);
        ratios(r);
    }
}

fn ratios(r: &Report) {
    let stats = &r.stats;
    let rev = stats[REV_PARSE];
    for name in PROMPT_HOOKS {
        let (m, p) = stats[name];
        println!(
            "ratio {name} / git rev-parse HEAD: median {:.2}x [<= 2], p95 {:.2}x [<= 3]",
            m / rev.0,
            p / rev.1
        );
    }
    let floor = stats[FLOOR];
    println!(
        "ratio {FLOOR} / git rev-parse HEAD: median {:.2}x, p95 {:.2}x",
        floor.0 / rev.0,
        floor.1 / rev.1
    );
    for name in PROMPT_HOOKS {
        println!(
            "ratio {name}, over the floor: median +{:.2}x rev-parse",
            (stats[name].0 - floor.0) / rev.0
        );
    }
    let (m, p) = stats[START_AFTER_HAND];
    println!(
        "ratio {START_AFTER_HAND} / git rev-parse HEAD: median {:.2}x, p95 {:.2}x",
        m / rev.0,
        p / rev.1
    );
    println!(
        "ratio {STOP_TURN}: median {:.1} ms [<= 30]",
        stats[STOP_TURN].0
    );
    println!(
        "ratio agent's commit over a plain one: median +{:.1} ms [<= 25]",
        stats[AGENT_COMMIT].0 - stats[PLAIN_COMMIT].0
    );
    if let Some((size, runs)) = r.extraction.iter().find(|(s, _)| *s >> 20 == 4) {
        let mut runs = runs.clone();
        runs.sort();
        println!(
            "ratio extraction of a 4 MB session: {:.0} MB/s [>= 150]",
            *size as f64 / 1e6 / runs[runs.len() / 2].as_secs_f64()
        );
    }
    let kib = |name: &str| {
        r.memory
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k as f64)
    };
    if let (Some(exact), Some(blame)) = (kib(WHY_EXACT), kib(BLAME)) {
        println!(
            "ratio why --exact / git blame, peak memory: {:.2}x [<= 1.5]",
            exact / blame
        );
    }
    println!(
        "ratio why / git blame: median {:.2}x",
        stats[WHY].0 / stats[BLAME].0
    );
}
