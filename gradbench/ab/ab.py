#!/usr/bin/env python3
"""A/B run time of the code two adc builds generate for gradbench/evals.

usage: gradbench/ab/ab.py [OPTIONS] A_BINARY B_BINARY [EVAL ...]

For each eval (default: gmm kmeans ode lse llsq det ba ht lstm), compiles
gradbench/evals/EVAL.ad (or --a-evals/--b-evals DIR's EVAL.ad, such as
the plain ports in gradbench/evals/plain) with each compiler (a copy of it taken at the
start, BUILD/{A,B}/adc; `adc compile ... --emit-header`) and links it with
this directory's driver EVAL.c (same C compiler and flags for both sides)
into BUILD/A/EVAL/EVAL and BUILD/B/EVAL/EVAL. Runs every executable once
untimed to compare A's and B's outputs elementwise, then in rounds, A then
B for each eval in each round, under `nice -n 5`: each driver times every
function it covers (the least time of one call, over calls repeated until
0.2 s or 20 calls; bench.h says which clock) and prints a checksum of its
outputs. Prints a markdown table of each side's least time over the rounds
and B/A, and flags (⚠) functions whose A and B outputs differ by more than --tol
relative (elementwise: |a - b| / max(|a|, |b|)), whose outputs are not
finite, or whose outputs vary between rounds of one side.
"""
import argparse, array, hashlib, math, os, shutil, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
EVALS_DIR = os.path.join(HERE, "..", "evals")
EVALS = ["gmm", "kmeans", "ode", "lse", "llsq", "det", "ba", "ht", "lstm"]
SIDES = ("A", "B")


def describe(path, copy):
    h = hashlib.sha256(open(copy, "rb").read()).hexdigest()[:12]
    mtime = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(copy)))
    return f"`{path}` (sha256 {h}, modified {mtime})"


def build(side, adc, ev, root, cc, evals_dir=EVALS_DIR, adc_flags=()):
    """Compile EVAL (evals_dir/EVAL.ad) with `adc` (and `adc_flags`, such as
    --fp-contract) and link its driver; the executable, or None and the error."""
    d = os.path.join(root, side, ev)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    obj, hdr, exe = (os.path.join(d, ev + s) for s in (".o", ".h", ""))
    steps = [
        [adc, "compile", *adc_flags, os.path.join(evals_dir, ev + ".ad"), "-o", obj, "--emit-header", hdr],
        [cc, "-O2", "-std=c99", "-I", d, "-I", HERE, os.path.join(HERE, ev + ".c"), obj, "-lm",
         "-o", exe],
    ]
    for cmd in steps:
        p = subprocess.run(cmd, capture_output=True, text=True)
        with open(os.path.join(d, "build.log"), "a") as log:
            log.write("$ " + " ".join(cmd) + "\n" + p.stdout + p.stderr)
        if p.returncode != 0:
            what = "adc compile" if cmd[0] == adc else "cc"
            return None, f"{what} failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[:300]}"
    return exe, None


def run(exe, args, nice, timeout, dump=None):
    """{label: (seconds, reps, weighted, abs, nonfinite, count)}, or an error.
    With dump (a directory), the driver writes its outputs there."""
    cmd = (["nice", "-n", str(nice)] if nice else []) + [exe] + args
    env = dict(os.environ, AB_DUMP_DIR=dump or "")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    out = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == "RESULT":
            out[f[1]] = (float(f[2]), int(f[3]), float(f[4]), float(f[5]), int(f[6]), int(f[7]),
                         int(f[10]) if len(f) > 10 else -1)
    if p.returncode != 0:
        return out, f"exit {p.returncode}: {p.stderr.strip()[:300]}"
    return out, None


def compare(fa, fb, tol):
    """Compares two dumps of outputs elementwise: (identical, why they
    differ by more than tol relative, or None)."""
    try:
        ba, bb = open(fa, "rb").read(), open(fb, "rb").read()
    except OSError as e:
        return False, f"no outputs to compare ({e.strerror}: {e.filename})"
    if ba == bb:
        return True, None
    xa, xb = array.array("d", ba), array.array("d", bb)
    if len(xa) != len(xb):
        return False, f"{len(xa)} vs {len(xb)} outputs"
    worst, at, over = 0.0, -1, 0
    for i, (x, y) in enumerate(zip(xa, xb)):
        if x == y:
            continue
        if math.isnan(x) and math.isnan(y):
            continue
        d = abs(x - y)
        rel = d / max(abs(x), abs(y)) if d == d else math.inf
        if rel > tol:
            over += 1
        if rel > worst or at < 0:
            worst, at = rel, i
    if over == 0:
        return False, None
    return False, (f"{over} of {len(xa)} outputs differ by more than {tol:g} relative; worst: "
                   f"output {at}, {xa[at]!r} vs {xb[at]!r} (relative {worst:.3g})")


