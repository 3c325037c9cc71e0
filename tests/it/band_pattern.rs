//! Sparse Hessians' band pattern (`ad::band`, docs/jacobians.md#sparse-hessians):
//! on many shapes of `F`, the pattern the static analysis gives (through
//! `S__hband`, `S__hbsize`, `S__hbrows`) equals the one of the sweep of
//! `F` (`S__hdeps` and its helpers, run here as `S` runs them), and `S`
//! matches the dense Hessian (values and a pattern holding every
//! nonzero); shapes the analysis cannot prove (data-dependent branches,
//! indirect indices, products of carried values, calls, stores) or whose
//! blocks do not run in order (a step of 2, a branch on the index) fall
//! back to the sweep.

use crate::sparse_hessian::check;
use crate::support::{arr, jit, jit_once};
use adc::{ArgValue, ArrayValue, Constant, JitModule};

fn ints(a: &ArgValue) -> Vec<i64> {
    match a {
        ArgValue::Array(ArrayValue::I64(v)) => v.clone(),
        other => panic!("not ints: {other:?}"),
    }
}

fn int(v: i64) -> ArgValue {
    ArgValue::Scalar(Constant::I64(v))
}

fn iarr(v: &[i64]) -> ArgValue {
    ArgValue::Array(ArrayValue::I64(v.to_vec()))
}

fn call_int(j: &JitModule, name: &str, args: &mut [ArgValue]) -> i64 {
    let r = j.call(name, args).unwrap_or_else(|e| panic!("{name}: {e}"));
    let Constant::I64(v) = r[0] else {
        panic!("{name} returns an int")
    };
    v
}

/// Both triangles' rows from `p` and `c`.
fn rows(p: &[i64], c: &[i64]) -> Vec<Vec<i64>> {
    (0..p.len() - 1)
        .map(|r| c[p[r] as usize..p[r + 1] as usize].to_vec())
        .collect()
}

/// The band pattern's table of `S` at `args` and room for its entries,
/// or `None` when it falls back.
fn table(j: &JitModule, args: &[ArgValue], n: usize) -> Option<(ArgValue, i64)> {
    let mut a = args.to_vec();
    a.push(iarr(&[0; adc_ir::ad::BAND_INFO_LEN]));
    // The stub sets info[0]; a stub left empty leaves it, as `S` sets it.
    if let ArgValue::Array(ArrayValue::I64(info)) = &mut a[args.len()] {
        info[0] = -1;
    }
    j.call("S__hband", &mut a).expect("S__hband");
    let info = a.pop().expect("info");
    let m = call_int(j, "S__hbsize", &mut [info.clone(), int(n as i64)]);
    (m >= 0).then_some((info, m))
}

/// `S__hbrows` of the table `info` with `what`, writing nothing.
fn hbrows(j: &JitModule, info: &ArgValue, n: usize, what: i64) -> i64 {
    let mut b = [
        info.clone(),
        int(n as i64),
        int(what),
        iarr(&[]),
        iarr(&[]),
        arr(&[]),
        int(0),
        int(0),
        arr(&[]),
    ];
    call_int(j, "S__hbrows", &mut b)
}

/// The band pattern of `S` at `args` (both triangles), or `None` when it
/// falls back.
fn band(j: &JitModule, args: &[ArgValue], n: usize) -> Option<Vec<Vec<i64>>> {
    let (info, m) = table(j, args, n)?;
    let (p, c) = full(j, info, n, m);
    Some(rows(&ints(&p), &ints(&c)))
}

/// Both triangles' rows of the table `info` (`m` entries), as `p` and `c`.
fn full(j: &JitModule, info: ArgValue, n: usize, m: i64) -> (ArgValue, ArgValue) {
    let mut b = [
        info,
        int(n as i64),
        int(1),
        iarr(&vec![-1; n + 1]),
        iarr(&vec![-1; m as usize]),
        arr(&[]),
        int(0),
        int(0),
        arr(&[]),
    ];
    call_int(j, "S__hbrows", &mut b);
    let [_, _, _, p, c, ..] = b;
    (p, c)
}

