//! Retrieval on a large repository (`benches/common/bigrepo.rs`: 50,000 commits, four
//! long-lived files edited thousands of times, 5,000 notes), whole process each time:
//!
//! 1. `git agent-context why <long-lived file>` against `git blame --porcelain <file>`, run in
//!    turn, medians and their ratio (git has a commit-graph with changed-path filters);
//!    `why --exact` (gix's blame) a few times for reference.
//! 2. `git agent-context query "<prompt>"`: median and 95th percentile over prompts that name
//!    files, a symbol an annotated commit defined (checked to be hinted as one), or neither;
//!    and a query with nothing to find beside `git diff --name-only HEAD`, which every query
//!    waits for.
//! 3. `git agent-context hook UserPromptSubmit` (the same prompts) and `hook PreToolUse` (a Read
//!    of a long-lived file) with Claude Code's payload on stdin, each run a new session.
//!
//! Run: `cargo bench --bench retrieve` (`-- --runs N` for the why/blame rounds, `--queries N`
//! for the query runs). The repository is built on the first run and kept under `target/tmp/`.

#[path = "common/bigrepo.rs"]
mod bigrepo;
#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/input.rs"]
mod input;

use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_git-agent-context");

fn main() {
    let mut runs = 10;
    let mut queries = 200;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = || args.next().and_then(|v| v.parse().ok()).expect("a number");
        match arg.as_str() {
            "--runs" => runs = number(),
            "--queries" => queries = number(),
            _ => {}
        }
    }
    let repo = bigrepo::get(BIN);
    why_against_blame(&repo, runs);
    let prompts = prompts(&repo);
    query(&repo, &prompts, queries);
    hooks(&repo, &prompts, queries);
}

/// Run `program` with `args` in `repo`: how long it took, and how much it printed.
fn time(repo: &bigrepo::BigRepo, program: &str, args: &[&str]) -> (Duration, usize) {
    let start = Instant::now();
    let out = hermetic::succeeded(repo.command(program).args(args));
    (start.elapsed(), out.stdout.len())
}

/// `why` and `git blame --porcelain` in turn on two long-lived files; `why --exact` a few times.
fn why_against_blame(repo: &bigrepo::BigRepo, runs: usize) {
    let time = |program: &str, args: &[&str]| time(repo, program, args);
    println!("why against git blame --porcelain, {runs} rounds each, in turn:");
    for path in &bigrepo::LONG_LIVED[..2] {
        let edits = repo
            .git(&["rev-list", "--count", "HEAD", "--", path])
            .trim()
            .to_owned();
        let lines = repo.git(&["show", &format!("HEAD:{path}")]).lines().count();
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let mut sizes = (0, 0);
        for _ in 0..runs {
            let (t, n) = time("git", &["blame", "--porcelain", path]);
            theirs.push(t);
            sizes.1 = n;
            let (t, n) = time(BIN, &["why", path]);
            ours.push(t);
            sizes.0 = n;
        }
        let (ours, theirs) = (median(&mut ours), median(&mut theirs));
        println!(
            "  {path} ({lines} lines, {edits} commits touch it): why {} ({} bytes out), git blame {} ({} bytes); ratio {:.3}",
            ms(ours),
            sizes.0,
            ms(theirs),
            sizes.1,
            ours.as_secs_f64() / theirs.as_secs_f64()
        );
    }
    let path = bigrepo::LONG_LIVED[0];
    let mut exact: Vec<Duration> = (0..3)
        .map(|_| time(BIN, &["why", "--exact", path]).0)
        .collect();
    println!(
        "  why --exact {path} (gix blame): {}",
        ms(median(&mut exact))
    );
}

/// Twenty prompts: naming a file, naming topics, naming a symbol an annotated commit defined
/// (and HEAD still has), or none of these.
fn prompts(repo: &bigrepo::BigRepo) -> Vec<String> {
    // Functions that annotated commits added and HEAD still has, for prompts that name a
    // symbol only (the index knows the names annotated commits define).
    let defined = regex::Regex::new(r"(?m)^\+fn ([a-z]+_step_[0-9]+)").unwrap();
    let heads: String = bigrepo::LONG_LIVED
        .iter()
        .map(|path| repo.git(&["show", &format!("HEAD:{path}")]))
        .collect();
    let notes = repo.git(&["notes", "--ref=agent-context", "list"]);
    let mut symbols: Vec<String> = Vec::new();
    for commit in notes.lines().rev().filter_map(|l| l.split(' ').nth(1)) {
        let diff = repo.git(&["show", "--format=", "--unified=0", commit]);
        symbols.extend(
            defined
                .captures_iter(&diff)
                .map(|c| c[1].to_owned())
                .filter(|name| heads.contains(&format!("fn {name}("))),
        );
        if symbols.len() >= 5 {
            break;
        }
    }
    let mut rng = bigrepo::Rng::new(7);
    (0..20)
        .map(|i| {
            let topic = rng.pick(&bigrepo::TOPICS);
            let other = rng.pick(&bigrepo::TOPICS);
            let file = bigrepo::LONG_LIVED[i % 4].rsplit('/').next().unwrap();
            match i % 4 {
                0 => format!("Why does {file} keep the {topic} this way?"),
                1 => format!("Make the {topic} faster without hurting the {other}"),
                2 => format!(
                    "Refactor {} to take a slice",
                    symbols[i / 4 % symbols.len()]
                ),
                _ => format!("Should the {topic} use a ring buffer instead of a hash map?"),
            }
        })
        .collect()
}

