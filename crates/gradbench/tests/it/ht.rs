//! GradBench's `ht` (hand tracking): adc's residuals and dense Jacobian,
//! through the tool, against a direct implementation of the eval's
//! specification and central differences of it, on small synthetic hands
//! (a 22-bone hand as GradBench's, whose every theta matters, and a short
//! chain of bones), in both variants (points on vertices; points on
//! triangles, with us), with the exact output shape GradBench's validation
//! compares against `manual`'s.

use crate::common;

use crate::common::{close, eval, eval_tuned};
use serde_json::{json, Value as Json};

type M4 = [[f64; 4]; 4];

/// A hand model and the data to fit: as GradBench's `HTInput`.
#[derive(Clone)]
struct Hand {
    parents: Vec<i64>,
    base_relatives: Vec<M4>,
    inverse_base_absolutes: Vec<M4>,
    /// Homogeneous base positions, one per vertex.
    base_positions: Vec<[f64; 4]>,
    /// weights[v][b]: vertex v's weight for bone b.
    weights: Vec<Vec<f64>>,
    triangles: Vec<[usize; 3]>,
    is_mirrored: bool,
    correspondences: Vec<usize>,
    points: Vec<[f64; 3]>,
    theta: Vec<f64>,
    /// Empty, or two per point (the complicated variant).
    us: Vec<[f64; 2]>,
}

