#!/usr/bin/env python3
"""adc against GradBench's `manual` tool, side by side in one run.

usage: gradbench/report.py GRADBENCH_CHECKOUT [--plain] [EVAL ...] [-- EVAL_ARGS ...]

For each eval (default: every one adc implements), runs GradBench's own
harness (`target/release/gradbench run`, built in the checkout with
`cargo build --release -p gradbench`) with the eval's Python driver against
adc's tool (`target/release/adc-gradbench` of this repository) and against
`manual` (`python/gradbench/gradbench/cpp.py manual`, whose binaries need
`make -C tools/manual bin/EVAL` first), then prints, per function, the
geometric mean over the eval's inputs of adc's time over manual's (the
minimum of the `evaluate` timings of each input), and whether every
response of adc was valid. EVAL_ARGS go to every eval driver (for example
`--min-seconds 0.2`). With --plain, the tool `adc-plain` (`adc-gradbench
--plain`: the plain ports of gradbench/evals/plain) runs too, and its column
is adc-plain's time over manual's.
"""
import json, math, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ADC_TOOL = os.path.join(HERE, "..", "target", "release", "adc-gradbench")
EVALS = ["lse", "llsq", "det", "gmm", "ode", "kmeans", "ba", "ht"]


def run(checkout, ev, tool, extra, log):
    env = dict(os.environ, PYTHONPATH=os.path.join(checkout, "python", "gradbench"))
    driver = f"python3 python/gradbench/gradbench/evals/{ev}/run.py {' '.join(extra)}"
    subprocess.run([os.path.join(checkout, "target", "release", "gradbench"), "run",
                    "--eval", driver, "--tool", tool, "-o", log],
                   cwd=checkout, env=env, check=False, stdout=subprocess.DEVNULL)


def timings(log):
    """{(function, description): min evaluate ns} and whether all were valid."""
    msgs, out, valid = {}, {}, True
    for line in open(log):
        j = json.loads(line)
        if "message" in j:
            m = j["message"]
            msgs[m.get("id")] = m
            if m.get("kind") == "analysis" and not m.get("valid", True):
                valid = False
        elif "response" in j:
            r = j["response"]
            m = msgs.get(r.get("id"), {})
            if m.get("kind") == "evaluate":
                if not r.get("success"):
                    valid = False
                    continue
                ns = [t["nanoseconds"] for t in r.get("timings", []) if t["name"] == "evaluate"]
                if ns:
                    out[(m["function"], m.get("description", ""))] = min(ns)
    return out, valid


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    plain = "--plain" in args
    args = [a for a in args if a != "--plain"]
    checkout, evals = args[0], args[1:] or EVALS
    extra_head = " adc-plain / manual | adc-plain valid |" if plain else ""
    print("| eval | function | adc / manual (geometric mean) | range | inputs | adc valid |" + extra_head)
    print("|---|---|---|---|---|---|" + ("---|---|" if plain else ""))
    tools = [("adc", ADC_TOOL), ("manual", "python3 python/gradbench/gradbench/cpp.py manual")]
    if plain:
        tools.append(("adc-plain", f"{ADC_TOOL} --plain"))
    for ev in evals:
        logs = {}
        for name, tool in tools:
            logs[name] = f"/tmp/gradbench-{ev}-{name}.jsonl"
            run(checkout, ev, tool, extra, logs[name])
        adc, ok = timings(logs["adc"])
        manual, _ = timings(logs["manual"])
        pl, pl_ok = timings(logs["adc-plain"]) if plain else ({}, True)
        for fn in sorted({f for f, _ in adc}):
            ratios = [adc[k] / manual[k] for k in adc if k[0] == fn and manual.get(k)]
            if not ratios:
                continue
            g = math.exp(sum(map(math.log, ratios)) / len(ratios))
            row = f"| {ev} | {fn} | {g:.2f} | {min(ratios):.2f}-{max(ratios):.2f} | {len(ratios)} | {'yes' if ok else 'NO'} |"
            if plain:
                pr = [pl[k] / manual[k] for k in pl if k[0] == fn and manual.get(k)]
                pg = f"{math.exp(sum(map(math.log, pr)) / len(pr)):.2f}" if pr else "—"
                row += f" {pg} | {'yes' if pl_ok else 'NO'} |"
            print(row)


if __name__ == "__main__":
    main()