/// `query` with nothing to find beside `git diff --name-only HEAD`, then over `prompts`.
fn query(repo: &bigrepo::BigRepo, prompts: &[String], queries: usize) {
    let time = |program: &str, args: &[&str]| time(repo, program, args);
    // What a query costs with nothing to find, and the part of it that is git's.
    let mut nothing: Vec<Duration> = (0..20)
        .map(|_| time(BIN, &["query", "zzyzx qwvq"]).0)
        .collect();
    let mut diff: Vec<Duration> = (0..20)
        .map(|_| time("git", &["diff", "--name-only", "HEAD"]).0)
        .collect();
    println!(
        "query with nothing to find: median {}; git diff --name-only HEAD: median {}",
        ms(median(&mut nothing)),
        ms(median(&mut diff))
    );
    let buckets = repo.git(&["ls-tree", "-l", "refs/agent-context:index/edges"]);
    let sizes: Vec<u64> = buckets
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3)?.parse().ok())
        .collect();
    println!(
        "the graph's edge index: {} bytes in {} buckets, the largest {} bytes",
        sizes.iter().sum::<u64>(),
        sizes.len(),
        sizes.iter().max().unwrap_or(&0)
    );
    let mut times = Vec::with_capacity(queries);
    let mut empty = 0;
    for q in 0..queries {
        let prompt = &prompts[q % prompts.len()];
        let (t, n) = time(BIN, &["query", prompt]);
        times.push(t);
        if n < 100 {
            empty += 1;
        }
    }
    // The symbol prompts are hinted by the symbol, not by a file name.
    let answer = repo
        .command(BIN)
        .args(["query", &prompts[2], "--json"])
        .output()
        .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&answer.stdout).unwrap();
    assert!(
        answer["hinted_files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["hint"] == "symbol"),
        "{:?}: {}",
        prompts[2],
        answer["hinted_files"]
    );
    println!(
        "query, {queries} runs over {} prompts: median {}, p95 {} ({empty} answered with nothing)",
        prompts.len(),
        ms(median(&mut times)),
        ms(p95(&mut times))
    );
}

/// The Claude Code hooks on the same prompts and on reads of long-lived files.
fn hooks(repo: &bigrepo::BigRepo, prompts: &[String], queries: usize) {
    // The Claude Code hooks, as Claude Code runs them: the payload on stdin, each run a new
    // session (a session is given an event once).
    let hook = |event: &str, payload: serde_json::Value| -> (Duration, bool) {
        let start = Instant::now();
        let out = input::output_with(
            repo.command(BIN).args(["hook", event]),
            payload.to_string().as_bytes(),
        );
        let took = start.elapsed();
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (took, !out.stdout.is_empty())
    };
    let cwd = repo.dir.to_str().unwrap();
    // What earlier runs gave their sessions.
    let _ = std::fs::remove_dir_all(repo.dir.join(".git/agent-context/injected"));
    for event in ["UserPromptSubmit", "PreToolUse"] {
        let mut times = Vec::with_capacity(queries);
        let mut answered = 0;
        for q in 0..queries {
            let mut payload = serde_json::json!({
                "session_id": format!("bench-{event}-{q}"),
                "transcript_path": format!("{}/.claude/projects/bench/{q}.jsonl", repo.home.display()),
                "cwd": cwd,
                "permission_mode": "default",
                "hook_event_name": event,
            });
            if event == "UserPromptSubmit" {
                payload["prompt"] = prompts[q % prompts.len()].clone().into();
            } else {
                let path = repo.dir.join(bigrepo::LONG_LIVED[q % 4]);
                payload["tool_name"] = "Read".into();
                payload["tool_input"] = serde_json::json!({"file_path": path});
                payload["tool_use_id"] = format!("toolu_{q}").into();
            }
            let (t, gave) = hook(event, payload);
            times.push(t);
            answered += usize::from(gave);
        }
        println!(
            "hook {event}, {queries} runs: median {}, p95 {} ({answered} injected something)",
            ms(median(&mut times)),
            ms(p95(&mut times))
        );
    }
}

fn p95(times: &mut [Duration]) -> Duration {
    times.sort();
    times[(times.len() * 95).div_ceil(100) - 1]
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
