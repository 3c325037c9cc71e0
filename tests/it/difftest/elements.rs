//! (k) The element oracle, on one seed in six: a random *element-shaped*
//! function (docs/jacobians.md#element-jacobians), compiled on its own,
//! whose sparse Jacobian takes the element path, with a static pattern or
//! a sweep per iteration:
//!
//! ```text
//! [jacobian(J)] [jacobian(S, sparse)]
//! void e(double[] x, double[] u, int[] ix, int[] rp, out double[] y, out double[] z) {
//!     int n = len(ix) / 2;
//!     for (int i = 0; i < n; i++) { ...; y[R * i] = ...; y[R * i + 1] = ...; }
//!     for (int i = 0; i < len(z); i++) { ...; z[i] = ...; }
//! }
//! ```
//!
//! A loop body reads `x` and `u` at one base each (`i + 2`,
//! `K * ix[2 * i] + c`, `ix[2 * i + 1] * K + c`, `len(x) - 4 - i`,
//! `n + 1 - i`, a constant, or a local `int` holding one) plus constants
//! from -2 to 3, directly, in inner loops of constant bounds, in local
//! arrays, through `static` callees taking the array and the base (or a
//! view around it), and through callees that write the rows (`out`
//! parameter and row index); float branches and ternaries whose arms read
//! the same elements; branches on integer conditions (`i > 0`,
//! `ix[2 * i] >= 2`, a `bool` declared before the loops) whose arms read
//! different elements, which the static pattern follows per iteration;
//! `double`s declared before the loops that depend on no input (and
//! sometimes one that does: no element path then); smooth math. On two
//! programs in five some constructs force the sweep (`abs`, `floor`,
//! `min`, `max`, a second base for an input, float branches whose arms
//! read different elements). The
//! rows are `R * i + j` or `R * rp[i] + j`, `rp` increasing or (sometimes)
//! not, and sometimes written out of order: then the element path falls
//! back to the coloring at run time. Every index is in bounds: `ix` holds
//! 0 to 3, `x` and `u` at least 19 elements, every base is from 2 to
//! the length less 4.
//!
//! At one or two random points: `S` against `J` (values to 1e-12
//! relative, every nonzero listed), rows well formed, `rows[nr]` equal to
//! `S_nnz` (its independent dependency sweep: the exact pattern), `S` and
//! `S_nnz` write what `e` writes, and (when `S` has an element path) `S`
//! equal to the coloring `S__colored` (the pattern exactly, the values to 1e-12 relative: they
//! are not always equal to the last bit, sums of several paths rounding
//! in other orders). Which loops are static is
//! read from the frontend's module (`S__eKm`, the sweep, is not
//! generated), for the counts of the summary.

use super::gen::Rng;
use super::oracle::{close, fail, Fail, Outcome};
use adc::{ArgValue, ArrayValue, Constant, JitModule};

/// Whether seed `seed` gets the element oracle (even seeds: never the
/// dense Jacobian's, `seed % 4 == 1`).
pub fn enabled(seed: u64) -> bool {
    seed % 6 == 4
}

/// What the element oracle ran on one seed (all zero when it did not).
#[derive(Clone, Copy, Default, Debug)]
pub struct Counts {
    /// An element program ran (0 or 1).
    pub programs: u8,
    /// It has a loop with a static pattern, one that sweeps (0 or 1 each).
    pub statics: u8,
    pub swept: u8,
    /// Its sparse Jacobian did not take the element path at all.
    pub not_element: u8,
}

impl Counts {
    /// The columns of a campaign's results log (`campaign.py`): element
    /// program, static loop, swept loop.
    pub fn columns(&self) -> String {
        format!("{}\t{}\t{}", self.programs, self.statics, self.swept)
    }
}

/// [`Counts`] summed over a run.
#[derive(Default)]
pub struct Counts64 {
    pub programs: u64,
    pub statics: u64,
    pub swept: u64,
    pub not_element: u64,
}

impl Counts64 {
    pub fn add(&mut self, c: Counts) {
        self.programs += c.programs as u64;
        self.statics += c.statics as u64;
        self.swept += c.swept as u64;
        self.not_element += c.not_element as u64;
    }

