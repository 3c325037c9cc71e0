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
}
