#!/usr/bin/env python3
"""Linking measured against a corpus's own ground truth (docs/quality.md, "Linking").

The corpus is a repository whose commits name the sessions that made them: entireio/cli's
commits carry `Entire-Checkpoint: <id>` trailers, and its branch `entire/checkpoints/v1` holds,
per checkpoint, the transcripts of the sessions behind it (`<xx>/<rest>/<n>/full.jsonl` beside
a `metadata.json` naming the session). The script clones the repository afresh, as a new user
would, extracts every session's transcript into the clone in one run of `git agent-context
extract --transcript …` (put together from its checkpoints' copies, some of which hold only
the part after the checkpoint before), and compares the sessions each commit's note names with the
checkpoint's.

    eval/linking.py --repo <mirror or clone> --checkpoints <checkout of the checkpoints branch> \
        --work <scratch folder> [--rewrite-paths] [--binary target/release/git-agent-context]

`--rewrite-paths` replaces each transcript's recorded folder (`cwd`, as on the developer's
machine) with the clone's, as if the sessions had been run in it; without it the transcripts
are read as recorded. The scratch folder is emptied first.

Figures, over the commits that carry a trailer whose checkpoint has a readable transcript:
recall — such commits whose note names a session of their checkpoint; precision — of the
(commit, session) links made to commits whose trailer names a checkpoint of the corpus, those
the trailer confirms. Links to other commits have no ground truth and are counted apart.
Trailers can be wrong: a link to a commit whose hash the session's own `git commit` printed, but
whose trailer names another session, is counted apart too, with the precision it would make
counted as right.

The links neither confirms are judged by hand: `--to-judge <folder>` writes those not judged yet
(and `--controls N` links the trailers confirm, drawn at random, unmarked among them) as
`pairs.md`, each commit beside the session's edits to its files, with the judges' instructions
(`TASK.md`), and its key beside the folder (`<folder>.key.json`); `--judged tests/data/links-judged.jsonl` counts a link judged `made` or
`part` by every judge as right, and prints the precision that gives and how many links are left
to judge.
"""

import argparse
import collections
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

NOTES = "refs/notes/agent-context"


def git(repo, *args, env=None):
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def sessions_of_checkpoints(root):
    """checkpoint id -> (session id, transcript readable); session id -> its readable transcripts,
    the longest first."""
    checkpoint_sessions = collections.defaultdict(set)
    transcripts = collections.defaultdict(list)
    for meta in glob.glob(os.path.join(root, "*", "*", "*", "metadata.json")):
        with open(meta) as f:
            data = json.load(f)
        # Older checkpoints prefix the session id with its date: "2026-01-05-<uuid>".
        session = re.sub(r"^\d{4}-\d{2}-\d{2}-", "", data["session_id"])
        transcript = os.path.join(os.path.dirname(meta), "full.jsonl")
        readable = os.path.exists(transcript)
        # A session whose transcript is absent still made the checkpoint's commit.
        checkpoint_sessions[data["checkpoint_id"]].add((session, readable))
        if not readable:
            continue
        transcripts[session].append((os.path.getsize(transcript), transcript))
    return checkpoint_sessions, {
        s: [t for _, t in sorted(ts, reverse=True)] for s, ts in transcripts.items()
    }


def first(path, key):
    """The first value of `key` the lines of transcript `path` give, or ""."""
    with open(path, errors="replace") as f:
        for line in f:
            try:
                value = json.loads(line).get(key)
            except ValueError:
                continue
            if value:
                return value
    return ""


def assembled(paths, into):
    """The session's transcript as Claude Code kept it, from its checkpoints' copies: most hold
    the whole session up to their checkpoint, some only what came after the checkpoint before.
    Their lines in the order the copies start, each line once (by its `uuid`); one copy alone
    is read where it is."""
    if len(paths) == 1:
        return paths[0]
    seen, lines = set(), []
    for path in sorted(paths, key=lambda p: first(p, "timestamp")):
        with open(path, errors="replace") as f:
            for line in f:
                try:
                    key = json.loads(line).get("uuid") or line
                except ValueError:
                    key = line
                if key not in seen:
                    seen.add(key)
                    lines.append(line if line.endswith("\n") else line + "\n")
    os.makedirs(into, exist_ok=True)
    out = os.path.join(into, f"{len(os.listdir(into))}.jsonl")
    with open(out, "w") as f:
        f.writelines(lines)
    return out