/// The sweep's pattern of `S` at `args` (both triangles), as `S` builds it.
fn sweep(j: &JitModule, args: &[ArgValue], n: usize) -> Vec<Vec<i64>> {
    let mut a = args.to_vec();
    a.push(iarr(&[0; 1 << 16]));
    let r = j.call("S__hdeps", &mut a).expect("S__hdeps");
    assert_eq!(r[0], Constant::Bool(true), "the arena is large enough");
    let arena = a.pop().expect("arena");
    let mut c = [arena, iarr(&vec![0; n + 2])];
    let m = call_int(j, "S__hcount", &mut c) as usize;
    let mut f = [c[0].clone(), c[1].clone(), iarr(&vec![0; m])];
    j.call("S__hfill", &mut f).expect("S__hfill");
    let mut s = [f[1].clone(), f[2].clone(), iarr(&vec![0; n + 1])];
    if call_int(j, "S__hsort", &mut s) < 0 {
        let mut t = [s[0].clone(), s[1].clone(), s[2].clone(), iarr(&vec![0; m])];
        call_int(j, "S__htrans", &mut t);
        return rows(&ints(&t[2]), &ints(&t[1]));
    }
    rows(&ints(&s[2]), &ints(&s[1]))
}

/// `F` (named `f`, with `[hessian(H, acts)]` and `[hessian(S, acts,
/// sparse)]`) at `args` with `n` columns: `S` against the dense Hessian,
/// and the band pattern against the sweep's. Returns whether the band
/// pattern served.
fn both(acts: &str, sig: &str, body: &str, args: &[ArgValue], n: usize) -> bool {
    let sep = if acts.is_empty() { "" } else { ", " };
    let src = format!(
        "[hessian(H{sep}{acts})]\n[hessian(S{sep}{acts}, sparse)]\ndouble f({sig}) {{\n{body}\n}}\n\
         double sq(double t) {{ return t * t; }}\n\
         double dot(double[] x, int i) {{ double d = 0.0; for (int k = 0; k < 1; k++) {{ d += x[i + k] * x[i + k + 1]; }} return d; }}\n\
         [checkpoint] double cq(double t) {{ return t * t; }}\n"
    );
    let j = jit_once(&src);
    check(&j, "f", args, n);
    let swept = sweep(&j, args, n);
    match band(&j, args, n) {
        Some(b) => {
            assert_eq!(b, swept, "band pattern against the sweep's:\n{src}");
            true
        }
        None => false,
    }
}

fn xs(n: usize) -> ArgValue {
    arr(&(0..n)
        .map(|i| 0.3 * ((i * 7) % 5) as f64 - 0.4)
        .collect::<Vec<_>>())
}

const X: &str = "double[] x";

/// Tridiagonal (the chained Rosenbrock function).
const ROSEN: &str = "double s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) {
        double a = 1.0 - x[i];
        double b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    return s;";

/// Pentadiagonal, from i = 1.
const PENTA: &str = "double s = 0.0;
    for (int i = 1; i + 1 < len(x); i++) {
        double d = x[i - 1] - 2.0 * x[i] + x[i + 1];
        s += d * d;
    }
    return s;";

/// Two loops, offsets far apart, a quotient and built-ins: segments of
/// rows with different offsets.
const FAR: &str = "double s = 0.0;
    for (int i = 0; i + 3 < len(x); i++) { s += x[i] * x[i + 3]; }
    for (int i = 2; i < len(x) - 1; i++) { s -= x[i] / (1.0 + x[i - 2] * x[i - 2]) + exp(x[i + 1]); }
    return 2.0 * s;";

#[test]
fn loops_at_affine_indices_need_no_sweep() {
    let shapes = [
        ROSEN,
        PENTA,
        FAR,
        // Straight-line code at constant indices, then a loop; a constant
        // carried through it (maximal SSA) scales a product.
        "double h = 0.5;
         double s = x[0] * x[2] + sin(x[1]);
         for (int i = 0; i + 1 < len(x); i++) { s += h * x[i] * x[i + 1] + pow(x[i], 3.0); }
         return s;",
        // Small callees inlined (a loop of their own in `dot`).
        "double s = 0.0;
         for (int i = 0; i + 1 < len(x); i++) { s += sq(x[i] - x[i + 1]) + dot(x, i); }
         return s;",
        // A sum of products with no loop-carried value in them, `abs`, and
        // `max` used linearly.
        "double s = 0.0;
         for (int i = 0; i + 2 < len(x); i++) {
             double t = x[i] - x[i + 2] + abs(x[i + 1]);
             s = s + t * t - 0.5 * max(x[i], 1.0);
         }
         return -s;",
    ];
    for (k, body) in shapes.iter().enumerate() {
        for n in [1, 2, 3, 6, 11] {
            // Shape 3 reads x[2].
            if k == 3 && n < 3 {
                continue;
            }
            assert!(
                both("", X, body, &[xs(n)], n),
                "shape {k} at n = {n} fell back"
            );
        }
    }
}

