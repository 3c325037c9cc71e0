//! Vector mode's lanes in `f64x2` pairs (codegen's `translate/simd/lanes.rs`):
//! a width-`W` forward derivative, its lanes run two by two, gives in each
//! lane exactly (to the bit, NaN included) what the width-1 derivative
//! gives for that direction. Every direction differs, so lanes swapped or
//! mixed show. Widths 4 and 5 (a lane left alone), scalar tangents (their
//! lanes adjacent in memory, 16-byte loads) and array tangents (lanes
//! `n` apart), a loop carrying each lane's sum (a paired block parameter),
//! and strong-zero products (`x` has zeros, where the partial of `sqrt` is
//! infinite, and every third tangent is zero). The same for a width-`W`
//! reverse derivative against width-1 calls, seed by seed.

use crate::support::{arg_floats, arr, d, number};

/// The function both modes differentiate, after its name.
const BODY: &str = "(double a, double b, double[] x, out double[] y) {
    double s = 0.0;
    for (int i = 0; i < len(x); i++) {
        double t = x[i] * a - b / (x[i] + 3.0);
        s += sin(t) * sqrt(abs(x[i])) - t * t;
        y[i] = -(s * b);
    }
    return s / a;
}
";

/// `name` with its attributes, the width-1 derivative first then widths 4
/// and 5: `{kind}(NAME1, ACTS)`, `{kind}(NAME4, ACTS, width = 4)`, ...
fn source(kind: &str, deriv: &str, acts: &str, name: &str) -> String {
    let attrs: String = ["", ", width = 4", ", width = 5"]
        .iter()
        .zip([1, 4, 5])
        .map(|(width, w)| format!("[{kind}({deriv}{w}, {acts}{width})]\n"))
        .collect();
    format!("{attrs}double {name}{BODY}")
}

fn forward_source() -> String {
    source("autodiff_forward", "f", "Dual, Dual, Dual, Dual, Dual", "f")
}

/// splitmix64: reproducible tangents in [-1, 1), some exactly zero.
fn tangents(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|k| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let u = ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            if k % 3 == 1 {
                0.0
            } else {
                u
            }
        })
        .collect()
}

fn same(got: f64, want: f64, what: &str) {
    assert!(
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
        "{what}: width W gives {got:?}, width 1 gives {want:?}"
    );
}

/// `fW` at `(a, b, x)` on `w` directions against `f1` on each.
fn check(j: &adc::JitModule, w: usize, a: f64, b: f64, x: &[f64], seed: u64) {
    let n = x.len();
    // Per direction: the tangents of a, b and x.
    let dirs: Vec<(f64, f64, Vec<f64>)> = (0..w)
        .map(|k| {
            let t = tangents(seed + 17 * k as u64, n + 2);
            (t[0], t[1], t[2..].to_vec())
        })
        .collect();
    let mut lanes = [Vec::new(), Vec::new(), Vec::new()];
    for (da, db, dx) in &dirs {
        lanes[0].push(*da);
        lanes[1].push(*db);
        lanes[2].extend_from_slice(dx);
    }
    let mut av = [
        d(a),
        arr(&lanes[0]),
        d(b),
        arr(&lanes[1]),
        arr(x),
        arr(&lanes[2]),
        arr(&vec![0.0; n]),
        arr(&vec![0.0; w * n]),
        arr(&vec![0.0; w]),
    ];
    let name = format!("f{w}");
    let rv = j.call(&name, &mut av).expect("fW runs");
    let (dy, t_ret) = (arg_floats(&av[7]), arg_floats(&av[8]));
    for (k, (da, db, dx)) in dirs.iter().enumerate() {
        let mut a1 = [
            d(a),
            d(*da),
            d(b),
            d(*db),
            arr(x),
            arr(dx),
            arr(&vec![0.0; n]),
            arr(&vec![0.0; n]),
        ];
        let r1 = j.call("f1", &mut a1).expect("f1 runs");
        let what = |s: &str| format!("width {w}, lane {k}: {s}");
        same(number(&rv[0]), number(&r1[0]), &what("result"));
        same(t_ret[k], number(&r1[1]), &what("tangent of the result"));
        for (i, (got, want)) in dy[k * n..(k + 1) * n]
            .iter()
            .zip(arg_floats(&a1[7]))
            .enumerate()
        {
            same(*got, want, &what(&format!("tangent of y[{i}]")));
        }
    }
}

