//! Random well-typed `.ad` programs, deterministic from a `u64` seed.
//!
//! A program is a few helper functions and an entry
//! `double f(double x, double y, double[] a)`; on one seed in five, all of
//! it in `float` instead (`Program::single`, written so by `oracle::module`).
//! A seed also draws the widths of its vector-mode derivatives and of its
//! dense Jacobian. Statements are kept as a tree
//! of text lines and blocks so that the shrinker can delete them. Values stay
//! bounded: every plain assignment squashes (tanh, sin, atan, erf), `log` and
//! `sqrt` only see arguments bounded away from 0, divisions only by
//! `2 + cos(..)`, indices are constants below the known minimum length or
//! `(i + c) % len(t)` (or, on the sparse Hessian's seeds, `min(i, len(t) -
//! 3) + c` as well), and every loop has a constant or `len(..)` bound.

#[path = "gen/extras.rs"]
mod extras;
#[path = "gen/stmt.rs"]
mod stmt;
use extras::extras;

/// splitmix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

/// A statement: one line, or a block with a head (`if (c)`, `for (..)`),
/// a body and an optional `else` body. `keep` lines are never deleted by the
/// shrinker (loop counters whose removal would make a loop endless).
#[derive(Clone, Debug)]
pub enum Stmt {
    Line {
        text: String,
        keep: bool,
    },
    Block {
        head: String,
        body: Vec<Stmt>,
        els: Option<Vec<Stmt>>,
    },
}

#[derive(Clone, Debug)]
pub struct Func {
    pub attrs: String,
    pub sig: String,
    pub body: Vec<Stmt>,
}

#[derive(Clone, Debug)]
pub struct Program {
    /// Helpers first, the entry `f` last.
    pub funcs: Vec<Func>,
    /// Length of `a` at the evaluation points.
    pub alen: usize,
    /// Whether the oracles include the dense Jacobian (one seed in four:
    /// its width-32 derivative costs more compile time than all the
    /// other oracles together).
    pub jacobian: bool,
    /// Whether the oracles include the dense Hessian (one seed in six).
    pub hessian: bool,
    /// Whether the dense Jacobian's function also gets a sparse Jacobian:
    /// on the dense Jacobian's seeds whose `f` calls no function with a
    /// custom forward derivative (the dependency sweep has none, E0401).
    pub sparse: bool,
    /// Whether the dense Hessian's function also gets a sparse Hessian
    /// (on the dense Hessian's seeds without custom forward derivatives,
    /// as `sparse`).
    pub sparse_hessian: bool,
    /// Whether the program is written in `float` (every `double` of its
    /// source and of the oracles' wrappers `float`): one seed in five.
    pub single: bool,
    /// The width of the vector-mode derivatives `f_vec` and `f_rvec`, 1
    /// to 4.
    pub width: usize,
    /// Whether `f` also gets a reverse vector-mode derivative (`f_rvec`):
    /// on a quarter of the seeds without a dense Jacobian or Hessian (whose
    /// compile time is already the largest), one in six in all (the
    /// suite's time budget).
    pub rvec: bool,
    /// The dense Jacobian's chunk width (`[jacobian(g_jac, width = W)]`),
    /// or none (chosen by the compiler).
    pub jac_width: Option<usize>,
}

fn line(s: String) -> Stmt {
    Stmt::Line {
        text: s,
        keep: false,
    }
}

fn render_stmts(out: &mut String, stmts: &[Stmt], ind: usize) {
    let pad = "    ".repeat(ind);
    for s in stmts {
        match s {
            Stmt::Line { text, .. } => {
                out.push_str(&pad);
                out.push_str(text);
                out.push('\n');
            }
            Stmt::Block { head, body, els } => {
                out.push_str(&format!("{pad}{head} {{\n"));
                render_stmts(out, body, ind + 1);
                if let Some(e) = els {
                    out.push_str(&format!("{pad}}} else {{\n"));
                    render_stmts(out, e, ind + 1);
                }
                out.push_str(&format!("{pad}}}\n"));
            }
        }
    }
}

impl Program {
    /// The program's functions (the entry without derivative attributes).
    pub fn source(&self) -> String {
        let mut out = String::new();
        for f in &self.funcs {
            out.push_str(&f.attrs);
            out.push_str(&f.sig);
            out.push_str(" {\n");
            render_stmts(&mut out, &f.body, 1);
            out.push_str("}\n");
        }
        out
    }

