#!/usr/bin/env python3
"""Draw stored reasoning at random and score it once judged: the share of what the memory holds
that is reasoning a developer would want.

Run by hand, not in CI (see docs/quality.md):

    python3 eval/stored.py draw --clone <clone whose notes hold extracted sessions> \\
        --out <judging folder> [--count 100] [--seed 20261127]
    # the judges label <judging folder>/items.jsonl into <judging folder>/judged.jsonl
    # (eval/RUBRIC.md, applied to each note whole): {"n": 1, "label": "real"|"partly"|"noise"}
    python3 eval/stored.py score --out <judging folder>

`draw` reads every note of `refs/notes/agent-context` in the clone (`eval/linking.py` makes such
a clone of the whole corpus) and picks `--count` of its decisions, rejections, trade-offs and
findings at random. Each item shows what a hook shows: the kind, the summary, the rationale (cut
at 500 characters), the files and the prompt that led to it; not its origin or the session. The
key (`key.json`) keeps each item's event id, kind and origin for `score`, which prints the labels'
shares, all together and by kind: `real` is the strict precision.
"""

import argparse
import collections
import json
import os
import random
import subprocess

KINDS = {"decision": "decided", "rejection": "rejected", "tradeoff": "trade-off", "discovery": "found"}


def events(clone):
    """Every event of every note in `clone`, by id."""
    listed = subprocess.run(
        ["git", "-C", clone, "notes", "--ref=agent-context", "list"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    blobs = listed[0::2]
    out = subprocess.run(
        ["git", "-C", clone, "cat-file", "--batch"],
        input=("\n".join(blobs) + "\n").encode(), capture_output=True, check=True,
    ).stdout
    found, at = {}, 0
    while at < len(out):
        end = out.index(b"\n", at)
        size = int(out[at:end].split()[2])
        note = out[end + 1:end + 1 + size].decode("utf-8", "replace")
        at = end + 1 + size + 1
        for line in note.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and "id" in event:
                found[event["id"]] = event
    return found


def draw(args):
    reasoning = sorted(
        (e for e in events(args.clone).values() if e.get("kind") in KINDS),
        key=lambda e: e["id"],
    )
    rng = random.Random(args.seed)
    chosen = rng.sample(reasoning, min(args.count, len(reasoning)))
    os.makedirs(args.out, exist_ok=True)
    key = []
    with open(os.path.join(args.out, "items.jsonl"), "w") as items:
        for n, e in enumerate(chosen, 1):
            items.write(json.dumps({
                "n": n,
                "kind": KINDS[e["kind"]],
                "summary": e["summary"],
                "rationale": (e.get("rationale") or "")[:500],
                "files": (e.get("files_affected") or [])[:3],
                "prompt": (e.get("prompt_context") or "")[:200],
            }) + "\n")
            key.append({"n": n, "id": e["id"], "kind": e["kind"], "origin": e.get("origin")})
    with open(os.path.join(args.out, "key.json"), "w") as f:
        json.dump({"stored": len(reasoning), "items": key}, f)
    print(f"{len(chosen)} of {len(reasoning)} stored reasoning events drawn into {args.out}")


def score(args):
    with open(os.path.join(args.out, "key.json")) as f:
        key = json.load(f)
    labels = {}
    with open(os.path.join(args.out, "judged.jsonl")) as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                labels[d["n"]] = d["label"]
    groups = collections.defaultdict(collections.Counter)
    for item in key["items"]:
        label = labels.get(item["n"])
        if label:
            groups["all"][label] += 1
            groups[item["kind"]][label] += 1
    print(f"stored reasoning events: {key['stored']}; judged: {sum(groups['all'].values())}")
    for name in ["all", *KINDS]:
        c = groups.get(name)
        if not c:
            continue
        n = sum(c.values())
        shares = ", ".join(f"{l} {c[l]} ({c[l] / n:.0%})" for l in ("real", "partly", "noise"))
        print(f"{name:10} {n:4}  {shares}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("draw")
    d.add_argument("--clone", required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--count", type=int, default=100)
    d.add_argument("--seed", type=int, default=20261127)
    s = sub.add_parser("score")
    s.add_argument("--out", required=True)
    args = parser.parse_args()
    draw(args) if args.command == "draw" else score(args)


if __name__ == "__main__":
    main()
