//! GradBench's `ba` (bundle adjustment): adc's objective and sparse
//! Jacobian against a direct implementation of the eval's specification
//! and central differences of it, through the tool on GradBench's repeated
//! input (with the exact output shape GradBench's validation compares
//! against `manual`'s), and through the JIT on an instance whose cameras,
//! points, weights and features all differ.

use crate::common::{close, eval};
use adc::{ArgValue, ArrayValue};
use serde_json::{json, Value as Json};

/// A bundle adjustment problem: n cameras (11 parameters each), m points,
/// observation i of camera obs[2i] and point obs[2i+1] with weight w[i]
/// and feature feats[2i..2i+2].
#[derive(Clone)]
struct Ba {
    n: usize,
    m: usize,
    cams: Vec<f64>,
    x: Vec<f64>,
    w: Vec<f64>,
    obs: Vec<usize>,
    feats: Vec<f64>,
}

type Mat = [[f64; 3]; 3];

fn mul(a: &Mat, b: &Mat) -> Mat {
    let mut c = [[0.0; 3]; 3];
    for (i, row) in c.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

/// The cross-product matrix of a: cross(a) b = a x b.
fn cross(a: [f64; 3]) -> Mat {
    [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]
}

/// One observation's weighted reprojection error: rotation matrix
/// R = I + sin(t) K + (1 - cos t) K^2 (K the cross-product matrix of the
/// unit axis r / t, t = |r|; I + cross(r) at r = 0), X_cam = R (X - C),
/// projected to (X_cam0, X_cam1) / X_cam2, distorted by
/// 1 + k1 s + k2 s^2 (s its squared norm), times f plus the principal
/// point, minus the feature, times w.
fn reproj(cam: &[f64], x: &[f64], w: f64, feat: &[f64]) -> [f64; 2] {
    let r = [cam[0], cam[1], cam[2]];
    let t = r.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut rot = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let (k, k2) = if t == 0.0 {
        (cross(r), [[0.0; 3]; 3])
    } else {
        let k = cross([r[0] / t, r[1] / t, r[2] / t]);
        let (s, c) = (t.sin(), 1.0 - t.cos());
        let k2 = mul(&k, &k);
        (
            k.map(|row| row.map(|v| v * s)),
            k2.map(|row| row.map(|v| v * c)),
        )
    };
    for i in 0..3 {
        for j in 0..3 {
            rot[i][j] += k[i][j] + k2[i][j];
        }
    }
    let d = [x[0] - cam[3], x[1] - cam[4], x[2] - cam[5]];
    let q: Vec<f64> = (0..3)
        .map(|i| (0..3).map(|j| rot[i][j] * d[j]).sum())
        .collect();
    let (u, v) = (q[0] / q[2], q[1] / q[2]);
    let s = u * u + v * v;
    let l = 1.0 + cam[9] * s + cam[10] * s * s;
    [
        w * (cam[6] * l * u + cam[7] - feat[0]),
        w * (cam[6] * l * v + cam[8] - feat[1]),
    ]
}

/// Every residual: the 2p reprojection errors, then the p weight errors
/// 1 - w^2.
fn residuals(b: &Ba) -> Vec<f64> {
    let p = b.w.len();
    let mut out = Vec::new();
    for i in 0..p {
        let (c, j) = (b.obs[2 * i], b.obs[2 * i + 1]);
        out.extend(reproj(
            &b.cams[11 * c..11 * c + 11],
            &b.x[3 * j..3 * j + 3],
            b.w[i],
            &b.feats[2 * i..2 * i + 2],
        ));
    }
    out.extend(b.w.iter().map(|w| 1.0 - w * w));
    out
}

/// The Jacobian of the residuals in the columns (cams, x, w) as GradBench's
/// sparse matrix (rows, cols, vals): the row starts, then per row 2i+k
/// observation i's 11 camera, 3 point and 1 weight columns, and per row
/// 2p+i the column of w[i]; each value a central difference.
fn expected_jacobian(b: &Ba) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let (n, m, p) = (b.n, b.m, b.w.len());
    let dense: Vec<Vec<f64>> = (0..11 * n + 3 * m + p)
        .map(|col| {
            let at = |by: f64| {
                let mut q = b.clone();
                let v = match col {
                    c if c < 11 * n => &mut q.cams[c],
                    c if c < 11 * n + 3 * m => &mut q.x[c - 11 * n],
                    c => &mut q.w[c - 11 * n - 3 * m],
                };
                let h = 1e-6 * v.abs().max(1.0);
                *v += by * h;
                (residuals(&q), h)
            };
            let ((up, h), (down, _)) = (at(1.0), at(-1.0));
            up.iter()
                .zip(&down)
                .map(|(u, d)| (u - d) / (2.0 * h))
                .collect()
        })
        .collect();
    let (mut rows, mut cols, mut vals) = (vec![0i64], Vec::new(), Vec::new());
    for i in 0..p {
        let (c, j) = (b.obs[2 * i], b.obs[2 * i + 1]);
        for k in 0..2 {
            let wanted = (0..11)
                .map(|q| 11 * c + q)
                .chain((0..3).map(|q| 11 * n + 3 * j + q))
                .chain([11 * n + 3 * m + i]);
            for col in wanted {
                cols.push(col as i64);
                vals.push(dense[col][2 * i + k]);
            }
            rows.push(cols.len() as i64);
        }
    }
    for i in 0..p {
        let col = 11 * n + 3 * m + i;
        cols.push(col as i64);
        vals.push(dense[col][2 * p + i]);
        rows.push(cols.len() as i64);
    }
    (rows, cols, vals)
}