    /// Number of deletable statements (for the shrinker).
    pub fn count(&self) -> usize {
        fn c(v: &[Stmt]) -> usize {
            v.iter()
                .map(|s| match s {
                    Stmt::Line { .. } => 1,
                    Stmt::Block { body, els, .. } => 1 + c(body) + els.as_ref().map_or(0, |e| c(e)),
                })
                .sum()
        }
        self.funcs.iter().map(|f| c(&f.body)).sum::<usize>() + self.funcs.len()
    }

    /// The program with the `k`th statement (pre-order) deleted (`unwrap`:
    /// replaced by its body, for blocks; `None` for lines) or with the `k`th
    /// function deleted. `None` if that changes nothing.
    pub fn without(&self, mut k: usize, unwrap: bool) -> Option<Program> {
        fn go(v: &mut Vec<Stmt>, k: &mut usize, unwrap: bool) -> Option<bool> {
            let mut i = 0;
            while i < v.len() {
                if *k == 0 {
                    return Some(match (&mut v[i], unwrap) {
                        (Stmt::Line { keep: true, .. }, _) | (Stmt::Line { .. }, true) => false,
                        (Stmt::Block { body, els, .. }, true) => {
                            let mut inner = std::mem::take(body);
                            inner.extend(els.take().unwrap_or_default());
                            v.splice(i..=i, inner);
                            true
                        }
                        _ => {
                            v.remove(i);
                            true
                        }
                    });
                }
                *k -= 1;
                if let Stmt::Block { body, els, .. } = &mut v[i] {
                    if let Some(r) = go(body, k, unwrap) {
                        return Some(r);
                    }
                    if let Some(e) = els {
                        if let Some(r) = go(e, k, unwrap) {
                            return Some(r);
                        }
                    }
                }
                i += 1;
            }
            None
        }
        let mut p = self.clone();
        let nf = p.funcs.len();
        if k < nf {
            // Delete a helper (never the entry).
            if k == nf - 1 || unwrap {
                return None;
            }
            p.funcs.remove(k);
            return Some(p);
        }
        k -= nf;
        for f in &mut p.funcs {
            if let Some(changed) = go(&mut f.body, &mut k, unwrap) {
                return changed.then_some(p);
            }
        }
        None
    }
}

#[derive(Clone)]
struct Arr {
    name: String,
    min_len: usize,
    writable: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Scalar,
    ArrayIn,
    Inout,
    Rec,
}

#[derive(Clone)]
struct Helper {
    name: String,
    kind: Kind,
    /// Declares a local array (itself or in a callee).
    has_arr: bool,
}

struct Gen {
    rng: Rng,
    fresh: usize,
    dvars: Vec<(String, bool)>,
    ivars: Vec<String>,
    arrays: Vec<Arr>,
    helpers: Vec<Helper>,
    loop_depth: usize,
    in_loop: bool,
    /// Inside a `[checkpoint]` loop (local arrays declared there that a
    /// `break` or `return` leaves alive make it a plain loop).
    in_ck: bool,
    /// The current function declares a local array or calls a helper that does.
    has_arr: bool,
    /// Whether `return` takes a double (false in void helpers).
    returns_double: bool,
    /// Statements still allowed in the current function.
    budget: usize,
    /// Name of the recursive helper being generated (callable with `d - 1`).
    rec_self: Option<String>,
    /// Indices at a base and an offset, `min(i, len(t) - 3) + c`, as well
    /// (the sparse Hessian's band pattern, `ad::band`, serves them).
    band: bool,
}

/// Array views (`t[1..]`, `t[0..len(t) - 1]`, ...) as call arguments.
const VIEWS: bool = true;

const LITS: &[&str] = &[
    "0.5", "1.0", "-0.7", "0.25", "2.0", "-1.5", ".3", "1.", "0.9", "3.0",
];

impl Gen {
    fn name(&mut self, p: &str) -> String {
        self.fresh += 1;
        format!("{p}{}", self.fresh)
    }

    fn lit(&mut self) -> String {
        LITS[self.rng.below(LITS.len())].to_string()
    }

    fn squash(&mut self, e: String) -> String {
        match self.rng.below(6) {
            0 | 1 => format!("tanh({e})"),
            2 => format!("sin({e})"),
            3 => format!("atan({e})"),
            4 => format!("erf({e})"),
            _ => format!("0.8 * cos({e})"),
        }
    }

    fn index(&mut self, arr: &Arr) -> String {
        if self.band && arr.min_len >= 3 && !self.ivars.is_empty() && self.rng.chance(0.5) {
            let i = self.ivars[self.rng.below(self.ivars.len())].clone();
            let c = self.rng.below(3);
            return format!("min({i}, len({}) - 3) + {c}", arr.name);
        }
        if !self.ivars.is_empty() && self.rng.chance(0.7) {
            let i = self.ivars[self.rng.below(self.ivars.len())].clone();
            let c = self.rng.below(3);
            format!("({i} + {c}) % len({})", arr.name)
        } else {
            format!("{}", self.rng.below(arr.min_len.max(1)))
        }
    }