def differ(a, b, tol):
    """None if the checksums a and b agree, else why not."""
    if a[5] != b[5]:
        return f"{a[5]} vs {b[5]} outputs"
    if a[4] != b[4]:
        return f"{a[4]} vs {b[4]} non-finite outputs"
    scale = max(a[3], b[3])
    rel = max(abs(a[2] - b[2]), abs(a[3] - b[3])) / scale if scale > 0 else (0.0 if a[2] == b[2] else math.inf)
    return f"relative difference {rel:.3g}" if rel > tol else None


def dump_outputs(evals, sides, exes, o, problems):
    """One untimed call of every executable, writing its outputs under
    `o.build_dir/SIDE/EVAL/out`. Returns {(ev, side): that directory}."""
    dumps = {}
    for ev in evals:
        for side in sides:
            if (ev, side) not in exes:
                continue
            d = os.path.join(o.build_dir, side, ev, "out")
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            _, err = run(exes[ev, side], ["0", "1", "0"], o.nice, o.timeout, dump=d)
            if err:
                problems.append(f"{ev}: {side} output check run: {err}")
            dumps[ev, side] = d
    return dumps


def timed_rounds(evals, sides, exes, o, problems):
    """Runs every eval's executables in turn, `o.rounds` times. Returns
    ({(ev, side): [{label: tuple} per round]}, {ev: labels in the drivers'
    order}); failures go to `problems`."""
    args = [repr(o.min_seconds), str(o.min_reps), "1" if o.both else "0", "1" if o.wall else "0"]
    results, labels = {}, {}
    for r in range(o.rounds):
        for ev in evals:
            for side in sides:
                if (ev, side) not in exes:
                    continue
                out, err = run(exes[ev, side], args, o.nice, o.timeout)
                if err:
                    problems.append(f"{ev}: {side} round {r + 1}: {err}")
                if out is not None:
                    results.setdefault((ev, side), []).append(out)
                    for label in out:
                        if label not in labels.setdefault(ev, []):
                            labels[ev].append(label)
    return results, labels


def fmt_ms(s):
    ms = s * 1e3
    return f"{ms:.1f}" if ms >= 100 else f"{ms:.3f}" if ms >= 1 else f"{ms:.4g}"


def copy_compiler(path, build_dir, side):
    """Copies the compiler at `path` to BUILD_DIR/SIDE/adc, so that one
    rebuilt during the run does not mix two builds on one side (and the hash
    printed is the one used). Returns the copy and its description."""
    os.makedirs(os.path.join(build_dir, side), exist_ok=True)
    copy = os.path.join(build_dir, side, "adc")
    if not (os.path.exists(copy) and os.path.samefile(path, copy)):
        shutil.copy2(path, copy)
    return copy, describe(path, copy)


def add_timing_options(ap, name):
    """The options of the timed runs (ab.py's and manual.py's), and
    --build-dir: /tmp/adc-NAME-HASH by default."""
    ap.add_argument("--rounds", type=int, default=3, help="runs of each side per eval (default 3)")
    ap.add_argument("--min-seconds", type=float, default=0.2,
                    help="stop repeating a call after this much time (default 0.2)")
    ap.add_argument("--min-reps", type=int, default=20, help="... or this many calls (default 20)")
    ap.add_argument("--both", action="store_true",
                    help="repeat until both --min-seconds and --min-reps are reached")
    ap.add_argument("--wall", action="store_true",
                    help="least wall-clock time of all calls, instead of that of the clean calls (bench.h)")
    ap.add_argument("--nice", type=int, default=5, help="niceness of the timed runs (default 5)")
    ap.add_argument("--adc-flag", action="append", default=[], metavar="FLAG",
                    help="a flag of `adc compile` for every adc side (repeatable), e.g. --adc-flag=--fp-contract")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per driver run")
    # One build directory per checkout: two worktrees measuring at once
    # must not overwrite each other's compiler copy.
    here = hashlib.sha1(HERE.encode()).hexdigest()[:8]
    ap.add_argument("--build-dir", default=f"/tmp/adc-{name}-{here}",
                    help=f"where builds go (default /tmp/adc-{name}-HASH, HASH of this checkout's path)")


def method(o, sides):
    """The line saying how the rounds were timed."""
    rule = "and" if o.both else "or"
    clock = "wall-clock" if o.wall else "clean-call"
    return (f"{o.rounds} rounds per side, alternating {', '.join(sides)}; `nice -n {o.nice}`; {clock} ms per "
            f"call: the least over calls repeated until {o.min_seconds} s {rule} {o.min_reps} calls, and over "
            f"rounds")


