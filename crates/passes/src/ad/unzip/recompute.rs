//! `unzip`'s choice of what the differential twin computes again rather
//! than reads from the tape: loop counters it replays, cheap arithmetic,
//! loads from array parameters nothing writes, and loads from local arrays
//! nothing writes after them.

use super::Unzipper;
use crate::ad::jvp_source;
use crate::loops::LoopInit;
use adc_ir::{
    BinaryOp, Block, Constant, Function, InstData, MathFunc, Module, ParamMode, Tag, Type, Value,
    ValueDef,
};
use std::collections::{BTreeMap, BTreeSet};

/// The most calls of the math library (`math_cost`) the differential twin
/// makes to compute one primal value again rather than read it from the
/// tape: two, so `sin(y)` and `cos(y)` (one `sincos` call after codegen)
/// or `exp(x) * y` are computed again, a chain of three is taped. A math
/// call's operands must be values the twin has anyway (`recomputable`):
/// computing them again too made GradBench's lse and lstm 1.5-2x slower.
const MAX_MATH_CALLS: u32 = 2;

/// The cost of computing `func` again, in calls of the math library:
/// `None` for `lgamma` (slow: always taped), 0 for the functions the
/// machine computes in an instruction or two (`sqrt`, `abs`, rounding).
/// `pow` counts as two (it is a `log` and an `exp`).
fn math_cost(func: MathFunc) -> Option<u32> {
    match func {
        MathFunc::Sqrt
        | MathFunc::Abs
        | MathFunc::Floor
        | MathFunc::Ceil
        | MathFunc::Round
        | MathFunc::Trunc => Some(0),
        MathFunc::Lgamma => None,
        MathFunc::Pow => Some(2),
        _ => Some(1),
    }
}

