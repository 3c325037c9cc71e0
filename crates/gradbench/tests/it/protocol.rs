//! The GradBench tool on recorded protocol sessions: each eval's primal
//! and gradient against values computed here independently (closed forms
//! and central differences of a direct implementation), and GradBench's
//! rules for timings, unknown modules and functions.

use crate::common::{close, eval, session, session_with, vec_of};
use serde_json::{json, Value as Json};

#[test]
fn lse_primal_and_gradient() {
    let x = [0.3, -1.2, 2.5, 0.0, 1.7];
    let m = 2.5f64;
    let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
    close(
        eval("lse", "primal", json!({"x": x})).as_f64().unwrap(),
        m + s.ln(),
        1e-14,
    );
    let g = vec_of(&eval("lse", "gradient", json!({"x": x})));
    for (gi, xi) in g.iter().zip(x) {
        close(*gi, (xi - m).exp() / s, 1e-14);
    }
}

fn llsq(x: &[f64], n: usize) -> f64 {
    let mut y = 0.0;
    for i in 0..n {
        let t = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
        let mut r = if t > 0.0 {
            1.0
        } else if t < 0.0 {
            -1.0
        } else {
            0.0
        };
        for (j, xj) in x.iter().enumerate() {
            r -= xj * t.powi(j as i32);
        }
        y += r * r;
    }
    0.5 * y
}

#[test]
fn llsq_primal_and_gradient() {
    let x = [0.5, -0.25, 1.0, 0.125];
    let n = 11;
    let y = eval("llsq", "primal", json!({"x": x, "n": n}))
        .as_f64()
        .unwrap();
    close(y, llsq(&x, n), 1e-13);
    let g = vec_of(&eval("llsq", "gradient", json!({"x": x, "n": n})));
    for j in 0..x.len() {
        let h = 1e-6;
        let (mut xp, mut xm) = (x, x);
        xp[j] += h;
        xm[j] -= h;
        close(g[j], (llsq(&xp, n) - llsq(&xm, n)) / (2.0 * h), 1e-7);
    }
}

#[test]
fn det_primal_and_gradient() {
    // The gradient of det(A) is the matrix of cofactors.
    let a = [2.0, -1.0, 0.5, 1.0, 3.0, -2.0, 0.0, 4.0, 1.5];
    let det = |m: &[f64]| {
        m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
            + m[2] * (m[3] * m[7] - m[4] * m[6])
    };
    close(
        eval("det", "primal", json!({"A": a, "ell": 3}))
            .as_f64()
            .unwrap(),
        det(&a),
        1e-14,
    );
    let g = vec_of(&eval("det", "gradient", json!({"A": a, "ell": 3})));
    let (r, c) = (|k: usize| k / 3, |k: usize| k % 3);
    for k in 0..9 {
        let minor: Vec<f64> = (0..9)
            .filter(|&q| r(q) != r(k) && c(q) != c(k))
            .map(|q| a[q])
            .collect();
        let sign = if (r(k) + c(k)) % 2 == 0 { 1.0 } else { -1.0 };
        close(
            g[k],
            sign * (minor[0] * minor[3] - minor[1] * minor[2]),
            1e-14,
        );
    }
}

/// One `evaluate` timing per run, at least `min_runs` of them; unknown
/// modules and functions are failures with a message, not crashes.
#[test]
fn timings_and_failures_follow_the_protocol() {
    let r = session(&[
        json!({"id": 0, "kind": "start"}),
        json!({"id": 1, "kind": "define", "module": "lse"}),
        json!({"id": 2, "kind": "evaluate", "module": "lse", "function": "primal",
               "input": {"x": [1.0, 2.0], "min_runs": 4, "min_seconds": 0}}),
        json!({"id": 3, "kind": "evaluate", "module": "lse", "function": "hessian",
               "input": {"x": [1.0]}}),
        json!({"id": 4, "kind": "define", "module": "no-such-eval"}),
        json!({"id": 5, "kind": "analysis", "of": 2, "valid": true}),
    ]);
    assert_eq!(r[0]["tool"], "adc");
    let timings = r[2]["timings"].as_array().expect("timings");
    assert!(timings.len() >= 4);
    assert!(timings
        .iter()
        .all(|t| t["name"] == "evaluate" && t["nanoseconds"].is_u64()));
    assert_eq!(
        (r[3]["success"].clone(), r[3]["error"].is_string()),
        (json!(false), true)
    );
    assert_eq!(r[4]["success"], false);
    assert_eq!(r[5]["id"], 5);
}

