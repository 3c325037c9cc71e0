//! Derivatives asked for from Rust, without editing the source: each
//! `Derivative` names a function, a mode and activities (as values), and
//! the name the generated function gets, exactly as an
//! `[autodiff_reverse(...)]` / `[autodiff_forward(...)]` attribute would.
//!
//! ```
//! use adc::{Activity, Derivative, TypedFunc};
//!
//! let source = "double f(double x, double[] w) { return x * x * w[0]; }";
//! // Reverse mode with the default activities: `df(x, w, d_w, seed)`
//! // returns the primal result and x's adjoint, and adds w's to `d_w`.
//! let jit = adc::compile_jit_with("f.ad", source, &[Derivative::gradient("f", "df")])
//!     .expect("compiles");
//! let df: TypedFunc<(f64, &[f64], &mut [f64], f64), (f64, f64)> = jit.typed("df").expect("signature");
//! let mut d_w = [0.0];
//! assert_eq!(df.call((3.0, &[2.0][..], &mut d_w[..], 1.0)), Ok((18.0, 12.0)));
//! assert_eq!(d_w, [9.0]);
//!
//! // Forward mode in x only: `tf(x, t_x, w)` returns the tangent alone.
//! let tangent = Derivative::forward("f", "tf", vec![Activity::Dual, Activity::Const], Activity::DualOnly);
//! let jit = adc::compile_jit_with("f.ad", source, &[tangent]).expect("compiles");
//! let tf: TypedFunc<(f64, f64, &[f64]), f64> = jit.typed("tf").expect("signature");
//! assert_eq!(tf.call((3.0, 1.0, &[2.0][..])), Ok(12.0));
//! ```

use adc_ir::ad::{default_activity, spec_signature, ActivitySlot};
use adc_ir::{Activity, AdMode, DerivSpec, FuncId, Function, Linkage, Module};

/// A derivative to generate: of function `of`, named `name`, in `mode`,
/// with one activity per parameter and one for the result (`Const` for a
/// `void` function).
///
/// ```
/// use adc::{Activity, AdMode, Derivative};
///
/// let d = Derivative::reverse("f", "df", vec![Activity::Active, Activity::Const], Activity::Active);
/// assert_eq!((d.of.as_str(), d.name.as_str(), d.mode), ("f", "df", AdMode::Reverse));
/// assert_eq!(d.params, Some(vec![Activity::Active, Activity::Const]));
/// // The same request as the attribute `[autodiff_reverse(df, Active, Const, Active)]`.
/// let src = "double f(double x, int n) { return x * n; }";
/// let jit = adc::compile_jit_with("f.ad", src, &[d]).expect("compiles");
/// let df: adc::TypedFunc<(f64, i64, f64), (f64, f64)> = jit.typed("df").expect("signature");
/// assert_eq!(df.call((2.0, 3, 1.0)), Ok((6.0, 3.0)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Derivative {
    /// The function to differentiate.
    pub of: String,
    /// The generated function's name.
    pub name: String,
    /// Forward or reverse mode.
    pub mode: AdMode,
    /// `None`: the defaults of docs/derivatives.md#default-activities (floats `Active` or
    /// `Duplicated` in reverse mode, `Dual` in forward mode, others
    /// `Const`).
    pub params: Option<Vec<Activity>>,
    /// The result's activity (`Const` for a `void` function).
    pub ret: Activity,
    /// Derivative directions at once (vector mode,
    /// docs/jacobians.md#vector-mode, with its signature even at
    /// `Some(1)`); `None` for the plain derivative.
    pub width: Option<u32>,
    /// A dense Jacobian (`[jacobian(name)]`, docs/jacobians.md#jacobians)
    /// instead: `mode`, `params` and `ret` are not used.
    pub jacobian: bool,
    /// A dense Hessian (`[hessian(name)]`, docs/jacobians.md#hessians)
    /// instead: `mode`, `params` and `ret` are not used.
    pub hessian: bool,
}

impl Derivative {
    /// The reverse derivative of `of` with default activities and an
    /// `Active` result: `name` returns the result and the adjoints of
    /// scalar parameters, and adds array adjoints to their shadows.
    ///
    /// ```
    /// let src = "double f(double x, double y) { return x * y; }";
    /// let jit = adc::compile_jit_with("f.ad", src, &[adc::Derivative::gradient("f", "df")])
    ///     .expect("compiles");
    /// let df: adc::TypedFunc<(f64, f64, f64), (f64, f64, f64)> = jit.typed("df").expect("signature");
    /// assert_eq!(df.call((2.0, 5.0, 1.0)), Ok((10.0, 5.0, 2.0)));
    /// ```
    pub fn gradient(of: &str, name: &str) -> Derivative {
        Derivative {
            of: of.into(),
            name: name.into(),
            mode: AdMode::Reverse,
            params: None,
            ret: Activity::Active,
            width: None,
            jacobian: false,
            hessian: false,
        }
    }

