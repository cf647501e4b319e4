#!/usr/bin/env python3
"""Replay a corpus of real sessions in time order and ask, before each of many later tasks, what
reasoning bears on the task's first prompt: the relevance of what a prompt is given.

Run by hand, not in CI (see docs/quality.md):

    python3 eval/replay.py run --corpus <checkpoints checkout> --repo <clone of the project> \\
        --bin <a build> --out <run folder> [--tasks 40] [--skip 0]     # once per build
    python3 eval/replay.py pool --out <judging folder> --runs <run folder>...
    # the judges label <judging folder>/to-judge.jsonl into <judging folder>/judged.jsonl
    # (eval/RUBRIC.md, last part): {"task": n, "labels": {"<item n>": "relevant", ...}} a line
    python3 eval/replay.py score --out <judging folder> --runs <run folder>...

`run` clones the project afresh into `<out>/clone`, then walks the sessions in the order they
started (each session once, however many checkpoints it made; it starts with its transcript's
first line). Before each chosen task (one in every few sessions of the later 60%, whose first
prompt is a real request), it extracts every checkpoint made before the task's session started
(earlier sessions as they stood then; none of the task's own), and the sessions of the same
developer (their home folder) still running then as far as they had got, linked to the commits
of then — what the `Stop` hook of each of their turns stored — for this task only; it checks out
what the session found — the branch it started on (`gitBranch`) as it stood then, else the
default branch as it was then, with `origin/<default>` set back to that moment (its tip of the
time, along its first parents) — and starts a session there as Claude Code would: `hook
SessionStart` (the brief), then `hook UserPromptSubmit` with the task's first prompt. Then it
runs `query` with the files the task went on to change, to tell whether any reasoning was
recorded on them. It writes `tasks.jsonl`.

A branch's commits are those a pull request's merge brought into the default branch ("Merge
pull request #N from owner/<branch>"), those of the branches the remote still has, and those up
to a commit whose checkpoint (its `Entire-Checkpoint` trailer) was made on it; its state
when a session started is the latest of them authored before then that the default branch did
not have yet. Every session of the corpus is extracted into the one clone, so the sessions no
commit was found for wait as uncommitted work there, whoever ran them; a developer's own clone
holds only theirs, and the team's commits' notes (shared through the remote). So while a task
runs, the queues of the sessions of other developers are put aside, and the store is put back
as it was after it.

`pool` puts the items several runs gave each task (builds to compare, on the same tasks) into one
list per task, each once and shuffled: the judges see the prompt, the files and the items, not
which build gave which, their scores or why they were found. `score` prints, per run, the share
of its items of each label and the share of the tasks with recorded reasoning on their files that
were given at least one relevant item: for the prompt hook alone, and for the session's start
and its prompt together.
"""

import argparse
import contextlib
import datetime
import glob
import json
import os
import random
import re
import subprocess

def checkpoints(corpus):
    """Every checkpoint's transcript, oldest first: the session as it was when the checkpoint
    was made."""
    out = []
    for meta in glob.glob(os.path.join(corpus, "*/*/*/metadata.json")):
        folder = os.path.dirname(meta)
        transcript = os.path.join(folder, "full.jsonl")
        if not os.path.exists(transcript):
            continue
        with open(meta) as f:
            m = json.load(f)
        prompt = ""
        try:
            with open(os.path.join(folder, "prompt.txt"), errors="replace") as f:
                prompt = f.read().split("\n\n---\n\n")[0].strip()
        except OSError:
            pass
        out.append({
            "at": m.get("created_at", ""),
            "session": m.get("session_id") or transcript,
            "transcript": transcript,
            "source": os.path.relpath(transcript, corpus),
            "prompt": prompt,
            "files": m.get("files_touched") or [],
        })
    out.sort(key=lambda c: instant(c["at"]))
    return out


def instant(at):
    """An ISO 8601 time as seconds, whatever its offset ("Z", "+01:00", a fraction or none)."""
    try:
        return datetime.datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def first_value(transcript, key):
    """The first string `key` holds in the first 300 lines of `transcript`, or None."""
    with open(transcript, errors="replace") as f:
        for n, line in enumerate(f):
            if n > 300:
                break
            try:
                value = json.loads(line).get(key)
            except (ValueError, AttributeError):
                continue
            if isinstance(value, str) and value:
                return value
    return None


def started(transcript, fallback):
    """When a session started: the first timestamp of its transcript."""
    return first_value(transcript, "timestamp") or fallback


