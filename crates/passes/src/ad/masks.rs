//! The bit-set form of the dependency sweep (`sets` with `masks`), which
//! element Jacobians run once per loop iteration
//! (docs/jacobians.md#element-jacobians): an iteration reads few inputs,
//! so each set is a bit set over the iteration's reads of seeds, held in
//! the handle itself, and a union is a bitwise or, with no call and no
//! room in the arena.
//!
//! Assumes: `sets::rewrite` turned `func` into a dependency sweep, whose
//! unions are calls of `union`. Guarantees: the same function, where
//!
//! - every load of a differential `f64` (from an array or a reference)
//!   that yields a seed, a negative handle `-(c + 1)` (column `c`), yields
//!   instead the bit `2^k` of a new read `k`, and records `c` in
//!   `arena[3 + k]`; handles that are not negative (bit sets, 0 the empty
//!   set) load unchanged. Loads from arrays made here by `new` that no
//!   `copyrange` writes are left as they are: only stores write them, of
//!   handles already loaded (so bit sets) or zeros;
//! - a union of two handles is their bitwise or (each held exactly as an
//!   `f64`, below 2^53); of a handle made here (a read's bit, a union), the
//!   `i64` it was converted from, not a conversion back (a saturating
//!   conversion is about ten instructions, and a chain of unions waited for
//!   two of them at each).
//!
//! `arena[0]` counts the reads and `arena[2]` holds the next read's bit:
//! a requested sweep sets them to 0 and 1 at its entry (a callee's sweep
//! goes on from its caller's), constants that `rle` forwards to the entry
//! block's reads once the callees' sweeps are inlined, so that their bits
//! and unions fold (GradBench's bundle adjustment: the sweep of an
//! observation took 36% fewer instructions); `arena` needs `3 + MAX_READS + 1`
//! elements, then one per `Dual` input (an active parameter not `out`),
//! in order: its first column. The caller seeds each input array's
//! tangent with its columns (element `i` the handle of column
//! `first + i`), so a load of such a tangent parameter is not made: its
//! seed is computed from the index, after `lencheck.index` checks the
//! index as the load would have (a cache miss less for each point of
//! bundle adjustment). Within a block the count and the next bit are
//! values: loaded at the block's first read, stored back before a call, an
//! instruction using the arena, and the block's end, so a read is a store
//! of its column and a few integer operations, with no load (every read
//! loaded both and stored them back, a chain through memory). A run with
//! more than [`MAX_READS`] reads has wrong sets: the
//! caller sees `arena[0] > MAX_READS` and takes another way (the index-set
//! sweep). A set's columns are those recorded at its bits.

use std::collections::{BTreeMap, BTreeSet};

use adc_ir::{
    BinaryOp, CmpCond, Constant, DerivSpec, FuncId, Function, Inst, InstData, LenCheckOf,
    ParamMode, Tag, Type, Value,
};

/// The reads one run may record: bits 0 to 51, exact in an `f64`.
pub const MAX_READS: i64 = 52;

