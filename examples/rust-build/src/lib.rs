//! An example crate that compiles `.ad` code at build time with
//! `adc-build` and calls it through the generated bindings.

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

#[cfg(test)]
mod tests {
    #[test]
    fn bindings_call_the_compiled_code() {
        let xs = [3.0, 4.0];
        assert_eq!(super::norm2(&xs), 25.0);
        let mut d = [0.0; 2];
        super::dnorm2(&xs, &mut d, 1.0);
        assert_eq!(d, [6.0, 8.0]);
        let mut ys = [1.0, -2.0];
        super::scale(2.0, &mut ys);
        assert_eq!(ys, [2.0, -4.0]);
        let mut total = 1.0;
        assert_eq!(super::last(&ys, &mut total), (-4.0, 2));
        assert_eq!(total, -3.0);
        // From the second file, src/scale.ad: k x^2 and its gradient.
        assert_eq!(super::scaled(3.0, 2.0), 18.0);
        assert_eq!(super::dscaled(3.0, 2.0, 1.0), (18.0, 12.0, 9.0));
        // Named as in the source: `r#type`, `r#x_len`, `self_` and `__`.
        assert_eq!(super::names(&[1.0], 2, 3.0, 4.0, 5.0, 6.0), 21.0);
    }

    /// `tri`'s Jacobian from the bindings, dense and sparse, against the
    /// derivative by hand: row i is x[i-1] - 2 x[i]^2 + x[i+1], so the
    /// entries are 1, -4 x[i], 1 on three diagonals.
    #[test]
    fn jacobians_and_hessians_from_the_bindings() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let n = x.len();
        let by_hand = |r: usize, c: usize| -> f64 {
            if r == c {
                -4.0 * x[r]
            } else if r.abs_diff(c) == 1 {
                1.0
            } else {
                0.0
            }
        };
        let mut y = [0.0; 4];
        let mut jac = [0.0; 16];
        super::jtri(&x, &mut y, &mut jac);
        assert_eq!(y, [0.0, -4.0, -12.0, -29.0]);
        for r in 0..n {
            for c in 0..n {
                assert_eq!(jac[r * n + c], by_hand(r, c), "dense ({r}, {c})");
            }
        }
        let nnz = super::stri_nnz(&x, &mut y);
        assert_eq!(nnz, 10);
        let (mut vals, mut cols, mut rows) = (vec![0.0; 10], vec![0i64; 10], vec![0i64; n + 1]);
        super::stri(&x, &mut y, &mut vals, &mut cols, &mut rows);
        assert_eq!(rows, [0, 2, 5, 8, 10]);
        for r in 0..n {
            for k in rows[r] as usize..rows[r + 1] as usize {
                assert_eq!(
                    vals[k],
                    by_hand(r, cols[k] as usize),
                    "sparse ({r}, {})",
                    cols[k]
                );
            }
        }
        // The Hessian of the sum of x^4 is diagonal, 12 x^2.
        let mut hess = [1.0; 9];
        assert_eq!(
            super::hnorm4(&[1.0, -2.0, 0.5], &mut hess),
            1.0 + 16.0 + 0.0625
        );
        assert_eq!(hess, [12.0, 0.0, 0.0, 0.0, 48.0, 0.0, 0.0, 0.0, 3.0]);
    }
}