/// GradBench's repeated input as `manual` expands it: observation i of
/// camera i mod n and point i mod m.
fn repeated(n: usize, m: usize, p: usize, cam: &[f64], x: &[f64], w: f64, feat: &[f64]) -> Ba {
    Ba {
        n,
        m,
        cams: cam.repeat(n),
        x: x.repeat(m),
        w: vec![w; p],
        obs: (0..p).flat_map(|i| [i % n, i % m]).collect(),
        feats: feat.repeat(p),
    }
}

fn keys(j: &Json) -> Vec<&str> {
    let mut k: Vec<&str> = j
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort();
    k
}

/// The first 30 entries and the last, as GradBench transmits the Jacobian.
fn head_and_last<T: Clone>(v: &[T]) -> Vec<T> {
    let mut out = v[..30].to_vec();
    out.push(v[v.len() - 1].clone());
    out
}

#[test]
fn ba_objective_and_jacobian_through_the_tool() {
    let (n, m, p) = (3, 5, 10);
    let cam = [
        -0.36, 0.52, 0.21, 0.7, -1.1, -6.5, 420.0, 3.5, -2.25, 0.021, 0.0013,
    ];
    let (x, w, feat) = ([0.8, -0.45, 1.3], 0.83, [35.5, -61.0]);
    let input = json!({"n": n, "m": m, "p": p, "cam": cam, "x": x, "w": w, "feat": feat});
    let b = repeated(n, m, p, &cam, &x, w, &feat);
    let want = residuals(&b);

    let obj = eval("ba", "objective", input.clone());
    assert_eq!(keys(&obj), ["reproj_error", "w_err"]);
    assert_eq!(keys(&obj["reproj_error"]), ["elements", "repeated"]);
    assert_eq!(keys(&obj["w_err"]), ["element", "repeated"]);
    assert_eq!(obj["reproj_error"]["repeated"], json!(p));
    assert_eq!(obj["w_err"]["repeated"], json!(p));
    let elements = obj["reproj_error"]["elements"].as_array().unwrap();
    assert_eq!(elements.len(), 2);
    for (got, want) in elements.iter().zip(&want) {
        close(got.as_f64().unwrap(), *want, 1e-13);
    }
    close(
        obj["w_err"]["element"].as_f64().unwrap(),
        want[2 * p],
        1e-15,
    );

    let jac = eval("ba", "jacobian", input);
    assert_eq!(keys(&jac), ["cols", "rows", "vals"]);
    let (rows, cols, vals) = expected_jacobian(&b);
    assert_eq!(rows.len(), 3 * p + 1);
    assert_eq!(vals.len(), 31 * p);
    let ints = |k: &str| -> Vec<i64> {
        let a = jac[k].as_array().expect("an array");
        a.iter().map(|v| v.as_i64().expect("integers")).collect()
    };
    assert_eq!(ints("rows"), head_and_last(&rows));
    assert_eq!(ints("cols"), head_and_last(&cols));
    let got = jac["vals"].as_array().expect("an array");
    assert_eq!(got.len(), 31);
    for (g, w) in got.iter().zip(head_and_last(&vals)) {
        assert!(g.is_f64(), "{g}");
        close(g.as_f64().unwrap(), w, 1e-6);
    }
}