/// Rewrites `func`'s seed loads and unions (calls of `union`); `spec` is
/// the sweep's request (the activities of its source's parameters);
/// `seeded`: its input arrays' tangents are seeds (a requested sweep, not
/// a callee's, which gets its caller's tangents).
pub fn rewrite(func: &mut Function, union: FuncId, spec: &DerivSpec, seeded: bool) {
    let Some(entry) = func.entry_block() else {
        return;
    };
    let arena = *func
        .dfg
        .block_params(entry)
        .last()
        .expect("invariant: a sweep's last parameter is its arena");
    let fresh = fresh_arrays(func);
    let requested = seeded;
    let seeded = if seeded {
        seeded_tangents(func, spec)
    } else {
        BTreeMap::new()
    };
    // Each seeded input's first column, loaded in the entry block (before
    // the blocks are rewritten: the entry's instructions are taken then).
    let firsts: BTreeMap<Value, Value> = seeded
        .iter()
        .map(|(&t, &k)| (t, first_column(func, arena, k)))
        .collect();
    let views = Views::new(func, arena);
    if requested {
        start_count(func, &views);
    }
    // Handles made here as conversions of bit sets (a read's bit, a
    // union): their `i64`, which a union uses instead of converting back.
    let mut bits: BTreeMap<Value, Value> = BTreeMap::new();
    for b in func.layout.clone() {
        let old = std::mem::take(&mut func.dfg.block_mut(b).insts);
        let mut new = Vec::with_capacity(old.len());
        // The count and the next bit while this block runs (module comment).
        let mut count: Option<Count> = None;
        for i in old {
            let data = func.dfg.inst(i).clone();
            // Before the block's end and an instruction that may read or
            // write the arena (a callee's sweep gets it as an argument); a
            // union passes it too but is rewritten below: no call.
            let is_union = matches!(data, InstData::Call { func: f, .. } if f == union);
            let touches = data.is_terminator()
                || (!is_union && data.args().iter().any(|&a| func.array_root(a) == arena));
            if touches {
                let mut e = Emit {
                    func: &mut *func,
                    at: i,
                    out: &mut new,
                };
                e.flush(&views, count.take());
            }
            match data {
                InstData::Call { func: f, args } if f == union => {
                    let mut e = Emit {
                        func: &mut *func,
                        at: i,
                        out: &mut new,
                    };
                    let [a, b] = [args[1], args[2]].map(|h| {
                        bits.get(&h)
                            .copied()
                            .unwrap_or_else(|| e.conv(h, Type::I64))
                    });
                    let or = e.binary(BinaryOp::Or, a, b, Type::I64);
                    *func.dfg.inst_mut(i) = InstData::Convert { arg: or };
                    bits.insert(func.dfg.inst_results(i)[0], or);
                }
                InstData::Load { array, .. } if fresh.contains(&func.array_root(array)) => (),
                InstData::Load { array, index, .. }
                    if func.tag(i) == Tag::Diff && seeded.contains_key(&array) =>
                {
                    let first = firsts[&array];
                    let mut e = Emit {
                        func: &mut *func,
                        at: i,
                        out: &mut new,
                    };
                    e.inst(
                        InstData::LenCheck {
                            args: [index, array],
                            what: LenCheckOf::Index,
                        },
                        None,
                    );
                    let col = e.binary(BinaryOp::Add, first, index, Type::I64);
                    let bit = e.read(&views, col, &mut count);
                    *func.dfg.inst_mut(i) = InstData::Convert { arg: bit };
                    bits.insert(func.dfg.inst_results(i)[0], bit);
                }
                data @ (InstData::Load { .. } | InstData::RefLoad { .. })
                    if func.tag(i) == Tag::Diff
                        && func
                            .dfg
                            .inst_results(i)
                            .first()
                            .map(|r| func.dfg.value_type(*r))
                            == Some(Type::F64) =>
                {
                    let loaded = func.dfg.make_inst(data, &[Type::F64]);
                    func.set_tag(loaded, Tag::Diff);
                    func.set_span(loaded, func.span(i));
                    new.push(loaded);
                    let h = func.dfg.inst_results(loaded)[0];
                    let mut e = Emit {
                        func: &mut *func,
                        at: i,
                        out: &mut new,
                    };
                    let (seed, bit) = e.seed(&views, h, &mut count);
                    *func.dfg.inst_mut(i) = InstData::Select {
                        cond: seed,
                        args: [bit, h],
                    };
                }
                _ => (),
            }
            new.push(i);
        }
        func.dfg.block_mut(b).insts = new;
    }
}

/// The arena's first three elements (`cnt`: the count at 0, the next bit
/// at 2) and the recorded columns (`rec`, from 3 on), as two views made in
/// the entry block: stores of columns are apart from the count for `rle`.
struct Views {
    cnt: Value,
    rec: Value,
}

impl Views {
    fn new(func: &mut Function, arena: Value) -> Views {
        let entry = func.entry_block().expect("invariant: a sweep has a body");
        let mut made = Vec::new();
        let mut view = |func: &mut Function, lo: i64, hi: i64| {
            let ends = [lo, hi].map(|c| {
                let (i, v) = crate::rewrite::detached_int(func, c);
                made.push(i);
                v
            });
            let data = InstData::ArrayView {
                array: arena,
                lo: ends[0],
                hi: ends[1],
            };
            let v = func.dfg.make_inst(data, &[func.dfg.value_type(arena)]);
            made.push(v);
            func.dfg.inst_results(v)[0]
        };
        let cnt = view(func, 0, 3);
        let rec = view(func, 3, 4 + MAX_READS);
        for &i in &made {
            func.set_tag(i, Tag::Diff);
        }
        let insts = &mut func.dfg.block_mut(entry).insts;
        insts.splice(0..0, made);
        Views { cnt, rec }
    }
}

