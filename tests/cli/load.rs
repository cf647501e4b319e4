//! Hooks under load (docs/security.md, "Hooks fail open"): 32 hook processes started at once on one
//! repository — every Claude Code event and git's post-commit, for six sessions with real
//! transcripts — each exits 0 with valid output within its budget, and no event is lost: once the
//! storm has passed and `extract` has settled what it left, every event the transcripts yield is
//! stored exactly once, the same events as when the same hooks run one at a time. A second storm,
//! with budgets of 100 and 150 ms that it cannot keep, has hooks cut by their watchdog — in the
//! middle of their work, holding the store's lock — and must end the same way.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::link::six_commit_session;
use crate::repo::{TestRepo, hook_answer, stderr};

/// The real sessions: (id, transcript fixture). e1 made the repository's six commits.
const E1: &str = "0cf3db51-1c73-43bb-8d05-dc02739514a5";
const TTL: &str = "3d06a160-5483-464a-94bc-4a29f10eaa67";
const WRITE: &str = "21c0c438-5e66-40f6-b42d-0e7c8a574625";
const COMMIT: &str = "487902ab-c2ee-410a-8a06-0870ad0ade0c";
const HELP: &str = "8b418ea5-895d-4ad5-abe8-4489d36e454f";
const THINKING: &str = "dac34307-159f-4fcd-9c21-35210246ad38";
const FIXTURES: [(&str, &str); 5] = [
    (
        TTL,
        "claude-code-2.1.330/ttl-cache-session-then-compact.jsonl",
    ),
    (WRITE, "claude-code-2.1.330/write-with-hook-context.jsonl"),
    (COMMIT, "claude-code-2.1.330/commit-one-file.jsonl"),
    (HELP, "entireio-cli/8e/0a64736bc7/0/full.jsonl"),
    (
        THINKING,
        "git-ai/tests/fixtures/claude-code-with-thinking.jsonl",
    ),
];

/// What a process may take beyond its budget, which its watchdog counts from the start of
/// `main`: being started and scheduled under load, ending once cut, and, for the extracting
/// hooks, bringing the index up to the notes they changed after their answer. Generous, for
/// a busy two-core machine: a bound on correctness (Claude Code's own timeouts are 10 s and
/// 30 s), not a benchmark.
const ALLOWANCE: Duration = Duration::from_secs(4);

/// The repository: e1's six commits, e1 extracted up to half its transcript (so that the
/// prompt hooks find reasoning and the storm's extraction resumes from a cursor), and the
/// transcripts of all six sessions in Claude Code's project folder.
fn sessions() -> (TestRepo, BTreeMap<&'static str, PathBuf>) {
    let repo = TestRepo::new();
    let (e1, _) = six_commit_session(&repo);
    let text = fs::read_to_string(&e1).unwrap();
    let half: String = text
        .split_inclusive('\n')
        .take(text.lines().count() / 2)
        .collect();
    let mut transcripts = BTreeMap::new();
    let path = repo.install_transcript_text(&half, E1);
    repo.extract(&path);
    assert!(!repo.stored_events().is_empty());
    repo.install_transcript_text(&text, E1);
    transcripts.insert(E1, path);
    for (session, fixture) in FIXTURES {
        transcripts.insert(session, repo.install_transcript(fixture, session));
    }
    (repo, transcripts)
}

/// One hook process to start.
struct Hook {
    /// The event, or `post-commit`.
    event: &'static str,
    session: Option<&'static str>,
    input: Vec<u8>,
    budget: Duration,
}

