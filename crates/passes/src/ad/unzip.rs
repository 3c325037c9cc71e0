//! `unzip`: splits a linearized reverse request into a primal part and a
//! differential part that replays the same control flow.
//!
//! Assumes: `func` is the output of `linearize` (+ `propagate`, +
//! `lower-pairs`) for a reverse request: no DifferentialPair is left.
//! Guarantees (check with `adc ir --after unzip`):
//! - All returns go through one exit block, and the exit edge of each
//!   counted loop (`crate::loops`) through a block of its own. The primal
//!   part is the source's
//!   CFG with the primal instructions only; a call of a derivative becomes
//!   the primal call, after copies of the arguments the callee may change
//!   (writable arrays are `copy`'d, references `rload`'d).
//! - The primal exit ends in the only `mixed` jump, to the differential
//!   entry. The differential part is the CFG again (`block` for `block`,
//!   in the same order, with the same edges), holding the `diff`
//!   instructions and the derivative calls, and branching on the same
//!   conditions.
//! - Primal values the differential part needs reach it directly when they
//!   are defined once per call (a block outside every loop that dominates
//!   the exit); all others are pushed on the tape at the end of their
//!   primal block and read back (`tape.read`) at the start of the block's
//!   differential twin, in push order. So values of loop iterations are
//!   kept per iteration, and the tape follows the actual trip count.
//!   Values cheap to compute again from what the twin has (constants,
//!   integer and float arithmetic, comparisons, conversions, loads from
//!   array parameters the function never writes) are computed again
//!   there instead.
//! - Tape instructions already in the input (code that is, or calls
//!   inlined, a reverse derivative: reverse over reverse) move up one tape
//!   level; the tape this pass pushes to and reads from is tape 0.
//! - A counted loop's counter is a parameter of the header's twin too (the
//!   same start constant, the same step on the back edge), so it is not
//!   taped inside the loop; the loop's exit block tapes it first.
//! - A block with several predecessors (other than a counted loop's
//!   header) gets a parameter in the primal
//!   part, the index of the edge taken (in `incoming_edges` order; a `bool`
//!   for two edges, `true` for the second, else an `i64`);
//!   it is the first value taped for the block, and `transpose` pops it to
//!   find its way back.
//!
//! The result runs (forward replay): it computes the same as the
//! linearized function.

mod calls;
mod recompute;
mod shape;

use shape::{every_block_returns, shift_tapes, single_exit, split_exit};

use crate::ad::{diff_values, AdError};
use crate::cfg::incoming_edges;
use crate::loops::{counted_loops, CountedLoop, LoopInit};
use adc_ir::dom::DomTree;
use adc_ir::{
    Block, BlockCall, Constant, FuncId, Function, Inst, InstData, Module, Tag, Type, Value,
};
use std::collections::{BTreeMap, BTreeSet};

/// `split`: whether calls of qualifying callees use split mode
/// (`ad::split`); their split functions are declared here if new.
pub fn run(module: &mut Module, id: FuncId, split: bool) -> Result<(), AdError> {
    let mut g = module.func(id).clone();
    if crate::ad::lower_pairs::has_pairs(&g) {
        let span = g.deriv_span;
        return Err(AdError::internal(
            "internal error: unzip needs its input's pairs lowered (`lower-pairs`)",
            span,
        ));
    }
    // Code that is (or inlines) a reverse derivative already uses tapes:
    // they move up a level, so the tape this derivative keeps (level 0)
    // is a stack of its own.
    shift_tapes(&mut g)?;
    every_block_returns(&g)?;
    single_exit(&mut g);
    let all: BTreeSet<Block> = g.layout.iter().copied().collect();
    for lp in counted_loops(&g, &all) {
        split_exit(&mut g, lp.header, lp.exit);
    }
    let counted = counted_loops(&g, &all);
    let kinds = diff_values(module, &g);
    let mut split_of = BTreeMap::new();
    if split {
        for &b in &g.layout {
            for &i in &g.dfg.block(b).insts {
                if let (Tag::Mixed, InstData::Call { func, .. }) = (g.tag(i), g.dfg.inst(i)) {
                    let src = crate::ad::jvp_source(module, *func);
                    if let Some(src) = src.filter(|s| crate::ad::split::qualifies(module, *s)) {
                        let parts = crate::ad::split::declare(module, src, *func);
                        split_of.insert(*func, parts);
                    }
                }
            }
        }
    }
    // `transpose` cuts this function in two (split mode) when it is the
    // internal derivative of a qualifying function.
    let split_half = split
        && g.name
            .strip_prefix("__adc_vjp_")
            .and_then(|src| module.find(src))
            .is_some_and(|src| crate::ad::split::qualifies(module, src));
    let mut unzipper = Unzipper::new(module, &g, kinds, split_half);
    unzipper.counted = counted;
    unzipper.split_of = split_of;
    let out = unzipper.build()?;
    *module.func_mut(id) = out;
    Ok(())
}

