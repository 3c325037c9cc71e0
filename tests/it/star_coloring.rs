//! Star coloring of sparse Hessians (docs/jacobians.md#sparse-hessians,
//! `crates/frontend/src/hessian/star.rs`): the values against the dense
//! Hessian where it replaces the distance-2 coloring (an arrowhead, a
//! scalar column beside an array and a band), and `NAME__star` itself:
//! two colors for an arrowhead, a star coloring on random symmetric
//! patterns, 0 for an asymmetric pattern or a coloring that fits one run.

use crate::sparse_hessian::check;
use crate::support::{arr, d, jit};
use adc::{ArgValue, ArrayValue, Constant, JitModule};

fn ints(v: &[i64]) -> ArgValue {
    ArgValue::Array(ArrayValue::I64(v.to_vec()))
}

/// Calls `S__star` on the symmetric pattern given by its rows (both
/// triangles, each row increasing) with `k` distance-2 colors; returns
/// its result and the colors.
fn star(j: &JitModule, rows: &[Vec<i64>], k: i64) -> (i64, Vec<i64>) {
    let mut p = vec![0];
    let mut c = Vec::new();
    for r in rows {
        c.extend_from_slice(r);
        p.push(c.len() as i64);
    }
    let mut args = [
        ints(&p),
        ints(&c),
        ArgValue::Scalar(Constant::I64(k)),
        ints(&vec![0; rows.len()]),
    ];
    let r = j
        .call("S__star", &mut args)
        .unwrap_or_else(|e| panic!("S__star: {e}"));
    let Constant::I64(s) = r[0] else {
        panic!("S__star returns an int")
    };
    let ArgValue::Array(ArrayValue::I64(colors)) = &args[3] else {
        panic!("colors")
    };
    (s, colors.clone())
}

/// Both triangles of a lower-triangle pattern.
fn full(lower: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let mut rows = lower.to_vec();
    for (r, row) in lower.iter().enumerate() {
        for &c in row {
            if c as usize != r {
                rows[c as usize].push(r as i64);
            }
        }
    }
    for row in &mut rows {
        row.sort();
    }
    rows
}

/// Adjacent columns differ, and no path on four columns is two-colored.
fn assert_star(rows: &[Vec<i64>], color: &[i64]) {
    let adj = |v: usize| rows[v].iter().map(|&c| c as usize).filter(move |&c| c != v);
    for a in 0..rows.len() {
        for b in adj(a) {
            assert_ne!(color[a], color[b], "adjacent {a} and {b}");
            for c in adj(b).filter(|&c| c != a) {
                for e in adj(c).filter(|&e| e != a && e != b) {
                    let two = color[a] == color[c] && color[b] == color[e];
                    assert!(!two, "two-colored path {a} {b} {c} {e}: {color:?}");
                }
            }
        }
    }
}

const ARROW: &str = "[hessian(H)]
[hessian(S, sparse)]
double arrow(double[] x) {
    double s = 0.0;
    for (int i = 1; i < len(x); i++) { s += x[0] * x[i] * x[i] + sin(x[i]); }
    return s;
}";

#[test]
fn an_arrowhead_takes_two_star_colors() {
    // Row 0 is dense: the distance-2 coloring needs a color per column
    // (10 runs of 4), the star coloring two.
    let x: Vec<f64> = (0..40).map(|i| 0.1 * i as f64 - 1.3).collect();
    assert_colors(&jit(ARROW), "arrow", &[arr(&x)], x.len(), 2);
}

/// `f`'s sparse Hessian equals the dense one at `args` (`n` columns), and
/// its pattern takes `want` star colors, against one distance-2 color per
/// column.
fn assert_colors(j: &JitModule, f: &str, args: &[ArgValue], n: usize, want: i64) {
    let rows = full(&check(j, f, args, n));
    let (s, color) = star(j, &rows, n as i64);
    assert_eq!(s, want, "{color:?}");
    assert_star(&rows, &color);
}