    pub fn summary(&self) -> String {
        format!(
            "  element programs {} (with a static loop {}, with a swept loop {}, without the element path {})\n",
            self.programs, self.statics, self.swept, self.not_element
        )
    }
}

/// A generated element function and its arguments.
pub struct Element {
    pub source: String,
    x: Vec<Vec<f64>>,
    u: Vec<Vec<f64>>,
    ix: Vec<i64>,
    rp: Vec<i64>,
    ny: usize,
    nz: usize,
}

/// Offsets read around a base.
const LO: i64 = -2;
const HI: i64 = 3;

struct Scope {
    /// The base of each input (`x`, `u`; in a callee `v`).
    bases: Vec<(String, String)>,
    /// Second bases (reads at them force the sweep).
    alt: Vec<(String, String)>,
    dvars: Vec<String>,
    /// Local arrays and their lengths.
    arrs: Vec<(String, usize)>,
    /// The variable of an inner loop and its range (within -1 to 2).
    k: Option<(String, i64, i64)>,
}

struct G {
    r: Rng,
    /// The draws of the constructs added later (integer branches, the
    /// declarations before the loops), so that `r` draws what it drew
    /// before them in a program that has none (the loop bodies read the
    /// declarations: that changes `r`'s later draws).
    r2: Rng,
    /// The `double` and `bool` declarations before the loops.
    tops: Vec<String>,
    bools: Vec<String>,
    /// Whether constructs that force the sweep may appear.
    sweep: bool,
    fresh: usize,
    helpers: Vec<String>,
    /// `static double NAME(double[] v, int o)`.
    readers: Vec<String>,
    /// `static void NAME(double[] v, int o, double s, out double[] r, int ro)`.
    writers: Vec<String>,
}

fn off(c: i64) -> String {
    match c {
        0 => String::new(),
        c if c < 0 => format!(" - {}", -c),
        c => format!(" + {c}"),
    }
}

impl G {
    fn name(&mut self, p: &str) -> String {
        self.fresh += 1;
        format!("{p}{}", self.fresh)
    }

    fn lit(&mut self) -> String {
        ["0.5", "1.5", "-0.7", "0.25", "2.0", "-1.25", "0.9"][self.r.below(7)].into()
    }

    /// A read of one of the scope's inputs at its base (or, in a sweep
    /// program, sometimes a second base) plus a constant.
    fn read(&mut self, sc: &Scope) -> String {
        let (a, b) = if !sc.alt.is_empty() && self.r.chance(0.15) {
            sc.alt[self.r.below(sc.alt.len())].clone()
        } else {
            sc.bases[self.r.below(sc.bases.len())].clone()
        };
        if let (Some((k, klo, khi)), true) = (&sc.k, self.r.chance(0.6)) {
            // k + c in LO..=HI.
            let lo = LO - klo;
            let c = lo + self.r.below((HI - khi - lo + 1) as usize) as i64;
            return format!("{a}[{b} + {k}{}]", off(c));
        }
        let c = LO + self.r.below((HI - LO + 1) as usize) as i64;
        format!("{a}[{b}{}]", off(c))
    }

    fn leaf(&mut self, sc: &Scope) -> String {
        match self.r.below(10) {
            0 => self.lit(),
            1 if !sc.dvars.is_empty() => sc.dvars[self.r.below(sc.dvars.len())].clone(),
            2 if !sc.arrs.is_empty() => {
                let (t, n) = sc.arrs[self.r.below(sc.arrs.len())].clone();
                format!("{t}[{}]", self.r.below(n))
            }
            3 if !self.readers.is_empty() && sc.k.is_none() => {
                let h = self.readers[self.r.below(self.readers.len())].clone();
                let (a, b) = sc.bases[self.r.below(sc.bases.len())].clone();
                if self.r.chance(0.35) {
                    format!("{h}({a}[{b} - 2 .. {b} + 4], 2)")
                } else {
                    format!("{h}({a}, {b})")
                }
            }
            4 if !sc.dvars.is_empty() => sc.dvars[self.r.below(sc.dvars.len())].clone(),
            _ => self.read(sc),
        }
    }

