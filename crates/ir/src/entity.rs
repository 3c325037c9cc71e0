//! Dense `u32` entity ids, in the style of `cranelift-entity`.
//!
//! Every IR cross-reference is one of these small `Copy` ids; the tables that
//! own the data live in `DataFlowGraph` and `Module`. `Display` prints the id
//! exactly as the textual IR spells it (`v3`, `block1`, `inst7`, `fn2`).

macro_rules! entity {
    ($name:ident, $prefix:expr) => {
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
            pub fn new(index: usize) -> Self {
                Self(u32::try_from(index).expect("invariant: fewer than 2^32 entities"))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}{}", $prefix, self.0)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(self, f)
            }
        }
    };
}

entity!(Value, "v");
entity!(Block, "block");
entity!(Inst, "inst");
entity!(FuncId, "fn");

/// A byte range in the source text; `Span::UNDEFINED` for synthesised code.
///
/// ```
/// # use adc_ir::Span;
/// let source = "double f(double x) { return y; }";
/// let span = Span::new(28, 29);
/// assert_eq!(&source[span.start as usize..span.end as usize], "y");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct Span {
    /// The first byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// No place in the source.
    ///
    /// ```
    /// # use adc_ir::Span;
    /// assert!(!Span::UNDEFINED.is_defined());
    /// ```
    pub const UNDEFINED: Span = Span {
        start: u32::MAX,
        end: u32::MAX,
    };

    /// The bytes `start..end`; offsets beyond `u32` are clamped below
    /// `Span::UNDEFINED`'s.
    ///
    /// ```
    /// # use adc_ir::Span;
    /// assert_eq!(Span::new(3, 5), Span { start: 3, end: 5 });
    /// assert!(Span::new(usize::MAX, usize::MAX).is_defined());
    /// ```
    pub fn new(start: usize, end: usize) -> Span {
        let clamp = |x: usize| u32::try_from(x).unwrap_or(u32::MAX - 1);
        Span {
            start: clamp(start),
            end: clamp(end),
        }
    }

    /// False for `Span::UNDEFINED`.
    ///
    /// ```
    /// # use adc_ir::Span;
    /// assert!(Span::new(0, 1).is_defined());
    /// assert!(!Span::UNDEFINED.is_defined());
    /// ```
    pub fn is_defined(self) -> bool {
        self != Span::UNDEFINED
    }
}