    /// A reverse derivative with the given activities: one per parameter
    /// of `of`, then `ret` for its result.
    ///
    /// ```
    /// use adc::{Activity, Derivative};
    ///
    /// // `ActiveOnly`: the derivative returns the adjoint without the result.
    /// let d = Derivative::reverse("cube", "dcube", vec![Activity::Active], Activity::ActiveOnly);
    /// let jit = adc::compile_jit_with("c.ad", "double cube(double x) { return x * x * x; }", &[d])
    ///     .expect("compiles");
    /// let dcube: adc::TypedFunc<(f64, f64), f64> = jit.typed("dcube").expect("signature");
    /// assert_eq!(dcube.call((2.0, 1.0)), Ok(12.0));
    /// ```
    pub fn reverse(of: &str, name: &str, params: Vec<Activity>, ret: Activity) -> Derivative {
        Derivative {
            of: of.into(),
            name: name.into(),
            mode: AdMode::Reverse,
            params: Some(params),
            ret,
            width: None,
            jacobian: false,
            hessian: false,
        }
    }

    /// A forward derivative with the given activities: one per parameter
    /// of `of`, then `ret` for its result.
    ///
    /// ```
    /// use adc::{Activity, Derivative};
    ///
    /// // `Dual`: the derivative returns the result and its tangent.
    /// let d = Derivative::forward("cube", "tcube", vec![Activity::Dual], Activity::Dual);
    /// let jit = adc::compile_jit_with("c.ad", "double cube(double x) { return x * x * x; }", &[d])
    ///     .expect("compiles");
    /// let tcube: adc::TypedFunc<(f64, f64), (f64, f64)> = jit.typed("tcube").expect("signature");
    /// assert_eq!(tcube.call((2.0, 1.0)), Ok((8.0, 12.0)));
    /// ```
    pub fn forward(of: &str, name: &str, params: Vec<Activity>, ret: Activity) -> Derivative {
        Derivative {
            of: of.into(),
            name: name.into(),
            mode: AdMode::Forward,
            params: Some(params),
            ret,
            width: None,
            jacobian: false,
            hessian: false,
        }
    }
}

impl Derivative {
    /// The same derivative in vector mode: `width` directions at once
    /// over one run of the primal (`width = W` in an attribute).
    ///
    /// ```
    /// use adc::{Activity, Derivative};
    ///
    /// let d = Derivative::forward("sq", "tsq", vec![Activity::Dual], Activity::DualOnly).with_width(2);
    /// let jit = adc::compile_jit_with("s.ad", "double sq(double x) { return x * x; }", &[d])
    ///     .expect("compiles");
    /// let tsq: adc::TypedFunc<(f64, &[f64], &mut [f64]), ()> = jit.typed("tsq").expect("signature");
    /// let mut t = [0.0; 2];
    /// assert_eq!(tsq.call((3.0, &[1.0, 10.0][..], &mut t[..])), Ok(()));
    /// assert_eq!(t, [6.0, 60.0]);
    /// ```
    pub fn with_width(self, width: u32) -> Derivative {
        Derivative {
            width: Some(width),
            ..self
        }
    }

    /// The dense Jacobian of `of` with default activities, as
    /// `[jacobian(name)]` on it: `name` takes `of`'s parameters, then
    /// `out double[] jac`.
    ///
    /// ```
    /// let src = "double f(double x, double[] a) { return x * a[0] * a[1]; }";
    /// let jit = adc::compile_jit_with("f.ad", src, &[adc::Derivative::jacobian("f", "jf")])
    ///     .expect("compiles");
    /// let jf: adc::TypedFunc<(f64, &[f64], &mut [f64]), f64> = jit.typed("jf").expect("signature");
    /// let mut jac = [0.0; 3];
    /// assert_eq!(jf.call((2.0, &[3.0, 5.0][..], &mut jac[..])), Ok(30.0));
    /// assert_eq!(jac, [15.0, 10.0, 6.0]);
    /// ```
    pub fn jacobian(of: &str, name: &str) -> Derivative {
        Derivative {
            of: of.into(),
            name: name.into(),
            mode: AdMode::Forward,
            params: None,
            ret: Activity::Const,
            width: None,
            jacobian: true,
            hessian: false,
        }
    }
}

