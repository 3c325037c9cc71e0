//! `transpose`'s reverse of one differential block
//! (`Transposer::reverse_block`): tape pops, the primal instructions
//! replayed, then the differential ones transposed, last first (vector
//! mode's lanes in groups, `lanes.rs`).

use super::Transposer;
use crate::ad::AdError;
use adc_ir::{Block, Inst, InstData, Tag, Type, Value};

impl Transposer<'_> {
    /// The reverse of one differential block, up to its control flow.
    pub(super) fn reverse_block(
        &mut self,
        b: Block,
        primal_twin: Block,
        seeds: &[Value],
        primal_returns: &mut Vec<Value>,
    ) -> Result<(), AdError> {
        let u = self.u;
        self.acc.clear();
        self.map.clear();
        // What the edge taken passed back for the values only this block
        // uses (`edge_adjoint_params`).
        for &(v, param) in self.edge_adjoints.get(&b).into_iter().flatten() {
            self.acc.insert(v, param);
        }
        for k in 0..self.counted.len() {
            if self.counted[k].body.contains(&b) {
                let ptr = self.counter_slot(k);
                let i = self.emit1(InstData::RefLoad { ptr }, Type::I64);
                let counter = self.counter(k);
                self.map.insert(counter, i);
            }
        }
        let insts = u.dfg.block(b).insts.clone();
        let reads: Vec<Inst> = insts
            .iter()
            .copied()
            .filter(|i| matches!(u.dfg.inst(*i), InstData::TapeRead { tape: 0 }))
            .collect();
        // The primal twin's pushes, in the same order as these reads.
        let pushes: Vec<Inst> = u
            .dfg
            .block(primal_twin)
            .insts
            .iter()
            .copied()
            .filter(|i| matches!(u.dfg.inst(*i), InstData::TapePush { tape: 0, .. }))
            .collect();
        if pushes.len() != reads.len() {
            return Err(AdError::internal(
                "internal error: tape pushes and reads do not pair up",
                u.deriv_span,
            ));
        }
        self.pop_hoisted(b);
        for (&i, &push) in reads.iter().zip(&pushes).rev() {
            let r = u.dfg.inst_results(i)[0];
            if let Some(v) = self.load_hoisted(i) {
                self.map.insert(r, v);
                continue;
            }
            let v = self.emit1(InstData::TapePop { tape: 0 }, self.ty(r));
            self.map.insert(r, v);
            self.tape_pairs.push((v, push));
        }
        for &i in &insts {
            if u.tag(i) == Tag::Primal
                && !matches!(u.dfg.inst(i), InstData::TapeRead { tape: 0 })
                && !u.dfg.inst(i).is_terminator()
            {
                let mut d = u.dfg.inst(i).clone();
                d.map_args(|a| self.p(a));
                let types = crate::defs::result_types(u, i);
                let vals = self.emit(d, &types);
                if let Some(&last) = self.out.dfg.block(self.cur).insts.last() {
                    self.replayed.push(last);
                }
                for (r, v) in u.dfg.inst_results(i).iter().zip(vals) {
                    self.map.insert(*r, v);
                }
            }
        }
        let term = *insts.last().expect("invariant: blocks end in a terminator");
        if let InstData::Return { args } = u.dfg.inst(term) {
            let mut k = 0;
            for &a in args {
                if self.kinds[a.index()] {
                    if let Some(&s) = seeds.get(k) {
                        self.accumulate(a, s);
                    }
                    k += 1;
                } else {
                    primal_returns.push(self.p(a));
                }
            }
        }
        let diff: Vec<Inst> = insts
            .iter()
            .copied()
            .filter(|&i| u.tag(i) != Tag::Primal && !u.dfg.inst(i).is_terminator())
            .collect();
        let width = u.deriv.as_ref().map_or(1, |s| s.width) as usize;
        for group in super::lanes::lane_groups(u, &diff, width).iter().rev() {
            self.transpose_group(group)?;
        }
        Ok(())
    }
}
