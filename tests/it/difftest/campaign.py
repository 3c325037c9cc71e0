#!/usr/bin/env python3
"""Long difftest campaign, keyed by the compiler it runs on, that survives
programs which crash or hang the process (a segfault in generated code
cannot be caught in-process) and resumes where it stopped.

usage: campaign.py TEST_BINARY START COUNT SECONDS [OUT_DIR]

Runs `TEST_BINARY --ignored difftest::campaign` (TEST_BINARY: the root
package's `it` test binary, built with `cargo test --release --locked --test
it --no-run`) on seeds START..START+COUNT for at most SECONDS.

Results go to OUT_DIR/compiler-KEY/, where KEY hashes the compiler's source:
every file git lists (tracked or untracked, not ignored) under crates/ and
tests/it/difftest/, Cargo.toml, Cargo.lock and `rustc -V`. The test binary
must be newer than every one of those files (else: refused, rebuild), so the
seeds recorded under a key all ran on that source. Each finished seed is one
line of a results-*.tsv log there (seed, outcome, second order, finite
differences compared and skipped, interpreter oracle, vector-mode width,
float program, element program, with a static loop, with a swept loop); a rerun with the same
arguments on the same compiler skips the seeds already there, and one on a
changed compiler starts afresh in its own directory.

When the process dies, the seeds that were in flight are rerun one by one
(`show_seed`); those that crash or hang are written as crash-seed<N>.ad /
hang-seed<N>.ad, logged and skipped, and the campaign resumes.

At the end, prints the counts of the range on this compiler (and of every
range run on it, when there are others). `ADC_CAMPAIGN_ROOT` overrides the
repository root (default: three levels above this file).
"""
import collections, glob, hashlib, os, subprocess, sys, time

# Files whose contents make the compiler that a campaign tests.
KEYED = ["crates", "tests/it/difftest", "Cargo.toml", "Cargo.lock"]


def compiler_key(root):
    """(key, newest mtime and its file, description) of the source at `root`."""
    files = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                            "--", *KEYED], capture_output=True, check=True).stdout.split(b"\0")
    h = hashlib.sha256()
    newest = (0.0, None)
    for rel in sorted(set(f.decode() for f in files if f)):
        path = os.path.join(root, rel)
        if not os.path.isfile(path):  # deleted but still in git's index
            continue
        h.update(rel.encode() + b"\0" + open(path, "rb").read() + b"\0")
        newest = max(newest, (os.path.getmtime(path), rel))
    rustc = subprocess.run(["rustc", "-V"], cwd=root, capture_output=True, text=True).stdout.strip()
    h.update(rustc.encode())
    head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--", *KEYED],
                           capture_output=True, text=True).stdout.strip()
    desc = f"commit {head or '?'}{' with uncommitted changes' if dirty else ''}, {rustc}"
    return h.hexdigest()[:16], newest, desc


def read_results(d):
    """seed -> (outcome, second order, fd compared, fd skipped, interpreter, width 1, float, element, static
    element loop, swept element loop) of every log in `d` (a line of a log written before the later columns
    existed counts as none of them)."""
    seen = {}
    for f in glob.glob(f"{d}/results-*.tsv"):
        for line in open(f):
            parts = line.rstrip("\n").split("\t")
            # (A line without its newline was cut by a kill: not a result.)
            if line.endswith("\n") and len(parts) >= 2 and parts[0].isdigit():
                nums = [int(p) if p.isdigit() else 0 for p in parts[2:11]]
                nums += [0] * (9 - len(nums))
                nums[4] = int(nums[4] == 1)  # the width: 1 or not
                seen[int(parts[0])] = (parts[1], *nums)
    return seen


def summary(results, title):
    counts = collections.Counter(r[0] for r in results.values())
    passed = counts.pop("pass", 0)
    lines = [f"{title}: {len(results)} programs, {passed} passed, {len(results) - passed} failed",
             f"  second-order programs {sum(r[1] for r in results.values())}, "
             f"finite-difference comparisons {sum(r[2] for r in results.values())} "
             f"(skipped {sum(r[3] for r in results.values())}), "
             f"interpreter at every stage {sum(r[4] for r in results.values())}",
             f"  vector width 1 programs {sum(r[5] for r in results.values())}, "
             f"float programs {sum(r[6] for r in results.values())}",
             f"  element programs {sum(r[7] for r in results.values())} "
             f"(with a static loop {sum(r[8] for r in results.values())}, "
             f"with a swept loop {sum(r[9] for r in results.values())})"]
    lines += [f"  {v:7d}  {k}" for k, v in counts.most_common()]
    return "\n".join(lines)