impl Derivative {
    /// The dense Hessian of `of` (a function with a `float` or `double`
    /// result) with default activities, as `[hessian(name)]` on it: `name`
    /// takes `of`'s parameters, then `out double[] hess`.
    ///
    /// ```
    /// let src = "double f(double x, double[] a) { return x * x * a[0] * a[1]; }";
    /// let jit = adc::compile_jit_with("f.ad", src, &[adc::Derivative::hessian("f", "hf")])
    ///     .expect("compiles");
    /// let hf: adc::TypedFunc<(f64, &[f64], &mut [f64]), f64> = jit.typed("hf").expect("signature");
    /// let mut hess = [0.0; 9];
    /// assert_eq!(hf.call((2.0, &[3.0, 5.0][..], &mut hess[..])), Ok(60.0));
    /// assert_eq!(hess, [30.0, 20.0, 12.0, 20.0, 0.0, 4.0, 12.0, 4.0, 0.0]);
    /// ```
    pub fn hessian(of: &str, name: &str) -> Derivative {
        Derivative {
            jacobian: false,
            hessian: true,
            ..Derivative::jacobian(of, name)
        }
    }
}

/// Adds `d` to `module` as its attribute would; the error says what is
/// wrong with the request.
pub(crate) fn add(module: &mut Module, d: &Derivative) -> Result<(), String> {
    // The name becomes a function of the module, under the rules of
    // source names (a `free` would take the C library's place).
    if let Some(why) = adc_frontend::lower::function_name_error(&d.name) {
        return Err(why);
    }
    if module.find(&d.name).is_some() {
        return Err(format!("`{}` is already defined", d.name));
    }
    let id = module
        .find(&d.of)
        .ok_or_else(|| format!("no function `{}` to differentiate", d.of))?;
    let src = module.func(id);
    if src.is_import() {
        return Err(format!("`{}` is an extern without a body", d.of));
    }
    let params = match &d.params {
        Some(p) => p.clone(),
        None => src
            .params
            .iter()
            .map(|p| default_activity(p, d.mode))
            .collect(),
    };
    if params.len() != src.params.len() {
        return Err(format!(
            "`{}` has {} parameters, the request gives {} activities",
            d.of,
            src.params.len(),
            params.len()
        ));
    }
    for (a, p) in params.iter().zip(&src.params) {
        if !ActivitySlot::param(p.ty).fits(*a, d.mode) {
            return Err(format!(
                "activity `{}` does not fit parameter `{}`",
                a.name(),
                p.name
            ));
        }
    }
    if !ActivitySlot::result(&src.returns).fits(d.ret, d.mode) {
        return Err(format!(
            "activity `{}` does not fit the result of `{}`",
            d.ret.name(),
            d.of
        ));
    }
    let width = d.width.unwrap_or(1);
    if width == 0 || width > adc_frontend::lower::MAX_WIDTH {
        return Err(format!(
            "`width` must be between 1 and {}, not {width}",
            adc_frontend::lower::MAX_WIDTH,
        ));
    }
    if d.width.is_some()
        && d.mode == AdMode::Reverse
        && !ActivitySlot::result(&src.returns).fits(Activity::Active, d.mode)
    {
        return Err(format!(
            "reverse vector mode (`width`) needs a `float` or `double` result, and `{}` has none",
            d.of
        ));
    }
    let linkage = if src.linkage == Linkage::Static {
        Linkage::Static
    } else {
        Linkage::Export
    };
    let spec = DerivSpec {
        mode: d.mode,
        of: d.of.clone(),
        params,
        ret: d.ret,
        width,
        vector: d.width.is_some(),
        sets: false,
        masks: false,
        interactions: false,
    };
    declare(module, id, &d.name, spec, linkage);
    Ok(())
}

/// Adds the bodiless function `name` that `spec` asks the derivative
/// passes to generate from `of` (the function `spec.of` names), with the
/// signature `spec` gives it, as the frontend declares an attribute's.
pub(crate) fn declare(
    module: &mut Module,
    of: FuncId,
    name: &str,
    spec: DerivSpec,
    linkage: Linkage,
) {
    let (params, returns) = spec_signature(module.func(of), &spec);
    let mut f = Function::new(name.to_string(), params, returns, linkage);
    f.deriv = Some(spec);
    module.push(f);
}
