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
//!   `f64`, below 2^53).
//!
//! `arena[0]` counts the reads (the caller sets it to 0 and `arena[2]`,
//! the next read's bit, to 1); `arena` needs `3 + MAX_READS + 1`
//! elements, then one per `Dual` input (an active parameter not `out`),
//! in order: its first column. The caller seeds each input array's
//! tangent with its columns (element `i` the handle of column
//! `first + i`), so a load of such a tangent parameter is not made: its
//! seed is computed from the index, after `lencheck.index` checks the
//! index as the load would have (a cache miss less for each point of
//! bundle adjustment). A run with more than [`MAX_READS`] reads has wrong sets: the
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
    for b in func.layout.clone() {
        let old = std::mem::take(&mut func.dfg.block_mut(b).insts);
        let mut new = Vec::with_capacity(old.len());
        for i in old {
            match func.dfg.inst(i).clone() {
                InstData::Call { func: f, args } if f == union => {
                    let mut e = Emit {
                        func: &mut *func,
                        at: i,
                        out: &mut new,
                    };
                    let a = e.conv(args[1], Type::I64);
                    let b = e.conv(args[2], Type::I64);
                    let or = e.binary(BinaryOp::Or, a, b, Type::I64);
                    *func.dfg.inst_mut(i) = InstData::Convert { arg: or };
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
                    let bit = e.read(arena, col);
                    *func.dfg.inst_mut(i) = InstData::Convert { arg: bit };
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
                    let (seed, bit) = e.seed(arena, h);
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

    /// The bit of a new read of column `col` (a seed), recorded as
    /// [`Self::seed`] records one.
    fn read(&mut self, arena: Value, col: Value) -> Value {
        let (c0, c1, c2, c3) = (self.int(0), self.int(1), self.int(2), self.int(3));
        let max = self.int(MAX_READS);
        let n = self.load(arena, c0);
        let k = self.binary(BinaryOp::Min, n, max, Type::I64);
        let at = self.binary(BinaryOp::Add, k, c3, Type::I64);
        self.store(arena, at, col);
        let n1 = self.binary(BinaryOp::Add, n, c1, Type::I64);
        self.store(arena, c0, n1);
        let bit = self.load(arena, c2);
        let twice = self.binary(BinaryOp::Add, bit, bit, Type::I64);
        let top = self.int(1 << MAX_READS);
        let next = self.binary(BinaryOp::Min, twice, top, Type::I64);
        self.store(arena, c2, next);
        bit
    }

    /// Whether the handle `h` is a seed, and the bit of a new read: the
    /// read's column goes to `arena[3 + k]` (k the reads so far, at most
    /// `MAX_READS`; a store past the count is harmless), the count and the
    /// next bit advance when `h` is a seed.
    fn seed(&mut self, arena: Value, h: Value) -> (Value, Value) {
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
        let (c0, c1, c2, c3) = (self.int(0), self.int(1), self.int(2), self.int(3));
        let max = self.int(MAX_READS);
        let n = self.load(arena, c0);
        let k = self.binary(BinaryOp::Min, n, max, Type::I64);
        let ih = self.conv(h, Type::I64);
        let minus_one = self.int(-1);
        let col = self.binary(BinaryOp::Sub, minus_one, ih, Type::I64);
        let at = self.binary(BinaryOp::Add, k, c3, Type::I64);
        self.store(arena, at, col);
        let n1 = self.binary(BinaryOp::Add, n, c1, Type::I64);
        let n2 = self.select(seed, n1, n, Type::I64);
        self.store(arena, c0, n2);
        let bit = self.load(arena, c2);
        let twice = self.binary(BinaryOp::Add, bit, bit, Type::I64);
        let top = self.int(1 << MAX_READS);
        let next = self.binary(BinaryOp::Min, twice, top, Type::I64);
        let bit2 = self.select(seed, next, bit, Type::I64);
        self.store(arena, c2, bit2);
        let f = self.conv(bit, Type::F64);
        (seed, f)
    }
}