    /// A double expression over `sc`, bounded for inputs in [-1.5, 1.5].
    fn dexpr(&mut self, sc: &Scope, d: usize) -> String {
        if d == 0 || self.r.chance(0.2) {
            return self.leaf(sc);
        }
        let a = self.dexpr(sc, d - 1);
        let sweep = self.sweep && self.r.chance(0.12);
        if sweep {
            let b = self.dexpr(sc, d - 1);
            return match self.r.below(5) {
                0 => format!("abs({a})"),
                1 => format!("(floor({a}) * 0.5 + {b})"),
                2 => format!("min({a}, {b})"),
                3 => format!("max({a}, {b})"),
                // Arms reading different elements: the row depends on the path.
                _ => format!("({a} > {b} ? {a} : {b})"),
            };
        }
        match self.r.below(22) {
            0..=2 => format!("({a} + {})", self.dexpr(sc, d - 1)),
            3 | 4 => format!("({a} - {})", self.dexpr(sc, d - 1)),
            5..=7 => format!("{a} * {}", self.dexpr(sc, d - 1)),
            8 => format!("sin({a})"),
            9 => format!("cos({a})"),
            10 => format!("tanh({a})"),
            11 => format!("exp(0.5 * sin({a}))"),
            12 => format!("log(1.5 + cos({a}))"),
            13 => format!("sqrt({a} * {a} + 0.5)"),
            14 => format!("pow(1.5 + cos({a}), tanh({}))", self.dexpr(sc, d - 1)),
            15 => format!("{a} / (2.0 + cos({}))", self.dexpr(sc, d - 1)),
            16 => format!("atan({a})"),
            17 => format!("log(1.0 + {a} * {a})"),
            18 => {
                // Arms reading the same elements (a fabs-like one, or two
                // forms of the same operands).
                let b = self.dexpr(sc, d - 1);
                match self.r.below(3) {
                    0 => format!("({a} >= 0.0 ? {a} : -({a}))"),
                    1 => format!("({a} > {b} ? {a} * {b} : {a} - {b})"),
                    _ => format!("({a} < 0.25 ? sin({a}) + {b} : cos({b}) * {a})"),
                }
            }
            _ => format!("tanh({a}) * {}", self.leaf(sc)),
        }
    }

    /// A statement of a loop body (or a callee's), added to `out`.
    fn stmt(&mut self, sc: &mut Scope, out: &mut Vec<String>, ind: &str) {
        match self.r.below(9) {
            0..=2 => {
                let v = self.name("t");
                let e = self.dexpr(sc, 3);
                out.push(format!("{ind}double {v} = {e};"));
                sc.dvars.push(v);
            }
            3 => {
                // An inner loop of constant bounds summing around the base.
                let (v, k) = (self.name("s"), self.name("k"));
                let (lo, hi) = [(-1, 1), (0, 2), (-1, 0), (0, 1)][self.r.below(4)];
                let init = self.lit();
                sc.k = Some((k.clone(), lo, hi));
                let e = self.dexpr(sc, 2);
                sc.k = None;
                out.push(format!("{ind}double {v} = {init};"));
                out.push(format!(
                    "{ind}for (int {k} = {lo}; {k} <= {hi}; {k}++) {{ {v} = {v} + 0.5 * sin({e}); }}"
                ));
                sc.dvars.push(v);
            }
            4 => {
                // A local array, filled by an inner loop or element by element.
                let (t, n) = (self.name("a"), 2 + self.r.below(2));
                out.push(format!("{ind}double {t}[{n}];"));
                if self.r.chance(0.5) {
                    let k = self.name("k");
                    sc.k = Some((k.clone(), 0, n as i64 - 1));
                    let e = self.dexpr(sc, 2);
                    sc.k = None;
                    out.push(format!(
                        "{ind}for (int {k} = 0; {k} < {n}; {k}++) {{ {t}[{k}] = {e}; }}"
                    ));
                } else {
                    for q in 0..n {
                        let e = self.dexpr(sc, 2);
                        out.push(format!("{ind}{t}[{q}] = {e};"));
                    }
                }
                sc.arrs.push((t, n));
            }
            5 | 6 => {
                // A float branch assigning one variable: both arms from the
                // same two operands (or, in a sweep program, sometimes not).
                let v = self.name("b");
                let (p, q) = (self.dexpr(sc, 1), self.dexpr(sc, 1));
                let c = self.dexpr(sc, 1);
                let forms = [
                    "{p} * {q}",
                    "sin({p}) + {q}",
                    "{p} - tanh({q})",
                    "({p} + {q}) * 0.5",
                    "exp(0.3 * {p}) * cos({q})",
                    "{q} / (2.0 + cos({p}))",
                ];
                let arm = |g: &mut G, p: &str, q: &str| {
                    forms[g.r.below(forms.len())]
                        .replace("{p}", p)
                        .replace("{q}", q)
                };
                let e1 = arm(self, &p, &q);
                let e2 = if self.sweep && self.r.chance(0.3) {
                    let other = self.dexpr(sc, 1);
                    arm(self, &p, &other)
                } else {
                    arm(self, &p, &q)
                };
                out.push(format!("{ind}double {v} = 0.0;"));
                out.push(format!(
                    "{ind}if ({c} > {}) {{ {v} = {e1}; }} else {{ {v} = {e2}; }}",
                    self.lit()
                ));
                sc.dvars.push(v);
            }
            _ => {
                let v = self.name("t");
                let e = self.dexpr(sc, 2);
                out.push(format!("{ind}double {v} = tanh({e});"));
                sc.dvars.push(v);
            }
        }
    }

