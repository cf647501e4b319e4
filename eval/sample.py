#!/usr/bin/env python3
"""Draw the items of the labelled reasoning set from a corpus of real Claude Code sessions.

Run by hand, not in CI (see eval/README.md):

    python3 eval/sample.py --corpus <checkpoints checkout> --bin target/release/git-agent-context \
        --out <scratch folder> [--transcripts 72] [--per-transcript 8] [--not-stored 2] \
        [--seed 17] [--skip <labelled set>] [--half tune|test|...]

The corpus is a checkout of entireio/cli's branch `entire/checkpoints/v1`, whose sessions lie at
`<xx>/<id>/<n>/full.jsonl` beside a `metadata.json` with `created_at`. The transcripts are taken
evenly spread over time; each is extracted by the binary into a fresh repository, and from it are
drawn the sentences the extractor stores as reasoning (decision, rejection, trade-off, finding) and as many
assistant sentences (thinking or text) it does not store (at least `--not-stored` of them). The items are shuffled and written
without saying which is which, so that whoever labels them is blind to the extractor's choice:

- `items.jsonl`: id, text, the paragraph it stands in, the paragraphs before and after, origin
  (thinking, text), form (prose, item: a bullet or numbered line, heading: a heading or checklist
  box), source, half (tune or test, by transcript, alternating in time);
- `stored.jsonl`: id → the kind the extractor gave it, or none (kept away from the labellers).
"""

import argparse
import glob
import json
import os
import random
import re
import subprocess
import tempfile

REASONING = ("decision", "rejection", "tradeoff", "discovery")


def strip_marker(line):
    """The form of a Markdown line (prose, item or heading) and its text without the marker."""
    heading = line.lstrip("#")
    if len(heading) != len(line) and heading.startswith(" "):
        return "heading", heading.strip()
    for marker in ("- [ ] ", "- [x] ", "- [X] ", "* [ ] ", "* [x] "):
        if line.startswith(marker):
            return "heading", line[len(marker):].lstrip()
    for marker in ("- ", "* ", "+ ", "> "):
        if line.startswith(marker):
            return "item", line[len(marker):].lstrip()
    m = re.match(r"^(\d{1,3})[.)] ", line)
    if m:
        return "item", line[m.end():].lstrip()
    return "prose", line


def paragraphs_of(text):
    """Prose paragraphs of Markdown text: code fences and tables dropped, each bullet alone; the
    form of each (prose, item, heading) is in the `forms` attribute of the list."""
    out, current, fence = Paragraphs(), [], False

    def flush(form="prose"):
        if " ".join(current).strip():
            out.append(" ".join(current).strip())
            out.forms.append(form)
        current.clear()

    for line in text.splitlines():
        t = line.strip()
        if t.startswith("```") or t.startswith("~~~"):
            fence = not fence
            flush()
            continue
        if fence or (line.startswith("    ") and not current) or t.startswith("|"):
            continue
        if not t:
            flush()
            continue
        form, content = strip_marker(t)
        if form != "prose":
            flush()
        current.append(content.replace("**", "").replace("__", ""))
        if form != "prose":
            flush(form)
    flush()
    return out


class Paragraphs(list):
    def __init__(self):
        super().__init__()
        self.forms = []


SENTENCE_END = re.compile(r"""(?<=[.!?:])[.!?)"']*\s+(?=[A-Z`"'(*])""")
ABBREVIATION = re.compile(r"(?:^|\s)(?:e\.g|i\.e|etc|vs|cf)$", re.I)


def sentences_of(paragraph):
    out, start = [], 0
    for m in SENTENCE_END.finditer(paragraph):
        head = paragraph[start:m.start()]
        if ABBREVIATION.search(head.rstrip(".!?:")):
            continue
        out.append(paragraph[start:m.end()].strip())
        start = m.end()
    out.append(paragraph[start:].strip())
    return [s for s in out if sum(c.isalpha() for c in s) >= 3]


def anonymise(s):
    s = re.sub(r"/(Users|home)/[^/\s`'\"]+", r"/\1/<user>", s)
    s = re.sub(r"[\w.+-]+@[\w-]+\.[\w.]+", "<email>", s)
    return s


