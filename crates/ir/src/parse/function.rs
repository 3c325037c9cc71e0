//! One item: a function's or import's signature, its derivative links
//! and its body of blocks (`Parser::function`).

use super::lex::Tok;
use super::{ParseError, Parser};
use crate::ad::{Activity, AdMode, DerivSpec, Tag};
use crate::entity::{Block, Span};
use crate::function::{Function, Linkage, Param, ParamMode, ValueDef};
use crate::types::Type;

impl Parser<'_> {
    fn global(&mut self) -> Result<String, ParseError> {
        match self.next()? {
            Tok::Global(g) => Ok(g),
            t => {
                self.pos -= 1;
                err!(self, "expected `@name`, found {t}")
            }
        }
    }

    /// `forward @f(Dual, Const)` or `reverse @f(Active, ActiveOnly)`.
    fn deriv_spec(&mut self) -> Result<DerivSpec, ParseError> {
        let mode = match self.word()?.as_str() {
            "forward" => AdMode::Forward,
            "reverse" => AdMode::Reverse,
            w => err!(self, "expected `forward` or `reverse`, found `{w}`"),
        };
        let of = self.global()?;
        self.expect("(")?;
        let mut acts = Vec::new();
        while !self.peek_is(")") {
            if !acts.is_empty() {
                self.expect(",")?;
            }
            let w = self.word()?;
            let Some(a) = Activity::from_name(&w) else {
                self.pos -= 1;
                err!(self, "unknown activity `{w}`")
            };
            acts.push(a);
        }
        self.expect(")")?;
        let ret = acts.pop().unwrap_or(Activity::Const);
        let mut width = 1;
        let vector = self.peek_word() == Some("width");
        if vector {
            self.pos += 1;
            width = match self.next()? {
                Tok::Number(n) => match n.parse::<u32>() {
                    Ok(w) if w > 0 => w,
                    _ => {
                        self.pos -= 1;
                        err!(self, "expected a positive width, found `{n}`")
                    }
                },
                t => {
                    self.pos -= 1;
                    err!(self, "expected a width, found {t}")
                }
            };
        }
        let sets = self.peek_word() == Some("sets");
        if sets {
            self.pos += 1;
        }
        let masks = sets && self.peek_word() == Some("masks");
        if masks {
            self.pos += 1;
        }
        let interactions = sets && self.peek_word() == Some("interactions");
        if interactions {
            self.pos += 1;
        }
        // The return activity is always written, `Const` for `void`.
        Ok(DerivSpec {
            mode,
            of,
            params: acts,
            ret,
            width,
            vector,
            sets,
            masks,
            interactions,
        })
    }

    pub(super) fn function(&mut self) -> Result<Function, ParseError> {
        let keyword = self.word()?;
        let linkage = match keyword.as_str() {
            "func" => Linkage::Export,
            "extern" => Linkage::Import,
            "static" => Linkage::Static,
            _ => {
                self.pos -= 1;
                err!(self, "expected `func` or `extern`, found `{keyword}`")
            }
        };
        let name = match self.next()? {
            Tok::Global(g) => g,
            t => err!(self, "expected `@name`, found {t}"),
        };
        self.expect("(")?;
        let params = self.params()?;
        self.expect(")")?;
        let mut returns = Vec::new();
        if self.eat("->") {
            returns.push(self.ty()?);
            while self.eat(",") {
                returns.push(self.ty()?);
            }
        }
        let mut func = Function::new(name, params, returns, linkage);
        loop {
            match self.peek_word() {
                Some("reverse_derivative") => {
                    self.pos += 1;
                    func.custom_reverse = Some(self.global()?);
                }
                Some("forward_derivative") => {
                    self.pos += 1;
                    func.custom_forward = Some(self.global()?);
                }
                Some("checkpoint") => {
                    self.pos += 1;
                    func.checkpoint = true;
                }
                Some("cold") => {
                    self.pos += 1;
                    self.expect("(")?;
                    loop {
                        match self.next()? {
                            Tok::Number(n) => match n.parse::<usize>() {
                                Ok(k) => func.cold.push(k),
                                Err(_) => {
                                    err!(self, "expected a parameter's position, found `{n}`")
                                }
                            },
                            t => err!(self, "expected a parameter's position, found {t}"),
                        }
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect(")")?;
                }
                _ => break,
            }
        }
        if self.eat("=") {
            func.deriv = Some(self.deriv_spec()?);
        }
        if linkage == Linkage::Import || (func.deriv.is_some() && !self.peek_is("{")) {
            return Ok(func);
        }
        self.expect("{")?;
        self.body(&mut func)?;
        Ok(func)
    }

    /// The parameters up to the closing `)`: `[inout | out] name: type`.
    fn params(&mut self) -> Result<Vec<Param>, ParseError> {
        let mut params = Vec::new();
        while !self.peek_is(")") {
            if !params.is_empty() {
                self.expect(",")?;
            }
            let mut mode = ParamMode::In;
            if matches!(self.peek_word(), Some("inout") | Some("out"))
                && !matches!(
                    self.toks.get(self.pos + 1).map(|t| &t.tok),
                    Some(Tok::Punct(":"))
                )
            {
                mode = if self.word()? == "inout" {
                    ParamMode::Inout
                } else {
                    ParamMode::Out
                };
            }
            let pname = self.word()?;
            self.expect(":")?;
            params.push(Param {
                name: pname,
                ty: self.ty()?,
                mode,
            });
        }
        Ok(params)
    }

    /// The blocks of a body after its `{`, through its `}`.
    fn body(&mut self, func: &mut Function) -> Result<(), ParseError> {
        let mut current: Option<Block> = None;
        while !self.eat("}") {
            if matches!(self.peek_word(), Some(w) if w.starts_with("block")) {
                let block = self.block()?;
                func.dfg.ensure_block(block);
                if func.layout.contains(&block) {
                    err!(self, "block `{block}` defined twice");
                }
                func.layout.push(block);
                self.expect("(")?;
                let mut index = 0;
                while !self.peek_is(")") {
                    if index > 0 {
                        self.expect(",")?;
                    }
                    let v = self.value()?;
                    self.expect(":")?;
                    let ty = self.ty()?;
                    if !func
                        .dfg
                        .define_value_at(v, ty, ValueDef::Param(block, index))
                    {
                        err!(self, "value `{v}` defined twice");
                    }
                    func.dfg.block_mut(block).params.push(v);
                    index += 1;
                }
                self.expect(")")?;
                self.expect(":")?;
                current = Some(block);
                continue;
            }
            let Some(block) = current else {
                err!(self, "instruction outside a block")
            };
            let at = self
                .toks
                .get(self.pos)
                .map_or(Span::UNDEFINED, |t| Span::new(t.offset, t.offset + 1));
            let mut results = Vec::new();
            if self.lookahead_value(0) {
                loop {
                    let v = self.value()?;
                    self.expect(":")?;
                    let ty = self.ty()?;
                    results.push((v, ty));
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect("=")?;
            }
            let types: Vec<Type> = results.iter().map(|r| r.1).collect();
            let tag = match self.peek_word() {
                Some("diff") => Tag::Diff,
                Some("mixed") => Tag::Mixed,
                _ => Tag::Primal,
            };
            if tag != Tag::Primal {
                self.pos += 1;
            }
            let data = self.inst_data(&types)?;
            let mut values = Vec::new();
            for (v, ty) in results {
                if !func.dfg.define_value_at(v, ty, ValueDef::Unused) || values.contains(&v) {
                    err!(self, "value `{v}` defined twice");
                }
                values.push(v);
            }
            let inst = func.dfg.make_inst_with_results(data, values);
            func.set_span(inst, at);
            func.set_tag(inst, tag);
            func.dfg.block_mut(block).insts.push(inst);
        }
        Ok(())
    }
}