    fn ileaf(&mut self) -> String {
        if !self.ivars.is_empty() && self.rng.chance(0.8) {
            self.ivars[self.rng.below(self.ivars.len())].clone()
        } else {
            format!("{}", self.rng.below(5))
        }
    }

    fn cond(&mut self, d: usize) -> String {
        match self.rng.below(if d == 0 { 4 } else { 7 }) {
            0 | 1 => {
                let (a, b) = (self.dexpr(d.min(1)), self.dexpr(d.min(1)));
                let op = ["<", ">", "<=", ">="][self.rng.below(4)];
                format!("{a} {op} {b}")
            }
            2 => {
                // Under `no_diff` or not: a value that only feeds a
                // comparison needs no derivative (`linearize` keeps it
                // primal, `needless`), and a comparison has none.
                let a = self.dexpr(d.min(2));
                let a = if self.rng.chance(0.4) {
                    format!("no_diff({a})")
                } else {
                    a
                };
                format!("{a} > {}", self.lit())
            }
            3 => {
                let i = self.ileaf();
                match self.rng.below(3) {
                    0 => format!("{i} % 2 == 0"),
                    1 => format!("{i} < {}", self.rng.below(4)),
                    _ => format!("{i} != {}", self.rng.below(3)),
                }
            }
            4 => format!("!({})", self.cond(d - 1)),
            5 => format!("({} && {})", self.cond(d - 1), self.cond(d - 1)),
            _ => format!("({} || {})", self.cond(d - 1), self.cond(d - 1)),
        }
    }

    fn leaf(&mut self) -> String {
        loop {
            match self.rng.below(8) {
                0 => return self.lit(),
                1 if !self.ivars.is_empty() => {
                    let i = self.ileaf();
                    return if self.rng.chance(0.5) {
                        format!("0.1 * {i}")
                    } else {
                        format!("double({i}) * 0.2")
                    };
                }
                2 | 3 if !self.arrays.is_empty() => {
                    let a = self.arrays[self.rng.below(self.arrays.len())].clone();
                    let i = self.index(&a);
                    return format!("{}[{i}]", a.name);
                }
                _ if !self.dvars.is_empty() => {
                    return self.dvars[self.rng.below(self.dvars.len())].0.clone();
                }
                _ => {}
            }
        }
    }

    /// A double expression, bounded if its leaves are.
    fn dexpr(&mut self, d: usize) -> String {
        if d == 0 || self.rng.chance(0.25) {
            return self.leaf();
        }
        let d1 = d - 1;
        let a = self.dexpr(d1);
        match self.rng.below(30) {
            0..=2 => format!("({a} + {})", self.dexpr(d1)),
            3 | 4 => format!("({a} - {})", self.dexpr(d1)),
            5..=7 => format!("{a} * {}", self.dexpr(d1)),
            8 => format!("-({a})"),
            9 => format!("sin({a})"),
            10 => format!("cos({a})"),
            11 => format!("tanh({a})"),
            12 => format!("exp(0.5 * sin({a}))"),
            13 => format!("log(1.5 + cos({a}))"),
            14 => format!("sqrt({a} * {a} + 0.5)"),
            15 => format!("{a} / (2.0 + cos({}))", self.dexpr(d1)),
            16 => format!("min({a}, {})", self.dexpr(d1)),
            17 => format!("max({a}, {})", self.dexpr(d1)),
            18 => format!("({} ? {a} : {})", self.cond(1), self.dexpr(d1)),
            19 => format!("log1p({a} * {a})"),
            20 => format!("atan2({a}, 2.0 + sin({}))", self.dexpr(d1)),
            21 => format!("hypot({a}, 0.5)"),
            22 => format!("pow(1.5 + cos({a}), tanh({}))", self.dexpr(d1)),
            23 => format!("expm1(sin({a}))"),
            24 => format!("abs({a})"),
            25 => format!("sinh(tanh({a}))"),
            _ => self.call_expr(a, d1),
        }
    }

