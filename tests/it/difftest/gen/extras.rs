//! The generator's extra cases: each a shape that once broke the
//! compiler (a custom derivative, checkpointed helpers with `inout` and
//! `out` parameters, the aliasing rule's cases, one array reaching two
//! read-only parameters, element references in split-mode callees) or
//! that an optimisation must get right (elementwise loops that run as
//! vector pairs, or must not), added to a program with some probability.

use super::{line, Func, Helper, Kind, Rng, Stmt};

/// Custom derivatives: (body of `c(u)`, its derivative in `u`).
const CUSTOM: &[(&str, &str)] = &[
    ("sin(u) * u", "cos(u) * u + sin(u)"),
    ("exp(0.3 * u)", "0.3 * exp(0.3 * u)"),
    ("0.1 * u * u * u", "0.3 * u * u"),
    ("atan(u)", "1.0 / (1.0 + u * u)"),
];

/// Features drawn from a second generator of the seed, so that what the
/// first one draws (and the programs of recorded seeds) stays the same:
/// a helper with hand-written custom derivatives (`[reverse_derivative]`,
/// `[forward_derivative]`), a generated derivative called from `f` (so
/// `f`'s derivatives are derivatives of a derivative), and a helper called
/// on constants (no tangent flows into the call), a function with an
/// `inout` scalar (checkpointed or not) called in a loop, `out` scalars
/// and arrays, an `inout` argument that is a local array's element, a
/// `static` function, `inout` elements passed beside a view of their
/// array (the aliasing rule's checks), and ba's projection loop. Each statement
/// is one line of `f`'s body, before its return.
pub(super) fn extras(seed: u64, helpers: &[Helper], funcs: &mut Vec<Func>, body: &mut Vec<Stmt>) {
    let mut r = Rng::new(seed ^ 0x00C0_FFEE_D00D);
    let target = |r: &mut Rng| ["x", "y"][r.below(2)];
    if r.chance(0.35) {
        let (c, dc) = CUSTOM[r.below(CUSTOM.len())];
        funcs.push(Func {
            attrs: String::new(),
            sig: "double cd_rev(double u, double seed)".into(),
            body: vec![line(format!("return seed * ({dc});"))],
        });
        funcs.push(Func {
            attrs: String::new(),
            sig: "double cd_fwd(double u, double d_u)".into(),
            body: vec![line(format!("return d_u * ({dc});"))],
        });
        funcs.push(Func {
            attrs: "[reverse_derivative(cd_rev)]\n[forward_derivative(cd_fwd)]\n".into(),
            sig: "double cd(double u)".into(),
            body: vec![line(format!("return {c};"))],
        });
        let t = target(&mut r);
        body.push(line(format!(
            "{t} = tanh({t} + 0.3 * cd(x * 0.5 + y * 0.25));"
        )));
    }
    if r.chance(0.3) {
        funcs.push(Func {
            attrs: "[autodiff_reverse(nd, Active, Active, ActiveOnly)]\n".into(),
            sig: "double ng(double u, double w)".into(),
            body: vec![line("return sin(u * w) + 0.5 * u * exp(0.2 * w);".into())],
        });
        let t = target(&mut r);
        body.push(line(format!(
            "{{ auto [p, q] = nd(x, tanh(y), 1.0); {t} = tanh({t} + 0.3 * p - 0.2 * q); }}"
        )));
    }
    if r.chance(0.3) {
        if let Some(h) = helpers.iter().find(|h| matches!(h.kind, Kind::Scalar)) {
            let t = target(&mut r);
            let (a, b) = (r.range(-1.0, 1.0), r.range(-1.0, 1.0));
            body.push(line(format!(
                "{t} = tanh({t} + 0.2 * {}({a:.3}, {b:.3}));",
                h.name
            )));
        }
    }
    if r.chance(0.3) {
        // An `inout` scalar, updated in a counted loop, from a loop of
        // `f`; checkpointed or not (the caller's shadow of the scalar is a
        // stack slot the reverse sweep reads before any write).
        let ck = if r.chance(0.5) { "[checkpoint]\n" } else { "" };
        let (c, d) = (r.range(0.2, 0.9), r.range(-0.5, 0.5));
        funcs.push(Func {
            attrs: ck.into(),
            sig: "void acc(inout double s, double u, int n)".into(),
            body: vec![line(format!(
                "for (int i = 0; i < n; i++) s = tanh(s * u * {c:.3} + {d:.3});"
            ))],
        });
        let t = target(&mut r);
        let trips = 1 + r.below(3);
        body.push(line(format!(
            "for (int k = 0; k < {trips}; k++) acc({t}, 0.5 * x + 0.25 * y + 0.1 * k, k + 1);"
        )));
    }
    if r.chance(0.3) {
        // `out` scalars and an `out` array, an `inout` scalar that is an
        // element of a local array, and a `static` function.
        let (c, d) = (r.range(0.3, 1.2), r.range(-0.5, 0.5));
        funcs.push(Func {
            attrs: String::new(),
            sig: "static double sq(double u)".into(),
            body: vec![line(format!("return {c:.3} * u * u + {d:.3};"))],
        });
        funcs.push(Func {
            attrs: String::new(),
            sig: "void sc(double u, out double s, out double c)".into(),
            body: vec![line("s = sin(u) * 0.8; c = cos(sq(u) * 0.7);".into())],
        });
        funcs.push(Func {
            attrs: String::new(),
            sig: "void fill(out double[] t, double u)".into(),
            body: vec![line(
                "for (int i = 0; i < len(t); i++) t[i] = sin(u + 0.3 * i);".into(),
            )],
        });
        funcs.push(Func {
            attrs: String::new(),
            sig: "void bump(inout double s, double u)".into(),
            body: vec![line("s = s * u + 0.25;".into())],
        });
        let t = target(&mut r);
        let k = r.below(4);
        // The second argument may branch and read the array after the
        // element reference is made; the call writes the element after it.
        let arg = if r.chance(0.5) {
            format!("y > 0.0 ? loc[{k}] * loc[3 - {k}] : tanh(y)")
        } else {
            "tanh(y)".into()
        };
        body.push(line(format!(
            "{{ double s1; double c1; sc(x * 0.6 + y * 0.2, s1, c1); double loc[4]; \
             fill(loc, s1 - c1); bump(loc[{k}], {arg}); {t} = tanh({t} + loc[{k}] * c1 + sq(loc[3 - {k}])); }}"
        )));
    }
    if r.chance(0.3) {
        // The aliasing rule's run-time checks on scalar references: an
        // `inout` element passed with a view of the same array that does
        // not hold it (checked like a one-element view), and two distinct
        // elements; the callee checkpointed or not.
        let ck = if r.chance(0.5) { "[checkpoint]\n" } else { "" };
        let c = r.range(0.3, 0.9);
        funcs.push(Func {
            attrs: ck.into(),
            sig: "void mix(inout double[] t, inout double z, inout double w)".into(),
            body: vec![line(format!(
                "for (int i = 0; i < len(t); i++) {{ t[i] = tanh(t[i] * z + {c:.3} * w); z = z * 0.5 + t[i]; }} w = w * z;"
            ))],
        });
        let t = target(&mut r);
        let split = 1 + r.below(3);
        body.push(line(format!(
            "{{ double m[5] = {{x, y, 0.5 * x, tanh(y), 0.3}}; mix(m[0..{split}], m[{split}], m[4]); \
             {t} = tanh({t} + m[0] * m[{split}] + 0.5 * m[4]); }}"
        )));
    }
    if r.chance(0.3) {
        // One array, or overlapping views of it, passed to two read-only
        // parameters (allowed, docs/arrays.md#the-aliasing-rule) of a callee that stays a
        // call when checkpointed: both shadows are one array (a wrong
        // gradient once, when the callee's reverse loop kept one in a
        // register across writes to the other).
        let ck = if r.chance(0.7) { "[checkpoint]\n" } else { "" };
        let c = r.range(0.2, 0.8);
        funcs.push(Func {
            attrs: ck.into(),
            sig: "double pair2(double[] p, double[] q)".into(),
            body: vec![line(format!(
                "double s = 0.0; for (int i = 0; i + 1 < len(p); i++) s += (p[i] + {c:.3} * p[i + 1]) * q[i] + 0.1 * q[i + 1] * p[i]; return s;"
            ))],
        });
        let args = [
            "m, m",
            "m[0..4], m[1..5]",
            "m[1..], m[0..4]",
            "m[0..3], m[0..3]",
            "a, a",
        ][r.below(5)];
        let t = target(&mut r);
        body.push(line(format!(
            "{{ double m[5] = {{x, y, 0.5 * x * y, tanh(y), 0.3 + x}}; {t} = tanh({t} + 0.2 * pair2({args})); }}"
        )));
    }
    if r.chance(0.2) {
        // An element of an `inout` array passed to an `inout` scalar in a
        // callee that stays a call (split mode), between calls reading
        // overlapping views of the array: its element reference crossed
        // from the forward half to the reverse half (E0999, grad6 F1).
        let (c, d) = (r.range(0.1, 0.3), r.range(0.3, 0.7));
        funcs.push(Func {
            attrs: String::new(),
            sig: "double kk(double[] p, double[] q)".into(),
            body: vec![line(format!(
                "double s = 0.0; for (int i = 0; i + 1 < min(len(p), len(q)); i++) s += p[i] * q[i + 1] - {c:.3} * p[i + 1] * q[i] * q[i]; return s;"
            ))],
        });
        funcs.push(Func {
            attrs: String::new(),
            sig: "void scl(inout double s, double[] p)".into(),
            body: vec![line("s = s * p[0];".into())],
        });
        funcs.push(Func {
            attrs: String::new(),
            sig: "void gw(inout double[] w, double c)".into(),
            body: vec![line(
                "int n = len(w); double z = kk(w[1..n - 1], w) * c; z += c * w[1]; scl(w[1], w[2..]); \
                 z = z * 0.5 + kk(w[1..], w) * c; z += c * w[2]; w[1] = tanh(z * c); w[n - 1] += 0.1 * tanh(z);"
                    .into(),
            )],
        });
        funcs.push(Func {
            attrs: String::new(),
            sig: "void hw(inout double[] w, double c)".into(),
            body: vec![line("int n = len(w); gw(w[1..n - 1], c); gw(w, c);".into())],
        });
        let t = target(&mut r);
        body.push(line(format!(
            "{{ double m[7]; for (int i = 0; i < 7; i++) m[i] = a[i % len(a)] * 0.5 + {d:.3} * x; \
             for (int it = 0; it < 2; it++) {{ hw(m, tanh(y)); hw(m[1..], 0.5); }} {t} = tanh({t} + m[0] + m[2]); }}"
        )));
    }
    if r.chance(0.3) {
        // Elementwise loops over arrays of 4 to 13 elements, so that
        // `version`, `unroll-inner` and codegen's vector pairs
        // (`translate/simd/`) all run, in the primal and in both
        // derivatives: two arrays, an offset read of the other array,
        // `sqrt`/`abs`/division; and loops reading the array they write at
        // another index (a recurrence and its mirror), which must stay
        // scalar.
        let n = 4 + r.below(10);
        let (c, d) = (r.range(0.2, 0.9), r.range(-0.5, 0.5));
        funcs.push(Func {
            attrs: String::new(),
            sig: "void ew(inout double[] t, double[] u, double c, double d)".into(),
            body: vec![line(format!(
                "int n = len(t); \
                 for (int i = 0; i < n; i++) t[i] = t[i] * c + u[i] * d; \
                 for (int i = 1; i < n; i++) t[i] = t[i] - {c:.3} * u[i - 1]; \
                 for (int i = 0; i < n - 1; i++) t[i] = t[i] * 0.5 + 0.25 * t[i + 1]; \
                 for (int i = 1; i < n; i++) t[i] = t[i] * 0.5 + {d:.3} * t[i - 1]; \
                 for (int i = 0; i < n; i++) t[i] = sqrt(abs(t[i]) + 0.5) * c - t[i] / (2.0 + d * d);"
            ))],
        });
        // Ordered reductions (`translate/simd/chains.rs`): a dot product,
        // a product, a running difference and two sums in one loop; their
        // reverse sweeps count down.
        funcs.push(Func {
            attrs: String::new(),
            sig: "double red(double[] t, double[] u, double c)".into(),
            body: vec![line(
                "double s = 0.0; for (int i = 0; i < len(t); i++) s += t[i] * u[i]; \
                 double q = 1.0; for (int i = 0; i < len(t); i++) q *= 0.5 + 0.1 * t[i]; \
                 double m = c; double p = 0.0; \
                 for (int i = 0; i < len(u); i++) { m -= u[i] * c; p = p + t[i] * t[i]; } \
                 return s + q + m * 0.5 + 0.1 * p;"
                    .into(),
            )],
        });
        // Both `x` and `y` take the result: the return may read only one.
        body.push(line(format!(
            "{{ double m[{n}]; double w[{n}]; for (int i = 0; i < {n}; i++) {{ m[i] = a[i % len(a)] * x + 0.1 * i; w[i] = tanh(y + 0.2 * i); }} \
             ew(m, w, 0.8 * tanh(x), 0.5 * y); ew(m[1..], w, 0.3, 0.2 * x); \
             x = tanh(x + 0.1 * (m[0] + m[{last}]) + 0.05 * red(m, w, y)); y = tanh(y + 0.1 * m[{mid}]); }}",
            last = n - 1,
            mid = n / 2
        )));
    }
    if r.chance(0.3) {
        // ba's projection shape: a loop over points calls a helper on a
        // constant view of the camera (`cam[0..3]`) and reads camera
        // elements at indices that do not move (`cam[k]`, `cam[6]`), so
        // `version` tests them with the point accesses and `licm` takes
        // the view and the loads out of the checked-free copy; zero points
        // leave the copy's guard false.
        let points = [0, 1, 2, 5][r.below(4)];
        let k = r.below(7);
        funcs.push(Func {
            attrs: String::new(),
            sig: "static void rot3(double[] w, double[] p, out double[] q)".into(),
            body: vec![line(
                "double t = w[0] * p[1] - w[1] * p[0] + w[2];                  for (int i = 0; i < 3; i++) q[i] = p[i] * cos(t) + w[i] * sin(t);"
                    .into(),
            )],
        });
        funcs.push(Func {
            attrs: String::new(),
            sig: "double proj(double[] cam, double[] pts, int k)".into(),
            body: vec![line(
                "double e = 0.0;                  for (int i = 0; i < len(pts) / 3; i++) {                  double d[3]; for (int j = 0; j < 3; j++) d[j] = pts[3 * i + j] - cam[3 + j];                  double q[3]; rot3(cam[0..3], d, q);                  e += q[0] / (1.5 + q[2] * q[2]) * cam[k] + q[1] * cam[6]; }                  return e;"
                    .into(),
            )],
        });
        let t = target(&mut r);
        body.push(line(format!(
            "{{ double cam[7]; for (int i = 0; i < 7; i++) cam[i] = tanh(x * (0.3 + 0.1 * i) + 0.2 * y);              double pts[{len}]; for (int i = 0; i < {len}; i++) pts[i] = y * (0.5 - 0.07 * i) + 0.1 * x;              {t} = tanh({t} + 0.2 * proj(cam, pts, {k})); }}",
            len = 3 * points
        )));
    }
}