/// The 32 hooks of the storm, for `repo`: what six sessions' Claude Code and git would run.
fn storm(repo: &TestRepo, transcripts: &BTreeMap<&'static str, PathBuf>) -> Vec<Hook> {
    let budgets = repo.json(&["status"])["config"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["key"].as_str().unwrap().to_owned(), s["value"].clone()))
        .collect::<BTreeMap<String, Value>>();
    let ms = |key: &str| Duration::from_millis(budgets[key].as_u64().unwrap());
    let (prompt_budget, extract_budget) = (ms("hook.budget_ms"), ms("hook.extract_budget_ms"));
    let root = &repo.root;
    let file = |rel: &str| root.join(rel).to_str().unwrap().to_owned();
    let claude = |event: &'static str, fixture: &str, session, changes: Vec<(&str, Value)>| {
        let payload = repo.hook_payload(fixture, session, &transcripts[session], &changes);
        let budget = match event {
            "PreCompact" | "Stop" | "SessionEnd" => extract_budget,
            _ => prompt_budget,
        };
        Hook {
            event,
            session: Some(session),
            input: payload.to_string().into_bytes(),
            budget,
        }
    };
    let prompt = |session, text: &str| {
        claude(
            "UserPromptSubmit",
            "UserPromptSubmit",
            session,
            vec![("prompt", text.into())],
        )
    };
    let tool = |event, session, tool: &str, input: Value| {
        let fixture = format!("{event}-Write");
        claude(
            event,
            &fixture,
            session,
            vec![("tool_name", tool.into()), ("tool_input", input)],
        )
    };
    let git = |session: Option<&'static str>| Hook {
        event: "post-commit",
        session,
        input: Vec::new(),
        budget: extract_budget,
    };
    vec![
        claude("SessionStart", "SessionStart-startup", E1, vec![]),
        claude("SessionStart", "SessionStart-startup", TTL, vec![]),
        claude("SessionStart", "SessionStart-startup", COMMIT, vec![]),
        claude("SessionStart", "SessionStart-compact", TTL, vec![]),
        claude("SessionStart", "SessionStart-resume", HELP, vec![]),
        prompt(
            E1,
            "Why does f.txt print the checkpoint output format this way?",
        ),
        prompt(TTL, "add a small cache module"),
        prompt(HELP, "Update the help text of the explain command"),
        prompt(WRITE, "write x.py"),
        prompt(THINKING, "Add a hello world header comment to index.ts"),
        tool(
            "PreToolUse",
            E1,
            "Read",
            json!({"file_path": file("f.txt")}),
        ),
        tool(
            "PreToolUse",
            TTL,
            "Write",
            json!({"file_path": file("cache.py"), "content": "x"}),
        ),
        tool(
            "PreToolUse",
            HELP,
            "Edit",
            json!({"file_path": file("cmd/entire/cli/commands/help.go"), "old_string": "a", "new_string": "b"}),
        ),
        tool(
            "PreToolUse",
            COMMIT,
            "Read",
            json!({"file_path": file("a.txt")}),
        ),
        // Reads and searches the transcripts hold: the extractor makes the same events.
        tool(
            "PostToolUse",
            E1,
            "Read",
            json!({"file_path": file("cmd/entire/cli/explain.go")}),
        ),
        tool(
            "PostToolUse",
            E1,
            "Glob",
            json!({"pattern": "cmd/entire/cli/integration_test/*explain*.go"}),
        ),
        tool(
            "PostToolUse",
            HELP,
            "Read",
            json!({"file_path": file("cmd/entire/cli/commands/help.go")}),
        ),
        tool(
            "PostToolUse",
            HELP,
            "Glob",
            json!({"pattern": "cmd/**/help.go"}),
        ),
        claude("PreCompact", "PreCompact", TTL, vec![]),
        claude("PreCompact", "PreCompact", HELP, vec![]),
        claude("PreCompact", "PreCompact", WRITE, vec![]),
        claude("Stop", "Stop", E1, vec![]),
        claude("Stop", "Stop", TTL, vec![]),
        claude("Stop", "Stop", THINKING, vec![]),
        claude("Stop", "Stop", COMMIT, vec![]),
        claude("SessionEnd", "SessionEnd", E1, vec![]),
        claude("SessionEnd", "SessionEnd", HELP, vec![]),
        claude("SessionEnd", "SessionEnd", WRITE, vec![]),
        // git's post-commit inside the sessions' `git commit` (and one made by hand), as
        // git-hooks/post-commit runs it.
        git(Some(COMMIT)),
        git(Some(WRITE)),
        git(Some(TTL)),
        git(None),
    ]
}