impl Unzipper<'_> {
    /// The primal-part value of counted loop `k`'s counter.
    pub(super) fn counter_p(&self, k: usize) -> Value {
        let lp = &self.counted[k];
        self.p(self.g.dfg.block_params(lp.header)[lp.param])
    }

    /// Whether `v` is the counter of a counted loop that contains `b`: the
    /// differential twin has it as its header's parameter, not on the tape.
    pub(super) fn carried(&self, v: Value, b: Block) -> bool {
        (0..self.counted.len()).any(|k| self.counted[k].body.contains(&b) && self.counter_p(k) == v)
    }

    /// The counter argument the differential twin of `from` passes to a
    /// counted loop's header `to`: the initial value from the preheader
    /// (the constant, or the twin's value of it: `block` put it in the
    /// preheader's needs), the counter plus the step from the latch.
    pub(super) fn counter_arg(
        &mut self,
        from: Block,
        to: Block,
        db: Block,
        local: &BTreeMap<Value, Value>,
        span: adc_ir::Span,
    ) -> Option<Value> {
        let k = self.counted.iter().position(|l| l.header == to)?;
        let (init, step, latch) = {
            let lp = &self.counted[k];
            (lp.init, lp.step, lp.latch)
        };
        let c = match (from == latch, init) {
            (true, _) => step,
            (false, LoopInit::Const(c)) => c,
            (false, LoopInit::Value(v)) => {
                let pv = self.p(v);
                return Some(local.get(&pv).copied().unwrap_or(pv));
            }
        };
        let cv = self.emit(
            db,
            InstData::Const {
                value: Constant::I64(c),
            },
            &[Type::I64],
            Tag::Primal,
            span,
        )[0];
        if from != latch {
            return Some(cv);
        }
        let counter = local[&self.counter_p(k)];
        let add = InstData::Binary {
            op: BinaryOp::Add,
            args: [counter, cv],
        };
        Some(self.emit(db, add, &[Type::I64], Tag::Primal, span)[0])
    }

    /// Whether the primal-part value `v`, needed by the differential twin of
    /// `b`, can be computed there again without taping anything more: a
    /// constant, or cheap arithmetic of block `b` (or a load from a parameter
    /// array nothing writes) whose operands are available, needed anyway,
    /// or recomputable themselves.
    /// Math functions count against `calls` (`math_cost`): the computation
    /// again of one value makes at most `MAX_MATH_CALLS` calls of the math
    /// library, so a value costlier than that is taped.
    /// With `leaves`, an operand defined before a counted loop around `b`
    /// (`invariant_in_loop`) that is not computed again without taping may
    /// be taped itself: it is added to `leaves`, which holds garbage when
    /// the answer is `false`.
    pub(super) fn recomputable(
        &self,
        v: Value,
        b: Block,
        needed: &BTreeSet<Value>,
        depth: u32,
        calls: &mut u32,
        mut leaves: Option<&mut Vec<Value>>,
    ) -> bool {
        let ValueDef::Result(i, _) = self.out.dfg.value_def(v) else {
            return false;
        };
        let data = self.out.dfg.inst(i);
        if matches!(data, InstData::Const { .. }) {
            return true;
        }
        let cheap = crate::predicates::is_cheap_arith(&self.out, i)
            || match data {
                InstData::ArrayLen { .. } | InstData::ArrayView { .. } => true,
                InstData::Load { array, .. } => {
                    self.unwritten_param(*array) || self.unwritten_local(*array, v)
                }
                // In a loop only: elsewhere the entry is one per call,
                // and the call costs more time than it saves.
                InstData::Math { .. } if !self.cyclic.contains(&b) => false,
                InstData::Math { func, .. } => match math_cost(*func) {
                    Some(c) if *calls + c <= MAX_MATH_CALLS => {
                        *calls += c;
                        true
                    }
                    _ => false,
                },
                _ => false,
            };
        if !cheap || depth > 6 {
            return false;
        }
        let mut args = Vec::new();
        data.for_each_arg(|a| args.push(a));
        if matches!(data, InstData::Math { .. }) {
            // A math call costs more than reading its result from the
            // tape: it is worth it only when it saves a tape entry without
            // computing anything else again, from operands the twin has.
            return args
                .iter()
                .all(|&a| self.direct(a) || self.carried(a, b) || (a != v && needed.contains(&a)));
        }
        args.into_iter().all(|a| {
            if self.direct(a) || self.carried(a, b) || (a != v && needed.contains(&a)) {
                return true;
            }
            match leaves.as_deref_mut() {
                Some(l) if self.invariant_in_loop(a, b) => {
                    self.recomputable(a, b, needed, depth + 1, calls, None) || {
                        l.push(a);
                        true
                    }
                }
                l => self.recomputable(a, b, needed, depth + 1, calls, l),
            }
        })
    }

    /// Whether the primal-part value `v` (a scalar) is defined outside a
    /// counted loop that contains `b`: the same in all of that loop's
    /// iterations, so `transpose` pushes it once per run of the loop when
    /// `b` tapes it.
    pub(super) fn invariant_in_loop(&self, v: Value, b: Block) -> bool {
        let Some(d) = self.def_block.get(&v) else {
            return false;
        };
        matches!(self.out.dfg.value_type(v), Type::Scalar(_))
            && self
                .counted
                .iter()
                .any(|lp| lp.body.contains(&b) && !lp.body.contains(d))
    }

    /// Adds the operands of the array views in `needs` that share their
    /// array with another needed value (through views of views), so the
    /// twin recomputes those views from their taped array rather than
    /// reading each from the tape. Two views of one array then share their
    /// array value in the differential part too, which is how `transpose`
    /// sees that the shadows it passes to a call share elements (a view
    /// read from the tape would look like an array of its own).
    pub(super) fn view_operands_needed(&self, needs: &mut Vec<Value>) {
        let view_of = |v: Value| match self.out.dfg.value_def(v) {
            ValueDef::Result(i, _) => match self.out.dfg.inst(i) {
                InstData::ArrayView { array, lo, hi } => Some([*array, *lo, *hi]),
                _ => None,
            },
            _ => None,
        };
        let root = |mut v: Value| {
            while let Some([array, ..]) = view_of(v) {
                v = array;
            }
            v
        };
        let mut uses: BTreeMap<Value, usize> = BTreeMap::new();
        for &v in needs.iter() {
            *uses.entry(root(v)).or_default() += 1;
        }
        let shared = |r: Value| uses.get(&r).is_some_and(|&n| n > 1);
        let mut k = 0;
        while k < needs.len() {
            let v = needs[k];
            k += 1;
            if self.direct(v) {
                continue;
            }
            if let Some(operands) = view_of(v) {
                if shared(root(v)) {
                    needs.extend(operands);
                }
            }
        }
    }

    /// Emits the recomputation of `v` (and of operands not yet available) in
    /// the differential block `db`.
    pub(super) fn recompute(
        &mut self,
        v: Value,
        db: Block,
        local: &mut BTreeMap<Value, Value>,
        span: adc_ir::Span,
    ) -> Value {
        if let Some(&l) = local.get(&v) {
            return l;
        }
        let ValueDef::Result(i, _) = self.out.dfg.value_def(v) else {
            return v;
        };
        if self.direct(v) {
            return v;
        }
        let mut data = self.out.dfg.inst(i).clone();
        let mut operands = Vec::new();
        data.for_each_arg(|a| operands.push(a));
        let mapped: Vec<Value> = operands
            .iter()
            .map(|&a| self.recompute(a, db, local, span))
            .collect();
        let map: BTreeMap<Value, Value> = operands.into_iter().zip(mapped).collect();
        data.map_args(|a| map[&a]);
        if let InstData::Load { checked, array, .. } = &mut data {
            // The primal part made the same access, so the check passed.
            *checked = false;
            let root = self.out.array_root(*array);
            self.reread.insert(root);
        }
        let ty = self.out.dfg.value_type(v);
        let r = self.emit(db, data, &[ty], Tag::Primal, span)[0];
        local.insert(v, r);
        r
    }

    /// An array parameter (of the primal part's entry) that no primal
    /// instruction of the function writes, so its contents during the
    /// differential part are those of the primal part.
    pub(super) fn unwritten_param(&self, array: Value) -> bool {
        let entry = self.out.layout[0];
        matches!(self.out.dfg.value_def(array), ValueDef::Param(b, k) if b == entry && !self.written_params[k as usize])
    }
}