def assistant_blocks(path):
    """(origin, text) of each assistant thinking or text block, in order."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("type") != "assistant" or entry.get("isSidechain"):
                continue
            content = (entry.get("message") or {}).get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "thinking" and block.get("thinking"):
                    yield "thinking", block["thinking"]
                elif block.get("type") == "text" and block.get("text"):
                    yield "text", block["text"]


def stored_events(binary, transcript):
    with tempfile.TemporaryDirectory() as repo:
        subprocess.run(["git", "init", "-q", repo], check=True)
        subprocess.run(
            [binary, "extract", "--transcript", transcript],
            cwd=repo, check=True, capture_output=True,
        )
        events = []
        for f in glob.glob(os.path.join(repo, ".git/agent-context/pending/*.jsonl")):
            with open(f) as lines:
                events.extend(json.loads(l) for l in lines if l.strip())
        return events


def full_sentence(summary, paragraphs):
    """The sentence a (possibly cut) summary was taken from, with its paragraph index."""
    # A summary may be cut at its end, and told from its choice ("…instead I'll use…").
    head = summary.strip("…").strip()
    for i, p in enumerate(paragraphs):
        for s in sentences_of(p):
            if s.startswith(head) or head.startswith(s) or (summary.startswith("…") and head in s):
                return s, i
    return None, None


def near(paragraphs, i):
    cut = lambda s: s if len(s) <= 400 else s[:400] + "…"
    return (
        cut(paragraphs[i - 1]) if i > 0 else "",
        cut(paragraphs[i + 1]) if i + 1 < len(paragraphs) else "",
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--transcripts", type=int, default=72)
    ap.add_argument("--per-transcript", type=int, default=8)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--skip", help="a labelled set whose transcripts are not drawn again")
    ap.add_argument("--half", help="put every item in this half instead of alternating")
    ap.add_argument("--not-stored", type=int, default=2,
                    help="at least this many sentences not stored, per transcript")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    binary = os.path.abspath(args.bin)

    dated = []
    for t in glob.glob(os.path.join(args.corpus, "*/*/*/full.jsonl")):
        try:
            with open(os.path.join(os.path.dirname(t), "metadata.json")) as f:
                dated.append((json.load(f).get("created_at", ""), t))
        except (OSError, ValueError):
            continue
    if args.skip:
        with open(args.skip) as f:
            used = {json.loads(l)["source"] for l in f if l.strip()}
        dated = [(d, t) for d, t in dated if os.path.relpath(t, args.corpus) not in used]
    dated.sort()
    step = len(dated) / args.transcripts
    chosen = [dated[int(i * step)][1] for i in range(args.transcripts)]

    items, stored_of = [], {}
    for n, transcript in enumerate(chosen):
        half = args.half or ("tune" if n % 2 == 0 else "test")
        source = os.path.relpath(transcript, args.corpus)
        blocks = list(assistant_blocks(transcript))
        by_origin = {}
        for origin, text in blocks:
            by_origin.setdefault(origin, []).append(paragraphs_of(text))
        events = [e for e in stored_events(binary, transcript) if e["kind"] in REASONING]
        rng.shuffle(events)
        taken, seen = [], set()
        for e in events:
            if len(taken) >= args.per_transcript:
                break
            for paragraphs in by_origin.get(e["origin"], []):
                s, i = full_sentence(e["summary"], paragraphs)
                if s and s not in seen:
                    seen.add(s)
                    taken.append((e["kind"], e["origin"], s, paragraphs, i))
                    break
        candidates = []
        for origin, text in blocks:
            paragraphs = paragraphs_of(text)
            for i, p in enumerate(paragraphs):
                for s in sentences_of(p):
                    if s not in seen and len(s) <= 600:
                        candidates.append(("none", origin, s, paragraphs, i))
        rng.shuffle(candidates)
        want = max(len(taken), args.not_stored)
        for c in candidates:
            if want == 0:
                break
            if c[2] not in seen:
                seen.add(c[2])
                taken.append(c)
                want -= 1
        for kind, origin, s, paragraphs, i in taken:
            before, after = near(paragraphs, i)
            item = {
                "text": anonymise(s),
                "paragraph": anonymise(paragraphs[i]),
                "before": anonymise(before),
                "after": anonymise(after),
                "origin": origin,
                "form": paragraphs.forms[i],
                "source": source,
                "half": half,
            }
            items.append(item)
            stored_of[len(items) - 1] = kind

    order = list(range(len(items)))
    rng.shuffle(order)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "items.jsonl"), "w") as f, open(
        os.path.join(args.out, "stored.jsonl"), "w"
    ) as g:
        for new_id, old in enumerate(order, 1):
            f.write(json.dumps({"id": new_id, **items[old]}, ensure_ascii=False) + "\n")
            g.write(json.dumps({"id": new_id, "stored": stored_of[old]}) + "\n")
    kept = sum(1 for k in stored_of.values() if k != "none")
    print(f"{len(items)} items from {len(chosen)} transcripts: {kept} stored as reasoning, "
          f"{len(items) - kept} not")


if __name__ == "__main__":
    main()
