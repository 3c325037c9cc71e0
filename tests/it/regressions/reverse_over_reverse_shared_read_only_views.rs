use super::{compiles, seed_passes};

/// Campaign of b5a682d (seeds 320000388, 320002401 and six more in the
/// first 8,500 programs; the generator's `pair2` case): reverse over
/// reverse disagreed with the other three second-order compositions when
/// overlapping views of one local array reach two read-only parameters of
/// a checkpointed callee and `f` branches before and after the call.
/// `unzip` taped each view of the shadow array as an array of its own,
/// so `transpose` saw two unrelated shadows and passed them both to the
/// callee's reverse derivative, which assumes they do not overlap. The
/// differential part now recomputes a view from its taped array.
#[test]
fn reverse_over_reverse_shared_read_only_views() {
    compiles(include_str!(
        "reverse_over_reverse_shared_read_only_views.ad"
    ));
    compiles(include_str!(
        "reverse_over_reverse_shared_read_only_views_min.ad"
    ));
    seed_passes(320000388);
    seed_passes(320002401);
}

/// The same bug shrunk further: reverse over reverse against forward over
/// reverse and central differences of `gr`, at x = -1, y = 0.7.
#[test]
fn reverse_over_reverse_views_of_one_shadow_share_its_root() {
    use adc::{ArgValue, Constant};
    let src = include_str!("reverse_over_reverse_shared_read_only_views_small.ad");
    let j = adc::compile_jit("small.ad", src, &adc::CompileOptions::default()).expect("compiles");
    let num = |name: &str, args: &mut [ArgValue]| -> Vec<f64> {
        let out = j.call(name, args).expect("runs");
        out.iter()
            .map(|c| match c {
                Constant::F64(v) => *v,
                other => panic!("{name} returned {other:?}"),
            })
            .collect()
    };
    let s = |v: f64| ArgValue::Scalar(Constant::F64(v));
    let (x, y) = (-1.0, 0.7);
    let rr = num("h_rr", &mut [s(x), s(y), s(1.0)]);
    let fr_x = num("h_fr", &mut [s(x), s(1.0), s(y), s(0.0)]);
    let fr_y = num("h_fr", &mut [s(x), s(0.0), s(y), s(1.0)]);
    let h = 1e-5;
    let gr = |x: f64, y: f64| num("gr", &mut [s(x), s(y)])[0];
    let fd_x = (gr(x + h, y) - gr(x - h, y)) / (2.0 * h);
    let fd_y = (gr(x, y + h) - gr(x, y - h)) / (2.0 * h);
    for (what, rev, fwd, fd) in [("x", rr[1], fr_x[1], fd_x), ("y", rr[2], fr_y[1], fd_y)] {
        assert!(
            (rev - fwd).abs() <= 1e-12 * (1.0 + fwd.abs()),
            "d/d{what}: reverse over reverse {rev}, forward over reverse {fwd}"
        );
        assert!(
            (rev - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
            "d/d{what}: reverse over reverse {rev}, central differences {fd}"
        );
    }
}
