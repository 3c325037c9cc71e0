#!/usr/bin/env python3
"""Run time of the code adc generates for gradbench/evals against GradBench's
hand-written C++ tool `manual`.

usage: gradbench/ab/manual.py [OPTIONS] ADC_BINARY [EVAL ...]

For each eval (default: gmm kmeans ode lse llsq det ba ht lstm), builds the
adc side as ab.py does (gradbench/evals/EVAL.ad compiled by a copy of
ADC_BINARY, linked with this directory's driver EVAL.c, `cc -O2`) and the
manual side from GradBench's sources (--gradbench: a GradBench checkout, a
tree holding its tools/manual and cpp, or a git repository of it, from
whose HEAD those two directories are extracted into the build directory):
the driver manual/EVAL.cpp includes GradBench's tools/manual/EVAL.cpp (its
main renamed and unused; manual/json.hpp stands in for nlohmann's JSON
library) and is compiled with the flags of GradBench's cpp/common.mk
(`-std=c++17 -O3 -Wall -march=native`, single-threaded: no OpenMP;
`--manual-flag` adds one, such as `-mprefer-vector-width=128` for vectors no
wider than the 128-bit ones Cranelift's x86-64 backend emits). Both
drivers build the same inputs (inputs.h) and time their functions the same
way (bench.h). Each executable runs once untimed to compare adc's outputs
with manual's, then in rounds, adc then manual for each eval in each round,
under `nice -n 5`. Prints a markdown table of each side's least time over
the rounds and adc/manual, the geometric means per eval and kind of function
(primal, derivative), and the comparison of the outputs.

With --plain, a third side `plain` runs in the same rounds: the plain ports
in gradbench/evals/plain compiled by the same adc copy and linked with the
same drivers; the table adds its time, plain/manual and plain/adc, and its
outputs are compared with the tuned ports' (ab.py's check, --plain-tol).
"""
import argparse, array, io, math, os, re, shutil, subprocess, sys, tarfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True   # (no __pycache__ in the repository)
import ab  # noqa: E402  (the builds, runs and checks both scripts share)

EVALS = ab.EVALS
SIDES = ("adc", "manual")
PLAIN_DIR = os.path.join(HERE, "..", "evals", "plain")
MIRROR = "/work/.mirror/gradbench+gradbench/repo"

# The derivatives; every other function is a primal one.
DERIVATIVES = {"gmm_jacobian", "cost_gradient", "dir", "ode_gradient", "lse_gradient", "llsq_gradient",
               "det_gradient", "ba_jacobian", "ht_jacobian", "lstm_jacobian"}

# Functions whose manual code follows another algorithm than adc's program
# (marked † in the table): their ratio is not like-for-like.
UNLIKE = {
    "dir": "kmeans `dir`: manual's is a closed form, each centroid minus the mean of its cluster's points (one "
           "pass over the points); adc's is forward over reverse mode, the cost's gradient and its tangent "
           "along all ones (the Hessian's diagonal), divided. Same values.",
    "ode_gradient": "ode `gradient`: manual's is a closed form of the exact solution's last element, "
                    "prod_i x_i 2^n / n! differentiated (O(n)); adc's is reverse mode through the s Runge-Kutta "
                    "steps (O(n s)). The values differ by the Runge-Kutta error (checked loosely, see below).",
    "det_gradient": "det `gradient`: manual's computes each of the ell^2 cofactors as an (ell-1) x (ell-1) "
                    "determinant by expansion by minors (ell * ell! work); adc's is reverse mode through one "
                    "expansion (a constant times ell!).",
    "lstm_jacobian": "lstm `jacobian`: manual's carries the state's Jacobian in the parameters forward along the "
                     "sequence (forward accumulation exploiting the elementwise gates); adc's is reverse mode.",
    "ht_jacobian": "ht `jacobian`: manual's is derived by hand for GradBench's hand (bone 0 the wrist, bones "
                   "4f+1..4f+4 finger f with the unposed one at the finger's base, bone 21 the forearm; never "
                   "mirrored). In the synthetic hand of inputs.h the unposed bone of each finger is its tip, "
                   "below posed ones, and the complicated variant is mirrored. Manual gives the fingertip bones "
                   "no finger derivatives and does not mirror the finger derivatives, so its finger columns are "
                   "wrong in the rows of points on vertices skinned to a fingertip, and in the complicated "
                   "variant's rows wherever they are not zero; it also does less work than a right Jacobian "
                   "would take. Only the comparable outputs are checked (manual/ht.cpp, dump_comparable). "
                   "adc's is one forward sweep per column.",
    "ht_objective": "ht `objective`: GradBench's reference skins every vertex with every bone (dense 4x4 by "
                    "4x544 products, zero weights included); adc's program poses only the vertices the points "
                    "use and skips zero weights.",
}

