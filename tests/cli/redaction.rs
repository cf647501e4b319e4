//! Redaction end to end: the secrets of the corpus (`tests/data/redaction/`), said in every
//! place a transcript can say them, reach nothing git or the store keeps and nothing a hook or
//! a command shows; what a session saw of an excluded file (`.env`, keys, `secrets/`) is
//! scrubbed from what it said after; the user's own rules in `.agent-context.toml` apply.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use serde_json::json;

use crate::link::{bash_result, prompt, say};
use crate::repo::TestRepo;

/// The positive samples: (rule, secret, text).
fn positives() -> Vec<(String, String, String)> {
    let unescape = |s: &str| {
        s.replace("\\\\", "\u{0}")
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace('\u{0}', "\\")
    };
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/redaction/positives.tsv"),
    )
    .unwrap()
    .lines()
    .filter(|l| !l.is_empty() && !l.starts_with('#'))
    .map(|l| {
        let f: Vec<&str> = l.split('\t').collect();
        (f[0].to_owned(), unescape(f[1]), unescape(f[2]))
    })
    .collect()
}

/// Everything git keeps (every object, whatever refers to it) and every file of the store.
fn everything_kept(repo: &TestRepo) -> String {
    let objects = repo.git_output(
        &repo.root,
        &["cat-file", "--batch-all-objects", "--batch", "--unordered"],
        &[],
    );
    assert!(objects.status.success());
    let mut out = String::from_utf8_lossy(&objects.stdout).into_owned();
    let mut folders = vec![repo.root.join(".git/agent-context")];
    while let Some(dir) = folders.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                out.push_str(&String::from_utf8_lossy(&fs::read(&path).unwrap()));
            }
        }
    }
    out
}

const AT: &str = "2026-01-01T00:00:00Z";

fn text(msg: &str, words: &str) -> String {
    say(msg, AT, json!([{"type": "text", "text": words}]))
}

fn tool(msg: &str, id: &str, name: &str, input: serde_json::Value) -> String {
    say(
        msg,
        AT,
        json!([{"type": "tool_use", "id": id, "name": name, "input": input}]),
    )
}