    /// The `static` callees: readers `double NAME(double[] v, int o)` and
    /// writers of one row.
    fn callees(&mut self) {
        for _ in 0..self.r.below(3) {
            let name = self.name("h");
            let mut sc = Scope {
                bases: vec![("v".into(), "o".into())],
                alt: vec![],
                dvars: vec![],
                arrs: vec![],
                k: None,
            };
            let mut body = Vec::new();
            for _ in 0..self.r.below(3) {
                self.stmt(&mut sc, &mut body, "    ");
            }
            let e = self.dexpr(&sc, 3);
            let e = if self.r.chance(0.5) {
                format!("tanh({e})")
            } else {
                e
            };
            self.helpers.push(format!(
                "static double {name}(double[] v, int o) {{\n{}    return {e};\n}}\n",
                body.iter().map(|l| format!("{l}\n")).collect::<String>()
            ));
            self.readers.push(name);
        }
        for _ in 0..self.r.below(3) {
            let name = self.name("w");
            let mut sc = Scope {
                bases: vec![("v".into(), "o".into())],
                alt: vec![],
                dvars: vec!["s".into()],
                arrs: vec![],
                k: None,
            };
            let mut body = Vec::new();
            for _ in 0..self.r.below(2) {
                self.stmt(&mut sc, &mut body, "    ");
            }
            let e = self.dexpr(&sc, 3);
            self.helpers.push(format!(
                "static void {name}(double[] v, int o, double s, out double[] r, int ro) {{\n{}    r[ro] = {e};\n}}\n",
                body.iter().map(|l| format!("{l}\n")).collect::<String>()
            ));
            self.writers.push(name);
        }
    }

    /// The declarations before the loops (drawn from `r2`): on one program
    /// in three, `double`s that depend on no input (the loop bodies read
    /// them) and a `bool`, or sometimes a `double` that does (then the
    /// sparse Jacobian has no element path).
    fn top_decls(&mut self) -> String {
        let mut out = String::new();
        if !self.r2.chance(0.35) {
            return out;
        }
        let passive = [
            "1.0 / ((n + 1.0) * (n + 1.0))",
            "sqrt(0.5 * len(x))",
            "double(n) * 0.25 - 0.5",
            "cos(0.3 * len(u)) + 1.5",
            "len(z) > 2 ? 0.75 : -0.5",
        ];
        for _ in 0..1 + self.r2.below(2) {
            let h = format!("hd{}", self.tops.len());
            let init = if self.r2.chance(0.1) {
                "x[2] * 0.5".to_string()
            } else {
                passive[self.r2.below(passive.len())].to_string()
            };
            out += &format!("    double {h} = {init};\n");
            self.tops.push(h);
        }
        if self.r2.chance(0.5) {
            out += "    bool hb = n > 2;\n";
            self.bools.push("hb".into());
        }
        out
    }