# Relative tolerance of ode's gradient: the Runge-Kutta error, which grows
# with n (about 3e-10 at n = 10, 7e-5 at n = 100).
ODE_GRADIENT_TOL = 1e-3


def gradbench_tree(path, build_dir):
    """The directory holding GradBench's tools/manual and cpp, extracted from
    `path` if it is a git repository; and how to describe it."""
    path = os.path.abspath(path)
    if os.path.isfile(os.path.join(path, "tools", "manual", "Makefile")) and \
            os.path.isdir(os.path.join(path, "cpp", "gradbench")):
        return path, f"`{path}`"
    git = path
    if not os.path.exists(os.path.join(git, "HEAD")) and os.path.exists(os.path.join(git, "repo", "HEAD")):
        git = os.path.join(git, "repo")
    p = subprocess.run(["git", "-C", git, "rev-parse", "HEAD"], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"--gradbench {path}: neither a tree with tools/manual and cpp nor a git repository "
                         f"({p.stderr.strip()})")
    commit = p.stdout.strip()
    dest = os.path.join(build_dir, "gradbench")
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    p = subprocess.run(["git", "-C", git, "archive", commit, "tools/manual", "cpp"], capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"git archive failed: {p.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(p.stdout)) as t:
        if hasattr(tarfile, "data_filter"):
            t.extractall(dest, filter="data")
        else:
            t.extractall(dest)
    return dest, f"`{git}` at {commit[:12]} (tools/manual and cpp extracted to `{dest}`)"


def gradbench_flags(gb):
    """GradBench's flags for `manual` (cpp/common.mk: CXXFLAGS, LDFLAGS; NATIVE=yes
    adds -march=native; MULTITHREADED=no, -Wno-unknown-pragmas), without its
    -I../../cpp; and warnings if the files do not look as expected."""
    cxxflags = "-std=c++17 -O3 -Wall".split()
    ldflags = ["-lm"]
    warnings = []
    try:
        mk = open(os.path.join(gb, "cpp", "common.mk")).read()
        m = re.search(r"^CXXFLAGS\?=(.*)$", mk, re.M)
        if m:
            cxxflags = [f for f in m.group(1).split() if not f.startswith("-I")]
        else:
            warnings.append("cpp/common.mk sets no CXXFLAGS?=: using -std=c++17 -O3 -Wall")
        m = re.search(r"^LDFLAGS\?=(.*)$", mk, re.M)
        if m:
            ldflags = m.group(1).split()
        if re.search(r"^NATIVE=yes", mk, re.M):
            cxxflags.append("-march=native")
        else:
            warnings.append("cpp/common.mk does not set NATIVE=yes: compiling without -march=native")
        cxxflags.append("-Wno-unknown-pragmas")   # its MULTITHREADED=no branch
        tool = open(os.path.join(gb, "tools", "manual", "Makefile")).read()
        if re.search(r"FLAGS", tool):
            warnings.append("tools/manual/Makefile sets flags of its own, which are not used here")
    except OSError as e:
        warnings.append(f"cannot read GradBench's build files ({e}): using the flags of cpp/common.mk as of 2026")
        cxxflags = "-std=c++17 -O3 -Wall -march=native -Wno-unknown-pragmas".split()
    return cxxflags, ldflags, warnings


def build_manual(ev, gb, root, cxx, cxxflags, ldflags):
    """Compile manual/EVAL.cpp against GradBench's sources; the executable, or
    None and the error."""
    d = os.path.join(root, "manual", ev)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    exe = os.path.join(d, ev)
    includes = ["-I", os.path.join(HERE, "manual"), "-I", gb, "-I", os.path.join(gb, "cpp")]
    # As GradBench's rule: $(CXX) -o $@ $^ $(LDFLAGS) $(CXXFLAGS).
    cmd = [cxx, "-o", exe, os.path.join(HERE, "manual", ev + ".cpp")] + ldflags + cxxflags + includes
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(d, "build.log"), "w") as log:
        log.write("$ " + " ".join(cmd) + "\n" + p.stdout + p.stderr)
    if p.returncode != 0:
        errors = [l for l in p.stderr.splitlines() if "error" in l] or p.stderr.splitlines()
        return None, f"{cxx} failed (exit {p.returncode}): {' / '.join(errors[:3])[:300]}"
    return exe, None


