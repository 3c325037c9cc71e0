//! `linearize`'s rules for the math built-ins: each tangent is the sum of
//! the arguments' tangents times partials computed by primal code.

use super::{Linearizer, Tan};
use crate::ad::AdError;
use adc_ir::{BinaryOp, CmpCond, InstData, MathFunc, ScalarType, Tag, Type, UnaryOp, Value};

impl Linearizer<'_> {
    pub(super) fn pb(&mut self, op: BinaryOp, a: Value, b: Value, ty: Type) -> Value {
        self.bin(op, a, b, ty, Tag::Primal)
    }

    /// `-x`, primal.
    pub(super) fn pneg(&mut self, x: Value, ty: Type) -> Value {
        let data = InstData::Unary {
            op: UnaryOp::Neg,
            arg: x,
        };
        self.prim(data, ty)
    }

    pub(super) fn recip(&mut self, x: Value, ty: Type) -> Value {
        let one = self.fconst(ty.elem(), 1.0);
        self.pb(BinaryOp::Div, one, x, ty)
    }

    /// 1 / x, or 0 where x is 0 (the partials of `hypot` and `atan2` at the
    /// origin, as `abs` at 0; `x` is a hypot, which is 0 only there).
    pub(super) fn recip_or_zero(&mut self, x: Value, ty: Type) -> Value {
        let zero = self.fconst(ty.elem(), 0.0);
        let r = self.recip(x, ty);
        let is_zero = self.cmp(CmpCond::Eq, x, zero);
        self.prim(
            InstData::Select {
                cond: is_zero,
                args: [zero, r],
            },
            ty,
        )
    }

    /// digamma(x), computed in f64 by the module's `@__adc_digamma`.
    pub(super) fn digamma(&mut self, x: Value, ty: Type) -> Value {
        let func = crate::ad::digamma_function(self.module);
        let f64_ty = Type::Scalar(ScalarType::F64);
        let wide = ty == f64_ty;
        let x64 = if wide {
            x
        } else {
            self.prim(InstData::Convert { arg: x }, f64_ty)
        };
        let d = self.prim(
            InstData::Call {
                func,
                args: vec![x64],
            },
            f64_ty,
        );
        if wide {
            d
        } else {
            self.prim(InstData::Convert { arg: d }, ty)
        }
    }

    /// Tangent of a math built-in: the sum of `tangent * partial` over its
    /// arguments, each partial computed by primal instructions.
    pub(super) fn math_tangent(
        &mut self,
        f: MathFunc,
        xs: &[Value],
        ds: &[Tan],
        y: Value,
        ty: Type,
    ) -> Result<Tan, AdError> {
        use BinaryOp::*;
        use MathFunc::{
            Abs, Acos, Asin, Atan, Atan2, Cbrt, Ceil, Cos, Cosh, Erf, Erfc, Exp, Expm1, Floor,
            Fmod, Hypot, Lgamma, Log, Log10, Log1p, Log2, Pow, Round, Sin, Sinh, Sqrt, Tanh, Trunc,
        };
        if ds.iter().all(|d| !matches!(d, Tan::Val(_))) {
            return Ok(Tan::Zero);
        }
        let st = ty.elem();
        let x = xs[0];
        let partial = match f {
            Floor | Ceil | Round | Trunc => return Ok(Tan::Zero),
            Sin => self.math(Cos, &[x], ty),
            Cos => {
                let s = self.math(Sin, &[x], ty);
                self.pneg(s, ty)
            }
            MathFunc::Tan => {
                let one = self.fconst(st, 1.0);
                let yy = self.pb(Mul, y, y, ty);
                self.pb(Add, one, yy, ty)
            }
            Asin | Acos => {
                let one = self.fconst(st, 1.0);
                let xx = self.pb(Mul, x, x, ty);
                let d = self.pb(Sub, one, xx, ty);
                let s = self.math(Sqrt, &[d], ty);
                let r = self.recip(s, ty);
                if f == Acos {
                    self.pneg(r, ty)
                } else {
                    r
                }
            }
            Atan => {
                let one = self.fconst(st, 1.0);
                let xx = self.pb(Mul, x, x, ty);
                let d = self.pb(Add, one, xx, ty);
                self.recip(d, ty)
            }
            Sinh => self.math(Cosh, &[x], ty),
            Cosh => self.math(Sinh, &[x], ty),
            Tanh => {
                let one = self.fconst(st, 1.0);
                let yy = self.pb(Mul, y, y, ty);
                self.pb(Sub, one, yy, ty)
            }
            Exp => y,
            Expm1 => {
                let one = self.fconst(st, 1.0);
                self.pb(Add, y, one, ty)
            }
            Log => self.recip(x, ty),
            Log1p => {
                let one = self.fconst(st, 1.0);
                let d = self.pb(Add, one, x, ty);
                self.recip(d, ty)
            }
            Log2 | Log10 => {
                let ln = self.fconst(
                    st,
                    if f == Log2 {
                        std::f64::consts::LN_2
                    } else {
                        std::f64::consts::LN_10
                    },
                );
                let d = self.pb(Mul, x, ln, ty);
                self.recip(d, ty)
            }
            Sqrt => {
                let half = self.fconst(st, 0.5);
                self.pb(Div, half, y, ty)
            }
            Cbrt => {
                let three = self.fconst(st, 3.0);
                let yy = self.pb(Mul, y, y, ty);
                let d = self.pb(Mul, three, yy, ty);
                self.recip(d, ty)
            }
            Abs => {
                // abs'(0) = 0 (docs/derivatives.md#non-smooth-and-singular-points).
                let (zero, one, m1) = (
                    self.fconst(st, 0.0),
                    self.fconst(st, 1.0),
                    self.fconst(st, -1.0),
                );
                let pos = self.cmp(CmpCond::Gt, x, zero);
                let neg = self.cmp(CmpCond::Lt, x, zero);
                let s = self.prim(
                    InstData::Select {
                        cond: neg,
                        args: [m1, zero],
                    },
                    ty,
                );
                self.prim(
                    InstData::Select {
                        cond: pos,
                        args: [one, s],
                    },
                    ty,
                )
            }
            Erf | Erfc => {
                let c = self.fconst(
                    st,
                    if f == Erf {
                        std::f64::consts::FRAC_2_SQRT_PI
                    } else {
                        -std::f64::consts::FRAC_2_SQRT_PI
                    },
                );
                let xx = self.pb(Mul, x, x, ty);
                let nxx = self.pneg(xx, ty);
                let e = self.math(Exp, &[nxx], ty);
                self.pb(Mul, c, e, ty)
            }
            Lgamma => self.digamma(x, ty),
            MathFunc::Fma => {
                // a * b + c: partials b, a and 1 (`contract` makes `fma`
                // after the derivative passes; this is for IR text).
                let one = self.fconst(st, 1.0);
                let terms = [(ds[0], xs[1]), (ds[1], xs[0]), (ds[2], one)];
                return Ok(self.sum_scaled(&terms, ty));
            }
            Atan2 | Pow | Hypot | Fmod => {
                let (a, b) = (xs[0], xs[1]);
                let (pa, pb) = match f {
                    Atan2 => {
                        // (b, -a) / (a^2 + b^2) as ((b, -a) / h) / h with
                        // h = hypot(a, b): a^2 + b^2 underflows to 0 for
                        // tiny a and b (1e-170), h only at the origin,
                        // where the partials are 0, not 0/0.
                        let h = self.math(Hypot, &[a, b], ty);
                        let r = self.recip_or_zero(h, ty);
                        let br = self.pb(Mul, b, r, ty);
                        let pa = self.pb(Mul, br, r, ty);
                        let ar = self.pb(Mul, a, r, ty);
                        let ar2 = self.pb(Mul, ar, r, ty);
                        let pb = self.pneg(ar2, ty);
                        (pa, pb)
                    }
                    Pow => {
                        // As JAX: pow(x, 0) is 1 for every x, so its x
                        // partial is b * pow(a, 1) = 0, not 0 * pow(0, -1)
                        // = NaN; pow(0, b) is 0 for every b > 0, so its b
                        // partial uses log(1), not log(0) = -inf.
                        let (zero, one) = (self.fconst(st, 0.0), self.fconst(st, 1.0));
                        let bm1 = self.pb(Sub, b, one, ty);
                        let b_zero = self.cmp(CmpCond::Eq, b, zero);
                        let e = self.prim(
                            InstData::Select {
                                cond: b_zero,
                                args: [one, bm1],
                            },
                            ty,
                        );
                        let pw = self.math(Pow, &[a, e], ty);
                        let pa = self.pb(Mul, b, pw, ty);
                        let pb = if matches!(ds[1], Tan::Val(_)) {
                            let a_zero = self.cmp(CmpCond::Eq, a, zero);
                            let base = self.prim(
                                InstData::Select {
                                    cond: a_zero,
                                    args: [one, a],
                                },
                                ty,
                            );
                            let l = self.math(Log, &[base], ty);
                            self.pb(Mul, y, l, ty)
                        } else {
                            pa
                        };
                        (pa, pb)
                    }
                    Hypot => {
                        // At the origin, as abs(0): partials 0, not 0/0.
                        let r = self.recip_or_zero(y, ty);
                        (self.pb(Mul, a, r, ty), self.pb(Mul, b, r, ty))
                    }
                    _ => {
                        // fmod(a, b) = a - n b, n = trunc(a / b) of the
                        // exact quotient; the rounded a / b can be one
                        // more (fmod(1, 0.1) = 1 - 9 * 0.1, 1 / 0.1 = 10),
                        // while (a - fmod(a, b)) / b is n within rounding.
                        let ay = self.pb(Sub, a, y, ty);
                        let q = self.pb(Div, ay, b, ty);
                        let n = self.math(Round, &[q], ty);
                        let one = self.fconst(st, 1.0);
                        (one, self.pneg(n, ty))
                    }
                };
                return Ok(self.sum_scaled(&[(ds[0], pa), (ds[1], pb)], ty));
            }
        };
        Ok(self.scale(ds[0], partial, ty))
    }
}
