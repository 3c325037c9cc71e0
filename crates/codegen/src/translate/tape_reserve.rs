//! One capacity check for the pushes of a block: the first `tape.push` of
//! a block checks room for every push on that tape up to the block's end
//! or the first instruction that may touch the tape otherwise (a *barrier*:
//! a pop, read, lend, hand-over, call or return); the pushes after it in
//! that stretch store without a check. A loop body that pushes four values
//! (`unroll-inner`'s copies, paired by `simd`) checks once per iteration
//! instead of once per push.
//!
//! Assumes: the tape lowering calls `enter_block` before translating an IR
//! block and `barrier` before each of its instructions, and asks
//! `take_reserved` before each push. Guarantees: a push skips its check
//! only when a check earlier in the same IR block, with no barrier since,
//! made room for it (capacity at least the length after it), so every
//! store stays inside the tape; the tape's bytes and their order are those
//! of one check per push.

use adc_ir::{Function, Inst, InstData};
use std::collections::BTreeMap;

/// The reservation state of a function's tapes.
#[derive(Clone, Default)]
pub(crate) struct Reserve {
    /// Per push of the current block: the bytes it and the later pushes on
    /// its tape take before the next barrier.
    room: BTreeMap<Inst, i64>,
    /// Per tape level: bytes a check made room for that no push has used
    /// yet.
    reserved: Vec<i64>,
}

/// Whether `data` may read or change a tape's state other than by pushing.
fn barrier(data: &InstData) -> bool {
    matches!(
        data,
        InstData::TapePop { .. }
            | InstData::TapeRead { .. }
            | InstData::TapeLend
            | InstData::TapeReclaim { .. }
            | InstData::TapeAdopt { .. }
            | InstData::TapeGive { .. }
            | InstData::Call { .. }
            | InstData::Return { .. }
    )
}

impl Reserve {
    /// Forgets every reservation and plans the pushes of `blk`, whose
    /// instructions push `sizes` bytes each (`None` for other
    /// instructions).
    pub(crate) fn enter_block(
        &mut self,
        func: &Function,
        blk: adc_ir::Block,
        size: impl Fn(&InstData) -> Option<(u8, i64)>,
    ) {
        self.room.clear();
        self.reserved.iter_mut().for_each(|r| *r = 0);
        // Backwards: the bytes from each push to the next barrier.
        let mut after: BTreeMap<u8, i64> = BTreeMap::new();
        for &i in func.dfg.block(blk).insts.iter().rev() {
            let data = func.dfg.inst(i);
            if barrier(data) {
                after.clear();
            } else if let Some((level, bytes)) = size(data) {
                let total = after.entry(level).or_insert(0);
                *total += bytes;
                self.room.insert(i, *total);
            }
        }
    }

    /// Forgets every reservation if `data` is a barrier.
    pub(crate) fn barrier(&mut self, data: &InstData) {
        if barrier(data) {
            self.reserved.iter_mut().for_each(|r| *r = 0);
        }
    }

    /// Whether `bytes` pushed on tape `level` fit in what a check made room
    /// for (then they are taken from it).
    pub(crate) fn take_reserved(&mut self, level: u8, bytes: i64) -> bool {
        let l = usize::from(level);
        match self.reserved.get_mut(l) {
            Some(r) if *r >= bytes => {
                *r -= bytes;
                true
            }
            _ => false,
        }
    }

    /// The bytes to check room for at push `inst` of `bytes` bytes (at
    /// least those), remembering the rest as reserved for the pushes after
    /// it.
    pub(crate) fn check_for(&mut self, inst: Inst, level: u8, bytes: i64) -> i64 {
        let total = self.room.get(&inst).copied().unwrap_or(bytes).max(bytes);
        let l = usize::from(level);
        if self.reserved.len() <= l {
            self.reserved.resize(l + 1, 0);
        }
        self.reserved[l] = total - bytes;
        total
    }
}

#[cfg(test)]
mod tests {
    use super::Reserve;
    use adc_ir::{Block, InstData};

    /// Three pushes (8, 1 and 8 bytes), a call, then two more.
    const PUSHES: &str = "
static @g() {
block0():
    return
}
func @f(x: f64, b: bool) {
block0(v0: f64, v1: bool):
    tape.push v0
    tape.push v1
    tape.push v0
    call @g()
    tape.push v0
    tape.push v0
    return
}
";

    fn bytes(d: &InstData) -> Option<(u8, i64)> {
        match d {
            InstData::TapePush { tape, .. } => Some((*tape, 8)),
            _ => None,
        }
    }

    #[test]
    fn the_first_push_before_a_barrier_checks_for_all_up_to_it() {
        let m = adc_ir::parse_module(PUSHES).expect("parses");
        let f = &m.funcs[1];
        let insts = f.dfg.block(Block::new(0)).insts.clone();
        let mut r = Reserve::default();
        r.enter_block(f, Block::new(0), bytes);
        // Nothing is reserved before a check.
        assert!(!r.take_reserved(0, 8));
        // The first push checks for the three before the call.
        assert_eq!(r.check_for(insts[0], 0, 8), 24);
        assert!(r.take_reserved(0, 8));
        assert!(r.take_reserved(0, 8));
        assert!(!r.take_reserved(0, 8), "room for three pushes only");
        // The call ends the reservation; the push after it checks for two.
        r.check_for(insts[1], 0, 8);
        r.barrier(f.dfg.inst(insts[3]));
        assert!(!r.take_reserved(0, 8));
        assert_eq!(r.check_for(insts[4], 0, 8), 16);
        // Another tape has nothing reserved, and a new block forgets all.
        assert!(!r.take_reserved(1, 8));
        r.enter_block(f, Block::new(0), bytes);
        assert!(!r.take_reserved(0, 8));
    }
}