    /// A branch on an integer condition (of the loop variable, `ix`, `n`,
    /// a `bool` before the loops) whose arms read different elements: the
    /// static pattern takes both paths' rows and picks one per iteration.
    fn int_branch(&mut self, sc: &mut Scope, out: &mut Vec<String>, ind: &str, loop_a: bool) {
        let mut conds: Vec<String> = if loop_a {
            [
                "i > 0",
                "i < n - 1",
                "i % 2 == 0",
                "ix[2 * i] >= 2",
                "i + ix[2 * i + 1] > 2",
                "i > 0 && ix[2 * i] != 1",
                "!(i == 1) || n < 3",
            ]
            .map(String::from)
            .to_vec()
        } else {
            [
                "i > 0",
                "i < len(z) - 1",
                "i % 2 == 1",
                "2 * i + 1 != len(z)",
            ]
            .map(String::from)
            .to_vec()
        };
        conds.extend(self.bools.iter().cloned());
        let c = conds[self.r.below(conds.len())].clone();
        let v = self.name("g");
        let (e1, e2) = (self.dexpr(sc, 2), self.dexpr(sc, 2));
        out.push(format!("{ind}double {v} = {};", self.lit()));
        if self.r.chance(0.6) {
            out.push(format!(
                "{ind}if ({c}) {{ {v} = {e1}; }} else {{ {v} = {e2}; }}"
            ));
        } else if self.r.chance(0.5) {
            out.push(format!("{ind}if ({c}) {v} = {e1};"));
        } else {
            out.push(format!("{ind}{v} = {c} ? {e1} : {v} * {e2};"));
        }
        sc.dvars.push(v);
    }

    /// A base of `a` in loop A (over `n` iterations, `ix` holding 0 to 3).
    fn base_a(&mut self, a: &str) -> String {
        let (k, c) = (1 + self.r.below(4), 2 + self.r.below(2));
        match self.r.below(7) {
            0 => "i + 2".into(),
            1 | 2 => format!("{k} * ix[2 * i] + {c}"),
            3 => format!("ix[2 * i + 1] * {k} + {c}"),
            4 => format!("len({a}) - 4 - i"),
            5 => "n + 1 - i".into(),
            _ => "2".into(),
        }
    }

    /// A base of `a` in loop B (over `len(z)`, at most 4, iterations).
    fn base_b(&mut self, a: &str) -> String {
        match self.r.below(4) {
            0 => "i + 2".into(),
            1 => "2 * i + 2".into(),
            2 => format!("len({a}) - 4 - i"),
            _ => "3".into(),
        }
    }

    /// A loop body writing `rows` (each `y[row]`-like text's array and
    /// row index), in that order.
    fn body(&mut self, loop_a: bool, rows: &[(&str, String)]) -> Vec<String> {
        let ind = "        ";
        let mut out = Vec::new();
        let mut sc = Scope {
            bases: vec![],
            alt: vec![],
            dvars: vec![],
            arrs: vec![],
            k: None,
        };
        for a in ["x", "u"] {
            let mut b = if loop_a {
                self.base_a(a)
            } else {
                self.base_b(a)
            };
            if self.r.chance(0.25) && b.contains('i') {
                // Through a local int.
                let v = self.name("o");
                out.push(format!("{ind}int {v} = {b};"));
                b = v;
            }
            if self.sweep && self.r.chance(0.3) {
                let alt = if loop_a {
                    self.base_a(a)
                } else {
                    self.base_b(a)
                };
                sc.alt.push((a.to_string(), alt));
            }
            sc.bases.push((a.to_string(), b));
        }
        sc.dvars.extend(self.tops.iter().cloned());
        for _ in 0..self.r.below(5) {
            self.stmt(&mut sc, &mut out, ind);
        }
        if self.r2.chance(0.4) {
            std::mem::swap(&mut self.r, &mut self.r2);
            self.int_branch(&mut sc, &mut out, ind, loop_a);
            std::mem::swap(&mut self.r, &mut self.r2);
        }
        for (y, row) in rows {
            let e = self.dexpr(&sc, 3);
            if !self.writers.is_empty() && self.r.chance(0.3) {
                let w = self.writers[self.r.below(self.writers.len())].clone();
                let (a, b) = sc.bases[self.r.below(sc.bases.len())].clone();
                out.push(format!("{ind}{w}({a}, {b}, {e}, {y}, {row});"));
            } else {
                out.push(format!("{ind}{y}[{row}] = {e};"));
            }
        }
        out
    }
}

