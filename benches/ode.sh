#!/usr/bin/env bash
# Benchmark (not a test): ode's gradient over its primal against the same
# algorithm in C, fused and not, and the tape's own memory traffic
# (benches/c/ode.c; docs/performance.md, "Gradient over primal"). adc's side is
# the plain port, gradbench/evals/plain/ode.ad, compiled by target/release/adc
# (or $ADC). `ftz`: the same with flush-to-zero set, a diagnostic of what
# subnormal numbers cost.
#
# Run: benches/ode.sh [ftz]
set -euo pipefail
cd "$(dirname "$0")/.."
adc="${ADC:-target/release/adc}"
[ -n "${ADC:-}" ] || cargo build --quiet --release -p adc-cli
dir="${TMPDIR:-/tmp}/adc-bench-ode"
mkdir -p "$dir"
"$adc" compile gradbench/evals/plain/ode.ad -o "$dir/ode.o" --emit-header "$dir/ode.h"
gcc -O3 -march=native -mprefer-vector-width=128 -ffp-contract=off -D_POSIX_C_SOURCE=199309L -I"$dir" -Igradbench/ab \
    benches/c/ode.c "$dir/ode.o" -lm -o "$dir/ode"
uptime
nice -n 5 "$dir/ode" "$@"
uptime