def sessions(all_checkpoints):
    """Each session once, in the order they started: its first checkpoint's first prompt, when
    its transcript starts, and every file its checkpoints touched."""
    by_session = {}
    for c in all_checkpoints:
        s = by_session.get(c["session"])
        if s is None:
            by_session[c["session"]] = dict(c, at=started(c["transcript"], c["at"]),
                                            files=list(c["files"]))
        else:
            s["files"].extend(f for f in c["files"] if f not in s["files"])
    return sorted(by_session.values(), key=lambda s: instant(s["at"]))


def branch_of(transcript):
    """The branch a session started on, as Claude Code wrote it beside each line (`gitBranch`)."""
    return first_value(transcript, "gitBranch")


def checkpoint_branches(corpus):
    """The branch each checkpoint was made on, by its id (its own `metadata.json`)."""
    named = {}
    for meta in glob.glob(os.path.join(corpus, "*/*/metadata.json")):
        with open(meta) as f:
            m = json.load(f)
        if m.get("checkpoint_id") and m.get("branch"):
            named[m["checkpoint_id"]] = m["branch"]
    return named


def branches(clone, default, named):
    """Each branch's own commits, as (author time, commit): those a pull request's merge into
    the default branch brought in ("Merge pull request #N from owner/<branch>"), those of the
    branches the remote still has, and those up to a commit whose `Entire-Checkpoint` trailer
    names a checkpoint made on the branch (`named`): a branch renamed before its pull request,
    or rebased, kept its commits of then only there."""
    own = {}
    log = git(clone, "log", "--merges", "--first-parent", f"origin/{default}",
              "--format=%P%x09%s")
    heads = []
    for line in log.splitlines():
        parents, _, subject = line.partition("\t")
        parents = parents.split()
        if len(parents) == 2 and " from " in subject:
            name = subject.split(" from ", 1)[1].split()[0].split("/", 1)[-1]
            heads.append((name, parents[1], parents[0]))
    for ref in git(clone, "for-each-ref", "--format=%(refname:lstrip=3)",
                   "refs/remotes/origin").splitlines():
        if ref not in (default, "HEAD"):
            heads.append((ref, f"origin/{ref}", f"origin/{default}"))
    trailers = git(clone, "log", "--all", "--format=%H %ct%x09%(trailers:key=Entire-Checkpoint,"
                   "valueonly,separator=%x20)")
    for line in trailers.splitlines():
        commit_at, _, ids = line.partition("\t")
        commit, at = commit_at.split()
        names = {named[i] for i in ids.split() if i in named} - {default, "HEAD"}
        # Its branch's commits when it was committed: those the default branch did not have.
        base = names and tip_then(clone, f"origin/{default}", at)
        heads.extend((name, commit, base) for name in names if base)
    for name, tip, base in heads:
        listed = git(clone, "log", "--format=%at %H", tip, f"^{base}")
        commits = own.setdefault(name, set())
        for line in listed.splitlines():
            at, commit = line.split()
            commits.add((int(at), commit))
    return own


def a_request(prompt):
    """A first prompt that asks for work, not a command, a one-word answer, pasted output or
    Claude Code's own marker ("[Request interrupted by user]")."""
    p = prompt.strip()
    return len(p) >= 40 and not p.startswith(("/", "<", "[")) and "\n\n" not in p[:200]


def tip_then(clone, ref, at):
    """The commit `ref` pointed at, at `at`: its newest commit of then along its first parents
    (empty when it has none)."""
    return git(clone, "rev-list", "-1", "--first-parent", f"--before={at}", ref)