#[test]
fn const_parameters_and_index_bases() {
    // A `Const` array of coefficients and an int offset: the base `i + k`.
    let body = "double s = 0.0;
        for (int i = 0; i + k + 1 < len(x); i++) { s += c[i] * x[i + k] * x[i + k + 1]; }
        return s;";
    let sig = "double[] x, double[] c, int k";
    for k in 0..3 {
        let args = [xs(8), arr(&[1.5; 8]), int(k)];
        assert!(both("Dual, Const, Const", sig, body, &args, 8));
    }
    // Indirect indices whose values run in order serve; others fall back.
    let body = "double s = 0.0;
        for (int i = 0; i < len(p); i++) { s += x[p[i]] * x[p[i] + 1]; }
        return s;";
    let sig = "double[] x, int[] p";
    assert!(both(
        "Dual, Const",
        sig,
        body,
        &[xs(7), iarr(&[1, 2, 3, 3, 4])],
        7
    ));
    assert!(!both(
        "Dual, Const",
        sig,
        body,
        &[xs(7), iarr(&[4, 1, 2])],
        7
    ));
}

#[test]
fn blocks_run_out_of_order_fall_back() {
    let shapes = [
        // A step of 2.
        "double s = 0.0;
         for (int i = 0; i + 1 < len(x); i += 2) { s += x[i] * x[i + 1]; }
         return s;",
        // A branch on the index.
        "double s = 0.0;
         for (int i = 0; i + 1 < len(x); i++) {
             if (i % 3 == 0) { s += x[i] * x[i + 1]; } else { s += x[i]; }
         }
         return s;",
        // The same loop twice.
        "double s = 0.0;
         for (int k = 0; k < 2; k++) {
             for (int i = 0; i + 1 < len(x); i++) { s += x[i] * x[i + 1]; }
         }
         return s;",
    ];
    for body in shapes {
        assert!(!both("", X, body, &[xs(9)], 9), "served:\n{body}");
    }
}

#[test]
fn shapes_the_analysis_cannot_prove_fall_back() {
    let shapes = [
        // A branch on a float.
        "double s = 0.0;
         for (int i = 0; i + 1 < len(x); i++) {
             if (x[i] > 0.0) { s += x[i] * x[i + 1]; } else { s += x[i]; }
         }
         return s;",
        // Two index bases in one block.
        "double s = 0.0;
         for (int i = 0; i < len(x); i++) {
             for (int j = 0; j < len(x); j++) { s += x[i] * x[j]; }
         }
         return s;",
        // A product of loop-carried values.
        "double p = 1.0;
         for (int i = 0; i < len(x); i++) { p = p * x[i]; }
         return p;",
        // A value of the previous iteration.
        "double s = 0.0;
         double prev = 0.0;
         for (int i = 0; i < len(x); i++) { s += prev * x[i]; prev = x[i]; }
         return s;",
        // The sum used nonlinearly after the loop.
        "double s = 0.0;
         for (int i = 0; i < len(x); i++) { s += x[i]; }
         return s * s;",
        // A choice entering a product: its set is the chosen operand's.
        "double s = 0.0;
         for (int i = 0; i + 2 < len(x); i++) { double t = max(x[i], x[i + 2]); s += t * t; }
         return s;",
        // A call of a `[checkpoint]` function (never inlined).
        "double s = 0.0;
         for (int i = 0; i + 1 < len(x); i++) { s += cq(x[i] - x[i + 1]); }
         return s;",
        // A float turned into an index.
        "double s = 0.0;
         for (int i = 0; i + 1 < len(x); i++) { s += x[int(abs(x[i])) % len(x)] * x[i + 1]; }
         return s;",
        // A store.
        "double t[len(x)];
         for (int i = 0; i < len(x); i++) { t[i] = x[i] * x[i]; }
         double s = 0.0;
         for (int i = 0; i + 1 < len(x); i++) { s += t[i] * x[i + 1]; }
         return s;",
    ];
    for body in shapes {
        assert!(!both("", X, body, &[xs(7)], 7), "served:\n{body}");
    }
}