#[test]
fn no_secret_reaches_git_the_store_a_hook_or_a_command() {
    let repo = TestRepo::new();
    fs::write(
        repo.root.join(".agent-context.toml"),
        "[redact]\nexclude = [\"config/*.key\"]\n[redact.rules]\nacme-key = 'acme_[0-9a-f]{16}'\n",
    )
    .unwrap();
    // Only the user's own file may allow-list.
    fs::create_dir_all(repo.root.join(".git/agent-context")).unwrap();
    fs::write(
        repo.root.join(".git/agent-context/config.toml"),
        "[redact]\nallow = [\"acme_0000000000000000\"]\n",
    )
    .unwrap();
    repo.commit("README.md", "app\n", "docs: readme");
    let commit = repo.commit("app.py", "print(1)\n", "feat: the app");
    let root = repo.root.to_str().unwrap();
    let samples = positives();
    let mut lines = vec![prompt("p0", "Set up the deployment credentials", AT)];
    // Each secret where a transcript can carry one: reasoning, prompts, commands, tasks,
    // plans, commit messages.
    for (i, (_, _, sample)) in samples.iter().enumerate() {
        let msg = format!("m{i}");
        let id = format!("t{i}");
        lines.push(match i % 6 {
            0 => text(&msg, &format!("I'll go with this because the deploy needs it:\n{sample}")),
            1 => prompt(&format!("p{i}"), &format!("We decided to use this instead of the old one: {sample}"), AT),
            2 => tool(&msg, &id, "Bash", json!({"command": format!("deploy --config '{sample}'")})),
            // A task list and a plan count once their call succeeds.
            3 => tool(&msg, &id, "TodoWrite", json!({"todos": [{"content": format!("Rotate {sample}"), "status": "pending"}]})) + &bash_result(&id, "ok", AT),
            4 => tool(&msg, &id, "ExitPlanMode", json!({"plan": format!("Plan: use the vault.\n\nWe chose it over env files because of {sample}")})) + &bash_result(&id, "ok", AT),
            _ => say(&msg, AT, json!([{"type": "thinking", "thinking": format!("I'll keep the setting because the migration needs it: {sample}")}])),
        });
    }
    // The content of excluded files: read, printed by a command, written.
    let env_file = "     1→# local\n     2→FLAG=blue-kiwi-42\n     3→NODE_ENV=production\n";
    lines.extend([
        tool("r1", "read1", "Read", json!({"file_path": format!("{root}/.env")})),
        bash_result("read1", env_file, AT),
        tool("r2", "cat1", "Bash", json!({"command": "cat config/prod.key"})),
        bash_result("cat1", "zq9-unique-value-77\n", AT),
        tool("r3", "write1", "Write", json!({"file_path": format!("{root}/secrets/api.txt"), "content": "token: plum-sauce-314\n"})),
        bash_result("write1", "ok", AT),
        text("r4", "I'll go with FLAG=blue-kiwi-42 in production because zq9-unique-value-77 and plum-sauce-314 are already set."),
        text("r5", "I'll use acme_0123456789abcdef as the key, not acme_0000000000000000, because it is live."),
        tool("c1", "commit1", "Bash", json!({"command": "git commit -am 'feat: the app'"})),
        bash_result("commit1", &format!("[main {}] feat: the app\n 1 file changed", &commit[..7]), AT),
        prompt("p-end", "thanks", AT),
    ]);
    let transcript = repo.home.join("s-link.jsonl");
    fs::write(&transcript, lines.concat()).unwrap();
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    assert!(
        !repo
            .git(&["notes", "--ref=agent-context", "list"])
            .is_empty()
    );
    repo.git(&["rev-parse", "--verify", "refs/agent-context"]);

    // What hooks and commands show.
    let mut shown = String::new();
    for (event, extra) in [
        (
            "UserPromptSubmit",
            json!({"prompt": "Which deployment credentials did we choose and why?"}),
        ),
        ("SessionStart", json!({"source": "compact"})),
        (
            "PreToolUse",
            json!({"tool_name": "Read", "tool_input": {"file_path": format!("{root}/app.py")}}),
        ),
    ] {
        let mut payload = json!({"session_id": "s-other", "cwd": root, "hook_event_name": event,
            "transcript_path": transcript.to_str().unwrap()});
        for (k, v) in extra.as_object().unwrap() {
            payload[k] = v.clone();
        }
        let out = repo.run_with_input(
            &repo.root,
            &["hook", event],
            payload.to_string().as_bytes(),
            &[],
        );
        assert!(out.status.success());
        shown.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    for args in [
        &["show", "HEAD", "--no-pager", "--color=never"][..],
        &["review", "HEAD~1", "--format", "json"],
        &["why", "app.py", "--json"],
        &["query", "deployment credentials vault", "--json"],
        &["log", "--no-pager", "--color=never"],
    ] {
        shown.push_str(&repo.ok(args));
    }
    assert!(
        shown.contains("[REDACTED:"),
        "the reasoning is shown, redacted: {shown}"
    );

    let kept = everything_kept(&repo);
    for (rule, secret, _) in &samples {
        assert!(
            !kept.contains(secret.as_str()),
            "{rule}: {secret:?} is kept somewhere"
        );
        assert!(
            !shown.contains(secret.as_str()),
            "{rule}: {secret:?} is shown"
        );
    }
    let rules: BTreeSet<&str> = samples.iter().map(|(r, _, _)| r.as_str()).collect();
    for rule in rules {
        assert!(
            kept.contains(&format!("[REDACTED:{rule}]")),
            "{rule} redacted what it found"
        );
    }
    for seen in [
        "blue-kiwi-42",
        "zq9-unique-value-77",
        "plum-sauce-314",
        "acme_0123456789abcdef",
    ] {
        assert!(
            !kept.contains(seen) && !shown.contains(seen),
            "{seen} is kept or shown"
        );
    }
    assert!(
        kept.contains("FLAG=[REDACTED:excluded-file] in production"),
        "the words around stay"
    );
    assert!(
        kept.contains("[REDACTED:acme-key]"),
        "the user's rule applies"
    );
    assert!(
        kept.contains("not acme_0000000000000000"),
        "the allow-list keeps what it names"
    );
    assert!(
        !kept.contains("cat config/prod.key"),
        "a command about an excluded file is not kept, lest it write one"
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

/// A `PostToolUse` hook's payload for session `s-link`.
fn post_tool_use(
    repo: &TestRepo,
    tool: &str,
    input: serde_json::Value,
    response: serde_json::Value,
) {
    let payload = json!({"session_id": "s-link", "cwd": repo.root.to_str().unwrap(),
        "hook_event_name": "PostToolUse", "transcript_path": repo.project_dir().join("s-link.jsonl"),
        "tool_name": tool, "tool_input": input, "tool_response": response});
    let out = repo.run_with_input(
        &repo.root,
        &["hook", "PostToolUse"],
        payload.to_string().as_bytes(),
        &[],
    );
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
}

#[test]
fn what_a_session_saw_of_excluded_files_stays_out_whoever_reads_it() {
    let repo = TestRepo::new();
    let commit = repo.commit("app.py", "print(1)\n", "feat: the app");
    let root = repo.root.to_str().unwrap();
    // The hooks see a read of `.env` (a value, and a letters-only password under a secret's
    // name), then searches for both, as they happen.
    post_tool_use(
        &repo,
        "Read",
        json!({"file_path": format!("{root}/.env")}),
        json!({"type": "text", "file": {"filePath": format!("{root}/.env"),
            "content": "FLAG=blue-kiwi-42\nDB_PASS=Sunshine\n", "numLines": 2}}),
    );
    post_tool_use(
        &repo,
        "Grep",
        json!({"pattern": "blue-kiwi-42"}),
        json!({"mode": "files_with_matches", "filenames": []}),
    );
    post_tool_use(
        &repo,
        "Grep",
        json!({"pattern": "Sunshine"}),
        json!({"mode": "files_with_matches", "filenames": []}),
    );
    // A subagent reads a secret file; the main thread quotes it, and a search prints the line
    // of another excluded file among others, which the main thread quotes too. A header's
    // token and a password open sentences of their own, apart from the names that tell them.
    let sub = [
        tool(
            "a1",
            "sr1",
            "Read",
            json!({"file_path": format!("{root}/secrets/api.txt")}),
        ),
        bash_result("sr1", "     1→token: plum-sauce-314\n", AT),
    ]
    .concat();
    let main = [
        prompt("p1", "Wire the staging flags", AT),
        // A task list and a plan still waiting for their result name a value before the
        // session learns that it comes from an excluded file.
        tool("m0", "todo1", "TodoWrite", json!({"todos": [{"content": "Set orange-lamp-5519 in staging", "status": "pending"}]})),
        tool("m0b", "plan1", "ExitPlanMode", json!({"plan": "Plan: flags\n\nUse orange-lamp-5519 for staging."})),
        tool("m1", "g1", "Grep", json!({"pattern": "FLAG", "output_mode": "content"})),
        bash_result("g1", "src/flags.py:3:FLAG = env('FLAG')\n.env.staging:3:STAGING_FLAG=orange-lamp-5519\n", AT),
        text("m2", "I'll go with plum-sauce-314 from the subagent's report instead of a new token, because a new one logs everyone out, and set orange-lamp-5519 as the flag."),
        text("m3", "The header is:\n\nAuthorization: Bearer Q9f8e7d6c5b4a39281706f5e4d3c2b1a0 and we chose it instead of basic auth because the gateway needs it."),
        text("m4", "The staging db password: Xk9mP2qLz8vBn4Wc is what we'll keep instead of a new one, because rotating it now would break staging."),
        // A command that writes an excluded file from a heredoc: its text is the file's.
        tool("m5", "h1", "Bash", json!({"command": "cat > .env <<'EOF'\nDB_USER=admin\nNOTE=grey heron here\nEOF"})),
        bash_result("h1", "", AT),
        tool("c1", "commit1", "Bash", json!({"command": "git commit -am 'feat: the app'"})),
        bash_result("commit1", &format!("[main {}] feat: the app\n 1 file changed", &commit[..7]), AT),
    ]
    .concat();
    let dir = repo.project_dir();
    fs::create_dir_all(dir.join("s-link/subagents")).unwrap();
    fs::write(dir.join("s-link/subagents/agent-a1.jsonl"), sub).unwrap();
    fs::write(dir.join("s-link.jsonl"), main).unwrap();
    let report = repo.json(&["extract"]);
    assert_eq!(
        report["transcripts"].as_array().unwrap().len(),
        2,
        "{report:#}"
    );
    assert!(
        !repo
            .git(&["notes", "--ref=agent-context", "list"])
            .is_empty()
    );

    let kept = everything_kept(&repo);
    for seen in [
        "blue-kiwi-42",
        "Sunshine",
        "plum-sauce-314",
        "orange-lamp-5519",
        "Q9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "Xk9mP2qLz8vBn4Wc",
        "grey heron here",
        "DB_USER=admin",
    ] {
        assert!(!kept.contains(seen), "{seen} is kept somewhere");
    }
    assert!(
        kept.contains("Searched for [REDACTED:excluded-file] (Grep)"),
        "the searches are kept, their patterns scrubbed"
    );
    assert!(
        kept.contains("I'll go with [REDACTED:excluded-file] from the subagent's report"),
        "the decision is kept, its values scrubbed"
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

/// Extract a session of `lines` that ends in a commit on the current branch (named `branch`
/// in the transcript, as Claude Code names it on every line); what git and the store keep
/// after.
fn kept_after_session(repo: &TestRepo, branch: &str, lines: &[String]) -> String {
    let commit = repo.commit("app.py", "print(1)\n", "feat: the app");
    let mut all = vec![prompt("p1", "Set up the deployment", AT)];
    all.extend_from_slice(lines);
    all.extend([
        tool(
            "c1",
            "commit1",
            "Bash",
            json!({"command": "git commit -am 'feat: the app'"}),
        ),
        bash_result(
            "commit1",
            &format!("[{branch} {}] feat: the app\n 1 file changed", &commit[..7]),
            AT,
        ),
        // A turn left open: its state is saved in `cursors/`.
        prompt("p2", "Now the staging deployment", AT),
        text("m-open", "I'll reuse what the production deployment chose."),
    ]);
    let root = repo.root.to_str().unwrap();
    let transcript = repo.home.join("s-link.jsonl");
    let stamped: String = all
        .concat()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["gitBranch"] = json!(branch);
            v["cwd"] = json!(root);
            format!("{v}\n")
        })
        .collect();
    fs::write(&transcript, stamped).unwrap();
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    assert!(
        fs::read_dir(repo.root.join(".git/agent-context/cursors"))
            .unwrap()
            .next()
            .is_some(),
        "the extractor's state is saved"
    );
    everything_kept(repo)
}

#[test]
fn untrusted_branch_names_are_redacted_wherever_they_are_stored() {
    let repo = TestRepo::new();
    repo.commit("README.md", "app\n", "docs: readme");
    let token = "ghp_Lq7Vx2Rt9Kp4Wz8Nc3Bj6Fs1Ga5Ue0Do2Ti7";
    let branch = format!("feature/{token}");
    repo.git(&["checkout", "-q", "-b", &branch]);
    let kept = kept_after_session(
        &repo,
        &branch,
        &[text(
            "m1",
            "I'll go with one deploy script because two drift apart.",
        )],
    );
    assert!(
        !kept.contains(token),
        "the branch's token is kept somewhere"
    );
    assert!(
        kept.contains("feature/[REDACTED:github-token]"),
        "the branch is kept, redacted"
    );
}

#[test]
fn untrusted_subagent_ids_are_never_stored_as_they_are() {
    let repo = TestRepo::new();
    let token = "ghp_R7vK2mQ9xLp4Wz8Nc3Bj6Fs1Ga5Ue0Do2Ti7";
    let root = repo.root.to_str().unwrap();
    // A subagent mirrored in the main transcript, and one inline (Claude Code 1.0), each
    // with an id that is no name: a token, and a path.
    let mirrored = json!({"type": "progress", "uuid": "g1", "sessionId": "s-link", "timestamp": AT,
        "data": {"type": "agent_progress", "agentId": token, "message": {"type": "assistant",
            "uuid": "g1-m", "timestamp": AT, "message": {"id": "msg-g1", "model": "claude-test",
            "content": [{"type": "tool_use", "id": "w1", "name": "Write",
                "input": {"file_path": format!("{root}/one.py"), "content": "print('one')\n"}}]}}}});
    let inline = json!({"type": "assistant", "uuid": "s1", "sessionId": "s-link", "timestamp": AT,
        "isSidechain": true, "agentId": "../../etc/passwd", "message": {"id": "msg-s1",
            "model": "claude-test", "content": [{"type": "tool_use", "id": "w2", "name": "Write",
                "input": {"file_path": format!("{root}/two.py"), "content": "print('two')\n"}}]}});
    let kept = kept_after_session(
        &repo,
        "main",
        &[format!("{mirrored}\n"), format!("{inline}\n")],
    );
    assert!(!kept.contains(token), "the token is kept somewhere");
    assert!(!kept.contains("etc/passwd"), "the path is kept somewhere");
    assert!(
        kept.contains("\"agent_id\":\"sidechain\""),
        "the subagents' work is kept, told as a side chain's"
    );
}

#[test]
fn untrusted_npm_and_hugging_face_tokens_are_redacted() {
    let repo = TestRepo::new();
    let (npm, hf) = (
        "npm_R7vK2mQ9xLp4Wz8Nc3Bj6Fs1Ga5Ue0Do2Ti7",
        "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",
    );
    let kept = kept_after_session(
        &repo,
        "main",
        &[
            tool("m1", "r1", "Read", json!({"file_path": "config/ci.yml"})),
            bash_result("r1", &format!("publish: {npm}\nhub: {hf}\n"), AT),
            text(
                "m2",
                &format!(
                    "I'll go with {npm} for publishing instead of a new one, because the CI \
                     already has it, and {hf} for the model hub."
                ),
            ),
            tool(
                "m3",
                "b1",
                "Bash",
                json!({"command": format!("echo {npm} | npm login && python push.py --hub {hf}")}),
            ),
            bash_result("b1", "ok", AT),
        ],
    );
    for secret in [npm, hf] {
        assert!(!kept.contains(secret), "{secret} is kept somewhere");
    }
    assert!(kept.contains("[REDACTED:npm-token]") && kept.contains("[REDACTED:huggingface-token]"));
}

#[test]
fn untrusted_azure_connection_strings_are_redacted() {
    let repo = TestRepo::new();
    let key = "Jd8Kp2Lm6Nq0Rs4Tv8Wx2Yz6Ab0Cd4Ef8Gh2Ij6Kl0Mn4Op8Qr2St6Uv0Wx4Yz8Ab2Cd6Ef0Gh4Ij8Kl2Mn6Op0Q+/==";
    let sig = "Ht6Wm2Qz8Rv4Kx0Lb6Nc2%2BPd8Fs4Gj0%3D";
    let connection = format!(
        "DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={key};EndpointSuffix=core.windows.net"
    );
    let kept = kept_after_session(
        &repo,
        "main",
        &[
            tool(
                "m1",
                "b1",
                "Bash",
                json!({"command": format!("az storage blob upload --connection-string \"{connection}\" -f db.bak -c backups")}),
            ),
            bash_result("b1", "ok", AT),
            text(
                "m2",
                &format!(
                    "I'll go with the SAS URL https://acmeprod.blob.core.windows.net/backups/db.bak?sv=2022-11-02&sp=r&sig={sig} \
                     instead of the account key of {connection}, because it expires."
                ),
            ),
        ],
    );
    for secret in [key, sig] {
        assert!(!kept.contains(secret), "{secret} is kept somewhere");
    }
    assert!(
        kept.contains("AccountKey=[REDACTED:azure-key]")
            && kept.contains("&sig=[REDACTED:azure-key]")
    );
}

#[test]
fn untrusted_redis_cli_passwords_are_redacted() {
    let repo = TestRepo::new();
    let (bare, quoted) = ("Vq4nRz8pTw2k", "blue fox 77 jumps");
    let kept = kept_after_session(
        &repo,
        "main",
        &[
            tool(
                "m1",
                "b1",
                "Bash",
                json!({"command": format!("redis-cli -h cache.internal -a {bare} --no-auth-warning info")}),
            ),
            bash_result("b1", "# Server\nredis_version:7.2.4\n", AT),
            tool(
                "m2",
                "b2",
                "Bash",
                json!({"command": format!("redis-cli -a \"{quoted}\" ping")}),
            ),
            bash_result("b2", "PONG\n", AT),
            text(
                "m3",
                &format!(
                    "I'll go with `redis-cli -a {bare}` in the runbook instead of the ACL user, \
                     because the old replicas only know the default one."
                ),
            ),
        ],
    );
    // The quoted password goes whole, not its first word alone.
    for secret in [bare, quoted, "fox 77 jumps"] {
        assert!(!kept.contains(secret), "{secret:?} is kept somewhere");
    }
    assert!(kept.contains("-a [REDACTED:command-line-secret]"));
}

#[test]
fn untrusted_environment_dumps_keep_no_random_value() {
    let repo = TestRepo::new();
    let (thing, seed, hash) = (
        "Zx9fK2pQ7vLm3RtY8wBn",
        "Pq3Wn8Xt2Lk7Vb5Rz9Mc4Jd",
        "5afb02e1c3d4e5f60718293a4b5c6d7e8f901234",
    );
    let dump = format!(
        "HOME=/home/u\nPATH=/usr/local/bin:/usr/bin:/bin\nLANG=en_US.UTF-8\nSHELL=/bin/bash\n\
         MY_APP_THING={thing}\nBUILD_REF={hash}\nTERM=xterm-256color\n"
    );
    let kept = kept_after_session(
        &repo,
        "main",
        &[
            tool("m1", "b1", "Bash", json!({"command": "env"})),
            bash_result("b1", &dump, AT),
            text(
                "m2",
                &format!(
                    "I'll go with the variables the shell already has instead of a .env file, \
                     because the deploy reads them:\n\n```\n{dump}```"
                ),
            ),
            tool("m3", "b2", "Bash", json!({"command": "export -p"})),
            bash_result(
                "b2",
                &format!("declare -x HOME=\"/home/u\"\ndeclare -x SYNC_SEED=\"{seed}\"\n"),
                AT,
            ),
            say(
                "m4",
                AT,
                json!([{"type": "thinking", "thinking": format!(
                    "I'll keep the sync seed because the replicas share it:\n\
                     declare -x HOME=\"/home/u\"\ndeclare -x SYNC_SEED=\"{seed}\"")}]),
            ),
            prompt(
                "p3",
                &format!("We decided to use this instead of the old one, from printenv:\n{dump}"),
                AT,
            ),
        ],
    );
    for secret in [thing, seed, hash] {
        assert!(!kept.contains(secret), "{secret} is kept somewhere");
    }
    assert!(
        kept.contains("MY_APP_THING=[REDACTED:env-dump]"),
        "the dump is kept, its random values redacted"
    );
    assert!(
        kept.contains("PATH=/usr/local/bin:/usr/bin:/bin") && kept.contains("LANG=en_US.UTF-8"),
        "the ordinary values stay"
    );
}

/// Paths are normalised before anything is decided about them: `..`, `.`, `//` and links
/// inside the repository cannot get around an exclusion, and what a session read or wrote
/// outside the repository is not recorded at all (docs/security.md).
#[test]
fn untrusted_dot_dot_and_links_do_not_get_around_exclusions_and_outside_files_are_not_recorded() {
    let repo = TestRepo::new();
    let commit = repo.commit("app.py", "print(1)\n", "feat: the app");
    fs::create_dir_all(repo.root.join("sub")).unwrap();
    fs::create_dir_all(repo.root.join("secrets")).unwrap();
    fs::write(repo.root.join("secrets/prod.txt"), "key: amber-moth-7777\n").unwrap();
    std::os::unix::fs::symlink("secrets", repo.root.join("vault")).unwrap();
    let root = repo.root.to_str().unwrap();
    let lines = [
        prompt("p1", "Wire the production token", AT),
        tool("m1", "r1", "Read", json!({"file_path": format!("{root}/sub/../secrets/prod.txt")})),
        bash_result("r1", "     1→token: teal-otter-8812\n", AT),
        tool("m2", "b1", "Bash", json!({"command": "cat sub/../secrets//prod.txt"})),
        bash_result("b1", "pass: violet-crab-1234\n", AT),
        tool("m3", "r2", "Read", json!({"file_path": format!("{root}/./vault/prod.txt")})),
        bash_result("r2", "     1→key: amber-moth-7777\n", AT),
        tool("m4", "r3", "Read", json!({"file_path": format!("{root}/../../../root/.ssh/config")})),
        bash_result("r3", "     1→Host prod-bastion-9\n", AT),
        tool("m5", "w1", "Write", json!({"file_path": "/tmp/elsewhere-notes.txt", "content": "x\n"})),
        bash_result("w1", "ok", AT),
        text("m6", "I'll use teal-otter-8812 with violet-crab-1234 and amber-moth-7777 instead of a new token, because rotating logs everyone out."),
        tool("c1", "commit1", "Bash", json!({"command": "git commit -am 'feat: the app'"})),
        bash_result("commit1", &format!("[main {}] feat: the app\n 1 file changed", &commit[..7]), AT),
    ]
    .concat();
    let dir = repo.project_dir();
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("s-link.jsonl"), lines).unwrap();
    repo.json(&["extract"]);
    let kept = everything_kept(&repo);
    assert!(
        kept.contains("instead of a new token"),
        "the decision is kept"
    );
    for seen in ["teal-otter-8812", "violet-crab-1234", "amber-moth-7777"] {
        assert!(!kept.contains(seen), "{seen} is kept somewhere");
    }
    for outside in [".ssh/config", "elsewhere-notes.txt"] {
        let at = kept.find(outside).unwrap_or(0);
        assert!(
            !kept.contains(outside),
            "{outside}, outside the repository, is recorded: {}",
            &kept[at.saturating_sub(300)..(at + 100).min(kept.len())]
        );
    }
}