fn f64s(v: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v.to_vec()))
}

fn i64s(v: &[i64]) -> ArgValue {
    ArgValue::Array(ArrayValue::I64(v.to_vec()))
}

#[test]
fn ba_on_distinct_cameras_points_and_weights() {
    let (n, m, p) = (3usize, 5usize, 10usize);
    let wave = |len: usize, f: f64, a: f64| -> Vec<f64> {
        (0..len).map(|i| a * (f * (i as f64 + 1.0)).sin()).collect()
    };
    let (rot, centre, pp) = (
        wave(3 * n, 1.7, 0.4),
        wave(3 * n, 0.9, 1.0),
        wave(2 * n, 2.3, 6.0),
    );
    let mut cams = Vec::new();
    for c in 0..n {
        // Camera 1 does not rotate (the Rodrigues formula's other branch).
        let r = if c == 1 {
            [0.0; 3]
        } else {
            [rot[3 * c], rot[3 * c + 1], rot[3 * c + 2]]
        };
        cams.extend(r);
        cams.extend([centre[3 * c], centre[3 * c + 1], centre[3 * c + 2] - 7.0]);
        cams.extend([380.0 + 40.0 * c as f64, pp[2 * c], pp[2 * c + 1]]);
        cams.extend([0.02 - 0.01 * c as f64, 0.001 * (c as f64 - 1.0)]);
    }
    let b = Ba {
        n,
        m,
        cams,
        x: wave(3 * m, 0.77, 1.2),
        w: wave(p, 1.3, 0.3).iter().map(|v| 0.9 + v).collect(),
        obs: (0..p)
            .flat_map(|i| [(7 * i + 1) % n, (3 * i + 2) % m])
            .collect(),
        feats: wave(2 * p, 0.41, 60.0),
    };
    let jit = adc::compile_jit(
        "ba.ad",
        include_str!("../../../../gradbench/evals/ba.ad"),
        &adc::CompileOptions::default(),
    )
    .unwrap_or_else(|f| panic!("{f}"));
    let obs: Vec<i64> = b.obs.iter().map(|&v| v as i64).collect();
    let inputs = || {
        vec![
            f64s(&b.cams),
            f64s(&b.x),
            f64s(&b.w),
            i64s(&obs),
            f64s(&b.feats),
        ]
    };
    let floats = |a: &ArgValue| match a {
        ArgValue::Array(ArrayValue::F64(v)) => v.clone(),
        other => panic!("{other:?}"),
    };
    let ints = |a: &ArgValue| match a {
        ArgValue::Array(ArrayValue::I64(v)) => v.clone(),
        other => panic!("{other:?}"),
    };

    let mut args = inputs();
    args.extend([f64s(&vec![0.0; 2 * p]), f64s(&vec![0.0; p])]);
    jit.call("ba_objective", &mut args).expect("runs");
    let want = residuals(&b);
    let got: Vec<f64> = floats(&args[5])
        .into_iter()
        .chain(floats(&args[6]))
        .collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        close(*g, *w, 1e-13);
    }

    let mut args = inputs();
    args.extend([
        f64s(&vec![0.0; 31 * p]),
        i64s(&vec![0; 3 * p + 1]),
        i64s(&vec![0; 31 * p]),
    ]);
    jit.call("ba_jacobian", &mut args).expect("runs");
    let (rows, cols, vals) = expected_jacobian(&b);
    assert_eq!(ints(&args[6]), rows);
    assert_eq!(ints(&args[7]), cols);
    for (g, w) in floats(&args[5]).iter().zip(&vals) {
        close(*g, *w, 1e-6);
    }
}