struct Unzipper<'a> {
    module: &'a Module,
    g: &'a Function,
    kinds: Vec<bool>,
    out: Function,
    pblock: BTreeMap<Block, Block>,
    dblock: BTreeMap<Block, Block>,
    /// G value -> its primal-part value.
    pmap: Vec<Option<Value>>,
    /// G diff value -> its differential-part value.
    dmap: Vec<Option<Value>>,
    /// Block of G that defines each primal-part value.
    def_block: BTreeMap<Value, Block>,
    once: BTreeMap<Block, bool>,
    preds: BTreeMap<Block, usize>,
    /// Entry parameters (by position) whose arrays the function may write.
    written_params: Vec<bool>,
    /// Local arrays whose loads the differential part may repeat
    /// (`recompute::frozen_locals`), with the blocks that may reach a write.
    frozen_locals: BTreeMap<Value, BTreeSet<Block>>,
    /// The primal part's frees of them, made `defer.free`.
    deferred_frees: Vec<Inst>,
    /// The arrays (primal-part roots) the differential part loads again.
    reread: BTreeSet<Value>,
    /// Counted loops of `g`: their counters are replayed, not taped.
    counted: Vec<CountedLoop>,
    /// Per counted loop, the counter's parameter of the header's twin.
    counter_d: Vec<Value>,
    /// Split mode: the callees' split functions, by `__adc_jvp_` callee.
    split_of: BTreeMap<FuncId, crate::ad::split::Split>,
    /// Split calls: the `__adc_lin_` function their differential half calls.
    split_calls: BTreeMap<Inst, FuncId>,
}

impl<'a> Unzipper<'a> {
    fn new(module: &'a Module, g: &'a Function, kinds: Vec<bool>, split_half: bool) -> Self {
        let mut out = Function::new(
            g.name.clone(),
            g.params.clone(),
            g.returns.clone(),
            g.linkage,
        );
        out.deriv = g.deriv.clone();
        out.deriv_span = g.deriv_span;
        let dom = DomTree::new(g);
        let exit = *g
            .layout
            .last()
            .expect("invariant: single_exit added a block");
        let cyclic = crate::cfg::blocks_on_cycles(g);
        let once: BTreeMap<Block, bool> = g
            .layout
            .iter()
            .map(|&b| (b, dom.dominates(b, exit) && !cyclic.contains(&b)))
            .collect();
        let frozen_locals = recompute::frozen_locals(module, g, &once, split_half);
        let preds = incoming_edges(g)
            .into_iter()
            .map(|(b, e)| (b, e.len()))
            .collect();
        Unzipper {
            module,
            g,
            kinds,
            out,
            pblock: BTreeMap::new(),
            dblock: BTreeMap::new(),
            pmap: vec![None; g.dfg.num_values()],
            dmap: vec![None; g.dfg.num_values()],
            def_block: BTreeMap::new(),
            once,
            preds,
            written_params: recompute::written_params(module, g, split_half),
            frozen_locals,
            deferred_frees: Vec::new(),
            reread: BTreeSet::new(),
            counted: Vec::new(),
            counter_d: Vec::new(),
            split_of: BTreeMap::new(),
            split_calls: BTreeMap::new(),
        }
    }

