//! Extraction throughput and peak memory on a large transcript.
//!
//! The transcript is built by repeating the lines of every real fixture transcript, with the
//! message ids and uuids of each repetition made unique so that every copy yields its own
//! events (as a long real session would). Extraction runs in this process on one thread, from
//! an empty cursor to the end, into a fresh repository's store; then once more with the cursor
//! at the end (the cost of a hook that finds nothing new). Then the same two runs through the
//! real binary, whole process.
//!
//! Last, the Claude Code `Stop` hook on the same transcript with a warm cursor, whole process
//! from spawn (stdin payload as Claude Code 2.1.330 sends it): when nothing was appended, and
//! when one turn was; then one turn again with distillation on (`distill.mode = "api"`), the
//! Messages API being a server on 127.0.0.1 that takes 2 s to answer — the hook starts the
//! distillation and does not wait for it. What a hook leaves to a process of its own (the rest
//! of a turn that brought something new: the graph, the continuation, the index and the
//! distillation's start) is let end before the next turn, untimed; so the distillation no
//! longer adds to the hook's own time, and the two measures of one new turn differ only by the
//! machine.
//!
//! Run: `cargo bench --bench extract` (`-- --size-mb N` for another size; default 200).

use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use git_agent_context::ingest;

#[path = "common/input.rs"]
mod input;
#[path = "common/settle.rs"]
mod settle;
use git_agent_context::store::Store;
use git_agent_context::transcript::agent::Agent;

fn main() {
    let mut size_mb: u64 = 200;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--size-mb" {
            size_mb = args
                .next()
                .and_then(|v| v.parse().ok())
                .expect("--size-mb takes a number");
        }
    }
    let data = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-extract");
    fs::create_dir_all(&data).unwrap();
    let transcript = data.join(format!("large-{size_mb}mb.jsonl"));
    if fs::metadata(&transcript).map(|m| m.len()).unwrap_or(0) < size_mb << 20 {
        generate(&transcript, size_mb << 20);
    }
    let size = fs::metadata(&transcript).unwrap().len();

    let repo = data.join("repo");
    let _ = fs::remove_dir_all(&repo);
    fs::create_dir_all(&repo).unwrap();
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .unwrap();
    assert!(status.success(), "git init");
    let store = Store::discover(&repo).unwrap();
    store.init().unwrap();

    reset_peak_memory();
    let before = memory_kib("VmRSS");
    let start = Instant::now();
    let cpu_start = cpu_seconds();
    let report = ingest::transcript(&store, &transcript, ingest::Options::default()).unwrap();
    let cold = start.elapsed();
    let cpu = cpu_start.zip(cpu_seconds()).map(|(a, b)| b - a);
    let peak = memory_kib("VmHWM");
    // A run that read nothing, or could not read the lines, measures nothing.
    assert!(report.events_added > 0, "the transcript yields events");
    assert_eq!(report.lines.skipped(), 0, "every line is read");

    let start = Instant::now();
    let again = ingest::transcript(&store, &transcript, ingest::Options::default()).unwrap();
    let warm = start.elapsed();
    assert_eq!(again.events_added + again.events_updated, 0);

    let (fresh, binary_cold, binary_warm) = through_the_binary(&data, &transcript);
    let (stop_idle, stop_turn, stop_distill) = stop_hook(&fresh, &transcript);

    let mb = size as f64 / (1 << 20) as f64;
    println!(
        "transcript: {mb:.0} MiB, {} lines, {} events",
        report.lines.read, report.events_added
    );
    println!(
        "extract (cold cursor): {:.2} s, {:.0} MiB/s",
        cold.as_secs_f64(),
        mb / cold.as_secs_f64()
    );
    // On a shared machine wall time includes time the core was lent elsewhere; the CPU time
    // the process was given is the steadier measure of the code.
    if let Some(cpu) = cpu {
        println!("  on CPU: {cpu:.2} s, {:.0} MiB/s", mb / cpu);
    }
    println!(
        "extract (warm cursor, nothing new): {:.2} ms",
        warm.as_secs_f64() * 1e3
    );
    println!(
        "binary `extract --transcript`: cold {:.2} s ({:.0} MiB/s), warm {:.1} ms",
        binary_cold.as_secs_f64(),
        mb / binary_cold.as_secs_f64(),
        binary_warm.as_secs_f64() * 1e3
    );
    println!(
        "binary `hook Stop`, warm cursor ({} runs each): nothing new: median {:.1} ms, max {:.1} ms; one new turn: median {:.1} ms, max {:.1} ms",
        STOP_RUNS,
        median(&stop_idle),
        stop_idle.last().unwrap(),
        median(&stop_turn),
        stop_turn.last().unwrap()
    );
    println!(
        "binary `hook Stop`, one new turn, distillation on (the model answers in 2 s): median {:.1} ms, max {:.1} ms",
        median(&stop_distill),
        stop_distill.last().unwrap()
    );
    match (before, peak) {
        (Some(before), Some(peak)) => println!(
            "peak resident memory: {:.1} MiB (process before extraction: {:.1} MiB)",
            peak as f64 / 1024.0,
            before as f64 / 1024.0
        ),
        _ => println!("peak resident memory: unavailable (no /proc)"),
    }
}