    fn call_expr(&mut self, a: String, d: usize) -> String {
        if let Some(r) = self.rec_self.clone() {
            if self.loop_depth == 0 && self.rng.chance(0.3) {
                return format!("{r}({a}, d - 1)");
            }
        }
        let cands: Vec<Helper> = self
            .helpers
            .iter()
            .filter(|h| h.kind != Kind::Inout)
            .filter(|h| h.kind != Kind::ArrayIn || self.arrays.iter().any(|a| a.min_len >= 1))
            .cloned()
            .collect();
        if cands.is_empty() {
            return format!("cos({a})");
        }
        let h = &cands[self.rng.below(cands.len())];
        self.has_arr |= h.has_arr;
        match h.kind {
            Kind::Scalar => format!("{}({a}, {})", h.name, self.dexpr(d)),
            Kind::Rec => format!("{}({a}, {})", h.name, self.rng.below(4)),
            _ => {
                let arrs: Vec<Arr> = self
                    .arrays
                    .iter()
                    .filter(|a| a.min_len >= 1)
                    .cloned()
                    .collect();
                let arr = &arrs[self.rng.below(arrs.len())];
                let view = self.view(arr);
                format!("{}({}{view}, {a})", h.name, arr.name)
            }
        }
    }

    /// Nothing (the whole array) or a non-empty view of `arr`.
    fn view(&mut self, arr: &Arr) -> String {
        if !VIEWS || arr.min_len < 2 || !self.rng.chance(0.3) {
            return String::new();
        }
        let a = &arr.name;
        match self.rng.below(5) {
            0 => "[1..]".into(),
            1 => format!("[0..len({a}) - 1]"),
            2 => format!("[1..len({a})]"),
            3 => {
                let k = self.rng.below(arr.min_len);
                format!("[{k}..{}]", k + 1)
            }
            _ => {
                let k = self.rng.below(arr.min_len - 1);
                format!("[{k}..]")
            }
        }
    }

    fn assignable(&mut self) -> Option<String> {
        let v: Vec<String> = self
            .dvars
            .iter()
            .filter(|d| d.1)
            .map(|d| d.0.clone())
            .collect();
        (!v.is_empty()).then(|| v[self.rng.below(v.len())].clone())
    }

    fn block(&mut self, n: usize) -> Vec<Stmt> {
        let (nd, ni, na) = (self.dvars.len(), self.ivars.len(), self.arrays.len());
        let mut out = Vec::new();
        for _ in 0..n {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            self.stmt(&mut out);
        }
        self.dvars.truncate(nd);
        self.ivars.truncate(ni);
        self.arrays.truncate(na);
        out
    }

    fn loop_body(&mut self, n: usize, counter: Option<&str>, ck: &str) -> Vec<Stmt> {
        let (was, depth, was_ck) = (self.in_loop, self.loop_depth, self.in_ck);
        self.in_loop = true;
        self.in_ck |= !ck.is_empty();
        self.loop_depth += 1;
        let mut body = Vec::new();
        if let Some(k) = counter {
            body.push(Stmt::Line {
                text: format!("{k}++;"),
                keep: true,
            });
        }
        body.extend(self.block(n));
        self.in_loop = was;
        self.loop_depth = depth;
        self.in_ck = was_ck;
        body
    }