# What `git commit` prints first: "[<branch> <abbreviated id>] <subject>", with "(root-commit)"
# or "detached HEAD" where they apply.
COMMIT_LINE = re.compile(r"^\[[^\]\n]*? ([0-9a-f]{7,40})\] ", re.MULTILINE)


def printed_commits(path):
    """The abbreviated ids the session's own `git commit` calls printed: the commits it made.
    Found wherever a call and its result are, subagents' included."""
    calls, results = set(), []

    def walk(value):
        if isinstance(value, dict):
            if value.get("type") == "tool_use" and value.get("name") == "Bash":
                if "git commit" in str((value.get("input") or {}).get("command", "")):
                    calls.add(value.get("id"))
            elif value.get("type") == "tool_result":
                results.append((value.get("tool_use_id"), value.get("content")))
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    with open(path, errors="replace") as f:
        for line in f:
            try:
                walk(json.loads(line))
            except ValueError:
                continue
    found = set()
    for call, content in results:
        if call in calls:
            found.update(COMMIT_LINE.findall(text_of(content)))
    return found


def text_of(content):
    """The text of a tool result's content: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(c.get("text")) for c in content if isinstance(c, dict))
    return ""


def trailers(repo):
    """commit -> checkpoint ids, over every ref of the clone."""
    out = git(
        repo,
        "log",
        "--all",
        "--format=%H%x09%(trailers:key=Entire-Checkpoint,valueonly,separator=%x2C)",
    )
    found = {}
    for line in out.splitlines():
        commit, _, ids = line.partition("\t")
        ids = [i.strip() for i in ids.split(",") if i.strip()]
        if ids:
            found[commit] = ids
    return found


def rewritten(path, clone, into):
    """A copy of transcript `path` in folder `into` with its recorded folder replaced by `clone`."""
    cwd = first(path, "cwd")
    with open(path, errors="replace") as f:
        text = f.read()
    if cwd:
        # Both as JSON writes it and as it appears inside text.
        text = text.replace(json.dumps(cwd)[1:-1], json.dumps(clone)[1:-1])
    os.makedirs(into, exist_ok=True)
    out = os.path.join(into, f"{len(os.listdir(into))}.jsonl")
    with open(out, "w") as f:
        f.write(text)
    return out


def noted_sessions(repo, signals=None):
    """commit -> session ids its note holds events of; `signals`, when given, is filled with
    (commit, session) -> the signal that linked them."""
    out = {}
    try:
        listing = git(repo, "notes", "--ref", NOTES, "list")
    except subprocess.CalledProcessError:
        return out
    for line in listing.splitlines():
        blob, commit = line.split()
        note = git(repo, "cat-file", "blob", blob)
        ids = set()
        for line in note.splitlines():
            try:
                event = json.loads(line)
                ids.add(event["session_id"])
            except (ValueError, KeyError):
                continue
            if signals is not None and event.get("link"):
                signals[(commit, event["session_id"])] = event["link"]["signal"]
        out[commit] = ids
    return out


TASK = """# Which session's work is in which commit

Each "Pair" in pairs.md shows one git commit of a real repository and one Claude Code session:
when the session ran, its first prompt, the commits its own `git commit` calls printed (if any),
and the edits it made to the files this commit changes (Edit/Write calls; the new text it
wrote). The commit's dates carry their own offset; the session's are UTC.

For each pair, decide from what is shown:

- `made`  — this session made this commit: its `git commit` printed this commit (same subject, or
  the same commit rebased/amended since), or the commit is plainly the session's own work,
  committed while it ran or just after.