/// `extract --transcript` through the real binary, as a hook or a user runs it (release build),
/// in a fresh repository: cold, then warm; the repository.
fn through_the_binary(data: &Path, transcript: &Path) -> (PathBuf, Duration, Duration) {
    let fresh = data.join("repo-bin");
    let _ = fs::remove_dir_all(&fresh);
    fs::create_dir_all(&fresh).unwrap();
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&fresh)
            .status()
            .unwrap()
            .success()
    );
    let run_binary = || {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_git-agent-context"))
            .args(["extract", "--transcript"])
            .arg(transcript)
            .current_dir(&fresh)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        start.elapsed()
    };
    let cold = run_binary();
    let warm = run_binary();
    (fresh, cold, warm)
}

const STOP_RUNS: usize = 20;

/// `hook Stop` timings in milliseconds, sorted, in the repository at `repo` whose store has
/// read `transcript` to its end: on a copy of it as it is, then with one recorded turn
/// (`fixtures/claude-code-2.1.330/commit-one-file.jsonl`, its ids made unique) appended
/// before each run, after a commit that the turn names as the one it made — so each run
/// extracts, links the turn's events to that commit, saves the continuation and indexes the
/// new note.
fn stop_hook(repo: &Path, transcript: &Path) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let git = |args: &[&str]| -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .envs([
                ("GIT_AUTHOR_NAME", "Bench"),
                ("GIT_AUTHOR_EMAIL", "bench@example.com"),
                ("GIT_COMMITTER_NAME", "Bench"),
                ("GIT_COMMITTER_EMAIL", "bench@example.com"),
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let copy = transcript.with_extension("stop.jsonl");
    fs::copy(transcript, &copy).unwrap();
    let first = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/claude-code-2.1.330/commit-one-file.jsonl"),
    )
    .unwrap();
    let session = "487902ab-c2ee-410a-8a06-0870ad0ade0c";
    let payload = serde_json::json!({
        "session_id": session,
        "transcript_path": copy,
        "cwd": repo,
        "hook_event_name": "Stop",
        "stop_hook_active": false,
        "last_assistant_message": "Done.",
        "background_tasks": [],
        "session_crons": [],
    })
    .to_string();
    // With a key, a distillation started by the hook sends its request.
    let run_with = |key: Option<&str>| {
        let start = Instant::now();
        let mut hook = Command::new(env!("CARGO_BIN_EXE_git-agent-context"));
        hook.args(["hook", "Stop"]).current_dir(repo);
        if let Some(key) = key {
            hook.env("ANTHROPIC_API_KEY", key);
        }
        let out = input::output_with(&mut hook, payload.as_bytes());
        assert!(out.status.success());
        let took = start.elapsed().as_secs_f64() * 1e3;
        // What the hook left to a process of its own is done while the user reads the answer,
        // before the next turn.
        settle::finished(&repo.join(".git/agent-context"));
        took
    };
    let run = || run_with(None);
    // Turn `i`: a commit, then the lines of the turn that made it.
    let append_turn = |i: usize| {
        git(&["commit", "-q", "--allow-empty", "-m", &format!("add a {i}")]);
        let head = git(&["rev-parse", "--short=7", "HEAD"]);
        let lines = first
            .replace("bb16d6b", &head)
            .replace("\"msg_", &format!("\"msg_s{i}_"))
            .replace("\"uuid\": \"", &format!("\"uuid\": \"s{i}-"))
            .replace("\"toolu_", &format!("\"toolu_s{i}_"));
        fs::OpenOptions::new()
            .append(true)
            .open(&copy)
            .unwrap()
            .write_all(lines.as_bytes())
            .unwrap();
    };
    // Not timed: the copy is a new file to the store, read once; a first turn puts a note on a
    // commit, and the index is built from it (as any command would): each timed turn then adds
    // one note to it.
    append_turn(0);
    run();
    let built = Command::new(env!("CARGO_BIN_EXE_git-agent-context"))
        .args(["query", "cache"])
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(built.status.success());
    assert!(
        repo.join(".git/agent-context/index").is_dir(),
        "the index was built"
    );
    let mut idle: Vec<f64> = (0..STOP_RUNS).map(|_| run()).collect();
    let mut turn = Vec::new();
    for i in 1..=STOP_RUNS {
        append_turn(i);
        turn.push(run());
    }
    each_turn_linked(repo);
    let mut distilled = with_distillation(repo, |i| {
        append_turn(i);
        run_with(Some("bench-key"))
    });
    idle.sort_by(f64::total_cmp);
    turn.sort_by(f64::total_cmp);
    distilled.sort_by(f64::total_cmp);
    (idle, turn, distilled)
}