def load(path):
    try:
        return array.array("d", open(path, "rb").read()), None
    except OSError as e:
        return None, f"no outputs ({e.strerror}: {e.filename})"


def worst(xa, xb):
    """The largest relative difference |a - b| / max(|a|, |b|) of two
    sequences, and where."""
    w, at = 0.0, -1
    for i, (x, y) in enumerate(zip(xa, xb)):
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        d = abs(x - y)
        rel = d / max(abs(x), abs(y)) if d == d else math.inf
        if rel > w or at < 0:
            w, at = rel, i
    return w, at


def check(ev, label, dumps, tol):
    """Compares adc's and manual's outputs of one function: (status, text)
    with status "same" (bit-identical), "ok" (within tol), "info" (compared
    in part or loosely, as expected), "differ", or "none" (manual has no
    such function)."""
    fn = label.split("[")[0]
    xa, err = load(os.path.join(dumps["adc"], label + ".bin"))
    if err:
        return "differ", f"adc: {err}"
    if not os.path.exists(os.path.join(dumps["manual"], label + ".bin")):
        return "none", "manual has no such function"
    xm, err = load(os.path.join(dumps["manual"], label + ".bin"))
    if err:
        return "differ", f"manual: {err}"
    if len(xa) != len(xm):
        return "differ", f"{len(xa)} vs {len(xm)} outputs"
    if xa == xm:
        return "same", "bit-identical"
    mask, _ = load(os.path.join(dumps["manual"], label + ".comparable.bin"))
    if mask is not None:
        # The manual driver says which outputs are comparable (ht: its
        # Jacobian's finger columns, in part).
        if len(mask) != len(xa):
            return "differ", f"{len(mask)} comparable flags for {len(xa)} outputs"
        keep = [i for i, m in enumerate(mask) if m]
        w, at = worst([xa[i] for i in keep], [xm[i] for i in keep])
        rest = [i for i, m in enumerate(mask) if not m]
        over = sum(1 for i in rest if abs(xa[i] - xm[i]) > tol * max(abs(xa[i]), abs(xm[i])))
        text = (f"{len(keep)} of {len(xa)} outputs comparable, worst relative difference {w:.2g}; "
                f"of the other {len(rest)}, {over} differ by more than {tol:g}")
        return ("info" if w <= tol else "differ"), text
    t = ODE_GRADIENT_TOL if fn == "ode_gradient" else tol
    w, at = worst(xa, xm)
    if w <= t:
        if t != tol:
            return "info", f"worst relative difference {w:.2g} (the Runge-Kutta error; tolerance {t:g})"
        return "ok", w
    over = sum(1 for x, y in zip(xa, xm) if abs(x - y) > t * max(abs(x), abs(y)))
    return "differ", (f"{over} of {len(xa)} outputs differ by more than {t:g} relative; worst: output {at}, "
                      f"adc {xa[at]!r} vs manual {xm[at]!r} (relative {w:.3g})")


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("adc", metavar="ADC_BINARY")
    ap.add_argument("evals", metavar="EVAL", nargs="*", help=f"default: {' '.join(EVALS)}")
    ap.add_argument("--gradbench", default=os.environ.get("GRADBENCH", MIRROR if os.path.exists(MIRROR) else None),
                    help="GradBench: a checkout, a tree with its tools/manual and cpp, or a git repository "
                         f"(its HEAD; default $GRADBENCH or {MIRROR})")
    ab.add_timing_options(ap, "manual")
    ap.add_argument("--tol", type=float, default=1e-6,
                    help="relative tolerance of adc's vs manual's outputs, elementwise (default 1e-6)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"), help="C compiler of the adc drivers")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"), help="C++ compiler of manual (default g++)")
    ap.add_argument("--manual-flag", action="append", default=[], metavar="FLAG",
                    help="a flag added to GradBench's for manual (repeatable), e.g. "
                         "--manual-flag=-mprefer-vector-width=128 for vectors as wide as adc's")
    ap.add_argument("--plain", action="store_true",
                    help="also time the plain ports (gradbench/evals/plain) in the same rounds")
    ap.add_argument("--plain-tol", type=float, default=1e-9,
                    help="relative tolerance of the plain ports' outputs vs the tuned ones' (default 1e-9)")
    ap.add_argument("--plain-dir", default=PLAIN_DIR, metavar="DIR",
                    help="where the plain side's EVAL.ad are (default gradbench/evals/plain), e.g. a "
                         "variant of one port")
    o = ap.parse_intermixed_args()
    sides = ("adc", "plain", "manual") if o.plain else SIDES
    evals = o.evals or EVALS
    for ev in evals:
        if ev not in EVALS:
            ap.error(f"unknown eval {ev!r} (known: {' '.join(EVALS)})")
    if not o.gradbench:
        ap.error("--gradbench is needed (no $GRADBENCH, no mirror)")
    adc = os.path.abspath(o.adc)
    if not os.access(adc, os.X_OK):
        ap.error(f"{adc} is not an executable")
    start = time.time()
    copy, described = ab.copy_compiler(adc, o.build_dir, "adc")
    gb, gb_described = gradbench_tree(o.gradbench, o.build_dir)
    cxxflags, ldflags, problems = gradbench_flags(gb)
    cxxflags += o.manual_flag
    problems = [f"GradBench's build files: {w}" for w in problems]

    exes = {}
    for ev in evals:
        exe, err = ab.build("adc", copy, ev, o.build_dir, o.cc, adc_flags=o.adc_flag)
        if err:
            problems.append(f"{ev}: adc: {err}")
        else:
            exes[ev, "adc"] = exe
        if o.plain:
            exe, err = ab.build("plain", copy, ev, o.build_dir, o.cc, os.path.abspath(o.plain_dir), o.adc_flag)
            if err:
                problems.append(f"{ev}: plain: {err}")
            else:
                exes[ev, "plain"] = exe
        exe, err = build_manual(ev, gb, o.build_dir, o.cxx, cxxflags, ldflags)
        if err:
            problems.append(f"{ev}: manual: {err}")
        else:
            exes[ev, "manual"] = exe
    built = time.time()

    dumps = ab.dump_outputs(evals, sides, exes, o, problems)
    checked = time.time()

    results, labels = ab.timed_rounds(evals, sides, exes, o, problems)

    print(f"adc: {described}{' with ' + ' '.join(o.adc_flag) if o.adc_flag else ''}  ")
    print(f"manual: GradBench {gb_described}; `{o.cxx} {' '.join(cxxflags)} ... {' '.join(ldflags)}`  ")
    if o.plain:
        print(f"plain: the same adc on `{o.plain_dir if o.plain_dir != PLAIN_DIR else 'gradbench/evals/plain'}`  ")
    print(ab.method(o, sides))
    print()
    if o.plain:
        print("| eval | function | adc ms | plain ms | manual ms | adc/manual | plain/manual | plain/adc |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
    else:
        print("| eval | function | adc ms | manual ms | adc/manual |")
        print("|---|---|---:|---:|---:|")
    ratios = {}          # (ev, kind, "adc" | "plain" | "plain/adc") -> [(ratio, like-for-like)]
    plain_counts = {"same": 0, "ok": 0, "differ": 0}
    rounds = ab.Rounds(results)
    notes, checks, agree = rounds.notes, [], []
    counts = {}
    for ev in evals:
        for label in labels.get(ev, []):
            fn = label.split("[")[0]
            kind = "derivative" if fn in DERIVATIVES else "primal"
            _, best, flag = rounds.function(ev, label, sides)
            if (ev, "adc") in dumps and (ev, "manual") in dumps:
                status, text = check(ev, label, {s: dumps[ev, s] for s in SIDES}, o.tol)
                counts[status] = counts.get(status, 0) + 1
                if status == "differ":
                    flag = " ⚠"
                    notes.append(f"{ev} {label}: adc's and manual's outputs differ: {text}")
                elif status == "info":
                    checks.append(f"{ev} {label}: {text}")
                elif status == "ok":
                    agree.append((text, f"{ev} {label}"))
            if (ev, "adc") in dumps and (ev, "plain") in dumps:
                same, why = ab.compare(*(os.path.join(dumps[ev, s], label + ".bin") for s in ("plain", "adc")),
                                       o.plain_tol)
                plain_counts["same" if same else "differ" if why else "ok"] += 1
                if why:
                    flag = " ⚠"
                    notes.append(f"{ev} {label}: the plain port's and the tuned one's outputs differ: {why}")
            like = fn not in UNLIKE
            mark = "" if like or best["manual"] is None else " †"
            cells = [ab.fmt_ms(best[s]) if best[s] is not None else "—" for s in sides]

            def ratio_cell(num, den, key):
                if not (best[num] and best[den]):
                    return "—"
                ratio = best[num] / best[den]
                ratios.setdefault((ev, kind, key), []).append((ratio, like))
                return f"{ratio:.3f}" if ratio < 10 else f"{ratio:.1f}" if ratio < 1000 else f"{ratio:.0f}"
            keys = [("adc", "manual", "adc")] + ([("plain", "manual", "plain"), ("plain", "adc", "plain/adc")]
                                                 if o.plain else [])
            rs = [ratio_cell(*k) for k in keys]
            rs[0] += mark
            if o.plain:
                rs[1] += mark
            print(f"| {ev} | {label} | {' | '.join(cells)} | {' | '.join(rs)}{flag} |")
    print()
    print("† manual follows another algorithm (see below): the ratio is not like-for-like.")
    print()
    print("Geometric mean of adc/manual" + (", plain/manual and plain/adc:" if o.plain else ":"))
    print()
    cols = [(k, w) for w in (["adc", "plain", "plain/adc"] if o.plain else ["adc"]) for k in ("primal", "derivative")]
    head = {"adc": "", "plain": "plain ", "plain/adc": "plain/adc "}
    print("| eval | " + " | ".join(head[w] + k for k, w in cols) + " |")
    print("|---|" + "---:|" * len(cols))

    def cell(rs):
        g = geomean([r for r, _ in rs])
        return "—" if g is None else f"{g:.3f} ({len(rs)})"
    for ev in evals:
        if any((ev, k, w) in ratios for k, w in cols):
            print(f"| {ev} | " + " | ".join(cell(ratios.get((ev, k, w), [])) for k, w in cols) + " |")
    every = {(k, w): [x for (e, kk, ww), xs in ratios.items() if (kk, ww) == (k, w) for x in xs] for k, w in cols}
    print("| all | " + " | ".join(cell(every[c]) for c in cols) + " |")
    print("| all, like-for-like only | " + " | ".join(cell([x for x in every[c] if x[1]]) for c in cols) + " |")
    print()
    print("(In parentheses: the number of functions.)  ")
    rounds.print_noise(o.wall)
    print(f"outputs of adc vs manual ({o.tol:g} relative, elementwise): {counts.get('same', 0)} functions "
          f"bit-identical, {counts.get('ok', 0)} within tolerance, {counts.get('info', 0)} compared in part or "
          f"loosely as expected, {counts.get('differ', 0)} differ, {counts.get('none', 0)} without a manual "
          f"counterpart  ")
    if o.plain:
        print(f"outputs of plain vs adc ({o.plain_tol:g} relative, elementwise): {plain_counts['same']} functions "
              f"bit-identical, {plain_counts['ok']} within tolerance, {plain_counts['differ']} differ  ")
    ab.print_times(start, built, checked)
    shown = [fn for fn in UNLIKE if any(l.split("[")[0] == fn for ev in evals for l in labels.get(ev, []))]
    if shown:
        print()
        print("Not like-for-like:")
        print()
        for fn in shown:
            print(f"- {UNLIKE[fn]}")
    if checks or agree:
        print()
        print("Output checks:")
        print()
        if agree:
            w, where = max(agree)
            print(f"- within tolerance: worst relative difference {w:.2g} ({where})")
        for c in checks:
            print(f"- {c}")
    if problems or notes:
        print()
        for p in problems + notes:
            print(f"- ⚠ {p}")
    return 1 if any(not p.startswith("GradBench's build files") for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