/// `--plain` is the tool `adc-plain`, on the plain ports: it has no
/// saddle or particle.
#[test]
fn plain_is_its_own_tool() {
    let r = session_with(
        &["--plain"],
        &[
            json!({"id": 0, "kind": "start"}),
            json!({"id": 1, "kind": "define", "module": "lse"}),
            json!({"id": 2, "kind": "define", "module": "saddle"}),
        ],
    );
    assert_eq!(r[0]["tool"], "adc-plain");
    assert_eq!(r[1]["success"], true);
    assert_eq!(r[2]["success"], false);
}

/// GMM's log posterior written directly from the eval's specification
/// (Q_k built as a matrix, the multivariate gamma by its product formula).
fn gmm_reference(
    alpha: &[f64],
    mu: &[f64],
    q: &[f64],
    l: &[f64],
    x: &[f64],
    d: usize,
    m: i64,
    gamma: f64,
) -> f64 {
    let k = alpha.len();
    let n = x.len() / d;
    let tri = d * (d - 1) / 2;
    let lse = |v: &[f64]| {
        let a = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        a + v.iter().map(|z| (z - a).exp()).sum::<f64>().ln()
    };
    let qmat = |c: usize| {
        let mut qm = vec![vec![0.0; d]; d];
        let mut idx = 0;
        for col in 0..d {
            qm[col][col] = q[c * d + col].exp();
            for row in col + 1..d {
                qm[row][col] = l[c * tri + idx];
                idx += 1;
            }
        }
        qm
    };
    let mut total = 0.0;
    for i in 0..n {
        let beta: Vec<f64> = (0..k)
            .map(|c| {
                let qm = qmat(c);
                let sq: f64 = (0..d)
                    .map(|r| {
                        let y: f64 = (0..d)
                            .map(|s| qm[r][s] * (x[i * d + s] - mu[c * d + s]))
                            .sum();
                        y * y
                    })
                    .sum();
                alpha[c] - 0.5 * sq + (0..d).map(|r| q[c * d + r]).sum::<f64>()
            })
            .collect();
        total += lse(&beta);
    }
    total -= n as f64 * (0.5 * d as f64 * (2.0 * std::f64::consts::PI).ln() + lse(alpha));
    let dof = d as i64 + m + 1;
    let lgamma = |z: f64| -> f64 {
        // Lanczos approximation (g = 7, 9 terms), for z > 0.5.
        let c = [
            0.999_999_999_999_809_9,
            676.520_368_121_885_1,
            -1_259.139_216_722_402_8,
            771.323_428_777_653_1,
            -176.615_029_162_140_6,
            12.507_343_278_686_905,
            -0.138_571_095_265_720_12,
            9.984_369_578_019_572e-6,
            1.505_632_735_149_311_6e-7,
        ];
        let z = z - 1.0;
        let t = z + 7.5;
        let s: f64 = c[0] + (1..9).map(|i| c[i] / (z + i as f64)).sum::<f64>();
        0.5 * (2.0 * std::f64::consts::PI).ln() + (z + 0.5) * t.ln() - t + s.ln()
    };
    let log_gamma_d = (d * (d - 1)) as f64 / 4.0 * std::f64::consts::PI.ln()
        + (1..=d)
            .map(|j| lgamma(0.5 * dof as f64 + 0.5 * (1.0 - j as f64)))
            .sum::<f64>();
    let frob: f64 = (0..k)
        .map(|c| qmat(c).iter().flatten().map(|v| v * v).sum::<f64>())
        .sum();
    total + k as f64 * ((dof * d as i64) as f64 * (gamma / 2f64.sqrt()).ln() - log_gamma_d)
        - 0.5 * gamma * gamma * frob
        + m as f64 * q.iter().sum::<f64>()
}