    fn is_diff(&self, v: Value) -> bool {
        self.kinds[v.index()]
    }

    fn emit(
        &mut self,
        b: Block,
        data: InstData,
        types: &[Type],
        tag: Tag,
        span: adc_ir::Span,
    ) -> Vec<Value> {
        let inst = self.out.append_inst(b, data, types, span);
        self.out.set_tag(inst, tag);
        self.out.dfg.inst_results(inst).to_vec()
    }

    fn p(&self, v: Value) -> Value {
        self.pmap[v.index()].expect("invariant: primal values are defined before use")
    }

    fn build(mut self) -> Result<Function, AdError> {
        let g = self.g;
        for &b in &g.layout {
            let pb = self.out.dfg.make_block();
            self.out.layout.push(pb);
            self.pblock.insert(b, pb);
        }
        for &b in &g.layout {
            let db = self.out.dfg.make_block();
            self.out.layout.push(db);
            self.dblock.insert(b, db);
        }
        // Parameters: the entry keeps the signature; other primal blocks
        // their primal parameters plus the edge index; differential blocks
        // their differential parameters.
        let entry = g.layout[0];
        for &v in g.dfg.block_params(entry) {
            let nv = self
                .out
                .dfg
                .append_block_param(self.pblock[&entry], g.dfg.value_type(v));
            if self.is_diff(v) {
                self.dmap[v.index()] = Some(nv);
            } else {
                self.pmap[v.index()] = Some(nv);
                self.def_block.insert(nv, entry);
            }
        }
        let mut edge_index: BTreeMap<Block, Value> = BTreeMap::new();
        for &b in &g.layout[1..] {
            for &v in g.dfg.block_params(b) {
                let ty = g.dfg.value_type(v);
                if self.is_diff(v) {
                    self.dmap[v.index()] =
                        Some(self.out.dfg.append_block_param(self.dblock[&b], ty));
                } else {
                    let nv = self.out.dfg.append_block_param(self.pblock[&b], ty);
                    self.pmap[v.index()] = Some(nv);
                    self.def_block.insert(nv, b);
                }
            }
            if let Some(k) = self.counted.iter().position(|l| l.header == b) {
                let nv = self.out.dfg.append_block_param(self.dblock[&b], Type::I64);
                debug_assert_eq!(self.counter_d.len(), k, "headers in layout order");
                self.counter_d.push(nv);
            } else if self.preds[&b] > 1 {
                let nv = self
                    .out
                    .dfg
                    .append_block_param(self.pblock[&b], edge_index_type(self.preds[&b]));
                self.def_block.insert(nv, b);
                edge_index.insert(b, nv);
            }
        }
        // Edge numbering, in `incoming_edges` order.
        let mut edge_no: BTreeMap<(Block, Block, usize), i64> = BTreeMap::new();
        for (target, edges) in incoming_edges(g) {
            for (k, e) in edges.iter().enumerate() {
                let nth = edges[..k].iter().filter(|x| x.from == e.from).count();
                edge_no.insert((e.from, target, nth), k as i64);
            }
        }
        // Dominators first, so definitions come before their uses.
        for b in crate::cfg::dominator_order(g) {
            self.block(b, edge_index.get(&b).copied(), &edge_no)?;
        }
        // A deferred free of an array the differential part does not read
        // after all is a plain free again.
        for i in std::mem::take(&mut self.deferred_frees) {
            if let InstData::DeferFree { array } = *self.out.dfg.inst(i) {
                if !self.reread.contains(&self.out.array_root(array)) {
                    *self.out.dfg.inst_mut(i) = InstData::ArrayFree { array };
                }
            }
        }
        Ok(self.out)
    }