/// The element program of seed `seed`.
pub fn generate(seed: u64) -> Element {
    let mut g = G {
        r: Rng::new(seed ^ 0xe1e3_e475_0dd5),
        r2: Rng::new(seed ^ 0x5eed_b4a7_c0d3),
        tops: vec![],
        bools: vec![],
        sweep: false,
        fresh: 0,
        helpers: vec![],
        readers: vec![],
        writers: vec![],
    };
    g.sweep = g.r.chance(0.4);
    let decls = g.top_decls();
    g.callees();
    let n = 2 + g.r.below(4);
    let (nx, nu) = (19 + g.r.below(5), 19 + g.r.below(5));
    let ix: Vec<i64> = (0..2 * n).map(|_| g.r.below(4) as i64).collect();
    // Rows of loop A: `R * i + j`, or `R * rp[i] + j` with `rp` increasing
    // (rows left out between) or, sometimes, not.
    let rr = 1 + g.r.below(3);
    let by_rp = g.r.chance(0.3);
    let mut rp: Vec<i64> = (0..n as i64 + 2).collect();
    while rp.len() > n {
        rp.remove(g.r.below(rp.len()));
    }
    if by_rp && g.r.chance(0.35) {
        rp.swap(0, 1 + g.r.below(n - 1));
    }
    let ny = rr * if by_rp { n + 2 } else { n };
    let out_of_order = g.r.chance(0.08);
    let mut rows_a: Vec<(&str, String)> = (0..rr)
        .map(|j| {
            let at = if by_rp { "rp[i]" } else { "i" };
            let row = match rr {
                1 => at.to_string(),
                _ => format!("{rr} * {at}{}", off(j as i64)),
            };
            ("y", row)
        })
        .collect();
    if out_of_order && rr > 1 {
        rows_a.reverse();
    }
    let nz = g.r.below(5);
    let head_a = if g.r.chance(0.7) {
        "for (int i = 0; i < n; i++)"
    } else {
        "for (int i = 0; i < len(ix) / 2; i++)"
    };
    let loop_a = format!(
        "    {head_a} {{\n{}\n    }}\n",
        g.body(true, &rows_a).join("\n")
    );
    let loop_b = if nz > 0 {
        let b = g.body(false, &[("z", "i".into())]);
        format!(
            "    for (int i = 0; i < len(z); i++) {{\n{}\n    }}\n",
            b.join("\n")
        )
    } else {
        String::new()
    };
    let loops = if g.r.chance(0.15) {
        format!("{loop_b}{loop_a}")
    } else {
        format!("{loop_a}{loop_b}")
    };
    let mut source = g.helpers.concat();
    source += "[jacobian(J)]\n[jacobian(S, sparse)]\n";
    source +=
        "void e(double[] x, double[] u, int[] ix, int[] rp, out double[] y, out double[] z) {\n";
    source += "    int n = len(ix) / 2;\n";
    source += &decls;
    source += &loops;
    source += "}\n";
    let npts = 1 + g.r.below(2);
    let pt = |g: &mut G, len: usize| (0..len).map(|_| g.r.range(-1.5, 1.5)).collect::<Vec<f64>>();
    let (mut x, mut u) = (vec![], vec![]);
    for _ in 0..npts {
        x.push(pt(&mut g, nx));
        u.push(pt(&mut g, nu));
    }
    Element {
        source,
        x,
        u,
        ix,
        rp,
        ny,
        nz,
    }
}

fn f64s(v: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v.to_vec()))
}

fn i64s(v: &[i64]) -> ArgValue {
    ArgValue::Array(ArrayValue::I64(v.to_vec()))
}

fn floats(a: &ArgValue) -> Vec<f64> {
    match a {
        ArgValue::Array(ArrayValue::F64(v)) => v.clone(),
        other => panic!("invariant: a double array argument stays one: {other:?}"),
    }
}

fn ints(a: &ArgValue) -> Vec<i64> {
    match a {
        ArgValue::Array(ArrayValue::I64(v)) => v.clone(),
        other => panic!("invariant: an int array argument stays one: {other:?}"),
    }
}

fn call(j: &JitModule, name: &str, args: &mut [ArgValue]) -> Result<Vec<Constant>, Fail> {
    j.call(name, args)
        .or_else(|e| fail("element_runtime", format!("{name}: {e}")))
}