impl Unzipper<'_> {
    /// Whether `array` (a primal-part value) is a view of a local array of
    /// `frozen_locals` that no primal instruction can write once the block
    /// defining `load` has run: its contents in the differential part are
    /// those `load` read.
    pub(super) fn unwritten_local(&self, array: Value, load: Value) -> bool {
        let Some(at) = self.def_block.get(&load) else {
            return false;
        };
        let root = self.out.array_root(array);
        self.frozen_locals
            .iter()
            .any(|(a, writers)| self.pmap[a.index()] == Some(root) && !writers.contains(at))
    }
}

/// The local arrays of `g` made once per call (`new` in a block of `once`)
/// whose loads the differential part may repeat, each with the blocks from
/// which a primal write to it can be reached (a load in any other block
/// reads what the array holds to the end). Their frees become
/// `free.defer` while `unzip` runs (plain frees again where the
/// differential part reads nothing of them), so they live until the
/// derivative returns. Empty for a split-mode half (its differential part
/// runs in another call) and when some write's array is neither a
/// parameter nor made here with `new` (a block parameter: which array it
/// is is not known).
pub(super) fn frozen_locals(
    module: &Module,
    g: &Function,
    once: &BTreeMap<Block, bool>,
    split_half: bool,
) -> BTreeMap<Value, BTreeSet<Block>> {
    let mut frozen = BTreeMap::new();
    let writes = array_writes(module, g);
    let known = |root: Value| match g.dfg.value_def(root) {
        ValueDef::Param(b, _) => b == g.layout[0],
        ValueDef::Result(i, _) => matches!(g.dfg.inst(i), InstData::ArrayNew { .. }),
        ValueDef::Unused => false,
    };
    if split_half || !writes.iter().all(|(_, root)| known(*root)) {
        return frozen;
    }
    // An element reference writes where it is used (the call it is passed
    // to runs after the other arguments, which may branch and read the
    // array), not where it is made: an array with one is not re-read.
    let referenced: BTreeSet<Value> = g
        .layout
        .iter()
        .flat_map(|b| &g.dfg.block(*b).insts)
        .filter_map(|&i| match g.dfg.inst(i) {
            InstData::ElemRef { array, .. } => Some(g.array_root(*array)),
            _ => None,
        })
        .collect();
    let preds = crate::cfg::incoming_edges(g);
    for &b in g.layout.iter().filter(|b| once.get(b) == Some(&true)) {
        for &i in &g.dfg.block(b).insts {
            if !matches!(g.dfg.inst(i), InstData::ArrayNew { .. }) || g.tag(i) == Tag::Diff {
                continue;
            }
            let a = g.dfg.inst_results(i)[0];
            if referenced.contains(&a) {
                continue;
            }
            let mut writers: BTreeSet<Block> = writes
                .iter()
                .filter(|(_, root)| *root == a)
                .map(|(w, _)| *w)
                .collect();
            let mut work: Vec<Block> = writers.iter().copied().collect();
            while let Some(w) = work.pop() {
                for e in preds.get(&w).into_iter().flatten() {
                    if writers.insert(e.from) {
                        work.push(e.from);
                    }
                }
            }
            frozen.insert(a, writers);
        }
    }
    frozen
}