/// The process for `hook`, ready to start in `repo`.
fn command(repo: &TestRepo, hook: &Hook) -> Command {
    let mut cmd = repo.cmd_in(&repo.root);
    cmd.args(["hook", hook.event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let (Some(session), "post-commit") = (hook.session, hook.event) {
        cmd.env("CLAUDE_CODE_SESSION_ID", session);
    }
    cmd
}

/// Run `cmd` with `input`; what it did and how long it took from its start.
fn run(mut cmd: Command, input: &[u8]) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = cmd.spawn().expect("the hook starts");
    // A hook past its budget may exit before reading all of it.
    let _ = child.stdin.take().unwrap().write_all(input);
    let out = child.wait_with_output().unwrap();
    (out, start.elapsed())
}

/// Check a hook's run as Claude Code and git would see it: exit 0, nothing or one JSON answer
/// for its event (nothing for git), at most one line on stderr, within its budget.
fn check(hook: &Hook, out: &Output, took: Duration) {
    let label = format!("hook {} ({:?})", hook.event, hook.session);
    if hook.event == "post-commit" {
        assert_eq!(out.status.code(), Some(0), "{label}: {}", stderr(out));
        assert!(out.stdout.is_empty(), "{label} prints nothing");
    } else {
        hook_answer(hook.event, out);
    }
    let err = stderr(out);
    assert!(
        err.is_empty()
            || (err.lines().count() == 1
                && err.starts_with(&format!("git-agent-context: hook {}: ", hook.event))),
        "{label}: {err}"
    );
    assert!(
        took <= hook.budget + ALLOWANCE,
        "{label} took {took:?}, over its budget of {:?} and {ALLOWANCE:?} to start",
        hook.budget
    );
}

/// The events stored, as (kind, id), wherever they are.
fn events(repo: &TestRepo) -> BTreeSet<(String, String)> {
    repo.stored_events()
        .into_iter()
        .map(|(_, kind, id)| (kind, id))
        .collect()
}

/// The events the storm's hooks store when they run one at a time, followed by the same
/// settling `extract`: what every storm must end with. Test repositories are reproducible, so
/// every run of [`sessions`] has the same commits; computed once for the tests that need it.
fn quiet_reference() -> &'static BTreeSet<(String, String)> {
    static QUIET: OnceLock<BTreeSet<(String, String)>> = OnceLock::new();
    QUIET.get_or_init(|| {
        let (quiet, transcripts) = sessions();
        for hook in storm(&quiet, &transcripts) {
            let (out, took) = run(command(&quiet, &hook), &hook.input);
            check(&hook, &out, took);
        }
        quiet.json(&["extract"]);
        quiet.assert_each_event_once();
        events(&quiet)
    })
}

/// Start the 32 hooks of the storm at once on `repo`, check each as Claude Code and git see
/// it, and print what happened; what each did, in the storm's order.
fn storm_at_once(repo: &TestRepo, hooks: &[Hook]) -> Vec<(Output, Duration)> {
    assert_eq!(hooks.len(), 32);
    let gate = Arc::new(Barrier::new(hooks.len()));
    let started = Instant::now();
    let runs: Vec<_> = hooks
        .iter()
        .map(|hook| {
            let (cmd, input, gate) = (command(repo, hook), hook.input.clone(), gate.clone());
            std::thread::spawn(move || {
                gate.wait();
                run(cmd, &input)
            })
        })
        .collect();
    let runs: Vec<(Output, Duration)> = runs.into_iter().map(|t| t.join().unwrap()).collect();
    let storm_took = started.elapsed();
    let mut slowest: BTreeMap<&str, Duration> = BTreeMap::new();
    for (hook, (out, took)) in hooks.iter().zip(&runs) {
        check(hook, out, *took);
        let most = slowest.entry(hook.event).or_default();
        *most = (*most).max(*took);
    }
    let answered = runs
        .iter()
        .filter(|(out, _)| !out.stdout.is_empty())
        .count();
    println!(
        "32 hooks at once: {storm_took:?} in all; {answered} answered with context, {} cut at their budget",
        cut(&runs).len()
    );
    for (event, took) in &slowest {
        println!("  slowest {event}: {took:?}");
    }
    println!(
        "  {} found the store busy and left their work to the next run",
        repo.log().lines().filter(|l| l.contains("busy")).count()
    );
    runs
}