def git(clone, *args):
    return subprocess.run(["git", "-C", clone, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def tool(binary, clone, *args):
    done = subprocess.run([binary, "-C", clone, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(args[:2])}: {done.stderr.strip()}")
    return done.stdout


def injected(binary, clone, event, session, **fields):
    """The items a hook (`UserPromptSubmit` with the prompt, `SessionStart` with its source)
    gives a new session: each entry of its answer (a line "- <kind>: ..." and the lines indented
    under it but its provenance)."""
    payload = {"session_id": session, "cwd": clone, "hook_event_name": event, **fields}
    done = subprocess.run([binary, "hook", event], cwd=clone, input=json.dumps(payload),
                          capture_output=True, text=True)
    out = done.stdout.strip()
    if not out:
        return []
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    items = []
    for line in context.splitlines():
        if line.startswith("- "):
            kind, _, summary = line[2:].partition(": ")
            items.append({"kind": kind, "summary": summary, "details": []})
        elif line.startswith("  [") and items:
            items[-1]["from"] = line.strip()
        elif line.startswith("  ") and items:
            items[-1]["details"].append(line.strip()[:300])
    return items


def home(transcript):
    """The developer's machine a session ran on, as its folder tells it: the home folder
    (`/Users/<name>`, `/home/<name>`, `C:\\Users\\<name>`), else the whole folder."""
    cwd = first_value(transcript, "cwd") or ""
    parts = cwd.replace("\\", "/").split("/")
    for at, part in enumerate(parts[:-1]):
        if part in ("Users", "home"):
            return "/".join(parts[: at + 2])
    return cwd


def running(stream, extracted, task, folder):
    """The sessions of the task's developer still running when the task starts, as far as they
    had got (what the `Stop` hook of each of their turns stored): each one's transcript up to
    its first line written after the task started, in `folder` (a session's file there only
    grows, as a live transcript does). Those with a checkpoint before then were extracted from
    it already; the rest of the session comes with its next checkpoint."""
    mine = home(task["transcript"])
    starts = instant(task["at"])
    seen = {first_value(task["transcript"], "sessionId")}
    for c in stream[extracted:]:
        session = first_value(c["transcript"], "sessionId") or c["session"]
        if session in seen:
            continue
        seen.add(session)
        if instant(started(c["transcript"], c["at"])) >= starts:
            continue
        if home(c["transcript"]) != mine:
            continue
        os.makedirs(folder, exist_ok=True)
        partial = os.path.join(folder, os.path.basename(session) + ".jsonl")
        with open(c["transcript"], errors="replace") as f, open(partial, "w") as out:
            for line in f:
                try:
                    at = json.loads(line).get("timestamp")
                except (ValueError, AttributeError):
                    at = None
                if isinstance(at, str) and instant(at) >= starts:
                    break
                out.write(line)
        yield partial


@contextlib.contextmanager
def as_of(clone, at):
    """The clone's branches, remote-tracking branches and tags as they stood at `at` (each at
    its newest commit of then along first parents, or gone), for the time of the block."""
    refs = git(clone, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads",
               "refs/remotes", "refs/tags").splitlines()
    then = []
    for line in refs:
        name, was = line.split()
        if name.endswith("/HEAD"):
            continue
        commit = tip_then(clone, was, at)
        then.append(f"update {name} {commit} {was}" if commit else f"delete {name} {was}")
    update_refs(clone, then)
    try:
        yield
    finally:
        update_refs(clone, [f"update {line}" for line in refs
                            if not line.split()[0].endswith("/HEAD")])


def update_refs(clone, commands):
    subprocess.run(["git", "-C", clone, "update-ref", "--no-deref", "--stdin"], check=True,
                   input="".join(c + "\n" for c in commands), text=True)


def given(binary, clone, s, session):
    """What a session starting on the task is given (the brief, then its first prompt's items),
    and whether reasoning is recorded on the files the task went on to change."""
    start = injected(binary, clone, "SessionStart", session, source="startup")
    items = injected(binary, clone, "UserPromptSubmit", session, prompt=s["prompt"])
    present = [f for f in s["files"] if os.path.exists(os.path.join(clone, f))]
    on_files = False
    if present:
        by_files = json.loads(tool(binary, clone, "query", s["prompt"][:2000], "--files",
                                   *present[:20], "--json"))
        on_files = any("file" in i["found_by"] for i in by_files["items"])
    return start, items, on_files


@contextlib.contextmanager
def store_kept(clone, others):
    """The store as it is now, put back after the block, without the events of `others`'
    sessions that wait for a commit: a developer's clone has the notes of the team's commits
    (shared through the remote), not what their sessions left uncommitted. What the sessions
    still running store in the block is the task's alone; each is extracted whole from its next
    checkpoint, as before."""
    kept = os.path.join(clone, ".git", "agent-context.kept")
    store = os.path.join(clone, ".git", "agent-context")
    refs = git(clone, "for-each-ref", "--format=%(refname) %(objectname)", "refs/notes",
               "refs/agent-context").splitlines()
    subprocess.run(["rm", "-rf", kept], check=True)
    subprocess.run(["cp", "-a", store, kept], check=True)
    for other in others:
        name = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in other)
        queue = os.path.join(store, "pending", (name or "unknown") + ".jsonl")
        if os.path.exists(queue):
            os.remove(queue)
    try:
        yield
    finally:
        subprocess.run(["rm", "-rf", store], check=True)
        os.rename(kept, store)
        now = git(clone, "for-each-ref", "--format=%(refname) %(objectname)", "refs/notes",
                  "refs/agent-context").splitlines()
        was = {line.split()[0] for line in refs}
        update_refs(clone, [f"update {line}" for line in refs]
                    + [f"delete {line}" for line in now if line.split()[0] not in was])


def checkout(clone, default, own, s):
    """The clone as the session found it: its branch as it stood when the session started (the
    latest of the branch's own commits authored before then that the default branch did not
    have yet, else the default branch), or the default branch as it was then."""
    name = branch_of(s["transcript"])
    # The remote's default branch as it was then: its tip of the time, along its first parents
    # (a merged branch's own commits were made before their merge, and were not on it yet).
    then = tip_then(clone, f"replay/{default}", s["at"])
    git(clone, "update-ref", f"refs/remotes/origin/{default}", then)
    if not name or name in (default, "HEAD"):
        git(clone, "checkout", "-q", "-B", default, then)
        return default, then
    merged = set(git(clone, "rev-list", then).split())
    before = [c for c in own.get(name, ()) if c[0] <= instant(s["at"]) and c[1] not in merged]
    commit = max(before)[1] if before else then
    git(clone, "checkout", "-q", "-B", name, commit)
    return name, commit


def run(args):
    binary = os.path.abspath(args.bin)
    # The hook is given the clone's folder as Claude Code gives it: absolute.
    clone = os.path.join(os.path.abspath(args.out), "clone")
    os.makedirs(args.out, exist_ok=True)
    subprocess.run(["rm", "-rf", clone], check=True)
    subprocess.run(["git", "clone", "-q", args.repo, clone], check=True)
    branch = git(clone, "rev-parse", "--abbrev-ref", "HEAD")
    own = branches(clone, branch, checkpoint_branches(args.corpus))
    # The default branch's final state, kept where linking finds every commit a session made
    # (as the developer's own branch had it then) while origin/<default> is set back per task.
    git(clone, "update-ref", f"refs/remotes/replay/{branch}", f"origin/{branch}")
    stream = checkpoints(args.corpus)
    all_sessions = sessions(stream)
    # Each session's machine, by the id its agent gave it (which names its queue file): older
    # checkpoints prefix it with its date ("2026-01-05-<uuid>").
    homes = {first_value(c["transcript"], "sessionId")
             or re.sub(r"^\d{4}-\d{2}-\d{2}-", "", c["session"]): home(c["transcript"])
             for c in all_sessions}
    later = all_sessions[int(len(all_sessions) * 0.4):]
    requests = [i for i, s in enumerate(later) if a_request(s["prompt"])]
    step = max(1, len(requests) // args.tasks)
    if args.skip and (args.skip % step == 0 or args.skip >= step):
        raise SystemExit(f"error: --skip must be between 1 and {step - 1} to draw other tasks "
                         f"(one request in {step} is drawn)")
    chosen = [later[i] for i in requests[args.skip::step][: args.tasks]]
    extracted = 0
    tasks = []
    for s in chosen:
        # Every checkpoint made before this session started is in the store: earlier
        # sessions as they were then. None of this session's is.
        while extracted < len(stream) and instant(stream[extracted]["at"]) < instant(s["at"]):
            tool(binary, clone, "extract", "--transcript", stream[extracted]["transcript"])
            extracted += 1
        on, commit = checkout(clone, branch, own, s)
        partials = list(running(stream, extracted, s, os.path.join(args.out, "running")))
        others = [o for o, h in homes.items() if h != home(s["transcript"])]
        with store_kept(clone, others):
            if partials:
                # Linked as they were then: to no commit made after the task started.
                with as_of(clone, s["at"]):
                    tool(binary, clone, "extract",
                         *[a for p in partials for a in ("--transcript", p)])
            start, items, on_files = given(binary, clone, s, f"replay-{len(tasks) + 1}")
        tasks.append({
            "task": len(tasks) + 1,
            "source": s["source"],
            "at": s["at"],
            "branch": on,
            "commit": commit,
            "prompt": s["prompt"][:800],
            "files": s["files"][:15],
            "reasoning_on_files": on_files,
            "start_items": start,
            "items": items,
        })
        print(f"task {len(tasks)}: {len(start)} items at start, {len(items)} at the prompt, "
              f"{extracted} checkpoints in, on {on}")
    with open(os.path.join(args.out, "tasks.jsonl"), "w") as f:
        for t in tasks:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")


def key(item):
    return item["kind"], item["summary"]


def pool(args):
    """One list of items per task from every run (each once, in an order that says nothing of
    which run gave it), for judges who do not know which runs there are."""
    pooled = {}
    for run_dir in args.runs:
        with open(os.path.join(run_dir, "tasks.jsonl")) as f:
            for t in map(json.loads, f):
                p = pooled.setdefault(t["task"], {"task": t["task"], "prompt": t["prompt"],
                                                  "files": t["files"], "items": {}})
                if p["prompt"] != t["prompt"]:
                    raise SystemExit(f"error: {run_dir}: task {t['task']} is another task")
                for item in t.get("start_items", []) + t["items"]:
                    # Where it comes from says nothing of its relevance.
                    item = {k: v for k, v in item.items() if k != "from"}
                    p["items"].setdefault(key(item), item)
    shuffle = random.Random(7).shuffle
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "to-judge.jsonl"), "w") as f:
        for n in sorted(pooled):
            t = pooled[n]
            items = list(t["items"].values())
            shuffle(items)
            t["items"] = [dict(item, n=i + 1) for i, item in enumerate(items)]
            f.write(json.dumps(t, ensure_ascii=False) + "\n")


def score(args):
    """Each run's items by the judges' labels of the pool."""
    labels = {}
    with open(os.path.join(args.out, "to-judge.jsonl")) as f:
        pooled = {t["task"]: t for t in map(json.loads, f)}
    with open(os.path.join(args.out, "judged.jsonl")) as f:
        for j in map(json.loads, f):
            if j["task"] not in pooled:
                raise SystemExit(f"error: judged.jsonl: task {j['task']} was not pooled")
            for item in pooled[j["task"]]["items"]:
                label = j["labels"].get(str(item["n"]))
                if label not in ("relevant", "narration", "unrelated"):
                    raise SystemExit(f"error: task {j['task']}: item {item['n']} has no label")
                labels[(j["task"], *key(item))] = label
    for run_dir in args.runs:
        with open(os.path.join(run_dir, "tasks.jsonl")) as f:
            tasks = list(map(json.loads, f))
        for t in tasks:
            unjudged = [i for i in t.get("start_items", []) + t["items"]
                        if (t["task"], *key(i)) not in labels]
            if unjudged:
                raise SystemExit(f"error: {run_dir}: task {t['task']}: {len(unjudged)} items "
                                 "were not judged (was this run pooled?)")
        print(f"{run_dir}: {len(tasks)} tasks")
        for view, given_of in (
                ("the prompt hook", lambda t: t["items"]),
                ("the session's start and its prompt",
                 lambda t: t.get("start_items", []) + t["items"])):
            shown(view, tasks, given_of, labels)


def shown(view, tasks, given_of, labels):
    """The share of each label among what `given_of` a task, and of the tasks with reasoning on
    their files given something relevant."""
    counts = {"relevant": 0, "narration": 0, "unrelated": 0}
    with_reasoning = helped = given = 0
    for t in tasks:
        given_labels = [labels[(t["task"], *key(item))] for item in given_of(t)]
        for label in given_labels:
            counts[label] += 1
        given += bool(given_labels)
        if t["reasoning_on_files"]:
            with_reasoning += 1
            helped += "relevant" in given_labels
    total = sum(counts.values())
    print(f"  {view}: {given} tasks given something, {total} items")
    for label, n in counts.items():
        print(f"    {label}: {n} ({n / max(1, total):.0%})")
    print(f"    tasks with reasoning recorded on their files: {with_reasoning}, "
          f"given a relevant item: {helped} ({helped / max(1, with_reasoning):.0%})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["run", "pool", "score"])
    ap.add_argument("--runs", nargs="+", default=[], help="the runs' folders (pool, score)")
    ap.add_argument("--corpus")
    ap.add_argument("--repo")
    ap.add_argument("--bin")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--skip", type=int, default=0,
                    help="start the choice this many requests in: another set of tasks")
    args = ap.parse_args()
    {"run": run, "pool": pool, "score": score}[args.what](args)


if __name__ == "__main__":
    main()