#[test]
fn gmm_objective_and_jacobian() {
    let (k, d, n, m, gamma) = (3usize, 3usize, 5usize, 2i64, 1.3);
    let tri = d * (d - 1) / 2;
    let wave = |len: usize, f: f64| -> Vec<f64> {
        (0..len).map(|i| (f * (i as f64 + 1.0)).sin()).collect()
    };
    let (alpha, mu, l, x) = (
        wave(k, 0.7),
        wave(k * d, 1.3),
        wave(k * tri, 2.1),
        wave(n * d, 0.37),
    );
    let q: Vec<f64> = wave(k * d, 0.9).iter().map(|v| 0.3 * v).collect();
    let rows = |v: &[f64], w: usize| -> Json {
        Json::Array(v.chunks(w.max(1)).map(|r| json!(r)).collect())
    };
    let l_rows = if tri == 0 {
        json!(vec![Vec::<f64>::new(); k])
    } else {
        rows(&l, tri)
    };
    let input = json!({"alpha": alpha, "mu": rows(&mu, d), "q": rows(&q, d), "l": l_rows,
        "x": rows(&x, d), "m": m, "gamma": gamma, "d": d, "k": k, "n": n});
    let obj = eval("gmm", "objective", input.clone()).as_f64().unwrap();
    close(
        obj,
        gmm_reference(&alpha, &mu, &q, &l, &x, d, m, gamma),
        1e-12,
    );
    let jac = eval("gmm", "jacobian", input);
    let h = 1e-6;
    let mut vars = [alpha.clone(), mu.clone(), q.clone(), l.clone()];
    for (v, key) in ["alpha", "mu", "q", "l"].iter().enumerate() {
        let got: Vec<f64> = match &jac[key] {
            Json::Array(a) if *key == "alpha" => a.iter().map(|z| z.as_f64().unwrap()).collect(),
            Json::Array(a) => a.iter().flat_map(|r| vec_of(r)).collect(),
            other => panic!("{key}: {other}"),
        };
        assert_eq!(got.len(), vars[v].len(), "{key}");
        for j in 0..vars[v].len() {
            let at = |vars: &[Vec<f64>; 4]| {
                gmm_reference(&vars[0], &vars[1], &vars[2], &vars[3], &x, d, m, gamma)
            };
            vars[v][j] += h;
            let up = at(&vars);
            vars[v][j] -= 2.0 * h;
            let down = at(&vars);
            vars[v][j] += h;
            close(got[j], (up - down) / (2.0 * h), 1e-6);
        }
    }
}

/// RK4 is exact for polynomials of degree at most 4: with four states,
/// y_i(2) = x_0 ... x_i 2^(i+1) / (i+1)!, and the gradient of y_3(2) is
/// y_3(2) / x_j.
#[test]
fn ode_primal_and_gradient() {
    let x = [0.7, -1.3, 2.1, 0.4];
    let y = vec_of(&eval("ode", "primal", json!({"x": x, "s": 7})));
    let mut prod = 1.0;
    let mut fact = 1.0;
    for i in 0..4 {
        prod *= x[i];
        fact *= (i + 1) as f64;
        close(y[i], prod * 2f64.powi(i as i32 + 1) / fact, 1e-13);
    }
    let g = vec_of(&eval("ode", "gradient", json!({"x": x, "s": 7})));
    for j in 0..4 {
        close(g[j], y[3] / x[j], 1e-13);
    }
}

/// Nested derivatives in all four orders through descents with
/// data-dependent loops and branches: every order finds the saddle point
/// (0, 0), (0, 0) of f within the solver's tolerance, at the point
/// GradBench's eval expects (its `expect`, 8.246324826140356e-06 for each
/// coordinate, computed by its reference implementations).
#[test]
fn saddle_in_every_order() {
    for order in ["ff", "fr", "rf", "rr"] {
        let out = vec_of(&eval("saddle", order, json!({"start": [1.0, 1.0]})));
        assert_eq!(out.len(), 4, "{order}");
        for v in out {
            close(v, 8.246324826140356e-06, 1e-9);
            assert!(v.abs() < 1e-4, "{order}: {v}");
        }
    }
}

/// Nested derivatives in all four orders through an Euler integration
/// with a data-dependent stop: every order finds GradBench's expected w
/// (its `expect`, 0.2071918746486116) to within rounding.
#[test]
fn particle_in_every_order() {
    for order in ["ff", "fr", "rf", "rr"] {
        let w = eval("particle", order, json!({"w": 0.0}))
            .as_f64()
            .expect("a number");
        close(w, 0.2071918746486116, 1e-13);
    }
}

