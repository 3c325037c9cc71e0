//! The abstract syntax tree produced by the parser.
//!
//! Plain owned trees with a byte span on every node that a diagnostic can
//! point at. LALRPOP types never appear here.

use adc_ir::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseType {
    Double,
    Float,
    Int,
    Bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ReturnType {
    Void,
    Base(BaseType),
    Tuple(Vec<BaseType>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Value,
    Inout,
    Out,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    pub mode: Mode,
    pub ty: BaseType,
    pub is_array: bool,
    pub name: Ident,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrArg {
    Ident(Ident),
    Int(i64, Span),
    /// `name = value`, as `width = 4`.
    Named(Ident, Box<AttrArg>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub name: Ident,
    pub args: Option<Vec<AttrArg>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FuncDecl {
    pub attrs: Vec<Attr>,
    pub ret: ReturnType,
    pub name: Ident,
    pub params: Vec<ParamDecl>,
    /// `None` for an `extern` declaration.
    pub body: Option<Vec<Stmt>>,
    /// `static`: internal to the module (not exported, not in headers).
    pub is_static: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConstDecl {
    pub ty: BaseType,
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Const(ConstDecl),
    Func(FuncDecl),
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    Set,
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DeclType {
    Base(BaseType),
    Auto,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Decl {
        is_const: bool,
        ty: DeclType,
        name: Ident,
        init: Option<Expr>,
        span: Span,
    },
    ArrayDecl {
        ty: BaseType,
        name: Ident,
        len: Option<Expr>,
        init: Option<Vec<Expr>>,
        span: Span,
    },
    Destructure {
        names: Vec<Ident>,
        value: Expr,
        span: Span,
    },
    Assign {
        target: Expr,
        op: AssignOp,
        value: Expr,
        span: Span,
    },
    IncDec {
        target: Expr,
        increment: bool,
        span: Span,
    },
    Expr(Expr),
    If {
        cond: Expr,
        then_branch: Vec<Stmt>,
        else_branch: Option<Vec<Stmt>>,
        span: Span,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
        span: Span,
    },
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Box<Stmt>>,
        body: Vec<Stmt>,
        span: Span,
    },
    Break(Span),
    Continue(Span),
    Return(Option<Expr>, Span),
    Block(Vec<Stmt>),
    Attributed {
        attrs: Vec<Attr>,
        stmt: Box<Stmt>,
    },
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinOp {
    pub fn spelling(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(i64),
    /// The literal's text, suffix included (`1.5f`).
    Float(String),
    Bool(bool),
    Var(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(Ident, Vec<Expr>),
    Cast(BaseType, Box<Expr>),
    Index(Box<Expr>, Box<Expr>),
    /// `a[lo..hi]` or `a[lo..]`: a view, as a call argument only.
    View(Box<Expr>, Box<Expr>, Option<Box<Expr>>),
    Tuple(Vec<Expr>),
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}
