//! The activity rules (docs/derivatives.md#default-activities) are one:
//! an attribute in the source, a `Derivative` asked for from Rust and a
//! derivative declaration of textual IR accept exactly the same
//! activities for every parameter and result.

use adc::{Activity, AdMode, Derivative};

const PARAMS: &[&str] = &[
    "double x",
    "float x",
    "int x",
    "bool x",
    "double[] x",
    "inout double x",
    "out float x",
    "inout double[] x",
    "out int[] x",
];

const RESULTS: &[&str] = &["double", "float", "int", "void"];

fn attr_name(mode: AdMode) -> &'static str {
    match mode {
        AdMode::Reverse => "autodiff_reverse",
        AdMode::Forward => "autodiff_forward",
    }
}

fn request(mode: AdMode, params: Vec<Activity>, ret: Activity) -> Derivative {
    match mode {
        AdMode::Reverse => Derivative::reverse("f", "g", params, ret),
        AdMode::Forward => Derivative::forward("f", "g", params, ret),
    }
}

/// Whether the attribute, the request and the `.adir` declaration accept
/// `acts` (parameter, then result unless `void`) on `f`; all three must agree.
fn accepted(mode: AdMode, param: &str, result: &str, param_act: Activity, ret: Activity) -> bool {
    let body = if result == "void" {
        "{ }"
    } else {
        "{ return 0; }"
    };
    let plain = format!("{result} f({param}) {body}");
    let acts = if result == "void" {
        format!("{param_act}")
    } else {
        format!("{param_act}, {ret}")
    };
    let with_attr = format!("[{}(g, {acts})] {plain}", attr_name(mode));
    let by_attr = adc::driver::frontend("a.ad", &with_attr, &adc::CompileOptions::default());
    let by_request =
        adc::compile_jit_with("r.ad", &plain, &[request(mode, vec![param_act], ret)]).is_ok();
    assert_eq!(
        by_attr.is_ok(),
        by_request,
        "`{with_attr}`: the attribute and the request disagree"
    );
    // The declaration in textual IR: the one the attribute makes, or one
    // with the refused activities spelled in (any signature will do: the
    // activities are checked first).
    let ir = match &by_attr {
        Ok(m) => m.to_string(),
        Err(_) => {
            let base = adc::driver::frontend("p.ad", &plain, &adc::CompileOptions::default())
                .expect("the function compiles");
            let mode_word = match mode {
                AdMode::Reverse => "reverse",
                AdMode::Forward => "forward",
            };
            let ret_act = if result == "void" {
                Activity::Const
            } else {
                ret
            };
            format!("{base}\nfunc @g(x: f64) -> f64 = {mode_word} @f({param_act}, {ret_act})\n")
        }
    };
    let by_ir = adc::driver::parse_ir("d.adir", &ir).is_ok();
    assert_eq!(
        by_attr.is_ok(),
        by_ir,
        "`{with_attr}`: the attribute and the textual IR declaration disagree:\n{ir}"
    );
    by_request
}

#[test]
fn attributes_requests_and_textual_ir_accept_the_same_activities() {
    let mut accepted_count = 0;
    let mut total = 0;
    for mode in [AdMode::Reverse, AdMode::Forward] {
        for param in PARAMS {
            for result in RESULTS {
                for &a in Activity::ALL {
                    let rets: &[Activity] = if *result == "void" {
                        &[Activity::Const]
                    } else {
                        Activity::ALL
                    };
                    for &r in rets {
                        total += 1;
                        accepted_count += usize::from(accepted(mode, param, result, a, r));
                    }
                }
            }
        }
    }
    // Some combinations fit and some do not: the check above compared both.
    assert!(
        accepted_count > 20 && accepted_count < total / 2,
        "{accepted_count} of {total}"
    );
}