/// kmeans: the cost, and the Newton direction J / H, which for this cost
/// is (C_j - mean of C_j's points) per centroid (J = 2 sum (C_j - P_i),
/// H = 2 * count).
#[test]
fn kmeans_cost_and_direction() {
    let points = [[0.0, 0.0], [1.0, 0.5], [5.0, 5.0], [6.0, 5.5], [5.5, 6.0]];
    let centroids = [[0.2, 0.1], [5.4, 5.1]];
    let input = json!({"points": points, "centroids": centroids});
    let near = |p: &[f64; 2]| {
        let dist = |c: &[f64; 2]| (c[0] - p[0]).powi(2) + (c[1] - p[1]).powi(2);
        if dist(&centroids[0]) <= dist(&centroids[1]) {
            0
        } else {
            1
        }
    };
    let want_cost: f64 = points
        .iter()
        .map(|p| {
            (0..2)
                .map(|r| (centroids[near(p)][r] - p[r]).powi(2))
                .sum::<f64>()
        })
        .sum();
    close(
        eval("kmeans", "cost", input.clone()).as_f64().unwrap(),
        want_cost,
        1e-14,
    );
    let dir = eval("kmeans", "dir", input);
    for (j, c) in centroids.iter().enumerate() {
        let mine: Vec<&[f64; 2]> = points.iter().filter(|p| near(p) == j).collect();
        let got = vec_of(&dir[j]);
        for r in 0..2 {
            let mean = mine.iter().map(|p| p[r]).sum::<f64>() / mine.len() as f64;
            close(got[r], c[r] - mean, 1e-14);
        }
    }
}

/// GradBench's LSTM loss, written directly from its reference
/// implementation's description (layers of four gates, logsumexp + 2).
fn lstm_reference(main: &[f64], extra: &[f64], state0: &[f64], seq: &[f64], b: usize) -> f64 {
    let l = main.len() / (8 * b);
    let c = seq.len() / b;
    let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
    let mut state = state0.to_vec();
    let mut total = 0.0;
    for t in 0..c - 1 {
        let mut input: Vec<f64> = (0..b).map(|i| seq[t * b + i] * extra[i]).collect();
        for k in 0..l {
            let p = &main[8 * b * k..8 * b * (k + 1)];
            for i in 0..b {
                let (h, cell) = (state[2 * b * k + i], state[2 * b * k + b + i]);
                let forget = sig(input[i] * p[i] + p[4 * b + i]);
                let ingate = sig(h * p[b + i] + p[5 * b + i]);
                let outgate = sig(input[i] * p[2 * b + i] + p[6 * b + i]);
                let change = (h * p[3 * b + i] + p[7 * b + i]).tanh();
                let cell = cell * forget + ingate * change;
                state[2 * b * k + b + i] = cell;
                state[2 * b * k + i] = outgate * cell.tanh();
            }
            input = state[2 * b * k..2 * b * k + b].to_vec();
        }
        let y: Vec<f64> = (0..b)
            .map(|i| input[i] * extra[b + i] + extra[2 * b + i])
            .collect();
        let lse = (y.iter().map(|v| v.exp()).sum::<f64>() + 2.0).ln();
        for i in 0..b {
            total += seq[(t + 1) * b + i] * (y[i] - lse);
        }
    }
    -total / ((c - 1) * b) as f64
}

#[test]
fn lstm_objective_and_jacobian() {
    let (l, b, c) = (2usize, 3usize, 4usize);
    let wave = |len: usize, f: f64| -> Vec<f64> {
        (0..len)
            .map(|i| 0.5 * (f * (i as f64 + 1.0)).sin())
            .collect()
    };
    let (main, extra, state, seq) = (
        wave(8 * b * l, 0.7),
        wave(3 * b, 1.1),
        wave(2 * b * l, 0.3),
        wave(c * b, 1.9),
    );
    let rows =
        |v: &[f64], w: usize| -> Json { Json::Array(v.chunks(w).map(|r| json!(r)).collect()) };
    let input = json!({"main_params": rows(&main, 4 * b), "extra_params": rows(&extra, b),
        "state": rows(&state, b), "sequence": rows(&seq, b)});
    let obj = eval("lstm", "objective", input.clone()).as_f64().unwrap();
    close(obj, lstm_reference(&main, &extra, &state, &seq, b), 1e-13);
    let g = vec_of(&eval("lstm", "jacobian", input));
    assert_eq!(g.len(), main.len() + extra.len());
    let h = 1e-6;
    for j in 0..g.len() {
        let (mut m, mut e) = (main.clone(), extra.clone());
        let at = |m: &[f64], e: &[f64]| lstm_reference(m, e, &state, &seq, b);
        let bump = |m: &mut Vec<f64>, e: &mut Vec<f64>, by: f64| {
            if j < main.len() {
                m[j] += by
            } else {
                e[j - main.len()] += by
            }
        };
        bump(&mut m, &mut e, h);
        let up = at(&m, &e);
        bump(&mut m, &mut e, -2.0 * h);
        let down = at(&m, &e);
        close(g[j], (up - down) / (2.0 * h), 1e-7);
    }
}
