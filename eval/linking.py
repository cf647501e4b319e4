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
"""

import argparse
import collections
import glob
import json
import os
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--checkpoints", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--binary", default="target/release/git-agent-context")
    ap.add_argument("--rewrite-paths", action="store_true")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
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