/// The Stop hook worked, and each turn's events went to its commit.
fn each_turn_linked(repo: &Path) {
    let log = fs::read_to_string(repo.join(".git/agent-context/log")).unwrap();
    assert!(
        !log.contains("hook Stop: failed"),
        "the Stop hook worked: {log}"
    );
    let linked = log
        .lines()
        .filter(|l| l.contains("hook Stop: ") && l.contains("linked to 1 commits"))
        .count();
    assert_eq!(
        linked,
        STOP_RUNS + 1,
        "each turn's events went to its commit: {log}"
    );
}

/// `run_turn` for [`STOP_RUNS`] more turns with distillation on, against a model that answers
/// every request after 2 s (an empty 500: the answer does not matter here, only that the hook
/// does not wait for it); the times, and each Stop started a distillation.
fn with_distillation(repo: &Path, mut run_turn: impl FnMut(usize) -> f64) -> Vec<f64> {
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in server.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                std::thread::sleep(std::time::Duration::from_secs(2));
                let _ = stream
                    .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n");
            });
        }
    });
    fs::write(
        repo.join(".git/agent-context/config.toml"),
        format!(
            "[distill]\nmode = \"api\"\nbase_url = \"http://127.0.0.1:{port}\"\ntimeout_ms = 5000\n"
        ),
    )
    .unwrap();
    let distilled: Vec<f64> = (STOP_RUNS + 1..=2 * STOP_RUNS).map(&mut run_turn).collect();
    let log = fs::read_to_string(repo.join(".git/agent-context/log")).unwrap();
    let started = log
        .lines()
        .filter(|l| l.contains("distill started"))
        .count();
    assert_eq!(
        started, STOP_RUNS,
        "each Stop started a distillation: {log}"
    );
    distilled
}

fn median(sorted: &[f64]) -> f64 {
    sorted[sorted.len() / 2]
}

/// Write at least `bytes` of transcript built from the fixtures' lines.
fn generate(path: &Path, bytes: u64) {
    let fixtures = fixture_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"));
    let mut out = BufWriter::new(File::create(path).unwrap());
    let mut written = 0u64;
    let mut copy = 0u64;
    while written < bytes {
        for fixture in &fixtures {
            for line in BufReader::new(File::open(fixture).unwrap()).lines() {
                let line = line.unwrap();
                let line = line
                    .replace("\"msg_", &format!("\"msg_c{copy}_"))
                    .replace("\"uuid\":\"", &format!("\"uuid\":\"c{copy}-"))
                    .replace("\"uuid\": \"", &format!("\"uuid\": \"c{copy}-"))
                    .replace("\"toolu_", &format!("\"toolu_c{copy}_"));
                out.write_all(line.as_bytes()).unwrap();
                out.write_all(b"\n").unwrap();
                written += line.len() as u64 + 1;
            }
        }
        copy += 1;
    }
    out.flush().unwrap();
}

fn fixture_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(fixture_files(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl")
            && Agent::of(&path) == Agent::ClaudeCode
        {
            // Claude Code's transcripts only: the other agents' are read another way.
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Forget the peak resident set so far (Linux: `echo 5 > /proc/self/clear_refs`), so that the
/// peak measured covers extraction only, not building the input.
fn reset_peak_memory() {
    let _ = fs::write("/proc/self/clear_refs", "5");
}

/// User plus system CPU time of this process so far (Linux: `/proc/self/stat`, in ticks of
/// 1/100 s).
fn cpu_seconds() -> Option<f64> {
    let stat = fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

fn memory_kib(field: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
