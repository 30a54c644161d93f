//! AST → `cute` IR.
//!
//! The checked AST is written out as textual MLIR in the `cute` dialect (plus upstream `gpu`, `arith`
//! and `scf`) and parsed into a module. Text is the dialect's stable, documented interface (every
//! `--emit=cute` output re-parses through `cutec opt`), so building through it means the lowering can
//! only produce IR that the parser and verifiers accept, and its output is exactly what tests read.
//! Every op carries `loc("file":line:col)` of the `.cute` node it came from.

use cute_lang::ast::*;
use cute_lang::check::{default_literal, resolve_type, unify};
use cute_lang::diag::{line_col, Diagnostic};
use cute_lang::types::{Scalar, TensorType, Ty};
use std::collections::HashMap;
use std::fmt::Write;

/// The MLIR spelling of a scalar type. Unsigned integers are signless in MLIR; the ops chosen for
/// them (divui, cmpi ult, ...) carry the signedness. tf32 is stored and computed as f32.
pub fn mlir_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::I8 | Scalar::U8 => "i8",
        Scalar::I16 | Scalar::U16 => "i16",
        Scalar::I32 | Scalar::U32 => "i32",
        Scalar::I64 | Scalar::U64 => "i64",
        Scalar::F16 => "f16",
        Scalar::BF16 => "bf16",
        Scalar::TF32 | Scalar::F32 => "f32",
        Scalar::F64 => "f64",
        Scalar::F8E4M3 => "f8E4M3FN",
        Scalar::F8E5M2 => "f8E5M2",
        Scalar::Bool => "i1",
    }
}

pub fn mlir_tensor(t: &TensorType) -> String {
    format!("!cute.tensor<{}, \"{}\", {}, \"{}\">", mlir_scalar(t.elem), t.space.name(), t.align, t.layout)
}

/// A value during lowering. Literals stay unmaterialized until their type is known from context.
#[derive(Clone, Debug)]
enum Val {
    Ssa(String, Scalar),
    Tensor(String, TensorType),
    Dim3(&'static str),
    Int(i64),
    Float(f64),
}

struct FnWriter<'s> {
    file: &'s str,
    source: &'s str,
    out: String,
    indent: usize,
    next: usize,
    scopes: Vec<HashMap<String, Val>>,
}

