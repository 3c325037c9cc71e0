//! `unzip`'s one block (`Unzipper::block`): its primal instructions in the
//! primal part, what its differential twin needs taped or computed again,
//! both terminators, and the twin's instructions (`diff_inst`).

use super::{edge_index_constant, edge_index_type, Unzipper};
use crate::ad::AdError;
use crate::loops::LoopInit;
use adc_ir::{Block, BlockCall, Inst, InstData, Tag, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

impl Unzipper<'_> {
    pub(super) fn block(
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
        let insts = g.dfg.block(b).insts.clone();
        let (body, term) = insts.split_at(insts.len() - 1);
        let term = term[0];
        let deferred = self.primal_body(b, pb, body, &mut needs)?;
        let tdata = g.dfg.inst(term).clone();
        let (recomputed, taped, joined) = self.tape_plan(b, &tdata, edge_index, needs);
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
        self.primal_terminator(b, pb, &tdata, edge_no, span);
        // Differential twin: tape reads, recomputations, then the deferred
        // instructions.
        let mut local: BTreeMap<Value, Value> = joined;
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
        self.diff_terminator(b, db, &tdata, &local, span);
        Ok(())
    }

    /// `b`'s primal instructions, copied to its primal block `pb`; adds
    /// to `needs` the primal values its differential instructions use,
    /// which it returns (deferred to the twin), with the snapshots of the
    /// arguments of derivative calls.
    fn primal_body(
        &mut self,
        b: Block,
        pb: Block,
        body: &[Inst],
        needs: &mut Vec<Value>,
    ) -> Result<Vec<(Inst, Vec<Value>)>, AdError> {
        let g = self.g;
        let mut deferred: Vec<(Inst, Vec<Value>)> = Vec::new();
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
        Ok(deferred)
    }

    /// What `b`'s twin needs of the primal part (`needs`, with its
    /// terminator's operands and the counted loops' counters and starts):
    /// the values computed again there, those taped (in tape order), and
    /// those the twin reads from a join's parameter (`joined`).
    fn tape_plan(
        &mut self,
        b: Block,
        tdata: &InstData,
        edge_index: Option<Value>,
        mut needs: Vec<Value>,
    ) -> (Vec<Value>, Vec<Value>, BTreeMap<Value, Value>) {
        if let InstData::Branch { cond, .. } = tdata {
            needs.push(self.p(*cond));
        }
        if let InstData::Return { args } = tdata {
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
        let joined: BTreeMap<Value, Value> = needs
            .iter()
            .filter(|v| !forced.contains(v) && !self.direct(**v))
            .filter_map(|&v| Some((v, self.joined(v, b)?)))
            .collect();
        needs.retain(|v| !joined.contains_key(v));
        // Cheap primal arithmetic is computed again in the differential
        // block instead of taped, when its operands are there anyway.
        // Inside a counted loop, a value the loop computes from values
        // defined before it is computed again from those, which are taped
        // (`leaves`): `transpose` then pushes them once per run of the loop
        // (`transpose/hoist.rs`) instead of the value once per iteration.
        let needed: BTreeSet<Value> = needs.iter().copied().collect();
        let mut leaves: Vec<Value> = Vec::new();
        let recomputed: Vec<Value> = needs
            .iter()
            .copied()
            .filter(|&v| !forced.contains(&v) && !self.direct(v) && !self.carried(v, b))
            .filter(|&v| {
                let mut mine = Vec::new();
                let with_leaves = !self.invariant_in_loop(v, b);
                let mut calls = 0;
                let ok = self.recomputable(
                    v,
                    b,
                    &needed,
                    0,
                    &mut calls,
                    with_leaves.then_some(&mut mine),
                );
                if ok {
                    leaves.extend(mine);
                }
                ok
            })
            .collect();
        let mut taped: Vec<Value> = needs
            .iter()
            .copied()
            .filter(|&v| {
                forced.contains(&v)
                    || (!self.direct(v) && !recomputed.contains(&v) && !self.carried(v, b))
            })
            .collect();
        for v in leaves {
            if !taped.contains(&v) {
                taped.push(v);
            }
        }
        (recomputed, taped, joined)
    }

    /// A primal-part value defined outside every loop, needed in `b`'s
    /// twin, that a block `l` outside every loop passes to a parameter of the block it jumps to, itself
    /// defined once per call (an `if`'s join), where `l` lies on every path
    /// from `b` to the exit: the parameter, which holds the value whenever
    /// `b` ran, and which every differential block has. Arrays made in an
    /// arm, and their shadows, so stay off the tape.
    fn joined(&self, v: Value, b: Block) -> Option<Value> {
        // Defined once per call: one value, whichever run of `b` reads it.
        if self.cyclic.contains(self.def_block.get(&v)?) {
            return None;
        }
        self.join_args.iter().find_map(|&(l, arg, param)| {
            (self.pmap[arg.index()] == Some(v) && self.on_every_path(b, l))
                .then(|| self.pmap[param.index()])
                .flatten()
        })
    }

    /// Whether every path from `b` to the exit goes through `l`.
    fn on_every_path(&self, b: Block, l: Block) -> bool {
        let g = self.g;
        let exit = *g
            .layout
            .last()
            .expect("invariant: single_exit added a block");
        let mut seen: BTreeSet<Block> = [b].into_iter().collect();
        let mut work = vec![b];
        while let Some(x) = work.pop() {
            if x == l {
                continue;
            }
            if x == exit {
                return false;
            }
            for s in g.successors(x) {
                if seen.insert(s) {
                    work.push(s);
                }
            }
        }
        true
    }

    /// The primal block's terminator: a return jumps to the differential
    /// entry; a branch passes the primal arguments and the edge index.
    fn primal_terminator(
        &mut self,
        b: Block,
        pb: Block,
        tdata: &InstData,
        edge_no: &BTreeMap<(Block, Block, usize), i64>,
        span: adc_ir::Span,
    ) {
        let g = self.g;
        // Primal terminator.
        match tdata {
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
    }

    /// The twin's terminator: the same condition, differential arguments
    /// (and the counted loops' counters).
    fn diff_terminator(
        &mut self,
        b: Block,
        db: Block,
        tdata: &InstData,
        local: &BTreeMap<Value, Value>,
        span: adc_ir::Span,
    ) {
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