/// `S__hbeval` (the band pattern's evaluation: seeds, compressed gradient
/// and values without colors) with the band coloring `c mod k` for each
/// `k` from the widest span up: one run of 3, 4 or 5 lanes or several, and
/// segments of rows with different offsets. Its values, columns and rows
/// equal `S`'s (checked against the dense Hessian), and `S` goes through
/// it.
#[test]
fn the_band_evaluation_serves_any_number_of_colors() {
    let shapes = [
        // Diagonal: one color.
        "double s = 0.0;
         for (int i = 0; i < len(x); i++) { s += x[i] * x[i] * x[i]; }
         return s;",
        // Tridiagonal.
        ROSEN,
        // Pentadiagonal (5 colors: one run of 5 lanes in `S`).
        PENTA,
        // A full band of half-width 3 (7 colors: two runs of 4 lanes).
        "double s = 0.0;
         for (int i = 0; i + 3 < len(x); i++) {
             double d = x[i] + 0.5 * x[i + 1] - x[i + 2] + 2.0 * x[i + 3];
             s += sin(d);
         }
         return s;",
        // Segments: two loops over different rows, offsets far apart.
        FAR,
    ];
    for body in shapes {
        let src =
            format!("[hessian(H)]\n[hessian(S, sparse)]\ndouble f(double[] x) {{\n{body}\n}}\n");
        let j = jit(&src);
        for n in [1, 2, 3, 5, 12, 31] {
            let x = xs(n);
            let pattern = check(&j, "f", &[x.clone()], n);
            let (info, _) = table(&j, &[x.clone()], n).expect("the band pattern serves");
            let low = hbrows(&j, &info, n, 0) as usize;
            let span = hbrows(&j, &info, n, 4);
            let mut want = None;
            for k in span..span + 9 {
                let mut a = [
                    x.clone(),
                    info.clone(),
                    int(k),
                    arr(&vec![f64::NAN; low]),
                    iarr(&vec![-1; low]),
                    iarr(&vec![-1; n + 1]),
                ];
                j.call("S__hbeval", &mut a).expect("S__hbeval");
                let (p, c) = (ints(&a[5]), ints(&a[4]));
                assert_eq!(rows(&p, &c), pattern, "k = {k}, n = {n}:\n{body}");
                // Each value is computed alone in its lane: no rounding
                // differs with the coloring.
                let vals = a[3].clone();
                assert!(
                    want.as_ref().is_none_or(|w| *w == vals),
                    "k = {k}, n = {n}:\n{body}"
                );
                want = Some(vals);
            }
            let mut s = [
                x.clone(),
                arr(&vec![f64::NAN; low]),
                iarr(&vec![-1; low]),
                iarr(&vec![-1; n + 1]),
            ];
            j.call("S", &mut s).expect("S");
            assert_eq!(Some(&s[1]), want.as_ref(), "n = {n}:\n{body}");
        }
    }
    let m = adc::driver::frontend(
        "t.ad",
        &format!(
            "[hessian(S, sparse)]\ndouble f(double[] x) {{\n{}\n}}\n",
            shapes[1]
        ),
        &adc::CompileOptions::default(),
    )
    .unwrap_or_else(|f| panic!("{f}"));
    let s = m.func(m.find("S").expect("S"));
    let eval = m.find("S__hbeval").expect("S__hbeval");
    assert!(
        s.layout
            .iter()
            .flat_map(|&b| s.dfg.block(b).insts.iter())
            .any(
                |&i| matches!(s.dfg.inst(i), adc_ir::InstData::Call { func, .. } if *func == eval)
            ),
        "{m}"
    );
}