/// Lowers a checked file to the text of a `cute` module.
pub fn lower_to_cute_text(file: &File, file_name: &str, source: &str) -> Result<String, Vec<Diagnostic>> {
    let mut out = String::from("module attributes {gpu.container_module} {\n  gpu.module @kernels {\n");
    let mut diags = Vec::new();
    for f in file.functions().filter(|f| f.kind == FnKind::Kernel) {
        let mut w = FnWriter { file: file_name, source, out: String::new(), indent: 3, next: 0, scopes: Vec::new() };
        match w.kernel(f) {
            Ok(()) => out.push_str(&w.out),
            Err(d) => diags.push(d),
        }
    }
    out.push_str("  }\n}\n");
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

fn escape(s: &str) -> String {
    let mut r = String::new();
    for c in s.chars() {
        match c {
            '"' => r.push_str("\\22"),
            '\\' => r.push_str("\\5C"),
            c if c.is_control() => {
                let _ = write!(r, "\\{:02X}", c as u32 & 0xff);
            }
            c => r.push(c),
        }
    }
    r
}

impl FnWriter<'_> {
    fn loc(&self, span: cute_lang::Span) -> String {
        let (l, c) = line_col(self.source, span.start);
        format!("loc(\"{}\":{l}:{c})", escape(self.file))
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%{}", self.next - 1)
    }

    /// Emits `%n = <op> <loc>` and returns `%n`.
    fn op(&mut self, text: &str, span: cute_lang::Span) -> String {
        let v = self.fresh();
        let loc = self.loc(span);
        self.line(&format!("{v} = {text} {loc}"));
        v
    }

    fn kernel(&mut self, f: &Function) -> Result<(), Diagnostic> {
        let mut scope = HashMap::new();
        let mut params = Vec::new();
        for p in &f.params {
            let ty = resolve_type(&p.ty)?;
            let name = format!("%p.{}", p.name.name);
            let ty_text = match &ty {
                Ty::Tensor(t) => {
                    scope.insert(p.name.name.clone(), Val::Tensor(name.clone(), t.clone()));
                    mlir_tensor(t)
                }
                Ty::Scalar(s) => {
                    scope.insert(p.name.name.clone(), Val::Ssa(name.clone(), *s));
                    mlir_scalar(*s).to_string()
                }
                other => return Err(Diagnostic::error(format!("a kernel parameter cannot have type `{other}`"), p.ty.span(), "unsupported parameter type")),
            };
            params.push(format!("{name}: {ty_text} {}", self.loc(p.span)));
        }
        self.line(&format!("gpu.func @{}({}) kernel {{", f.name.name, params.join(", ")));
        self.indent += 1;
        self.scopes.push(scope);
        let stmts = &f.body.stmts;
        for (i, s) in stmts.iter().enumerate() {
            if let Stmt::Return { value: None, .. } = s {
                if i + 1 == stmts.len() {
                    continue;
                }
            }
            self.stmt(s)?;
        }
        self.scopes.pop();
        let end = cute_lang::Span::new(f.body.span.end.saturating_sub(1), f.body.span.end);
        let loc = self.loc(end);
        self.line(&format!("gpu.return {loc}"));
        self.indent -= 1;
        let loc = self.loc(f.name.span);
        self.line(&format!("}} {loc}"));
        Ok(())
    }

    fn block(&mut self, b: &Block) -> Result<(), Diagnostic> {
        self.scopes.push(HashMap::new());
        let r = b.stmts.iter().try_for_each(|s| self.stmt(s));
        self.scopes.pop();
        r
    }

    fn bind(&mut self, name: &str, v: Val) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), v);
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        match s {
            Stmt::Let { pattern, ty, value, span } => {
                let Pattern::Name(name) = pattern else {
                    return Err(Diagnostic::error("tuple patterns are not supported yet", *span, "pattern"));
                };
                let v = self.expr(value)?;
                let want = match ty {
                    Some(t) => match resolve_type(t)? {
                        Ty::Scalar(s) => Some(s),
                        _ => None,
                    },
                    None => None,
                };
                let v = match (v, want) {
                    (v @ (Val::Int(_) | Val::Float(_)), Some(s)) => Val::Ssa(self.materialize(&v, s, value.span), s),
                    (v @ Val::Int(_), None) => Val::Ssa(self.materialize(&v, Scalar::I32, value.span), Scalar::I32),
                    (v @ Val::Float(_), None) => Val::Ssa(self.materialize(&v, Scalar::F32, value.span), Scalar::F32),
                    (v, _) => v,
                };
                self.bind(&name.name, v);
            }
            Stmt::Assign { target, value, span } => {
                let ExprKind::Index { base, index } = &target.kind else {
                    return Err(Diagnostic::error("only tensor elements can be assigned", target.span, "not a tensor element"));
                };
                let Val::Tensor(t, tt) = self.expr(base)? else {
                    return Err(Diagnostic::error("cannot index into this value", base.span, "not a tensor"));
                };
                let v = self.expr(value)?;
                let v = self.as_scalar(&v, tt.elem, value.span)?;
                let coords = self.coords(index)?;
                let mut operand_types = vec![mlir_scalar(tt.elem).to_string(), mlir_tensor(&tt)];
                operand_types.extend(coords.iter().map(|_| "i32".to_string()));
                let mut operands = vec![v, t];
                operands.extend(coords);
                let loc = self.loc(*span);
                self.line(&format!("\"cute.store\"({}) : ({}) -> () {loc}", operands.join(", "), operand_types.join(", ")));
            }
            Stmt::Expr(e) => {
                self.expr(e)?;
            }
            Stmt::If { cond, then, els, span } => {
                let c = self.expr(cond)?;
                let c = self.as_scalar(&c, Scalar::Bool, cond.span)?;
                self.line(&format!("scf.if {c} {{"));
                self.indent += 1;
                self.block(then)?;
                self.indent -= 1;
                if let Some(e) = els {
                    self.line("} else {");
                    self.indent += 1;
                    self.scopes.push(HashMap::new());
                    self.stmt(e)?;
                    self.scopes.pop();
                    self.indent -= 1;
                }
                let loc = self.loc(*span);
                self.line(&format!("}} {loc}"));
            }
            Stmt::Block(b) => self.block(b)?,
            Stmt::Launch { span, .. } => {
                return Err(Diagnostic::error("`launch` is only allowed in host functions", *span, "launch here"));
            }
            Stmt::For { var, start, end, body, span, .. } => {
                let a = self.expr(start)?;
                let b = self.expr(end)?;
                let ty = match (&a, &b) {
                    (Val::Ssa(_, s), _) | (_, Val::Ssa(_, s)) => *s,
                    _ => Scalar::I32,
                };
                let lo = self.as_scalar(&a, ty, start.span)?;
                let hi = self.as_scalar(&b, ty, end.span)?;
                let one = self.materialize(&Val::Int(1), ty, *span);
                let iv = self.fresh();
                let t = mlir_scalar(ty);
                self.line(&format!("scf.for {iv} = {lo} to {hi} step {one} : {t} {{"));
                self.indent += 1;
                self.scopes.push(HashMap::from([(var.name.clone(), Val::Ssa(iv, ty))]));
                self.block(body)?;
                self.scopes.pop();
                self.indent -= 1;
                let loc = self.loc(*span);
                self.line(&format!("}} {loc}"));
            }
            Stmt::Return { span, .. } => {
                return Err(Diagnostic::error("early `return` is not supported yet", *span, "not the last statement of the kernel")
                    .with_help("wrap the rest of the kernel in an `if` instead"));
            }
        }
        Ok(())
    }

    fn coords(&mut self, index: &[Expr]) -> Result<Vec<String>, Diagnostic> {
        index
            .iter()
            .map(|i| {
                let v = self.expr(i)?;
                self.int_as_i32(&v, i.span)
            })
            .collect()
    }

    /// Coordinates are i32 in the dialect: narrower integers extend, wider ones truncate.
    fn int_as_i32(&mut self, v: &Val, span: cute_lang::Span) -> Result<String, Diagnostic> {
        match v {
            Val::Ssa(s, Scalar::I32 | Scalar::U32) => Ok(s.clone()),
            Val::Ssa(s, t) if t.is_int() => {
                let from = mlir_scalar(*t);
                let op = if t.size_bytes() > 4 { "arith.trunci" } else if t.is_signed() { "arith.extsi" } else { "arith.extui" };
                Ok(self.op(&format!("{op} {s} : {from} to i32"), span))
            }
            Val::Int(_) => Ok(self.materialize(v, Scalar::I32, span)),
            _ => Err(Diagnostic::error("coordinates must be integers", span, "not an integer")),
        }
    }

    fn as_scalar(&mut self, v: &Val, want: Scalar, span: cute_lang::Span) -> Result<String, Diagnostic> {
        match v {
            Val::Ssa(s, t) if *t == want || mlir_scalar(*t) == mlir_scalar(want) => Ok(s.clone()),
            Val::Int(_) | Val::Float(_) => Ok(self.materialize(v, want, span)),
            _ => Err(Diagnostic::error(format!("expected a value of type `{}`", want.name()), span, "wrong type")),
        }
    }

    fn materialize(&mut self, v: &Val, want: Scalar, span: cute_lang::Span) -> String {
        let t = mlir_scalar(want);
        match (v, want.is_float()) {
            (Val::Int(i), false) => {
                let value = if want == Scalar::Bool { (*i != 0) as i64 } else { *i };
                self.op(&format!("arith.constant {value} : {t}"), span)
            }
            (Val::Int(i), true) => self.float_const(*i as f64, want, span),
            (Val::Float(x), _) => self.float_const(*x, want, span),
            (Val::Ssa(s, _), _) => s.clone(),
            _ => unreachable!("only literals are materialized"),
        }
    }

    /// Float constants are written as exact hexadecimal bit patterns; types narrower than f32 are
    /// built in f32 and truncated, which rounds to nearest even like a literal in CUDA C++ does.
    fn float_const(&mut self, x: f64, want: Scalar, span: cute_lang::Span) -> String {
        match want {
            Scalar::F64 => self.op(&format!("arith.constant 0x{:016X} : f64", x.to_bits()), span),
            Scalar::F32 | Scalar::TF32 => self.op(&format!("arith.constant 0x{:08X} : f32", (x as f32).to_bits()), span),
            other => {
                let c = self.op(&format!("arith.constant 0x{:08X} : f32", (x as f32).to_bits()), span);
                self.op(&format!("arith.truncf {c} : f32 to {}", mlir_scalar(other)), span)
            }
        }
    }

    fn lookup(&self, name: &str) -> Option<Val> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    fn expr(&mut self, e: &Expr) -> Result<Val, Diagnostic> {
        Ok(match &e.kind {
            ExprKind::Int(v) => Val::Int(*v),
            ExprKind::Float(v) => Val::Float(*v),
            ExprKind::Bool(b) => Val::Ssa(self.op(&format!("arith.constant {b}"), e.span), Scalar::Bool),
            ExprKind::Name(n) => match self.lookup(n) {
                Some(v) => v,
                None => match n.as_str() {
                    "thread_idx" => Val::Dim3("gpu.thread_id"),
                    "block_idx" => Val::Dim3("gpu.block_id"),
                    "block_dim" => Val::Dim3("gpu.block_dim"),
                    "grid_dim" => Val::Dim3("gpu.grid_dim"),
                    _ => return Err(Diagnostic::error(format!("cannot find value `{n}`"), e.span, "not found")),
                },
            },
            ExprKind::Field { base, name } => {
                let Val::Dim3(op) = self.expr(base)? else {
                    return Err(Diagnostic::error("no such field", name.span, "unknown field"));
                };
                let idx = self.op(&format!("{op} {}", name.name), e.span);
                Val::Ssa(self.op(&format!("arith.index_cast {idx} : index to i32"), e.span), Scalar::I32)
            }
            ExprKind::Call { callee, args } if callee.name == "size" && args.len() == 1 => {
                let Val::Tensor(t, tt) = self.expr(&args[0].value)? else {
                    return Err(Diagnostic::error("`size` expects a tensor", args[0].value.span, "not a tensor"));
                };
                Val::Ssa(self.op(&format!("\"cute.size\"({t}) : ({}) -> i32", mlir_tensor(&tt)), e.span), Scalar::I32)
            }
            ExprKind::Index { base, index } => {
                let Val::Tensor(t, tt) = self.expr(base)? else {
                    return Err(Diagnostic::error("cannot index into this value", base.span, "not a tensor"));
                };
                let coords = self.coords(index)?;
                let mut types = vec![mlir_tensor(&tt)];
                types.extend(coords.iter().map(|_| "i32".to_string()));
                let text = format!("\"cute.load\"({t}, {}) : ({}) -> {}", coords.join(", "), types.join(", "), mlir_scalar(tt.elem));
                Val::Ssa(self.op(&text, e.span), tt.elem)
            }
            ExprKind::Unary(op, inner) => {
                let v = self.expr(inner)?;
                match (op, v) {
                    (UnOp::Neg, Val::Int(i)) => Val::Int(i.checked_neg().ok_or_else(|| Diagnostic::error("integer overflow in `-`", e.span, "overflows"))?),
                    (UnOp::Neg, Val::Float(x)) => Val::Float(-x),
                    (UnOp::Neg, Val::Ssa(s, t)) if t.is_float() => Val::Ssa(self.op(&format!("arith.negf {s} : {}", mlir_scalar(t)), e.span), t),
                    (UnOp::Neg, Val::Ssa(s, t)) => {
                        let zero = self.materialize(&Val::Int(0), t, e.span);
                        Val::Ssa(self.op(&format!("arith.subi {zero}, {s} : {}", mlir_scalar(t)), e.span), t)
                    }
                    (UnOp::Not, Val::Ssa(s, t)) => {
                        let ones = self.materialize(&Val::Int(-1), t, e.span);
                        Val::Ssa(self.op(&format!("arith.xori {s}, {ones} : {}", mlir_scalar(t)), e.span), t)
                    }
                    (UnOp::Not, Val::Int(i)) => Val::Int(!i),
                    _ => return Err(Diagnostic::error("unsupported operand", e.span, "here")),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let va = self.expr(a)?;
                let vb = self.expr(b)?;
                self.binary(*op, va, vb, e)?
            }
            _ => return Err(Diagnostic::error("this expression is not supported in kernels yet", e.span, "unsupported")),
        })
    }

    fn binary(&mut self, op: BinOp, a: Val, b: Val, e: &Expr) -> Result<Val, Diagnostic> {
        let ty_of = |v: &Val| match v {
            Val::Ssa(_, s) => Ty::Scalar(*s),
            Val::Int(_) => Ty::IntLit,
            Val::Float(_) => Ty::FloatLit,
            _ => Ty::Unit,
        };
        let common = unify(&ty_of(&a), &ty_of(&b)).ok_or_else(|| Diagnostic::error("mismatched operand types", e.span, "operands differ"))?;
        let Ty::Scalar(t) = default_literal(common) else {
            return Err(Diagnostic::error("unsupported operands", e.span, "here"));
        };
        let x = self.as_scalar(&a, t, e.span)?;
        let y = self.as_scalar(&b, t, e.span)?;
        let mt = mlir_scalar(t);
        let (f, s) = (t.is_float(), t.is_signed());
        let text = match op {
            BinOp::Add => format!("arith.add{} {x}, {y} : {mt}", if f { "f" } else { "i" }),
            BinOp::Sub => format!("arith.sub{} {x}, {y} : {mt}", if f { "f" } else { "i" }),
            BinOp::Mul => format!("arith.mul{} {x}, {y} : {mt}", if f { "f" } else { "i" }),
            BinOp::Div => format!("arith.{} {x}, {y} : {mt}", if f { "divf" } else if s { "divsi" } else { "divui" }),
            BinOp::Rem => format!("arith.{} {x}, {y} : {mt}", if f { "remf" } else if s { "remsi" } else { "remui" }),
            BinOp::BitAnd | BinOp::And => format!("arith.andi {x}, {y} : {mt}"),
            BinOp::BitOr | BinOp::Or => format!("arith.ori {x}, {y} : {mt}"),
            BinOp::BitXor => format!("arith.xori {x}, {y} : {mt}"),
            BinOp::Shl => format!("arith.shli {x}, {y} : {mt}"),
            BinOp::Shr => format!("arith.{} {x}, {y} : {mt}", if s { "shrsi" } else { "shrui" }),
            cmp => {
                let pred = match (cmp, f, s) {
                    (BinOp::Eq, true, _) => "oeq",
                    (BinOp::Ne, true, _) => "une",
                    (BinOp::Lt, true, _) => "olt",
                    (BinOp::Le, true, _) => "ole",
                    (BinOp::Gt, true, _) => "ogt",
                    (BinOp::Ge, true, _) => "oge",
                    (BinOp::Eq, false, _) => "eq",
                    (BinOp::Ne, false, _) => "ne",
                    (BinOp::Lt, false, true) => "slt",
                    (BinOp::Le, false, true) => "sle",
                    (BinOp::Gt, false, true) => "sgt",
                    (BinOp::Ge, false, true) => "sge",
                    (BinOp::Lt, false, false) => "ult",
                    (BinOp::Le, false, false) => "ule",
                    (BinOp::Gt, false, false) => "ugt",
                    _ => "uge",
                };
                let v = self.op(&format!("arith.cmp{} {pred}, {x}, {y} : {mt}", if f { "f" } else { "i" }), e.span);
                return Ok(Val::Ssa(v, Scalar::Bool));
            }
        };
        Ok(Val::Ssa(self.op(&text, e.span), t))
    }
}