    fn checkpoint(&mut self) -> &'static str {
        match self.rng.below(8) {
            0 => "[checkpoint(1)] ",
            1 => "[checkpoint(2)] ",
            2 => "[checkpoint(3)] ",
            3 => "[checkpoint] ",
            _ => "",
        }
    }

    fn bound(&mut self) -> String {
        let arrs: Vec<String> = self.arrays.iter().map(|a| a.name.clone()).collect();
        if !arrs.is_empty() && self.rng.chance(0.4) {
            format!("len({})", arrs[self.rng.below(arrs.len())])
        } else {
            let n = if self.rng.chance(0.1) { 6 } else { 5 };
            format!("{}", [1, 2, 3, 4, 5, 0][self.rng.below(n)])
        }
    }

    fn reset(&mut self, dvars: &[&str], arrays: Vec<Arr>, returns_double: bool, budget: usize) {
        self.dvars = dvars.iter().map(|d| (d.to_string(), true)).collect();
        self.ivars.clear();
        self.arrays = arrays;
        self.loop_depth = 0;
        self.in_loop = false;
        self.in_ck = false;
        self.has_arr = false;
        self.returns_double = returns_double;
        self.budget = budget;
        self.rec_self = None;
    }

    fn helper(&mut self, kind: Kind) -> Func {
        let name = self.name("h");
        let ck = if self.rng.chance(0.3) {
            "[checkpoint]\n"
        } else {
            ""
        };
        let budget = 2 + self.rng.below(5);
        let n = 1 + self.rng.below(4);
        let (sig, body) = match kind {
            Kind::Scalar => {
                self.reset(&["u", "w"], vec![], true, budget);
                let mut b = self.block(n);
                let e = self.dexpr(3);
                b.push(line(format!("return {};", self.squash(e))));
                (format!("double {name}(double u, double w)"), b)
            }
            Kind::ArrayIn => {
                let arr = Arr {
                    name: "b".into(),
                    min_len: 1,
                    writable: false,
                };
                self.reset(&["u"], vec![arr], true, budget);
                let mut b = self.block(n);
                let e = self.dexpr(3);
                b.push(line(format!("return {};", self.squash(e))));
                (format!("double {name}(double[] b, double u)"), b)
            }
            Kind::Inout => {
                let arr = Arr {
                    name: "t".into(),
                    min_len: 1,
                    writable: true,
                };
                self.reset(&["u"], vec![arr], false, budget);
                let i = self.name("i");
                self.ivars.push(i.clone());
                let e = self.dexpr(2);
                let e = self.squash(format!("t[{i}] * u + {e}"));
                self.ivars.pop();
                let mut b = vec![Stmt::Block {
                    head: format!("for (int {i} = 0; {i} < len(t); {i}++)"),
                    body: vec![line(format!("t[{i}] = {e};"))],
                    els: None,
                }];
                b.extend(self.block(n));
                (format!("void {name}(inout double[] t, double u)"), b)
            }
            Kind::Rec => {
                self.reset(&["u"], vec![], true, budget);
                let e = self.dexpr(2);
                let base = Stmt::Line {
                    text: format!("if (d <= 0) return {};", self.squash(e)),
                    keep: true,
                };
                let e = self.dexpr(2);
                let rec = line(format!("double r = {name}({}, d - 1);", self.squash(e)));
                self.dvars.push(("r".into(), true));
                self.rec_self = Some(name.clone());
                let mut b = vec![base, rec];
                b.extend(self.block(n));
                let e = self.dexpr(3);
                b.push(line(format!("return {};", self.squash(e))));
                (format!("double {name}(double u, int d)"), b)
            }
        };
        let has_arr = self.has_arr;
        self.helpers.push(Helper {
            name,
            kind,
            has_arr,
        });
        Func {
            attrs: ck.to_string(),
            sig,
            body,
        }
    }
}

/// The program of seed `seed`.
pub fn generate(seed: u64) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed),
        fresh: 0,
        dvars: vec![],
        ivars: vec![],
        arrays: vec![],
        helpers: vec![],
        loop_depth: 0,
        in_loop: false,
        returns_double: true,
        budget: 0,
        rec_self: None,
        in_ck: false,
        has_arr: false,
        band: seed % 6 == 3,
    };
    let mut funcs = Vec::new();
    let nh = g.rng.below(4);
    for _ in 0..nh {
        let kind = [Kind::Scalar, Kind::ArrayIn, Kind::Inout, Kind::Rec][g.rng.below(4)];
        funcs.push(g.helper(kind));
    }
    let arr = Arr {
        name: "a".into(),
        min_len: 3,
        writable: false,
    };
    let budget = 6 + g.rng.below(20);
    g.reset(&["x", "y"], vec![arr], true, budget);
    let mut body = Vec::new();
    body.extend(g.block(usize::MAX));
    // Keep the declarations of the top level in scope for the return.
    g.dvars = vec![("x".into(), true), ("y".into(), true)];
    for s in &body {
        if let Stmt::Line { text, .. } = s {
            if let Some(rest) = text.strip_prefix("double v") {
                let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                g.dvars.push((format!("v{n}"), true));
            }
        }
    }
    extras(seed, &g.helpers, &mut funcs, &mut body);
    let e = g.dexpr(3);
    let e2 = g.dexpr(2);
    body.push(line(format!("return {} + 0.5 * {e2};", g.squash(e))));
    let alen = 3 + g.rng.below(4);
    funcs.push(Func {
        attrs: String::new(),
        sig: "double f(double x, double y, double[] a)".into(),
        body,
    });
    let custom = funcs
        .iter()
        .any(|f| f.attrs.contains("[forward_derivative("));
    // Drawn from a generator of their own: the programs stay those of
    // the seeds recorded before these choices existed.
    let mut r = Rng::new(seed ^ 0x0077_1D74_5EED);
    let (jacobian, hessian) = (seed % 4 == 1, seed % 6 == 3);
    Program {
        funcs,
        alen,
        jacobian,
        hessian,
        sparse: jacobian && !custom,
        sparse_hessian: hessian && !custom,
        single: seed % 5 == 3,
        width: 1 + r.below(4),
        rvec: !jacobian && !hessian && r.chance(0.25),
        jac_width: [None, None, Some(1), Some(2), Some(3), Some(5)][r.below(6)],
    }
}
