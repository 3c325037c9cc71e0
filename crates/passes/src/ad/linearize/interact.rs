//! `linearize`'s interactions (a sparse Hessian's sweep, a spec with
//! `interactions`; docs/jacobians.md#sparse-hessians): after each
//! nonlinear operation, a call of the marker `@__adc_interacts(a, b, v)`
//! with two tangents whose columns interact and the operation's result `v`
//! (`ad::sets` keeps the record only where `v` is used) (Walther, "Computing sparse
//! Hessians with automatic differentiation", ACM TOMS 34(1), 2008: the
//! nonlinear interaction domains). `ad::sets` turns each marker into a
//! record of the pair of index sets. For `x * y` the columns of `x`'s set
//! interact with those of `y`'s; for `x / y`, `x` times a nonlinear
//! function of `y`, those of `x` with `y` and `y` with `y`; for a
//! nonlinear built-in (`sin`, `exp`, `sqrt`, `pow`, `atan2`, ...) every
//! argument's with every argument's. Sums, differences, negation,
//! conversions, choices, `min`, `max`, `abs`, `fmod` and the rounding
//! functions are piecewise linear: no interaction. A product with a
//! value without tangent (a constant, an integer's conversion) records
//! none, as its tangent is zero.

use super::{Linearizer, Tan};
use adc_ir::{BinaryOp, InstData, MathFunc, Tag, Type};

impl Linearizer<'_> {
    /// The markers of the source instruction `data` (copied already as
    /// `anchor`, its operands' tangents known).
    pub(super) fn interactions(&mut self, data: &InstData, anchor: adc_ir::Value) {
        let pairs: Vec<(Tan, Tan)> = match data {
            InstData::Binary { op, args } => {
                let (dx, dy) = (self.tan_of(args[0]), self.tan_of(args[1]));
                match op {
                    BinaryOp::Mul | BinaryOp::MulZ => vec![(dx, dy)],
                    BinaryOp::Div | BinaryOp::DivZ => vec![(dx, dy), (dy, dy)],
                    _ => Vec::new(),
                }
            }
            InstData::Math { func, args } => {
                use MathFunc::{Abs, Ceil, Floor, Fmod, Round, Trunc};
                if matches!(func, Abs | Ceil | Floor | Fmod | Round | Trunc) {
                    Vec::new()
                } else {
                    let ds: Vec<Tan> = args.iter().map(|a| self.tan_of(*a)).collect();
                    let mut pairs = Vec::new();
                    for (i, &a) in ds.iter().enumerate() {
                        for &b in &ds[i..] {
                            pairs.push((a, b));
                        }
                    }
                    pairs
                }
            }
            _ => Vec::new(),
        };
        let Some((f64_marker, f32_marker)) = self.interact else {
            return;
        };
        let marker = match self.out.dfg.value_type(anchor) {
            Type::F64 => f64_marker,
            Type::F32 => match f32_marker {
                Some(m) => m,
                None => return,
            },
            _ => return,
        };
        for (a, b) in pairs {
            if let (Tan::Val(a), Tan::Val(b)) = (a, b) {
                let call = InstData::Call {
                    func: marker,
                    args: vec![a, b, anchor],
                };
                self.emit(call, &[], Tag::Diff);
            }
        }
    }
}