/// Stores the count 0 and the next bit 1 at a requested sweep's entry,
/// after the views (module comment).
fn start_count(func: &mut Function, views: &Views) {
    let entry = func.entry_block().expect("invariant: a sweep has a body");
    let mut made = Vec::new();
    for (k, v) in [(0, 0), (2, 1)] {
        let (ik, k) = crate::rewrite::detached_int(func, k);
        let (iv, v) = crate::rewrite::detached_int(func, v);
        let data = InstData::Store {
            array: views.cnt,
            index: k,
            value: v,
            checked: false,
        };
        let st = func.dfg.make_inst(data, &[]);
        made.extend([ik, iv, st]);
    }
    for &i in &made {
        func.set_tag(i, Tag::Diff);
    }
    // After the views, which `Views::new` put first.
    let at = func
        .dfg
        .block(entry)
        .insts
        .iter()
        .position(|&i| func.dfg.inst_results(i).first() == Some(&views.rec))
        .map_or(0, |p| p + 1);
    func.dfg.block_mut(entry).insts.splice(at..at, made);
}

/// The read count `n` and the next read's bit as values of the block
/// being rewritten (`arena[0]` and `arena[2]` hold them when it is `None`).
struct Count {
    n: Value,
    bit: Value,
}

/// The tangent parameters of `Dual` input arrays, each with the place of
/// its input's first column in the arena (`MAX_READS + 4` on, one per
/// `Dual` input, scalars too, in order).
fn seeded_tangents(func: &Function, spec: &DerivSpec) -> BTreeMap<Value, i64> {
    let mut out = BTreeMap::new();
    let Some(entry) = func.entry_block() else {
        return out;
    };
    let values = func.dfg.block_params(entry);
    let (mut at, mut k) = (0, MAX_READS + 4);
    for act in &spec.params {
        let Some(param) = func.params.get(at) else {
            return BTreeMap::new();
        };
        if !act.is_active() {
            at += 1;
            continue;
        }
        if param.mode != ParamMode::Out {
            if param.mode == ParamMode::In && matches!(param.ty, Type::Array(_)) {
                if let Some(&t) = values.get(at + 1) {
                    out.insert(t, k);
                }
            }
            k += 1;
        }
        at += 2;
    }
    out
}

/// `arena[k]` (a seeded input's first column), loaded in the entry block.
fn first_column(func: &mut Function, arena: Value, k: i64) -> Value {
    let entry = func.entry_block().expect("invariant: a sweep has a body");
    let c = func.dfg.make_inst(
        InstData::Const {
            value: Constant::I64(k),
        },
        &[Type::I64],
    );
    let at = func.dfg.inst_results(c)[0];
    let load = func.dfg.make_inst(
        InstData::Load {
            array: arena,
            index: at,
            checked: true,
        },
        &[Type::I64],
    );
    for i in [c, load] {
        func.set_tag(i, Tag::Diff);
    }
    let insts = &mut func.dfg.block_mut(entry).insts;
    insts.insert(0, load);
    insts.insert(0, c);
    func.dfg.inst_results(load)[0]
}

/// The arrays made by `new` in `func` that no `copyrange` writes.
fn fresh_arrays(func: &Function) -> BTreeSet<Value> {
    let mut fresh = BTreeSet::new();
    let mut copied = BTreeSet::new();
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            match func.dfg.inst(i) {
                InstData::ArrayNew { .. } => {
                    fresh.insert(func.dfg.inst_results(i)[0]);
                }
                InstData::CopyRange { dst, .. } => {
                    copied.insert(func.array_root(*dst));
                }
                _ => (),
            }
        }
    }
    fresh.retain(|v| !copied.contains(v));
    fresh
}

/// Instructions placed before `at`, tagged and located as it is.
struct Emit<'a> {
    func: &'a mut Function,
    at: Inst,
    out: &'a mut Vec<Inst>,
}