#[test]
fn paired_lanes_compute_each_direction_as_width_one_does() {
    let j = crate::support::jit(&forward_source());
    let x = [0.5, -1.25, 0.0, 2.0, -0.75, 0.0, 1.5];
    for (w, seed) in [(4, 3), (5, 11), (4, 29)] {
        for n in [0, 1, 3, 7] {
            check(&j, w, 0.7, -1.3, &x[..n], seed + n as u64);
        }
    }
}

/// Reverse vector mode: `transpose` interleaves the lanes' adjoints,
/// ascending, so codegen pairs them (the seed's lanes too, 16-byte loads).
fn reverse_source() -> String {
    let acts = "Active, Active, Duplicated, Duplicated, Active";
    source("autodiff_reverse", "g", acts, "g")
}

/// `gW` at `(a, b, x)` on `w` seeds (of the result, and of `y` through
/// its shadow; `x`'s shadow starts nonzero) against `g1` on each.
fn check_reverse(j: &adc::JitModule, w: usize, a: f64, b: f64, x: &[f64], seed: u64) {
    let n = x.len();
    // Per direction: the result's seed, `x`'s shadow, `y`'s shadow.
    let dirs: Vec<(f64, Vec<f64>, Vec<f64>)> = (0..w)
        .map(|k| {
            let t = tangents(seed + 17 * k as u64, 2 * n + 1);
            (t[0], t[1..=n].to_vec(), t[n + 1..].to_vec())
        })
        .collect();
    let (mut seeds, mut dx, mut dy) = (Vec::new(), Vec::new(), Vec::new());
    for (s, sx, sy) in &dirs {
        seeds.push(*s);
        dx.extend_from_slice(sx);
        dy.extend_from_slice(sy);
    }
    let mut av = [
        d(a),
        arr(&vec![0.0; w]),
        d(b),
        arr(&vec![0.0; w]),
        arr(x),
        arr(&dx),
        arr(&vec![0.0; n]),
        arr(&dy),
        arr(&seeds),
    ];
    let rv = j.call(&format!("g{w}"), &mut av).expect("gW runs");
    let (da, db) = (arg_floats(&av[1]), arg_floats(&av[3]));
    let (gx, gy) = (arg_floats(&av[5]), arg_floats(&av[7]));
    for (k, (s, sx, sy)) in dirs.iter().enumerate() {
        let mut a1 = [
            d(a),
            d(b),
            arr(x),
            arr(sx),
            arr(&vec![0.0; n]),
            arr(sy),
            d(*s),
        ];
        let r1 = j.call("g1", &mut a1).expect("g1 runs");
        let what = |s: &str| format!("reverse width {w}, lane {k}: {s}");
        same(number(&rv[0]), number(&r1[0]), &what("result"));
        same(da[k], number(&r1[1]), &what("gradient of a"));
        same(db[k], number(&r1[2]), &what("gradient of b"));
        let lane = k * n..(k + 1) * n;
        for (i, want) in arg_floats(&a1[3]).into_iter().enumerate() {
            same(
                gx[lane.start + i],
                want,
                &what(&format!("shadow of x[{i}]")),
            );
        }
        for (i, want) in arg_floats(&a1[5]).into_iter().enumerate() {
            same(
                gy[lane.start + i],
                want,
                &what(&format!("shadow of y[{i}]")),
            );
        }
    }
}

#[test]
fn reverse_lanes_compute_each_seed_as_width_one_does() {
    let j = crate::support::jit(&reverse_source());
    let x = [0.5, -1.25, 0.0, 2.0, -0.75, 0.0, 1.5];
    for (w, seed) in [(4, 5), (5, 13), (4, 31)] {
        for n in [0, 1, 3, 7] {
            check_reverse(&j, w, 0.7, -1.3, &x[..n], seed + n as u64);
        }
    }
}
