//! Checkpointed loops (docs/derivatives.md#checkpointing): the reverse derivative of each
//! program with `[checkpoint(K)]` / `[checkpoint]` on its loops equals,
//! to rounding, that of the same program without the attributes (a taped
//! loop), for several intervals and trip counts.

use crate::support;

use adc::{ArgValue, ArrayValue, Constant};

/// Programs with `@CK@` where a loop attribute goes; the entry is `f`,
/// its reverse derivative `df` (x Active, the array Duplicated, n Const).
const SHAPES: &[(&str, &str)] = &[
    ("scalar_for", "double f(double x, double[] a, int n) { double s = x;
        @CK@ for (int i = 0; i < n; i++) s = sin(s) * x + a[i % len(a)];
        return s; }"),
    ("scalar_while", "double f(double x, double[] a, int n) { double s = x; int k = 0;
        @CK@ while (k < n) { s = s * 0.9 + x * a[k % len(a)]; k++; }
        return s * s; }"),
    ("array_state", "double f(double x, double[] a, int n) { int m = len(a); double u[m]; double v[m];
        for (int i = 0; i < m; i++) u[i] = a[i] * x;
        @CK@ for (int t = 0; t < n; t++) {
            for (int i = 0; i < m; i++) v[i] = u[i];
            for (int i = 1; i < m - 1; i++) u[i] = v[i] + 0.1 * (v[i - 1] - 2.0 * v[i] + v[i + 1]) * x;
        }
        double e = 0.0; for (int i = 0; i < m; i++) e += u[i] * u[i];
        return e; }"),
    ("break_and_return", "double f(double x, double[] a, int n) { double s = x;
        @CK@ for (int i = 0; i < n; i++) {
            s = s * x + a[i % len(a)];
            if (s > 50.0) break;
            if (s < -50.0) return s * 2.0;
        }
        return s; }"),
    ("nested", "double f(double x, double[] a, int n) { double s = x;
        @CK@ for (int i = 0; i < n; i++) {
            @CK@ for (int j = 0; j < 3; j++) s = cos(s + a[j % len(a)]) * x;
        }
        return s; }"),
    ("in_a_callee", "double g(double x, double[] a, int n) { double s = 0.0;
        @CK@ for (int i = 0; i < n; i++) s = s * 0.5 + x * a[i % len(a)];
        return s; }
        double f(double x, double[] a, int n) { return g(x, a, n) * g(x * 0.5, a, n); }"),
    // Local arrays declared in the loop's body (each iteration frees the
    // previous one's): a `continue` before the declarations, a length that
    // changes, an inner loop writing one of them.
    ("local_arrays", "double f(double x, double[] a, int n) { double s = x;
        @CK@ for (int i = 0; i < n; i++) {
            if (i % 3 == 1) continue;
            double t[i % 4 + 1];
            for (int j = 0; j < len(t); j++) t[j] = s * 0.5 + double(j) * a[i % len(a)];
            double u[2];
            u[1] = t[len(t) - 1];
            s = sin(u[1]) + 0.9 * s * x;
        }
        return s; }"),
    // A constant view of a local array the loop writes, passed to a
    // helper: `licm` must not make the view before the loop (the reverse
    // sweep restores the array; difftest seed 650,002,105).
    ("view_of_written_local", "double g(double[] b, double u) { return sin(b[0] * u) + b[0]; }
        double f(double x, double[] a, int n) { double t[2]; t[0] = a[0]; t[1] = a[1]; double y = x;
        @CK@ for (int i = 0; i < n; i++) { t[i % 2] = sin(y * a[i % len(a)]); y = tanh(g(t[1..2], y) + g(t[0..1], x)); }
        return y + t[0]; }"),
    ("inout_array", "void step(inout double[] u, double x) { for (int i = 0; i < len(u); i++) u[i] = sin(u[i]) * x; }
        double f(double x, double[] a, int n) { double u[len(a)]; for (int i = 0; i < len(a); i++) u[i] = a[i];
        @CK@ for (int t = 0; t < n; t++) step(u, x);
        double s = 0.0; for (int i = 0; i < len(u); i++) s += u[i];
        return s; }"),
    // Runge-Kutta steps as GradBench's `ode`: a callee writing an `out`
    // array (inlined into the loop) and several arrays the loop writes,
    // each stage's input overwritten by the next.
    ("runge_kutta", "static void rhs(double[] c, double[] y, out double[] z) {
            z[0] = c[0]; for (int i = 1; i < len(c); i++) z[i] = c[i] * y[i - 1]; }
        double f(double x, double[] a, int n) { int m = len(a); double c[m]; double y[m];
        double k1[m]; double k2[m]; double t[m]; double h = 1.0 / double(n + 1);
        for (int i = 0; i < m; i++) { c[i] = a[i] * x; y[i] = a[i]; }
        @CK@ for (int s = 0; s < n; s++) {
            rhs(c, y, k1);
            for (int i = 0; i < m; i++) t[i] = y[i] + h * k1[i] / 2.0;
            rhs(c, t, k2);
            for (int i = 0; i < m; i++) t[i] = y[i] + h * k2[i];
            for (int i = 0; i < m; i++) y[i] += h * (k1[i] + 2.0 * k2[i] + t[i]) / 6.0;
        }
        return y[m - 1] * x; }"),
    // Temporaries of the loop (`ad::scratch`, `outline/private.rs`): `t`
    // written whole before it is read and dead after the loop (the
    // segment's own array), `u` written whole and read after the loop (a
    // scratch argument, not snapshotted), `w` written from 1 only and read
    // from 0 (`w[0]` carries over: snapshotted).
    ("temporaries", "double f(double x, double[] a, int n) { int m = len(a); double y[m]; double t[m]; double u[m]; double w[m];
        for (int i = 0; i < m; i++) { y[i] = a[i] * x; w[i] = a[i]; }
        @CK@ for (int s = 0; s < n; s++) {
            for (int i = 0; i < m; i++) t[i] = sin(y[i]) * x;
            for (int i = 0; i < m; i++) u[i] = t[i] * t[i] + w[i];
            for (int i = 1; i < m; i++) w[i] = u[i - 1] * 0.5;
            for (int i = 0; i < m; i++) y[i] = 0.9 * y[i] + 0.1 * u[i];
        }
        return y[m - 1] + u[0] * w[0]; }"),
    // A temporary written under a branch, then read whole: what the branch
    // skips is the previous iteration's (or the caller's) value.
    ("temporary_under_a_branch", "double f(double x, double[] a, int n) { int m = len(a); double y[m]; double t[m];
        for (int i = 0; i < m; i++) { y[i] = a[i] * x; t[i] = a[i]; }
        @CK@ for (int s = 0; s < n; s++) {
            if (s % 2 == 0) { for (int i = 0; i < m; i++) t[i] = cos(y[i]) * x; }
            for (int i = 0; i < m; i++) y[i] = 0.8 * y[i] + 0.3 * t[i];
        }
        return y[0] * y[m - 1]; }"),
    // A temporary read before the loop body writes it whole, and one whose
    // last element only is written: both carry values across iterations.
    ("read_before_write", "double f(double x, double[] a, int n) { int m = len(a); double y[m]; double t[m]; double p[m];
        for (int i = 0; i < m; i++) { y[i] = a[i] * x; t[i] = a[i]; p[i] = x; }
        @CK@ for (int s = 0; s < n; s++) {
            for (int i = 0; i < m; i++) y[i] = 0.7 * y[i] + 0.2 * sin(t[i]) + 0.1 * p[i];
            for (int i = 0; i < m; i++) t[i] = y[i] * x;
            p[m - 1] = y[0] * t[m - 1];
        }
        return y[m - 1] + p[m - 1] + p[0]; }"),
];

fn gradient(src: &str, x: f64, a: &[f64], n: i64) -> Vec<f64> {
    let full = format!("{src}\n[autodiff_reverse(df, Active, Duplicated, Const, Active)]\ndouble entry(double x, double[] a, int n) {{ return f(x, a, n); }}");
    let mut args = [
        ArgValue::Scalar(Constant::F64(x)),
        ArgValue::Array(ArrayValue::F64(a.to_vec())),
        ArgValue::Array(ArrayValue::F64(vec![0.0; a.len()])),
        ArgValue::Scalar(Constant::I64(n)),
        ArgValue::Scalar(Constant::F64(1.0)),
    ];
    support::gradient_with_shadow(&full, &mut args, 2)
}

#[test]
fn checkpointed_loops_give_the_taped_gradient() {
    let a = [0.3, -0.7, 1.1, 0.25, -0.4];
    let mut failures = Vec::new();
    for (name, shape) in SHAPES {
        for n in [0, 1, 2, 7, 40] {
            let taped = gradient(&shape.replace("@CK@", ""), 0.8, &a, n);
            for ck in [
                "[checkpoint(1)]",
                "[checkpoint(3)]",
                "[checkpoint(1000)]",
                "[checkpoint]",
            ] {
                let got = gradient(&shape.replace("@CK@", ck), 0.8, &a, n);
                let close = got.len() == taped.len()
                    && got
                        .iter()
                        .zip(&taped)
                        .all(|(g, t)| (g - t).abs() <= 1e-12 * t.abs().max(1.0));
                if !close {
                    failures.push(format!("{name}, n = {n}, {ck}: {got:?}, taped {taped:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `[checkpoint]` on loops long enough for its recursive driver to split
/// segments (more than 1,024 and 65,536 iterations): still the taped
/// gradient.
#[test]
fn automatic_checkpointing_of_long_loops() {
    let a = [0.3, -0.7, 1.1, 0.25, -0.4];
    let mut failures = Vec::new();
    for (name, shape) in SHAPES.iter().filter(|(n, _)| {
        [
            "scalar_for",
            "scalar_while",
            "break_and_return",
            "in_a_callee",
            "temporaries",
        ]
        .contains(n)
    }) {
        for n in [1023, 1025, 70_000, 200_000] {
            let taped = gradient(&shape.replace("@CK@", ""), 0.8, &a, n);
            let got = gradient(&shape.replace("@CK@", "[checkpoint]"), 0.8, &a, n);
            let close = got.len() == taped.len()
                && got
                    .iter()
                    .zip(&taped)
                    .all(|(g, t)| (g - t).abs() <= 1e-10 * t.abs().max(1.0));
            if !close {
                failures.push(format!("{name}, n = {n}: {got:?}, taped {taped:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Tape growth, counted through `adc tape`'s report rather than timed: for
/// a loop of `n` iterations the taped derivative stores `n` times its
/// loop's bytes per iteration; under `[checkpoint(K)]` the derivative stores
/// one segment state per `K` iterations, and the segment's own derivative
/// at most `K` iterations at a time.
#[test]
fn checkpointed_tape_grows_with_the_segments() {
    let shape = SHAPES
        .iter()
        .find(|(n, _)| *n == "scalar_for")
        .expect("shape")
        .1;
    let report = |ck: &str| {
        let src = format!("{}\n[autodiff_reverse(df, Active, Duplicated, Const, Active)]\ndouble entry(double x, double[] a, int n) {{ return f(x, a, n); }}", shape.replace("@CK@", ck));
        adc::driver::tape_reports("ck.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"))
    };
    let per_iteration = |reports: &[adc::tape_report::Report], name: &str| -> u64 {
        let r = reports
            .iter()
            .find(|r| r.function == name)
            .unwrap_or_else(|| panic!("no report of {name}: {reports:?}"));
        assert_eq!(r.loops.len(), 1, "{name} has one taping loop: {r:?}");
        u64::from(r.loops[0].bytes_per_iteration)
    };
    let (n, k) = (1_000_000_u64, 1000_u64);
    let taped = report("");
    let taped_bytes = per_iteration(&taped, "df") * n;
    let ck = report("[checkpoint(1000)]");
    let segment = ck
        .iter()
        .find(|r| r.function.starts_with("__adc_vjp___adc_seg"))
        .unwrap_or_else(|| panic!("no segment derivative: {ck:?}"))
        .function
        .clone();
    let ck_bytes = per_iteration(&ck, "df") * n / k + per_iteration(&ck, &segment) * k;
    assert!(taped_bytes > 0);
    assert!(
        ck_bytes * 100 < taped_bytes,
        "checkpointed {ck_bytes} bytes against {taped_bytes} taped"
    );
}

/// `ad::scratch` decides what the reverse derivative of a checkpointed loop
/// snapshots: of the `temporaries` shape's arrays, the state `y` and `w`
/// (read before it is written), not `t` nor `u` (written whole before they
/// are read; `u` read after the loop too). Each snapshot is a `copy` of the
/// primal part. With segments of 16 iterations or more, `t`, dead after the
/// loop, is the segment's own array (a `new` of the segment function).
#[test]
fn checkpoints_snapshot_what_the_loop_reads_first() {
    for (every, own) in [(4, 0), (16, 1)] {
        let shape = SHAPES
            .iter()
            .find(|(n, _)| *n == "temporaries")
            .expect("shape")
            .1
            .replace("@CK@", &format!("[checkpoint({every})]"));
        let src = format!("{shape}\n[autodiff_reverse(df, Active, Duplicated, Const, Active)]\ndouble entry(double x, double[] a, int n) {{ return f(x, a, n); }}");
        let mut m = adc::driver::frontend("ck.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        adc::driver::run_stages(&mut m, adc::Stage::Unzip).unwrap_or_else(|e| panic!("{e:?}"));
        let dump = |f: &adc_ir::Function| {
            let mut out = String::new();
            adc_ir::print::write_function(&mut out, Some(&m), f).expect("prints");
            out
        };
        let count = |f: &adc_ir::Function, pred: &dyn Fn(&adc_ir::InstData) -> bool| {
            f.layout
                .iter()
                .flat_map(|b| &f.dfg.block(*b).insts)
                .filter(|i| pred(f.dfg.inst(**i)))
                .count()
        };
        let df = m.func(m.find("df").expect("df"));
        let copies = count(df, &|d| matches!(d, adc_ir::InstData::ArrayCopy { .. }));
        assert_eq!(copies, 2, "every {every}: {}", dump(df));
        let seg = m
            .funcs
            .iter()
            .find(|f| f.name.starts_with("__adc_seg") && !f.name.contains("jvp"))
            .expect("a segment function");
        let news = count(seg, &|d| matches!(d, adc_ir::InstData::ArrayNew { .. }));
        assert_eq!(news, own, "every {every}: {}", dump(seg));
    }
}