/// The loops of `e` (by their index among its statements) that take the
/// element path, and whether each has a static pattern; `None` when `S`
/// takes no element path.
fn statics(src: &str) -> Result<Option<Vec<bool>>, Fail> {
    let m = match adc::driver::frontend("element.ad", src, &adc::CompileOptions::default()) {
        Ok(m) => m,
        Err(e) => return fail("element_compile", e.rendered),
    };
    if m.find("S__elems").is_none() {
        return Ok(None);
    }
    Ok(Some(
        // (`int n`, at most three declarations, two loops.)
        (0..8)
            .filter(|k| m.find(&format!("S__e{k}b")).is_some())
            .map(|k| m.find(&format!("S__e{k}m")).is_none())
            .collect(),
    ))
}

/// Runs the element oracle on seed `seed` if it has one: `o` (the seed's
/// other oracles) unless they passed and this one fails.
pub fn check_seed(seed: u64, o: Outcome) -> (Outcome, Counts) {
    if !enabled(seed) {
        return (o, Counts::default());
    }
    let el = generate(seed);
    let mut counts = Counts {
        programs: 1,
        ..Counts::default()
    };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&el, &mut counts)));
    let failed = match r {
        Ok(Ok(())) => None,
        Ok(Err(Fail(k, d))) => Some((k, d)),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Some(("element_panic".to_string(), msg))
        }
    };
    match (o, failed) {
        (Outcome::Pass { .. }, Some((oracle, detail))) => (
            Outcome::Fail {
                oracle,
                detail: format!("{detail}\nthe element program:\n{}", el.source),
            },
            counts,
        ),
        (o, _) => (o, counts),
    }
}

/// The checks of the module doc on `el`; which paths it takes go to
/// `counts`.
pub fn check(el: &Element, counts: &mut Counts) -> Result<(), Fail> {
    let element = statics(&el.source)?;
    match &element {
        None => counts.not_element = 1,
        Some(l) => {
            counts.statics = l.iter().any(|&s| s) as u8;
            counts.swept = l.iter().any(|&s| !s) as u8;
        }
    }
    let j = match adc::compile_jit("element.ad", &el.source, &adc::CompileOptions::default()) {
        Ok(j) => j,
        Err(e) => return fail("element_compile", e.rendered),
    };
    let (nr, nc) = (el.ny + el.nz, el.x[0].len() + el.u[0].len());
    for (x, u) in el.x.iter().zip(&el.u) {
        let args = vec![
            f64s(x),
            f64s(u),
            i64s(&el.ix),
            i64s(&el.rp),
            f64s(&vec![0.0; el.ny]),
            f64s(&vec![0.0; el.nz]),
        ];
        check_at(&j, &args, nr, nc, element.is_some())?;
    }
    Ok(())
}