    /// Whether a primal-part value is available in every differential block.
    fn direct(&self, v: Value) -> bool {
        self.def_block.get(&v).is_some_and(|b| self.once[b])
    }

    fn block(
        &mut self,
        b: Block,
        edge_index: Option<Value>,
        edge_no: &BTreeMap<(Block, Block, usize), i64>,
    ) -> Result<(), AdError> {
        let g = self.g;
        let (pb, db) = (self.pblock[&b], self.dblock[&b]);
        // The differential twin's instructions, with primal operands as
        // primal-part values (resolved to tape reads below).
        let mut needs: Vec<Value> = Vec::new();
        if let Some(e) = edge_index {
            needs.push(e);
        }
        let mut deferred: Vec<(Inst, Vec<Value>)> = Vec::new();
        let insts = g.dfg.block(b).insts.clone();
        let (body, term) = insts.split_at(insts.len() - 1);
        let term = term[0];
        for &inst in body {
            let data = g.dfg.inst(inst).clone();
            let span = g.span(inst);
            match (g.tag(inst), &data) {
                (Tag::Mixed, InstData::Call { func, args }) => {
                    let snaps = self.split_call(b, inst, *func, args)?;
                    for (a, s) in args.iter().zip(&snaps) {
                        if !self.kinds[a.index()] {
                            needs.push(*s);
                        }
                    }
                    deferred.push((inst, snaps));
                }
                (Tag::Diff, _) | (Tag::Mixed, _) => {
                    data.for_each_arg(|a| {
                        if !self.kinds[a.index()] {
                            needs.push(self.p(a));
                        }
                    });
                    deferred.push((inst, Vec::new()));
                }
                _ => {
                    let mut d = data.clone();
                    // A local array the differential part may read again
                    // lives until the derivative returns.
                    let mut deferred = false;
                    if let InstData::ArrayFree { array } = d {
                        if self.frozen_locals.contains_key(&g.array_root(array)) {
                            d = InstData::DeferFree { array };
                            deferred = true;
                        }
                    }
                    d.map_args(|a| self.p(a));
                    let types = crate::defs::result_types(g, inst);
                    let vals = self.emit(pb, d, &types, Tag::Primal, span);
                    if deferred {
                        let last = self.out.dfg.block(pb).insts.last().copied();
                        self.deferred_frees.extend(last);
                    }
                    for (r, v) in g.dfg.inst_results(inst).iter().zip(vals) {
                        self.pmap[r.index()] = Some(v);
                        self.def_block.insert(v, b);
                    }
                }
            }
        }
        let tdata = g.dfg.inst(term).clone();
        if let InstData::Branch { cond, .. } = &tdata {
            needs.push(self.p(*cond));
        }
        if let InstData::Return { args } = &tdata {
            needs.extend(
                args.iter()
                    .filter(|a| !self.kinds[a.index()])
                    .map(|a| self.p(*a)),
            );
        }
        // A counted loop's exit tapes the counter (the reverse sweep starts
        // the loop from it); it is the block's first tape value. A counter
        // that enters with a value, not a constant, has that value taped
        // second (the reverse sweep leaves the loop when back at it), and
        // the preheader's twin needs it for the header's twin.
        let mut forced: Vec<Value> = edge_index.into_iter().collect();
        for (k, lp) in self.counted.iter().enumerate() {
            if let (true, LoopInit::Value(v)) = (lp.entry == b, lp.init) {
                needs.push(self.p(v));
            }
            if lp.exit == b {
                let counter = self.counter_p(k);
                needs.insert(0, counter);
                forced.push(counter);
                if let LoopInit::Value(v) = lp.init {
                    needs.insert(1, self.p(v));
                    forced.push(self.p(v));
                }
            }
        }
        self.view_operands_needed(&mut needs);
        let mut seen = BTreeSet::new();
        needs.retain(|v| seen.insert(*v));
        // Cheap primal arithmetic is computed again in the differential
        // block instead of taped, when its operands are there anyway.
        let needed: BTreeSet<Value> = needs.iter().copied().collect();
        let recomputed: Vec<Value> = needs
            .iter()
            .copied()
            .filter(|&v| !forced.contains(&v) && !self.direct(v) && !self.carried(v, b))
            .filter(|&v| self.recomputable(v, b, &needed, 0))
            .collect();
        let taped: Vec<Value> = needs
            .iter()
            .copied()
            .filter(|&v| {
                forced.contains(&v)
                    || (!self.direct(v) && !recomputed.contains(&v) && !self.carried(v, b))
            })
            .collect();
        let span = g.span(term);
        for &v in &taped {
            self.emit(
                pb,
                InstData::TapePush { value: v, tape: 0 },
                &[],
                Tag::Primal,
                span,
            );
        }
        // Primal terminator.
        match &tdata {
            InstData::Return { .. } => {
                let dentry = self.dblock[&g.layout[0]];
                self.emit(
                    pb,
                    InstData::Jump {
                        dest: BlockCall {
                            block: dentry,
                            args: vec![],
                        },
                    },
                    &[],
                    Tag::Mixed,
                    span,
                );
            }
            _ => {
                let mut d = tdata.clone();
                // Edge indices for targets with several predecessors.
                let mut counts: BTreeMap<Block, usize> = BTreeMap::new();
                let mut extra = Vec::new();
                for call in tdata.successors() {
                    let nth = counts.entry(call.block).or_default();
                    let k = edge_no[&(b, call.block, *nth)];
                    *nth += 1;
                    let preds = self.preds[&call.block];
                    let counted = self.counted.iter().any(|l| l.header == call.block);
                    extra.push(if preds > 1 && !counted {
                        let value = edge_index_constant(edge_index_type(preds), k);
                        let c = InstData::Const { value };
                        Some(self.emit(pb, c, &[Type::Scalar(value.ty())], Tag::Primal, span)[0])
                    } else {
                        None
                    });
                }
                for (call, k) in d.successors_mut().into_iter().zip(extra) {
                    call.args.retain(|a| !self.kinds[a.index()]);
                    for a in call.args.iter_mut() {
                        *a = self.pmap[a.index()].expect("invariant: primal arguments are defined");
                    }
                    call.args.extend(k);
                    call.block = self.pblock[&call.block];
                }
                if let InstData::Branch { cond, .. } = &mut d {
                    *cond = self.p(*cond);
                }
                self.emit(pb, d, &[], Tag::Primal, span);
            }
        }
        // Differential twin: tape reads, recomputations, then the deferred
        // instructions.
        let mut local: BTreeMap<Value, Value> = BTreeMap::new();
        for &v in &taped {
            let ty = self.out.dfg.value_type(v);
            let r = self.emit(db, InstData::TapeRead { tape: 0 }, &[ty], Tag::Primal, span)[0];
            local.insert(v, r);
        }
        for (k, lp) in self.counted.iter().enumerate() {
            if lp.body.contains(&b) {
                local.insert(self.counter_p(k), self.counter_d[k]);
            }
        }
        for &v in &recomputed {
            self.recompute(v, db, &mut local, span);
        }
        for (inst, snaps) in deferred {
            self.diff_inst(db, inst, &snaps, &local);
        }
        // Differential terminator: same condition, differential arguments.
        let mut d = tdata.clone();
        let resolve = |s: &Self, a: Value| -> Value {
            if s.kinds[a.index()] {
                s.dmap[a.index()].expect("diff defined")
            } else {
                let pv = s.p(a);
                local.get(&pv).copied().unwrap_or(pv)
            }
        };
        match &mut d {
            InstData::Return { args } => {
                for a in args.iter_mut() {
                    *a = resolve(self, *a);
                }
            }
            _ => {
                let mut counters = Vec::new();
                for call in d.successors() {
                    counters.push(self.counter_arg(b, call.block, db, &local, span));
                }
                for (call, counter) in d.successors_mut().into_iter().zip(counters) {
                    call.args.retain(|a| self.kinds[a.index()]);
                    for a in call.args.iter_mut() {
                        *a = resolve(self, *a);
                    }
                    call.args.extend(counter);
                    call.block = self.dblock[&call.block];
                }
                if let InstData::Branch { cond, .. } = &mut d {
                    *cond = resolve(self, *cond);
                }
            }
        }
        let tag = if matches!(d, InstData::Return { .. }) {
            Tag::Mixed
        } else {
            Tag::Diff
        };
        self.emit(db, d, &[], tag, span);
        Ok(())
    }

