#!/usr/bin/env python3
"""Line-level reducer for difftest findings (also for crashes and hangs,
which the in-process shrinker cannot see).

usage: reduce.py FILE.ad OUT.ad 'SHELL COMMAND using {}' 'EXPECTED TEXT' [TIMEOUT]

Deletes lines, and blocks from a line ending in `{` to its matching `}`,
while the command's stdout+stderr (plus 'TIMEOUT' when it times out and
'EXIT <code>' for its exit code) still contains EXPECTED TEXT.
"""
import subprocess, sys

src, out, cmd, want = sys.argv[1:5]
limit = float(sys.argv[5]) if len(sys.argv) > 5 else 10


def fails(lines):
    with open("/tmp/reduce-cand.ad", "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        r = subprocess.run(cmd.replace("{}", "/tmp/reduce-cand.ad"), shell=True, capture_output=True,
                           text=True, timeout=limit)
        text = r.stdout + r.stderr + f"\nEXIT {r.returncode}\n"
    except subprocess.TimeoutExpired:
        text = "TIMEOUT"
    return want in text


lines = [l for l in open(src).read().splitlines() if not l.startswith("//") and l.strip()]
assert fails(lines), "the input does not fail"


def end_of(lines, i):
    depth = 0
    for j in range(i, len(lines)):
        depth += lines[j].count("{") - lines[j].count("}")
        if depth == 0:
            return j
    return i


changed = True
while changed:
    changed = False
    i = 0
    while i < len(lines):
        j = end_of(lines, i) if lines[i].rstrip().endswith("{") else i
        for cand in ([lines[:i] + lines[j + 1:]] +
                     ([lines[:i] + lines[i + 1:j] + lines[j + 1:]] if j > i and lines[j].strip() == "}" else [])):
            if fails(cand):
                lines = cand
                changed = True
                break
        else:
            i += 1
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
