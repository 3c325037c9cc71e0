//! The generator's statements: one random statement of the entry or a
//! helper (assignments, branches, loops of every kind, calls, local
//! arrays).

use super::*;

impl Gen {
    pub(super) fn stmt(&mut self, out: &mut Vec<Stmt>) {
        let r = self.rng.below(100);
        match r {
            0..=11 => {
                let v = self.name("v");
                let e = self.dexpr(3);
                out.push(line(format!("double {v} = {e};")));
                self.dvars.push((v, true));
            }
            12..=29 => {
                let Some(v) = self.assignable() else {
                    return self.stmt(out);
                };
                let e = self.dexpr(3);
                let s = match self.rng.below(6) {
                    0..=2 => format!("{v} = {};", self.squash(e)),
                    3 => format!("{v} += 0.3 * sin({e});"),
                    4 => format!("{v} *= 0.5 + 0.4 * cos({e});"),
                    _ => format!("{v} /= 2.0 + cos({e});"),
                };
                out.push(line(s));
            }
            30..=39 => {
                let c = self.cond(2);
                let n = 1 + self.rng.below(3);
                let body = self.block(n);
                let els = self.rng.chance(0.5).then(|| {
                    let n = 1 + self.rng.below(2);
                    self.block(n)
                });
                out.push(Stmt::Block {
                    head: format!("if ({c})"),
                    body,
                    els,
                });
            }
            40..=51 if self.loop_depth < 3 => {
                let i = self.name("i");
                let b = self.bound();
                let ck = self.checkpoint();
                // Counted loops that start at a value (an enclosing
                // counter, plus a constant), upwards or downwards.
                let head = match self.rng.below(10) {
                    7 | 8 if !self.ivars.is_empty() => {
                        let o = self.ivars[self.rng.below(self.ivars.len())].clone();
                        let c = self.rng.below(3);
                        // The reverse sweep computes such a start again
                        // from the enclosing counter (`transpose`).
                        if self.rng.below(3) == 0 {
                            format!(
                                "for (int {i} = ({o} * ({o} + 1) / 2) % 3 + {c}; {i} < {b}; {i}++)"
                            )
                        } else {
                            format!("for (int {i} = {o} + {c}; {i} < {b}; {i}++)")
                        }
                    }
                    9 if !self.ivars.is_empty() => {
                        let o = self.ivars[self.rng.below(self.ivars.len())].clone();
                        format!("for (int {i} = {o}; {i} >= 0; {i}--)")
                    }
                    // Huge constant bounds and steps, 0 to 3 iterations
                    // (trip counts and counter ends computed from them
                    // once overflowed); the counter indexes nothing.
                    6 if self.rng.below(4) == 0 => {
                        let trips = self.rng.below(4) as i64;
                        let step = 3_000_000_000_000_000_000i64 + self.rng.below(1000) as i64;
                        let lo = -4_500_000_000_000_000_000i64 - self.rng.below(1000) as i64;
                        if self.rng.below(2) == 0 {
                            let hi = lo + trips * step - self.rng.below(2) as i64 * (step - 1);
                            format!("for (int {i} = {lo}; {i} < {hi}; {i} += {step})")
                        } else {
                            let (top, bottom) = (-lo, -lo - trips * step + 1);
                            format!("for (int {i} = {top}; {i} >= {bottom}; {i} -= {step})")
                        }
                    }
                    _ => format!("for (int {i} = 0; {i} < {b}; {i}++)"),
                };
                let indexes = !head.contains("000000000");
                if indexes {
                    self.ivars.push(i.clone());
                }
                let n = 1 + self.rng.below(4);
                let body = self.loop_body(n, None, ck);
                if indexes {
                    self.ivars.pop();
                }
                out.push(Stmt::Block {
                    head: format!("{ck}{head}"),
                    body,
                    els: None,
                });
            }
            52..=57 if self.loop_depth < 3 => {
                let k = self.name("k");
                let b = self.bound();
                let ck = self.checkpoint();
                out.push(Stmt::Line {
                    text: format!("int {k} = 0;"),
                    keep: false,
                });
                self.ivars.push(k.clone());
                let n = 1 + self.rng.below(3);
                let body = self.loop_body(n, Some(&k), ck);
                out.push(Stmt::Block {
                    head: format!("{ck}while ({k} < {b})"),
                    body,
                    els: None,
                });
            }
            58..=61 if self.loop_depth < 3 => {
                // A loop that overwrites a variable without reading it.
                let Some(v) = self.assignable() else {
                    return self.stmt(out);
                };
                let i = self.name("i");
                let b = self.bound();
                let pos = self.dvars.iter().position(|d| d.0 == v).unwrap();
                let saved = self.dvars.remove(pos);
                self.ivars.push(i.clone());
                let e = self.dexpr(3);
                let e = self.squash(e);
                self.ivars.pop();
                self.dvars.insert(pos, saved);
                out.push(Stmt::Block {
                    head: format!("for (int {i} = 0; {i} < {b}; {i}++)"),
                    body: vec![line(format!("{v} = {e};"))],
                    els: None,
                });
            }
            62..=67 => {
                // A local array, filled.
                let t = self.name("t");
                let (len, min) =
                    if self.rng.chance(0.3) && self.arrays.iter().any(|a| a.name == "a") {
                        ("len(a)".to_string(), 3)
                    } else {
                        let n = 1 + self.rng.below(5);
                        (n.to_string(), n)
                    };
                if self.rng.chance(0.2) && min <= 3 && len != "len(a)" {
                    let elems: Vec<String> = (0..min).map(|_| self.dexpr(1)).collect();
                    out.push(line(format!(
                        "double {t}[{len}] = {{{}}};",
                        elems.join(", ")
                    )));
                } else {
                    out.push(line(format!("double {t}[{len}];")));
                    let i = self.name("i");
                    self.ivars.push(i.clone());
                    let e = self.dexpr(2);
                    let e = self.squash(e);
                    self.ivars.pop();
                    out.push(Stmt::Block {
                        head: format!("for (int {i} = 0; {i} < len({t}); {i}++)"),
                        body: vec![line(format!("{t}[{i}] = {e};"))],
                        els: None,
                    });
                }
                self.arrays.push(Arr {
                    name: t,
                    min_len: min,
                    writable: true,
                });
                self.has_arr = true;
            }
            68..=75 => {
                let w: Vec<Arr> = self.arrays.iter().filter(|a| a.writable).cloned().collect();
                if w.is_empty() {
                    return self.stmt(out);
                }
                let arr = &w[self.rng.below(w.len())];
                let inout: Vec<Helper> = self
                    .helpers
                    .iter()
                    .filter(|h| h.kind == Kind::Inout)
                    .cloned()
                    .collect();
                if arr.min_len >= 1 && !inout.is_empty() && self.rng.chance(0.4) {
                    let h = &inout[self.rng.below(inout.len())];
                    self.has_arr |= h.has_arr;
                    let view = self.view(arr);
                    let e = self.dexpr(2);
                    out.push(line(format!("{}({}{view}, {e});", h.name, arr.name)));
                } else {
                    let i = self.index(arr);
                    let e = self.dexpr(3);
                    let s = if self.rng.chance(0.6) {
                        format!("{}[{i}] = {};", arr.name, self.squash(e))
                    } else {
                        format!("{}[{i}] += 0.2 * sin({e});", arr.name)
                    };
                    out.push(line(s));
                }
            }
            76..=79 => {
                let m = self.name("m");
                let s = if self.rng.chance(0.5) {
                    let e = self.dexpr(2);
                    format!("int {m} = int(2.5 * abs(tanh({e})));")
                } else {
                    format!("int {m} = ({} + {}) % 4;", self.ileaf(), self.rng.below(3))
                };
                out.push(line(s));
                self.ivars.push(m);
            }
            80..=87 if self.in_loop => {
                let c = self.cond(1);
                let what = if self.rng.chance(0.5) {
                    "break"
                } else {
                    "continue"
                };
                out.push(line(format!("if ({c}) {what};")));
            }
            88..=91 => {
                let c = self.cond(1);
                let s = if self.returns_double {
                    let e = self.dexpr(2);
                    format!("if ({c}) return {};", self.squash(e))
                } else {
                    format!("if ({c}) return;")
                };
                out.push(line(s));
            }
            _ => {
                let Some(v) = self.assignable() else {
                    return self.stmt(out);
                };
                let e = self.dexpr(1);
                let e = self.call_expr(e, 2);
                out.push(line(format!("{v} = {};", self.squash(e))));
            }
        }
    }
}