class Rounds:
    """What the timed rounds show of each function beyond its times: notes
    of outputs that vary between rounds or are not finite, each side's
    slowest / fastest round, the runs without a clean call."""

    def __init__(self, results):
        self.results = results
        self.notes, self.spreads = [], []
        self.timings = self.unclean = 0

    def function(self, ev, label, sides):
        """({side: [tuple per round]}, {side: least time or None}, " ⚠" if
        a side's outputs vary between rounds or are not finite, else "")."""
        per = {s: [x[label] for x in self.results.get((ev, s), []) if label in x] for s in sides}
        best = {s: min((x[0] for x in per[s]), default=None) for s in sides}
        flag = ""
        for s in sides:
            self.timings += len(per[s])
            self.unclean += sum(x[6] == 0 for x in per[s])
            for x in per[s][1:]:
                why = differ(per[s][0], x, 0.0)
                if why:
                    self.notes.append(f"{ev} {label}: {s}'s outputs vary between rounds ({why})")
                    flag = " ⚠"
                    break
            if per[s] and per[s][0][4]:
                self.notes.append(f"{ev} {label}: {s} gives {per[s][0][4]} non-finite outputs")
                flag = " ⚠"
            if len(per[s]) > 1 and min(x[0] for x in per[s]) > 0:  # (a call too short to time reads 0)
                self.spreads.append(max(x[0] for x in per[s]) / min(x[0] for x in per[s]))
        return per, best, flag

    def print_noise(self, wall):
        if self.spreads:
            print(f"noise: slowest / fastest round of one side, median {statistics.median(self.spreads):.3f}, "
                  f"max {max(self.spreads):.3f}  ")
        if not wall:
            print(f"runs without a clean call (CPU time used instead of wall-clock): "
                  f"{self.unclean} of {self.timings}  ")


def print_times(start, built, checked):
    print(f"time: build {built - start:.0f} s, output check {checked - built:.0f} s, "
          f"timed runs {time.time() - checked:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", metavar="A_BINARY")
    ap.add_argument("b", metavar="B_BINARY")
    ap.add_argument("evals", metavar="EVAL", nargs="*", help=f"default: {' '.join(EVALS)}")
    add_timing_options(ap, "ab")
    ap.add_argument("--tol", type=float, default=1e-9, help="relative tolerance of A vs B outputs")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--a-evals", metavar="DIR", default=EVALS_DIR,
                    help="where A's EVAL.ad are (default gradbench/evals; gradbench/evals/plain: the plain ports)")
    ap.add_argument("--b-evals", metavar="DIR", default=EVALS_DIR, help="where B's EVAL.ad are")
    o = ap.parse_args()
    evals = o.evals or EVALS
    for ev in evals:
        if ev not in EVALS:
            ap.error(f"unknown eval {ev!r} (known: {' '.join(EVALS)})")
    compilers = {"A": os.path.abspath(o.a), "B": os.path.abspath(o.b)}
    for side, path in compilers.items():
        if not os.access(path, os.X_OK):
            ap.error(f"{side}: {path} is not an executable")
    start = time.time()
    described = {}
    for side in SIDES:
        compilers[side], described[side] = copy_compiler(compilers[side], o.build_dir, side)

    exes, problems = {}, []
    for ev in evals:
        for side in SIDES:
            exe, err = build(side, compilers[side], ev, o.build_dir, o.cc,
                             os.path.abspath(o.a_evals if side == "A" else o.b_evals), o.adc_flag)
            if err:
                problems.append(f"{ev}: {side}: {err}")
            else:
                exes[ev, side] = exe
    built = time.time()

    # One untimed call of everything, writing the outputs, to compare A and
    # B elementwise.
    dumps = dump_outputs(evals, SIDES, exes, o, problems)
    checked = time.time()

    results, labels = timed_rounds(evals, SIDES, exes, o, problems)

    for side, d in (("A", o.a_evals), ("B", o.b_evals)):
        where = "" if os.path.samefile(d, EVALS_DIR) else f" on `{os.path.relpath(d)}`"
        print(f"{side}: {described[side]}{where}  ")
    print(method(o, SIDES))
    print()
    print("| eval | function | A ms | B ms | B/A |")
    print("|---|---|---:|---:|---:|")
    ratios = []
    rounds = Rounds(results)
    notes = rounds.notes
    identical = compared = flagged = 0
    for ev in evals:
        for label in labels.get(ev, []):
            _, best, flag = rounds.function(ev, label, SIDES)
            if (ev, "A") in dumps and (ev, "B") in dumps:
                same, why = compare(*(os.path.join(dumps[ev, s], label + ".bin") for s in SIDES), o.tol)
                identical += same
                compared += 1
                flagged += why is not None
                if why:
                    notes.append(f"{ev} {label}: A and B outputs differ: {why}")
                    flag = " ⚠"
            a = fmt_ms(best["A"]) if best["A"] is not None else "—"
            b = fmt_ms(best["B"]) if best["B"] is not None else "—"
            if best["A"] and best["B"]:
                ratio = best["B"] / best["A"]
                ratios.append(ratio)
                ratio_s = f"{ratio:.3f}"
            else:
                ratio_s = "—"
            print(f"| {ev} | {label} | {a} | {b} | {ratio_s}{flag} |")
    print()
    if ratios:
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"geometric mean of B/A over {len(ratios)} functions: {g:.3f}  ")
    rounds.print_noise(o.wall)
    print(f"outputs of A and B: {identical} of {compared} functions bit-identical, "
          f"{compared - identical - flagged} within {o.tol:g} relative elementwise, {flagged} differ  ")
    print_times(start, built, checked)
    if problems or notes:
        print()
        for p in problems + notes:
            print(f"- ⚠ {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