/// `S__hbeval` has runs of 3, 4 and 5 lanes to choose from
/// (`S__gj__columns3`, `S__gj__columns`, `S__gj__columns5`): the fewest
/// runs, then the narrowest, so that 5 colors (a pentadiagonal Hessian)
/// take one run, not two of 3 (the values of every `k` are checked by
/// `the_band_evaluation_serves_any_number_of_colors`).
#[test]
fn the_band_evaluation_has_runs_of_three_to_five_lanes() {
    let src = format!("[hessian(S, sparse)]\ndouble f(double[] x) {{\n{PENTA}\n}}\n");
    let m = adc::driver::frontend("t.ad", &src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let reached = crate::sparse_hessian::reached(&m, "S__hbeval");
    for g in ["S__gj__columns3", "S__gj__columns", "S__gj__columns5"] {
        assert!(reached.iter().any(|r| r == g), "{g} not in {reached:?}");
    }
}

/// `S__hbrows`' `what` 7: 1 when a segment of 12 rows or more has a full
/// band of half-width `b` (1 to 3: offsets `-b..=b`) as its widest span,
/// where no star coloring takes fewer colors than the band coloring (`S`
/// then goes straight to the band evaluation: no full pattern, no star
/// coloring's attempt), else 0. Where it says 1, the greedy star coloring
/// of the full pattern indeed gives up (`S__star` returns 0); every `S`
/// matches the dense Hessian, `n` from 1 to 40.
#[test]
fn full_bands_skip_the_star_coloring() {
    let hepta = "double s = 0.0;
         for (int i = 0; i + 3 < len(x); i++) {
             double d = x[i] + 0.5 * x[i + 1] - x[i + 2] + 2.0 * x[i + 3];
             s += sin(d);
         }
         return s;";
    // Offsets -2, 0, 2 only: two interleaved paths (3 star colors).
    let gaps = "double s = 0.0;
         for (int i = 0; i + 2 < len(x); i++) { s += x[i] * x[i + 2] * x[i + 2]; }
         return s;";
    // Half-width 4: not proven.
    let nine = "double s = 0.0;
         for (int i = 0; i + 4 < len(x); i++) { double d = x[i] - x[i + 4] + x[i + 2]; s += d * d * d; }
         return s;";
    // A full band of half-width 2 from the first loop, and a wider span
    // (offset 5) from the second.
    let wider = "double s = 0.0;
         for (int i = 1; i + 1 < len(x); i++) { double d = x[i - 1] - 2.0 * x[i] + x[i + 1]; s += d * d; }
         for (int i = 0; i + 5 < len(x); i++) { s += x[i] * x[i + 5]; }
         return s;";
    // (body, the first `n` from which `what` 7 is 1, or none)
    let shapes = [
        (ROSEN, Some(14)),
        (PENTA, Some(16)),
        (hepta, Some(18)),
        (FAR, None),
        (gaps, None),
        (nine, None),
        (wider, None),
    ];
    for (body, from) in shapes {
        let src =
            format!("[hessian(H)]\n[hessian(S, sparse)]\ndouble f(double[] x) {{\n{body}\n}}\n");
        let j = jit(&src);
        for n in 1..=40 {
            let x = xs(n);
            check(&j, "f", &[x.clone()], n);
            let (info, m) = table(&j, &[x.clone()], n).expect("the band pattern serves");
            let skip = hbrows(&j, &info, n, 7);
            let want = from.is_some_and(|f| n >= f);
            assert_eq!(skip, want as i64, "n = {n}:\n{body}");
            if skip == 1 {
                let span = hbrows(&j, &info, n, 4);
                let (p, c) = full(&j, info, n, m);
                let mut s = [p, c, int(span), iarr(&vec![0; n])];
                assert_eq!(call_int(&j, "S__star", &mut s), 0, "n = {n}:\n{body}");
            }
        }
    }
}

/// The random tester's banded objectives (`difftest::sparse_hessian::
/// band_source`) reach what they are there for: of 12 of them at 20
/// columns, most have a band pattern and go straight to the band
/// evaluation (`what` 7), and the sweep serves one or more.
#[test]
fn difftest_band_objectives_reach_the_band_evaluation() {
    let n = 20;
    let (mut served, mut skip) = (0, 0);
    for key in 0..12u64 {
        let src = crate::difftest::sparse_hessian::band_source(key).replace("fbd_hsp", "S");
        let j = jit(&src);
        let args = [scalar(0.3), scalar(-0.2), xs(n)];
        if let Some((info, _)) = table(&j, &args, n) {
            served += 1;
            skip += hbrows(&j, &info, n, 7);
        }
    }
    assert!(
        (6..12).contains(&served),
        "{served} of 12 have a band pattern"
    );
    assert!(skip >= 4, "{skip} of 12 go straight to the band evaluation");
}

fn scalar(v: f64) -> ArgValue {
    ArgValue::Scalar(Constant::F64(v))
}