def main():
    binary, start, count, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    out = sys.argv[5] if len(sys.argv) > 5 else "/work/difftest-findings"
    root = os.environ.get("ADC_CAMPAIGN_ROOT") or os.path.dirname(os.path.abspath(__file__)) + "/../../.."
    key, (mtime, newest), desc = compiler_key(root)
    if os.path.getmtime(binary) < mtime:
        sys.exit(f"refused: {binary} is older than {newest}; rebuild it "
                 f"(cargo test --release --locked --test it --no-run) so that it is the compiler of key {key}")
    d = f"{out}/compiler-{key}"
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(f"{d}/compiler.txt"):
        with open(f"{d}/compiler.txt", "w") as fh:
            fh.write(f"key {key}\n{desc}\nfirst run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print(f"compiler {key} ({desc}), results in {d}", file=sys.stderr)
    run(binary, start, start + count, time.time() + secs, d)
    results = read_results(d)
    in_range = {k: v for k, v in results.items() if start <= k < start + count}
    print(f"compiler {key} ({open(f'{d}/compiler.txt').readlines()[1].strip()})")
    print(summary(in_range, f"seeds {start}..{start + count}"))
    if len(results) > len(in_range):
        print(summary(results, "every range run on this compiler"))


def run(binary, start, end, deadline, d):
    # Seconds before a program counts as hung (also read by the test binary).
    hang_secs = int(os.environ.get("ADC_DIFFTEST_HANG_SECS", "60"))
    deaths = {}  # seed -> times it was in flight when the process died
    s = start
    while s < end and time.time() < deadline:
        done = read_results(d)
        while s < end and s in done:
            s += 1
        if s >= end:
            break
        if s > start:
            print(f"resuming at seed {s}", file=sys.stderr)
        for f in glob.glob(f"{d}/inflight-{s}-*.txt"):
            os.remove(f)
        # The test binary allocates with mimalloc: keeping the memory it frees
        # (no purge) saves the kernel's zeroing of fresh pages, 6% of the CPU.
        env = dict({"MIMALLOC_PURGE_DELAY": "-1"}, **os.environ)
        # Seeds after `s` already done (a few: the threads finish out of order).
        skip = sorted(k for k in done if s < k < end)
        env.update(ADC_DIFFTEST_START=str(s), ADC_DIFFTEST_SEEDS=str(end - s),
                   ADC_DIFFTEST_OUT=d, ADC_DIFFTEST_SKIP=",".join(map(str, skip)))
        try:
            rc = subprocess.run([binary, "--ignored", "--exact", "difftest::campaign", "--nocapture"], env=env,
                                timeout=max(1, deadline - time.time())).returncode
        except subprocess.TimeoutExpired:
            break
        if rc == 0:
            break
        done = read_results(d)
        inflight = []
        for f in glob.glob(f"{d}/inflight-{s}-*.txt"):
            n = int(open(f).read().strip() or -1)
            if n >= 0 and n not in done:
                inflight.append(n)
        if not inflight:
            print(f"campaign exited {rc} with nothing in flight; stopping", file=sys.stderr)
            break
        for n in sorted(inflight):
            record_death(binary, n, d, hang_secs, deaths)
        s = min(inflight)


def record_death(binary, n, d, hang_secs, deaths):
    """Reruns seed `n`, in flight when the process died, alone; logs it as a crash or hang if it is one."""
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
        return
    calls = [l for l in trace.splitlines() if l.startswith("call ")]
    last = calls[-1] if calls else "(during compilation)"
    src = subprocess.run([binary, "--ignored", "--exact", "difftest::show_seed", "--nocapture"],
                         env=dict(os.environ, ADC_DIFFTEST_SEED=str(n), ADC_DIFFTEST_PRINT_ONLY="1"),
                         capture_output=True, text=True).stdout
    src = "\n".join(l for l in src.splitlines() if not l.startswith(("running ", "test ")) and l.strip() != "")
    kind = "hang" if what.startswith("hang") else "crash"
    with open(f"{d}/{kind}-seed{n}.ad", "w") as fh:
        fh.write(f"// difftest finding: {what}, seed {n} (not shrunk)\n// last call: {last[:2000]}\n{src}\n")
    with open(f"{d}/results-crashes.tsv", "a") as fh:
        # Second order on every third seed, as `oracle::second_order`; a
        # float program on every fifth, as `gen::generate` (width unknown: 0).
        fh.write(f"{n}\t{kind}\t{int(n % 3 == 0)}\t0\t0\t0\t0\t{int(n % 5 == 3)}\n")


if __name__ == "__main__":
    main()