- `part`  — the session wrote part of what this commit adds (its edits' lines are among the
  commit's added lines, not just similar), but the commit was made by someone or something
  else (the developer by hand, another session later, a rebase that re-applied it).
- `no`    — the session's edits are not what this commit adds: other lines, lines any code has
  (`}`, `return nil`, blank-ish lines), or a later rewrite of the same code that this commit
  does not contain.

Compare the lines: a session's edit counts only where its text appears among the commit's added
lines (first lines only are shown; say so when that leaves you unsure). Judge each pair on its
own. Do not run builds or tests; reading files is all you need.

Write one JSON line per pair:
{"n": <pair number>, "label": "made" | "part" | "no", "why": "<one short sentence>"}
"""


def session_view(path, files):
    """What a judge is shown of a session: when it ran, its first prompt, the commits its
    `git commit` printed, and its edits to `files` (the commit's)."""
    times, prompt, edits, printed = [], None, [], []
    with open(path, errors="replace") as f:
        for line in f:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d.get("timestamp"):
                times.append(d["timestamp"])
            content = (d.get("message") or {}).get("content")
            if d.get("type") == "user" and prompt is None and isinstance(content, str):
                prompt = None if content.startswith("<") else content[:300]
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and block.get("name") in WRITES:
                    given = block.get("input") or {}
                    to = given.get("file_path", "")
                    file = next((f for f in files if to == f or to.endswith("/" + f)), None)
                    text = given.get("new_string") or given.get("content") or "\n".join(
                        e.get("new_string", "") for e in given.get("edits", [])
                    )
                    if file:
                        edits.append((d.get("timestamp"), file, text))
                elif block.get("type") == "tool_result":
                    printed += [" ".join(m) for m in PRINTED.findall(text_of(block.get("content")))]
    out = [
        f"- ran from {min(times, default='?')} to {max(times, default='?')} (UTC)",
        f"- first prompt: {prompt!r}",
    ]
    if printed:
        out.append("- its `git commit` calls printed: " + "; ".join(dict.fromkeys(printed)))
    out.append(f"- its edits to the commit's files ({len(edits)}):")
    budget = 2500
    for at, file, text in edits:
        if budget <= 0:
            out.append("  (more edits left out)")
            break
        snippet = "\n".join(text.splitlines()[:25])[:600]
        out.append(f"  * {at} {file}:\n```\n{snippet}\n```")
        budget -= len(snippet)
    return "\n".join(out)


WRITES = ("Edit", "Write", "MultiEdit")
PRINTED = re.compile(r"\[[^\]\n]*? ([0-9a-f]{7,40})\] ([^\n\"\\]{0,80})")


def write_pairs(clone, transcripts, pairs, into):
    """Write the (commit, session, drawn) `pairs`, shuffled, for judges blind to how each was
    drawn: `pairs.md` and `TASK.md`, and beside the folder its key."""
    random.Random(len(pairs)).shuffle(pairs)
    os.makedirs(into, exist_ok=True)
    shown, key = [], []
    for n, (commit, session, drawn) in enumerate(pairs, 1):
        head = git(clone, "show", "-s", "--format=author %an, authored %aI, committed %cI%n%B", commit)
        # The trailer would tell the judge the answer.
        head = re.sub(r"(?im)^entire-checkpoint:.*$", "", head).strip()[:800]
        files = git(clone, "show", "--format=", "--name-only", commit).splitlines()
        added = [
            line
            for line in git(clone, "show", "--format=", "-U0", commit).splitlines()
            if line.startswith("+") and not line.startswith("+++ ")
        ]
        added = "\n".join(added[:90])[:4000]
        shown.append(
            f"## Pair {n}\n\n### The commit {commit[:8]}\n{head}\n\nFiles: {', '.join(files)}\n\n"
            f"Lines it adds (first ones):\n```\n{added}\n```\n\n### The session {session[:8]}\n"
            f"{session_view(transcripts[session], files)}\n"
        )
        key.append({"n": n, "commit": commit, "session": session, "drawn": drawn})
    with open(os.path.join(into, "pairs.md"), "w") as f:
        f.write("\n".join(shown))
    with open(os.path.join(into, "TASK.md"), "w") as f:
        f.write(TASK)
    # Beside the folder, not in it: the judges must not tell how a link was drawn.
    with open(into.rstrip("/") + ".key.json", "w") as f:
        json.dump(key, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--checkpoints", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--binary", default="target/release/git-agent-context")
    ap.add_argument("--rewrite-paths", action="store_true")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--judged", help="links judged by hand (JSON lines)")
    ap.add_argument("--to-judge", help="write the links left to judge to this folder")
    ap.add_argument("--controls", type=int, default=0, help="confirmed links to mix in")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    clone = os.path.join(args.work, "clone")
    home = os.path.join(args.work, "home")
    os.makedirs(home)
    env = dict(os.environ, HOME=home, GIT_CONFIG_NOSYSTEM="1")
    env.pop("GIT_DIR", None)
    subprocess.run(["git", "clone", "-q", args.repo, clone], check=True, env=env)
    subprocess.run([binary, "-C", clone, "init"], check=True, env=env, capture_output=True)

    checkpoint_sessions, transcripts = sessions_of_checkpoints(args.checkpoints)
    started = time.time()
    copies = os.path.join(args.work, "transcripts")
    paths, whole = [], {}
    for session, paths_of in sorted(transcripts.items()):
        path = whole[session] = assembled(paths_of, os.path.join(args.work, "assembled"))
        paths.append(rewritten(path, clone, copies) if args.rewrite_paths else path)
    command = [binary, "-C", clone, "extract"]
    for path in paths:
        command += ["--transcript", path]
    run = subprocess.run(command, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"extract failed: {run.stderr.strip()}")
    elapsed = time.time() - started

    truth = trailers(clone)
    signals = {}
    notes = noted_sessions(clone, signals)
    named = {
        commit: set().union(*(checkpoint_sessions.get(i, set()) for i in ids))
        for commit, ids in truth.items()
    }
    known = {c: {s for s, _ in named[c]} for c in named}
    judged = {c: {s for s, readable in named[c] if readable} for c in named}
    judged = {c: s for c, s in judged.items() if s}
    found = sum(1 for c, s in judged.items() if notes.get(c, set()) & s)
    links = [(c, s) for c, ss in notes.items() for s in ss]
    # A trailer whose checkpoint is not in the corpus names no session to judge by.
    on_trailers = [(c, s) for c, s in links if known.get(c)]
    right = sum(1 for c, s in on_trailers if s in known[c])
    figures = {
        "sessions": len(transcripts),
        "extract_seconds": round(elapsed, 1),
        "commits_with_trailer": len(truth),
        "commits_judged": len(judged),
        "commits_found": found,
        "recall": round(found / len(judged), 3) if judged else None,
        "links_on_trailer_commits": len(on_trailers),
        "links_right": right,
        "precision": round(right / len(on_trailers), 3) if on_trailers else None,
        "links_unjudged": len(links) - len(on_trailers),
        "paths": "rewritten" if args.rewrite_paths else "as recorded",
    }
    # Links to a commit the session's own `git commit` printed, whose trailer names another
    # session: the trailer is wrong there (docs/quality.md, "Linking").
    printed = {session: printed_commits(path) for session, path in whole.items()}
    made = lambda c, s: any(c.startswith(a) for a in printed.get(s, ()))
    printed_elsewhere = sum(1 for c, s in on_trailers if s not in known[c] and made(c, s))
    figures["links_printed_not_trailer"] = printed_elsewhere
    # Commits a session's `git commit` printed whose trailer names a checkpoint of the corpus,
    # and of them those whose trailer names none of the sessions that printed them.
    makers = {c: {s for s in printed if made(c, s)} for c in known if known[c]}
    makers = {c: s for c, s in makers.items() if s}
    figures["commits_printed_on_trailers"] = len(makers)
    figures["trailer_names_another"] = sum(1 for c, s in makers.items() if not s & known[c])
    figures["precision_printed_as_made"] = round(
        (right + printed_elsewhere) / len(on_trailers), 3
    )
    unconfirmed = [(c, s) for c, s in on_trailers if s not in known[c] and not made(c, s)]
    if args.judged:
        with open(args.judged) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        verdicts = {(j["commit"], j["session"]): j["labels"] for j in lines}
        judged_right = sum(
            1
            for link in unconfirmed
            if verdicts.get(link) and all(l in ("made", "part") for l in verdicts[link])
        )
        figures["links_left_to_judge"] = sum(1 for link in unconfirmed if link not in verdicts)
        figures["precision_judged"] = round(
            (right + printed_elsewhere + judged_right) / len(on_trailers), 3
        )
    if args.to_judge:
        done = set(verdicts) if args.judged else set()
        # Sorted, so that the same links give the same draw and order.
        confirmed = sorted((c, s) for c, s in on_trailers if s in known[c])
        controls = random.Random(args.controls).sample(confirmed, min(args.controls, len(confirmed)))
        pairs = sorted((c, s, "disputed") for c, s in unconfirmed if (c, s) not in done)
        write_pairs(clone, whole, pairs + [(c, s, "control") for c, s in controls], args.to_judge)
    by_signal = collections.defaultdict(lambda: [0, 0])
    for c, s in on_trailers:
        tally = by_signal[signals.get((c, s), "unknown")]
        tally[0] += s in known[c]
        tally[1] += 1
    for signal, (good, all_) in sorted(by_signal.items()):
        figures[f"precision_{signal}"] = f"{good}/{all_}"
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            print(f"{k:26} {v}")


if __name__ == "__main__":
    main()