/// The runs the watchdog cut at their budget.
fn cut(runs: &[(Output, Duration)]) -> Vec<usize> {
    (0..runs.len())
        .filter(|&i| stderr(&runs[i].0).contains("over its budget"))
        .collect()
}

/// Once the storm has passed and `extract` has settled what it left: git fsck clean, and
/// every event there once, the same events as one hook at a time.
fn assert_settled(repo: &TestRepo) {
    repo.json(&["extract"]);
    repo.git(&["fsck", "--strict", "--no-progress"]);
    repo.assert_each_event_once();
    let (expected, got) = (quiet_reference(), events(repo));
    let lost: Vec<_> = expected.difference(&got).collect();
    let extra: Vec<_> = got.difference(expected).collect();
    assert!(
        lost.is_empty() && extra.is_empty(),
        "lost {lost:?}, not in the quiet run {extra:?}"
    );
    // All six sessions were read.
    assert_eq!(repo.json(&["status"])["sessions"], 6);
}

#[test]
fn thirty_two_hooks_at_once_all_answer_in_time_and_lose_nothing() {
    quiet_reference();
    let (repo, transcripts) = sessions();
    let hooks = storm(&repo, &transcripts);
    storm_at_once(&repo, &hooks);
    // Every hook that writes said what it did, or why not, in the log.
    let log = repo.log();
    for event in ["PreCompact", "Stop", "SessionEnd", "post-commit"] {
        let ran = hooks.iter().filter(|h| h.event == event).count();
        let logged = log.matches(&format!(" hook {event}: ")).count();
        assert!(logged >= ran, "{ran} {event} hooks, {logged} lines:\n{log}");
    }
    assert!(!log.contains("panicked"), "{log}");
    assert_settled(&repo);
}

#[test]
fn hooks_cut_at_small_budgets_in_a_storm_lose_nothing() {
    quiet_reference();
    let (repo, transcripts) = sessions();
    // Budgets a storm on two cores cannot keep: prompt-time hooks wait for the machine, the
    // extracting ones for the store's lock (their patience, 200 ms, is longer) or are cut in
    // the middle of their work.
    fs::write(
        repo.store_dir().join("config.toml"),
        "[hook]\nbudget_ms = 100\nextract_budget_ms = 150\n",
    )
    .unwrap();
    let hooks = storm(&repo, &transcripts);
    assert!(
        hooks
            .iter()
            .all(|h| h.budget <= Duration::from_millis(150) || h.event == "post-commit")
    );
    let runs = storm_at_once(&repo, &hooks);
    let cut = cut(&runs);
    assert!(!cut.is_empty(), "no hook was cut at its budget");
    for i in cut {
        let (hook, err) = (&hooks[i], stderr(&runs[i].0));
        let key = match hook.budget.as_millis() {
            100 => "hook.budget_ms",
            _ => "hook.extract_budget_ms",
        };
        assert!(
            err.contains(&format!(
                "over its budget of {} ms ({key}): answered with nothing",
                hook.budget.as_millis()
            )),
            "hook {} ({:?}): {err}",
            hook.event,
            hook.session
        );
        assert!(runs[i].0.stdout.is_empty(), "a hook cut answers nothing");
    }
    assert!(!repo.log().contains("panicked"));
    assert_settled(&repo);
}
