#!/usr/bin/env python3
"""Long difftest campaign that survives programs which crash or hang the
process (a segfault in generated code cannot be caught in-process).

usage: campaign.py TEST_BINARY START COUNT SECONDS [OUT_DIR]

Runs `TEST_BINARY --ignored difftest::campaign` (TEST_BINARY: the root
package's `it` test binary, built with `cargo test --release --test it
--no-run`) on seeds START..START+COUNT; when the
process dies, the seeds that were in flight are rerun one by one
(`show_seed`), those that crash or hang are written to OUT_DIR as
crash-seed<N>.ad / hang-seed<N>.ad and skipped, and the campaign resumes.
At the end, prints the counts over all results-*.tsv logs of this range.
Rerun with the same arguments to resume an interrupted campaign: it starts
at the first seed of the range with no result in OUT_DIR.
"""
import glob, os, subprocess, sys, time, collections

binary, start, count, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
out = sys.argv[5] if len(sys.argv) > 5 else "/work/difftest-findings"
os.makedirs(out, exist_ok=True)
end, deadline = start + count, time.time() + secs
# Seconds before a program counts as hung (also read by the test binary).
hang_secs = int(os.environ.get("ADC_DIFFTEST_HANG_SECS", "60"))
skip, crashes = [], []
deaths = {}  # seed -> times it was in flight when the process died


def done_seeds():
    seen = {}
    for f in glob.glob(f"{out}/results-*.tsv"):
        for line in open(f):
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 2 and parts[0].isdigit():
                seen[int(parts[0])] = parts[1]
    return seen


already = done_seeds()
s = start
while s < end and s in already:
    s += 1
if s > start:
    print(f"resuming at seed {s}", file=sys.stderr)
while s < end and time.time() < deadline:
    for f in glob.glob(f"{out}/inflight-{s}-*.txt"):
        os.remove(f)
    # The test binary allocates with mimalloc: keeping the memory it frees
    # (no purge) saves the kernel's zeroing of fresh pages, 6% of the CPU.
    env = dict({"MIMALLOC_PURGE_DELAY": "-1"}, **os.environ)
    env.update(ADC_DIFFTEST_START=str(s), ADC_DIFFTEST_SEEDS=str(end - s),
               ADC_DIFFTEST_OUT=out, ADC_DIFFTEST_SKIP=",".join(map(str, skip)))
    try:
        rc = subprocess.run([binary, "--ignored", "--exact", "difftest::campaign", "--nocapture"], env=env,
                            timeout=max(1, deadline - time.time())).returncode
    except subprocess.TimeoutExpired:
        break
    if rc == 0:
        break
    seen = done_seeds()
    inflight = []
    for f in glob.glob(f"{out}/inflight-{s}-*.txt"):
        n = int(open(f).read().strip() or -1)
        if n >= 0 and n not in seen:
            inflight.append(n)
    if not inflight:
        print(f"campaign exited {rc} with nothing in flight; stopping", file=sys.stderr)
        break
    for n in sorted(inflight):
        env1 = dict(os.environ, ADC_DIFFTEST_SEED=str(n), ADC_DIFFTEST_TRACE="1")
        try:
            r = subprocess.run([binary, "--ignored", "--exact", "difftest::show_seed", "--nocapture"], env=env1,
                               timeout=hang_secs, capture_output=True, text=True)
            what = None if r.returncode == 0 else f"crash (exit {r.returncode})"
            trace = r.stderr
        except subprocess.TimeoutExpired as e:
            what = f"hang (over {hang_secs} s)"
            trace = (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        deaths[n] = deaths.get(n, 0) + 1
        if what is None and deaths[n] >= 2:
            # Passes alone but was in flight at two deaths (heap corruption
            # seen on two threads, e.g. "free(): invalid next size").
            what = "crash (only with another program running; not reproduced alone)"
        if what is None:
            continue
        calls = [l for l in trace.splitlines() if l.startswith("call ")]
        last = calls[-1] if calls else "(during compilation)"
        src = subprocess.run([binary, "--ignored", "--exact", "difftest::show_seed", "--nocapture"],
                             env=dict(os.environ, ADC_DIFFTEST_SEED=str(n), ADC_DIFFTEST_PRINT_ONLY="1"),
                             capture_output=True, text=True).stdout
        src = "\n".join(l for l in src.splitlines() if not l.startswith(("running ", "test ")) and l.strip() != "")
        kind = "hang" if what.startswith("hang") else "crash"
        with open(f"{out}/{kind}-seed{n}.ad", "w") as fh:
            fh.write(f"// difftest finding: {what}, seed {n} (not shrunk)\n// last call: {last[:2000]}\n{src}\n")
        with open(f"{out}/results-crashes.tsv", "a") as fh:
            fh.write(f"{n}\t{kind}\n")
        skip.append(n)
        crashes.append((n, what))
    s = min(inflight)

seen = {k: v for k, v in done_seeds().items() if start <= k < end}
counts = collections.Counter(v for v in seen.values())
print(f"seeds {start}..{end}: {len(seen)} programs run")
for k, v in counts.most_common():
    print(f"  {v:7d}  {k}")