fn mul(a: &M4, b: &M4) -> M4 {
    let mut c = [[0.0; 4]; 4];
    for (i, row) in c.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

fn identity() -> M4 {
    let mut m = [[0.0; 4]; 4];
    for (i, row) in m.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    m
}

/// The rotation about axis `axis` (0 x, 1 y, 2 z) by `t`, as a 4x4 matrix.
fn rotation(axis: usize, t: f64) -> M4 {
    let (i, j) = [(1, 2), (2, 0), (0, 1)][axis];
    let mut m = identity();
    m[i][i] = t.cos();
    m[j][j] = t.cos();
    m[j][i] = t.sin();
    m[i][j] = -t.sin();
    m
}

/// The pose parameters as columns of three: the global rotation, the
/// scale (ones), the global translation, then a column per bone, zero but
/// for each finger's three joints (columns 5 + 4f + j: x, and for j = 0
/// also z, taken from theta in order). Columns past the bones are dropped.
fn pose_params(theta: &[f64], bones: usize) -> Vec<[f64; 3]> {
    let mut p = vec![[0.0; 3]; bones + 3];
    p[0] = [theta[0], theta[1], theta[2]];
    p[1] = [1.0; 3];
    p[2] = [theta[3], theta[4], theta[5]];
    let mut t = 6;
    for f in 0..5 {
        for j in 0..3 {
            let mut col = [theta[t], 0.0, 0.0];
            t += 1;
            if j == 0 {
                col[1] = theta[t];
                t += 1;
            }
            if let Some(c) = p.get_mut(5 + 4 * f + j) {
                *c = col;
            }
        }
    }
    p
}

/// Every vertex's skinned position: bone b's posed relative transform is
/// its base relative one times Rz Ry Rx of its pose column (x, z, y);
/// absolutes chain them from the root; a vertex is the weighted sum over
/// all bones of absolute * inverse base absolute * its base position (the
/// first three rows); x negated if mirrored; then rotated by the global
/// angle-axis rotation (Rodrigues' formula; none below norm 1e-4) and
/// translated.
fn vertices(h: &Hand, theta: &[f64]) -> Vec<[f64; 3]> {
    let nb = h.parents.len();
    let pose = pose_params(theta, nb);
    let mut absolutes: Vec<M4> = Vec::new();
    for b in 0..nb {
        let [x, z, y] = pose[b + 3];
        let r = mul(&mul(&rotation(2, z), &rotation(1, y)), &rotation(0, x));
        let rel = mul(&h.base_relatives[b], &r);
        let abs = match h.parents[b] {
            -1 => rel,
            p => mul(&absolutes[p as usize], &rel),
        };
        absolutes.push(abs);
    }
    let transforms: Vec<M4> = (0..nb)
        .map(|b| mul(&absolutes[b], &h.inverse_base_absolutes[b]))
        .collect();
    let a = [theta[0], theta[1], theta[2]];
    let n = a.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut rot = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    if n >= 1e-4 {
        let k = [a[0] / n, a[1] / n, a[2] / n];
        let kx = [[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]];
        for i in 0..3 {
            for j in 0..3 {
                let id = if i == j { 1.0 } else { 0.0 };
                rot[i][j] = n.cos() * id + n.sin() * kx[i][j] + (1.0 - n.cos()) * k[i] * k[j];
            }
        }
    }
    h.base_positions
        .iter()
        .zip(&h.weights)
        .map(|(x, w)| {
            let mut s = [0.0; 3];
            for (t, wb) in transforms.iter().zip(w) {
                for (i, si) in s.iter_mut().enumerate() {
                    *si += wb * (0..4).map(|k| t[i][k] * x[k]).sum::<f64>();
                }
            }
            if h.is_mirrored {
                s[0] = -s[0];
            }
            let mut g = [0.0; 3];
            for (i, gi) in g.iter_mut().enumerate() {
                *gi = (0..3).map(|k| rot[i][k] * s[k]).sum::<f64>() + theta[3 + i];
            }
            g
        })
        .collect()
}

/// The residuals: each point minus its vertex, or (with us) minus
/// u0 a + u1 b + (1 - u0 - u1) c for its triangle (a, b, c).
fn residuals(h: &Hand) -> Vec<f64> {
    let v = vertices(h, &h.theta);
    let mut out = Vec::new();
    for (i, p) in h.points.iter().enumerate() {
        let c = h.correspondences[i];
        for j in 0..3 {
            let at = if h.us.is_empty() {
                v[c][j]
            } else {
                let [u0, u1] = h.us[i];
                let [a, b, t] = h.triangles[c];
                u0 * v[a][j] + u1 * v[b][j] + (1.0 - u0 - u1) * v[t][j]
            };
            out.push(p[j] - at);
        }
    }
    out
}

/// The Jacobian by central differences, as rows (3 per point): with us,
/// first the two columns of the row's own point's us, then theta's.
fn expected_jacobian(h: &Hand) -> Vec<Vec<f64>> {
    let rows = 3 * h.points.len();
    let extra = if h.us.is_empty() { 0 } else { 2 };
    let mut jac = vec![vec![0.0; extra + h.theta.len()]; rows];
    let diff = |at: &dyn Fn(&mut Hand) -> &mut f64| -> Vec<f64> {
        let step = |by: f64| {
            let mut q = h.clone();
            let v = at(&mut q);
            let dh = 1e-6 * v.abs().max(1.0);
            *v += by * dh;
            (residuals(&q), dh)
        };
        let ((up, dh), (down, _)) = (step(1.0), step(-1.0));
        up.iter()
            .zip(&down)
            .map(|(u, d)| (u - d) / (2.0 * dh))
            .collect()
    };
    for c in 0..extra {
        for i in 0..h.points.len() {
            let d = diff(&|q: &mut Hand| &mut q.us[i][c]);
            for j in 0..3 {
                jac[3 * i + j][c] = d[3 * i + j];
            }
        }
    }
    for c in 0..h.theta.len() {
        let d = diff(&|q: &mut Hand| &mut q.theta[c]);
        for (r, row) in jac.iter_mut().enumerate() {
            row[extra + c] = d[r];
        }
    }
    jac
}

/// A deterministic stream of numbers in [-1, 1).
fn wave(seed: f64) -> impl FnMut() -> f64 {
    let mut k = 0.0;
    move || {
        k += 1.0;
        ((seed * k).sin() * 43758.5453).fract()
    }
}

/// A rigid 4x4 transform of rotation angles and translation from `r`.
fn rigid(r: &mut impl FnMut() -> f64) -> M4 {
    let m = mul(
        &mul(&rotation(0, 2.0 * r()), &rotation(1, 2.0 * r())),
        &rotation(2, 2.0 * r()),
    );
    let mut m = m;
    for row in m.iter_mut().take(3) {
        row[3] = 0.3 * r();
    }
    m
}

/// A synthetic hand of the given bone tree: eight vertices, each with
/// weights on one to three bones (one vertex per finger tip when there are
/// fingers), four triangles, ten points.
fn hand(parents: Vec<i64>, mirrored: bool, complicated: bool) -> Hand {
    hand_with_points(parents, mirrored, complicated, 10)
}

/// `hand` with `npts` points.
fn hand_with_points(parents: Vec<i64>, mirrored: bool, complicated: bool, npts: usize) -> Hand {
    let nb = parents.len();
    let mut r = wave(12.9898 + nb as f64);
    let base_relatives = (0..nb).map(|_| rigid(&mut r)).collect();
    let inverse_base_absolutes = (0..nb).map(|_| rigid(&mut r)).collect();
    let nv = 8;
    let base_positions = (0..nv).map(|_| [r(), r(), r(), 1.0]).collect();
    let weights = (0..nv)
        .map(|v| {
            let mut w = vec![0.0; nb];
            // The tip of finger v (v < 5), or bones spread over the tree.
            let first = if nb >= 21 && v < 5 {
                4 * v + 4
            } else {
                (5 * v + 3) % nb
            };
            w[first] += 0.6;
            w[(first + nb - 1) % nb] += 0.3;
            if v % 2 == 1 {
                w[(7 * v) % nb] += 0.1;
            }
            w
        })
        .collect();
    let triangles = vec![[0, 1, 2], [3, 4, 5], [6, 7, 0], [2, 5, 7]];
    let correspondences = (0..npts)
        .map(|i| {
            if complicated {
                (3 * i + 1) % 4
            } else {
                (3 * i + 2) % nv
            }
        })
        .collect();
    let points = (0..npts).map(|_| [r(), r(), r()]).collect();
    let theta = (0..26)
        .map(|i| if i < 3 { 0.4 + 0.3 * r() } else { 0.5 * r() })
        .collect();
    let us = if complicated {
        (0..npts)
            .map(|_| [0.4 + 0.3 * r(), 0.3 * r().abs()])
            .collect()
    } else {
        Vec::new()
    };
    Hand {
        parents,
        base_relatives,
        inverse_base_absolutes,
        base_positions,
        weights,
        triangles,
        is_mirrored: mirrored,
        correspondences,
        points,
        theta,
        us,
    }
}

/// GradBench's hand: the wrist, five fingers of four bones, the forearm.
fn hand_tree() -> Vec<i64> {
    let mut p = vec![-1];
    for _ in 0..5 {
        let first = p.len() as i64;
        p.extend([0, first, first + 1, first + 2]);
    }
    p.push(0);
    p
}

/// The input as GradBench's eval sends it (`HTInput`).
fn input(h: &Hand) -> Json {
    let nb = h.parents.len();
    json!({
        "theta": h.theta,
        "us": h.us,
        "data": {
            "model": {
                "bone_count": nb,
                "bone_names": (0..nb).map(|b| format!("bone{b}")).collect::<Vec<_>>(),
                "parents": h.parents,
                "base_relatives": h.base_relatives,
                "inverse_base_absolutes": h.inverse_base_absolutes,
                "base_positions": h.base_positions,
                "weights": h.weights,
                "triangles": h.triangles,
                "is_mirrored": h.is_mirrored,
            },
            "correspondences": h.correspondences,
            "points": h.points,
        },
    })
}

fn floats(j: &Json) -> Vec<f64> {
    j.as_array()
        .expect("an array")
        .iter()
        .map(|v| {
            assert!(v.is_f64(), "{v} is not a float");
            v.as_f64().unwrap()
        })
        .collect()
}

/// The tool's objective and Jacobian on `h` against the reference: the
/// objective a list of 3 * points floats, the Jacobian a list of as many
/// rows of 26 floats (28 with us), as `manual` answers.
fn check(h: &Hand) {
    // GradBench's C++ (and so the plain port) poses five fingers of four
    // bones: other trees go to the tuned port alone.
    let eval = if h.parents.len() == 22 {
        eval
    } else {
        eval_tuned
    };
    let rows = 3 * h.points.len();
    let obj = floats(&eval("ht", "objective", input(h)));
    let want = residuals(h);
    assert_eq!(obj.len(), rows);
    for (g, w) in obj.iter().zip(&want) {
        close(*g, *w, 1e-12);
    }

    let jac = eval("ht", "jacobian", input(h));
    let got = jac.as_array().expect("rows");
    assert_eq!(got.len(), rows);
    let cols = if h.us.is_empty() { 26 } else { 28 };
    let want = expected_jacobian(h);
    let mut nonzero = vec![false; cols];
    for (g, w) in got.iter().zip(&want) {
        let g = floats(g);
        assert_eq!(g.len(), cols);
        for (c, (g, w)) in g.iter().zip(w).enumerate() {
            close(*g, *w, 1e-6);
            nonzero[c] |= *g != 0.0;
        }
    }
    // On GradBench's tree, with points on every vertex, every column
    // matters.
    if h.parents.len() == 22 && h.points.len() >= 10 {
        assert!(nonzero.iter().all(|&n| n), "{nonzero:?}");
    }
}

#[test]
fn ht_simple_on_a_hand() {
    check(&hand(hand_tree(), false, false));
}

#[test]
fn ht_complicated_on_a_mirrored_hand() {
    check(&hand(hand_tree(), true, true));
}

#[test]
fn ht_on_a_chain_of_four_bones() {
    let chain = vec![-1, 0, 1, 2];
    check(&hand(chain.clone(), true, false));
    check(&hand(chain, false, true));
}

#[test]
fn ht_on_few_and_many_points() {
    // adc's objective poses only the vertices the points use, unless they
    // use four times as many vertex slots as there are vertices (8 here).
    check(&hand_with_points(hand_tree(), false, false, 3));
    check(&hand_with_points(hand_tree(), true, true, 2));
    check(&hand_with_points(hand_tree(), true, false, 40));
    check(&hand_with_points(hand_tree(), false, true, 12));
}

#[test]
fn ht_without_global_rotation() {
    // Below norm 1e-4 the global rotation is the identity.
    let mut h = hand(hand_tree(), false, true);
    h.theta[..3].copy_from_slice(&[0.0, 0.0, 0.0]);
    let obj = floats(&eval("ht", "objective", input(&h)));
    for (g, w) in obj.iter().zip(&residuals(&h)) {
        close(*g, *w, 1e-12);
    }
}

#[test]
fn ht_refuses_malformed_input() {
    let h = hand(hand_tree(), false, false);
    let mut bad = input(&h);
    bad["data"]["correspondences"][0] = json!(8);
    let msgs = [
        json!({"id": 0, "kind": "start", "eval": "ht"}),
        json!({"id": 1, "kind": "define", "module": "ht"}),
        json!({"id": 2, "kind": "evaluate", "module": "ht", "function": "objective", "input": bad}),
    ];
    let r = common::session(&msgs);
    assert_eq!(r[2]["success"], false, "{}", r[2]);
}