/// Per entry parameter of `g`: whether a primal instruction may write its
/// array (a store, an element reference, or a call that passes it as a
/// writable parameter). Array parameters never alias (docs/arrays.md#the-aliasing-rule), so
/// the others keep their contents. A write to an array that is neither a
/// parameter nor made here with `new` counts as a write to every parameter.
pub(super) fn written_params(module: &Module, g: &Function, split_half: bool) -> Vec<bool> {
    let params = g.dfg.block_params(g.layout[0]);
    // A function cut in two by split mode runs its reverse half later than
    // its forward half, after the caller may have changed the arrays it
    // passed writable: those count as written (their loads are taped).
    let mut written: Vec<bool> = (0..params.len())
        .map(|k| {
            split_half
                && g.params
                    .get(k)
                    .is_some_and(|p| p.mode != ParamMode::In && matches!(p.ty, Type::Array(_)))
        })
        .collect();
    for (_, root) in array_writes(module, g) {
        match g.dfg.value_def(root) {
            ValueDef::Param(b, k) if b == g.layout[0] => written[k as usize] = true,
            ValueDef::Result(i, _) if matches!(g.dfg.inst(i), InstData::ArrayNew { .. }) => (),
            _ => written.iter_mut().for_each(|w| *w = true),
        }
    }
    written
}

/// Every write of a primal instruction of `g` to an array (a store, an
/// element reference, a copy into it, or a call that passes it as a
/// writable parameter): its block and the written array's root.
fn array_writes(module: &Module, g: &Function) -> Vec<(Block, Value)> {
    let mut writes = Vec::new();
    for &b in &g.layout {
        for &i in &g.dfg.block(b).insts {
            match g.dfg.inst(i) {
                InstData::Store { array, .. }
                | InstData::ElemRef { array, .. }
                | InstData::CopyRange { dst: array, .. }
                    if g.tag(i) != Tag::Diff =>
                {
                    writes.push((b, g.array_root(*array)))
                }
                InstData::Call { func, args } => {
                    // A derivative call's arguments interleave shadows; those
                    // of differentiable parameters are passed writable too.
                    let source = jvp_source(module, *func);
                    let derivative = source.is_some();
                    let callee = module.func(source.unwrap_or(*func));
                    let mut k = 0;
                    for p in &callee.params {
                        let Some(&a) = args.get(k) else { break };
                        if p.mode != ParamMode::In && matches!(p.ty, Type::Array(_)) {
                            writes.push((b, g.array_root(a)));
                        }
                        k += 1;
                        if derivative && adc_ir::ad::is_differentiable(p.ty) {
                            k += 1;
                        }
                    }
                }
                _ => (),
            }
        }
    }
    writes
}
