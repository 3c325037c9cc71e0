#!/usr/bin/env bash
# Benchmark (not a test): sparse Jacobians and Hessians in thread CPU time,
# through `adc compile`'s objects called from C (benches/c/sparse.c):
# the sparse Jacobian of benches/ad/bratu.ad and the sparse Hessians of
# benches/ad/banded.ad against their primals; `rows`: bratu's Jacobian by
# columns and by rows forced (one run of either: their relative cost, the
# rule of docs/jacobians.md#sparse-jacobians); `arrow`: benches/ad/arrow.ad,
# a Jacobian the choice takes by rows. The compiler's own build
# profile does not change the code it writes (Cranelift makes it), so the
# dev build serves.
#
# Run: benches/sparse.sh [jac|hess|rosen|smooth|rows|arrow|all] [n ...]   (default: all, 10^4 10^5 10^6)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet -p adc-cli
dir="${TMPDIR:-/tmp}/adc-bench-sparse"
mkdir -p "$dir"
for f in bratu banded arrow; do
    target/debug/adc compile "benches/ad/$f.ad" -o "$dir/$f.o" --emit-header "$dir/$f.h"
done
cc -O2 -I"$dir" benches/c/sparse.c "$dir/bratu.o" "$dir/banded.o" "$dir/arrow.o" -lm -o "$dir/sparse"
which="${1:-all}"
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
uptime
# One process per function and size: the allocator's state (glibc's
# thresholds for returning memory, set by earlier, smaller calls) would
# otherwise decide how many pages each call faults in (a factor of two at
# 10^5).
echo "| function | n | primal (ms) | derivative (ms) | derivative / primal | NAME_nnz (ms) | NAME_nnz / primal |"
echo "|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
    for w in jac rosen smooth rows arrow; do
        case "$which" in
            all) [ "$w" != rows ] && [ "$w" != arrow ] || continue ;;
            hess) [ "$w" = rosen ] || [ "$w" = smooth ] || continue ;;
            *) [ "$w" = "$which" ] || continue ;;
        esac
        "$dir/sparse" "$w" "$n" | tail -n +3
    done
done
uptime