#[test]
fn an_arrowhead_whose_dense_column_comes_last() {
    // The columns are colored by decreasing row length, so the dense one
    // goes first wherever it is (in natural order the others would all
    // be two apart through it before it is colored: a color each).
    let j = jit("[hessian(H)]
[hessian(S, sparse)]
double arrow(double[] x) {
    int n = len(x) - 1;
    double s = 0.0;
    for (int i = 0; i < n; i++) { s += x[n] * x[i] * x[i]; }
    return s;
}");
    let x: Vec<f64> = (0..30).map(|i| 0.2 * i as f64 - 2.1).collect();
    assert_colors(&j, "arrow", &[arr(&x)], x.len(), 2);
}

#[test]
fn a_scalar_column_beside_an_array_and_a_wide_band() {
    // Columns: `a`, then `x`; `a` meets every `x[i]` (an arrowhead
    // through the scalar), and `x` is a band of half-width 2.
    let j = jit("[hessian(H)]
[hessian(S, sparse)]
double g(double a, double[] x) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) { s += a * x[i] * x[i]; }
    for (int i = 1; i + 1 < len(x); i++) {
        double t = x[i - 1] - 2.0 * x[i] + x[i + 1];
        s += t * t * t;
    }
    return s;
}");
    let n = 24;
    let x: Vec<f64> = (0..n).map(|i| (0.7 * i as f64).cos()).collect();
    // Row 0 (`a`) is dense: n + 1 distance-2 colors, six star colors.
    assert_colors(&j, "g", &[d(0.6), arr(&x)], n + 1, 6);
}

#[test]
fn a_pentadiagonal_band_keeps_its_distance_2_coloring() {
    // Five distance-2 colors (two runs of 4); a band of half-width 2
    // takes five star colors too (the square of a path), so the
    // distance-2 coloring stays; against nine it would pay.
    let j = jit("[hessian(H)]
[hessian(S, sparse)]
double smooth(double[] x) {
    double s = 0.0;
    for (int i = 1; i + 1 < len(x); i++) {
        double t = x[i - 1] - 2.0 * x[i] + x[i + 1];
        s += t * t * t * t;
    }
    return s;
}");
    let n = 30;
    let x: Vec<f64> = (0..n).map(|i| (0.3 * i as f64).sin()).collect();
    let lower = check(&j, "smooth", &[arr(&x)], n);
    let rows = full(&lower);
    assert_eq!(star(&j, &rows, 5).0, 0);
    let (s, color) = star(&j, &rows, 9);
    assert_eq!(s, 5, "{color:?}");
    assert_star(&rows, &color);
}

#[test]
fn star_colorings_of_random_symmetric_patterns() {
    let j = jit(ARROW);
    let mut seed: u64 = 12345;
    let mut next = |m: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    for _ in 0..40 {
        let n = 2 + next(14) as usize;
        let mut rows: Vec<Vec<i64>> = (0..n).map(|r| vec![r as i64]).collect();
        for _ in 0..next(3 * n as u64) {
            let (a, b) = (next(n as u64) as usize, next(n as u64) as usize);
            if a != b && !rows[a].contains(&(b as i64)) {
                rows[a].push(b as i64);
                rows[b].push(a as i64);
            }
        }
        for row in &mut rows {
            row.sort();
        }
        let (s, color) = star(&j, &rows, 1000);
        assert!(s > 0, "a symmetric pattern gets a star coloring: {rows:?}");
        assert!(color.iter().all(|&c| (0..s).contains(&c)), "{color:?}");
        assert_star(&rows, &color);
    }
}

#[test]
fn no_star_coloring_when_it_cannot_pay() {
    let j = jit(ARROW);
    let arrow: Vec<Vec<i64>> = full(
        &(0..8)
            .map(|r| if r == 0 { vec![] } else { vec![0, r] })
            .collect::<Vec<_>>(),
    );
    // Four distance-2 colors fit one run already.
    assert_eq!(star(&j, &arrow, 4).0, 0);
    assert_eq!(star(&j, &arrow, 8).0, 2);
    // Not symmetric: (0, 1) without (1, 0).
    let mut lopsided = arrow.clone();
    lopsided[1] = vec![1];
    assert_eq!(star(&j, &lopsided, 8).0, 0);
}