/// The checks at one point (`args`: `e`'s arguments); against the
/// coloring only when `S` has an element path (`element`).
fn check_at(
    j: &JitModule,
    args: &[ArgValue],
    nr: usize,
    nc: usize,
    element: bool,
) -> Result<(), Fail> {
    let at = format!("at {:?}", &args[..4]);
    let mut fa = args.to_vec();
    call(j, "e", &mut fa)?;
    let mut da = args.to_vec();
    da.push(f64s(&vec![f64::NAN; nr * nc]));
    call(j, "J", &mut da)?;
    let dense = floats(&da[args.len()]);
    if da[..args.len()] != fa[..] {
        return fail(
            "element_primal",
            format!("{at}\nJ writes {:?}\ne writes {:?}", &da[4..6], &fa[4..6]),
        );
    }
    let mut na = args.to_vec();
    let nnz = match call(j, "S_nnz", &mut na)?.as_slice() {
        [Constant::I64(k)] if *k >= 0 => *k as usize,
        other => return fail("element_abi", format!("S_nnz returned {other:?}")),
    };
    if na[..] != fa[..] {
        return fail(
            "element_primal",
            format!(
                "{at}\nS_nnz writes {:?}\ne writes {:?}",
                &na[4..6],
                &fa[4..6]
            ),
        );
    }
    let csr = |name: &str| -> Result<(Vec<ArgValue>, Vec<f64>, Vec<i64>, Vec<i64>), Fail> {
        let mut sa = args.to_vec();
        sa.push(f64s(&vec![f64::NAN; nnz]));
        sa.push(i64s(&vec![-1; nnz]));
        sa.push(i64s(&vec![-1; nr + 1]));
        call(j, name, &mut sa)?;
        let k = args.len();
        let (v, c, r) = (floats(&sa[k]), ints(&sa[k + 1]), ints(&sa[k + 2]));
        sa.truncate(k);
        Ok((sa, v, c, r))
    };
    let (sa, vals, cols, rows) = csr("S")?;
    if sa[..] != fa[..] {
        return fail(
            "element_primal",
            format!("{at}\nS writes {:?}\ne writes {:?}", &sa[4..6], &fa[4..6]),
        );
    }
    let text = format!(
        "{at}\n{nr} rows, {nc} columns, S_nnz {nnz}\nvals={vals:?}\ncols={cols:?}\nrows={rows:?}"
    );
    let well_formed = rows[0] == 0
        && rows.windows(2).all(|w| w[0] <= w[1])
        && rows[nr] <= nnz as i64
        && (0..nr).all(|r| {
            let row = &cols[rows[r] as usize..rows[r + 1] as usize];
            row.iter().all(|&c| 0 <= c && (c as usize) < nc) && row.windows(2).all(|w| w[0] < w[1])
        });
    if !well_formed {
        return fail("element_csr", text);
    }
    if rows[nr] != nnz as i64 {
        return fail(
            "element_count",
            format!("rows[{nr}] is {}, S_nnz {nnz}\n{text}", rows[nr]),
        );
    }
    for r in 0..nr {
        let (lo, hi) = (rows[r] as usize, rows[r + 1] as usize);
        for c in 0..nc {
            let want = dense[r * nc + c];
            match (lo..hi).find(|&q| cols[q] as usize == c).map(|q| vals[q]) {
                None if want != 0.0 => {
                    return fail(
                        "element_pattern",
                        format!(
                            "entry (row {r}, column {c}) is {want:?} in J but not in S\n{text}"
                        ),
                    )
                }
                Some(v) if !close(v, want, 1e-12, 0.0) => {
                    return fail(
                        "element_value",
                        format!("entry (row {r}, column {c}) is {v:?} in S, {want:?} in J\n{text}"),
                    )
                }
                _ => {}
            }
        }
    }
    // The coloring: the same pattern exactly; the same values to
    // rounding (it runs the whole function forward or in reverse, the
    // element path each iteration in reverse: sums of several paths
    // round in other orders).
    if !element {
        return Ok(());
    }
    let (_, cv, cc, cr) = csr("S__colored")?;
    let same_values = cv.iter().zip(&vals).all(|(c, v)| close(*c, *v, 1e-12, 0.0));
    if (&cc, &cr) != (&cols, &rows) || !same_values {
        return fail(
            "element_coloring",
            format!("S__colored gives\nvals={cv:?}\ncols={cc:?}\nrows={cr:?}\nS gives\n{text}"),
        );
    }
    Ok(())
}

/// The element oracle alone on `ADC_DIFFTEST_SEEDS` element seeds from
/// `ADC_DIFFTEST_START` (a debugging aid: prints each failure and the
/// counts).
#[test]
#[ignore = "debugging aid"]
fn element_seeds() {
    let env = |n: &str, d: u64| {
        std::env::var(n)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (start, count) = (env("ADC_DIFFTEST_START", 0), env("ADC_DIFFTEST_SEEDS", 60));
    let mut total = Counts64::default();
    let mut failed = 0;
    for seed in (start..).filter(|&s| enabled(s)).take(count as usize) {
        let (o, c) = check_seed(
            seed,
            Outcome::Pass {
                fd_checked: 0,
                fd_skipped: 0,
                interp_checked: 0,
            },
        );
        total.add(c);
        if let Outcome::Fail { oracle, detail } = o {
            failed += 1;
            println!("seed {seed}: {oracle}\n{detail}\n");
        }
        if std::env::var("ADC_DIFFTEST_PRINT_ONLY").is_ok() {
            println!("seed {seed} {c:?}\n{}", generate(seed).source);
        }
    }
    println!("failed {failed}\n{}", total.summary());
}