impl Emit<'_> {
    fn inst(&mut self, data: InstData, ty: Option<Type>) -> Option<Value> {
        let tys: Vec<Type> = ty.into_iter().collect();
        let i = self.func.dfg.make_inst(data, &tys);
        self.func.set_tag(i, Tag::Diff);
        self.func.set_span(i, self.func.span(self.at));
        self.out.push(i);
        self.func.dfg.inst_results(i).first().copied()
    }

    fn value(&mut self, data: InstData, ty: Type) -> Value {
        self.inst(data, Some(ty))
            .expect("invariant: an instruction made with one result has it")
    }

    fn int(&mut self, x: i64) -> Value {
        self.value(
            InstData::Const {
                value: Constant::I64(x),
            },
            Type::I64,
        )
    }

    fn conv(&mut self, arg: Value, to: Type) -> Value {
        self.value(InstData::Convert { arg }, to)
    }

    fn binary(&mut self, op: BinaryOp, a: Value, b: Value, ty: Type) -> Value {
        self.value(InstData::Binary { op, args: [a, b] }, ty)
    }

    fn select(&mut self, cond: Value, a: Value, b: Value, ty: Type) -> Value {
        self.value(InstData::Select { cond, args: [a, b] }, ty)
    }

    fn load(&mut self, arena: Value, k: Value) -> Value {
        let data = InstData::Load {
            array: arena,
            index: k,
            checked: true,
        };
        self.value(data, Type::I64)
    }

    fn store(&mut self, arena: Value, k: Value, value: Value) {
        let data = InstData::Store {
            array: arena,
            index: k,
            value,
            checked: true,
        };
        self.inst(data, None);
    }

    /// The count and the next bit: `count`'s values, or loaded from the
    /// arena when the block has not loaded them yet.
    fn count(&mut self, views: &Views, count: &mut Option<Count>) -> (Value, Value) {
        if let Some(c) = count {
            return (c.n, c.bit);
        }
        let (c0, c2) = (self.int(0), self.int(2));
        let n = self.load(views.cnt, c0);
        let bit = self.load(views.cnt, c2);
        *count = Some(Count { n, bit });
        (n, bit)
    }

    /// Stores the block's count and next bit back into the arena (before an
    /// instruction that may read them, or leaves the block).
    fn flush(&mut self, views: &Views, count: Option<Count>) {
        if let Some(Count { n, bit }) = count {
            let (c0, c2) = (self.int(0), self.int(2));
            self.store(views.cnt, c0, n);
            self.store(views.cnt, c2, bit);
        }
    }

    /// Records column `col` at `arena[3 + k]` (`rec[k]`; k the reads so far, at most
    /// `MAX_READS`; a store past the count is harmless) and advances the
    /// count and the next bit when `seed` holds (always without one).
    fn record(
        &mut self,
        views: &Views,
        col: Value,
        seed: Option<Value>,
        count: &mut Option<Count>,
    ) -> Value {
        let (n, bit) = self.count(views, count);
        let c1 = self.int(1);
        let max = self.int(MAX_READS);
        let k = self.binary(BinaryOp::Min, n, max, Type::I64);
        self.store(views.rec, k, col);
        let n1 = self.binary(BinaryOp::Add, n, c1, Type::I64);
        let twice = self.binary(BinaryOp::Add, bit, bit, Type::I64);
        let top = self.int(1 << MAX_READS);
        let next = self.binary(BinaryOp::Min, twice, top, Type::I64);
        let (n1, next) = match seed {
            Some(s) => (
                self.select(s, n1, n, Type::I64),
                self.select(s, next, bit, Type::I64),
            ),
            None => (n1, next),
        };
        *count = Some(Count { n: n1, bit: next });
        bit
    }

    /// The bit of a new read of column `col` (a seed).
    fn read(&mut self, views: &Views, col: Value, count: &mut Option<Count>) -> Value {
        self.record(views, col, None, count)
    }

    /// Whether the handle `h` is a seed, and the bit of a new read (the
    /// read is recorded, and counted only when `h` is a seed).
    fn seed(&mut self, views: &Views, h: Value, count: &mut Option<Count>) -> (Value, Value) {
        let zero = self.value(
            InstData::Const {
                value: Constant::F64(0.0),
            },
            Type::F64,
        );
        let seed = self.value(
            InstData::Cmp {
                cond: CmpCond::Lt,
                args: [h, zero],
            },
            Type::BOOL,
        );
        let ih = self.conv(h, Type::I64);
        let minus_one = self.int(-1);
        let col = self.binary(BinaryOp::Sub, minus_one, ih, Type::I64);
        let bit = self.record(views, col, Some(seed), count);
        let f = self.conv(bit, Type::F64);
        (seed, f)
    }
}
