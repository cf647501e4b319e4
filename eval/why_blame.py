#!/usr/bin/env python3
"""`why` against `git blame`, on a clone with notes (docs/quality.md, "Linking").

    eval/why_blame.py --clone <repository with notes> [--files 20] [--fast] \
        [--binary target/release/git-agent-context]

Takes the files at HEAD that the most annotated commits changed, and for each line compares the
commit `why --json` names with the one `git blame --porcelain` names, over the lines either of
them gives to a commit whose note holds reasoning (what `why` shows). Prints the agreement per
file and in all.
"""

import argparse
import collections
import json
import os
import subprocess

NOTES = "refs/notes/agent-context"


def git(repo, *args):
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True, text=True
    ).stdout


# Event kinds that are not reasoning: a commit whose note holds only these has nothing for
# `why` to show.
NOT_REASONS = {"read", "write", "search", "tool_call", "session"}


def annotated(repo):
    """The commits whose notes hold reasoning."""
    out = set()
    for line in git(repo, "notes", "--ref", NOTES, "list").splitlines():
        blob, commit = line.split()
        for event in git(repo, "cat-file", "blob", blob).splitlines():
            try:
                kind = json.loads(event)["kind"]
            except (ValueError, KeyError):
                continue
            if kind not in NOT_REASONS:
                out.add(commit)
                break
    return out


def busiest(repo, noted, count):
    tracked = set(git(repo, "ls-files").splitlines())
    changes = collections.Counter()
    for commit in noted:
        try:
            names = git(repo, "show", "--format=", "--name-only", "--first-parent", commit)
        except subprocess.CalledProcessError:
            continue
        for path in names.split():
            if path in tracked:
                changes[path] += 1
    return [path for path, _ in changes.most_common(count)]


def by_blame(repo, path):
    owners = {}
    for line in git(repo, "blame", "--porcelain", path).splitlines():
        fields = line.split(" ")
        if len(fields) >= 3 and len(fields[0]) == 40 and fields[2].isdigit():
            owners[int(fields[2])] = fields[0]
    return owners


def by_why(repo, binary, path, flags=()):
    out = subprocess.run(
        [binary, "-C", repo, "why", path, "--json", *flags], capture_output=True, text=True
    )
    if out.returncode != 0:
        return {}
    owners = {}
    for commit in json.loads(out.stdout)["commits"]:
        for r in commit["lines"]:
            for n in range(r["start"], r["end"] + 1):
                owners[n] = commit["commit"]
    return owners


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clone", required=True)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--binary", default="target/release/git-agent-context")
    ap.add_argument("--fast", action="store_true", help="why by the index alone (`why --fast`)")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    noted = annotated(args.clone)
    same = total = 0
    for path in busiest(args.clone, noted, args.files):
        blame = {n: c for n, c in by_blame(args.clone, path).items() if c in noted}
        why = by_why(args.clone, binary, path, ["--fast"] if args.fast else [])
        lines = set(blame) | set(why)
        agree = sum(1 for n in lines if blame.get(n) == why.get(n))
        same += agree
        total += len(lines)
        print(f"{path}: {agree}/{len(lines)}")
    if total:
        print(f"in all: {same}/{total} lines agree ({100 * same / total:.1f}%)")


if __name__ == "__main__":
    main()