    /// Emits a differential instruction in the twin block.
    fn diff_inst(
        &mut self,
        db: Block,
        inst: Inst,
        snaps: &[Value],
        local: &BTreeMap<Value, Value>,
    ) {
        let g = self.g;
        let span = g.span(inst);
        let mut data = g.dfg.inst(inst).clone();
        let types = crate::defs::result_types(g, inst);
        let tag = g.tag(inst);
        let mut free_after = Vec::new();
        if let (InstData::Call { args, .. }, false) = (&mut data, snaps.is_empty()) {
            let mut new_args = Vec::new();
            for (&orig, &s) in args.iter().zip(snaps) {
                if self.kinds[orig.index()] {
                    new_args.push(self.dmap[orig.index()].expect("diff arg defined"));
                    continue;
                }
                let v = local.get(&s).copied().unwrap_or(s);
                let ty = self.out.dfg.value_type(v);
                let pty = g.dfg.value_type(orig);
                match (pty, ty) {
                    (Type::Ref(e), Type::Scalar(_)) => {
                        // A fresh reference holding the value before the call.
                        let slot =
                            self.emit(db, InstData::Slot, &[Type::Ref(e)], Tag::Primal, span)[0];
                        self.emit(
                            db,
                            InstData::RefStore {
                                ptr: slot,
                                value: v,
                            },
                            &[],
                            Tag::Primal,
                            span,
                        );
                        new_args.push(slot);
                    }
                    (Type::Array(_), _) if s != self.p(orig) => {
                        free_after.push(v);
                        new_args.push(v);
                    }
                    _ => new_args.push(v),
                }
            }
            *args = new_args;
        } else {
            data.map_args(|a| {
                if self.kinds[a.index()] {
                    self.dmap[a.index()].expect("diff operand defined")
                } else {
                    let pv = self.p(a);
                    local.get(&pv).copied().unwrap_or(pv)
                }
            });
        }
        if let (InstData::Call { func, .. }, Some(lin)) = (&mut data, self.split_calls.get(&inst)) {
            *func = *lin;
        }
        let vals = self.emit(db, data, &types, tag, span);
        for (r, v) in g.dfg.inst_results(inst).iter().zip(vals) {
            if self.kinds[r.index()] {
                self.dmap[r.index()] = Some(v);
            }
        }
        for a in free_after {
            self.emit(db, InstData::ArrayFree { array: a }, &[], Tag::Diff, span);
        }
    }
}

/// The type of the edge index of a block with `preds` incoming edges: a
/// `bool` (one byte on the tape) for the common two, else an `i64`.
fn edge_index_type(preds: usize) -> Type {
    if preds == 2 {
        Type::BOOL
    } else {
        Type::I64
    }
}

/// Edge index `k` as a constant of the edge index's type (`bool` edge
/// indices are `true` for the second edge); `transpose` compares with it.
pub(crate) fn edge_index_constant(ty: Type, k: i64) -> Constant {
    if ty == Type::BOOL {
        Constant::Bool(k == 1)
    } else {
        Constant::I64(k)
    }
}
