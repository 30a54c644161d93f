//! KIR → `cute` IR.
//!
//! Each kernel instance is written as textual MLIR in the `cute` dialect (plus upstream `gpu`,
//! `arith`, `scf` and `vector`) and parsed into a module. Text is the dialect's stable, documented
//! interface (every `--emit=cute` output re-parses through `cutec opt`), so building through it means
//! lowering can only produce IR that the parser and verifiers accept, and its output is exactly what
//! tests read. Every op carries `loc("file":line:col)` of the `.cute` node it came from.
//!
//! Symbolic index expressions (`cute_layout::Int`) are materialized as `arith` ops where an op uses
//! them, once per region (an expression computed in an outer region is reused in inner ones).

use cute_lang::diag::{Diagnostic, LineIndex};
use cute_lang::kir::{
    self, At, BinaryOp, CmpOp, FmtSeg, FragTy, Inst, MathFn, Operand, ParamKind, ShuffleKind, Special, TensorTy,
    ValueId, ValueTy, ViewHow,
};
use cute_lang::span::Span;
use cute_lang::types::Scalar;
use cute_layout::expr::Value as XValue;
use cute_layout::int::{Atom, Dyn, Op};
use cute_layout::Int;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

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

pub fn mlir_tensor(t: &TensorTy) -> String {
    format!("!cute.tensor<{}, \"{}\", {}, \"{}\">", mlir_scalar(t.elem), t.space.name(), t.align, t.layout_text())
}

/// `!cute.tiled_mma<"ATOM", "(TM,TN,TK)", "(M,N,K)">`.
pub fn mlir_tiled_mma(t: &cute_layout::TiledMma) -> String {
    let ([lm, ln, lk], [m, n, k]) = (t.atom_layout, t.tile);
    format!("!cute.tiled_mma<\"{}\", \"({lm},{ln},{lk})\", \"({m},{n},{k})\">", t.atom.name)
}

pub fn mlir_layout(l: &cute_layout::Layout) -> String {
    format!("!cute.layout<\"{l}\">")
}

fn mlir_frag(f: &FragTy) -> String {
    format!("vector<{}x{}>", f.len(), mlir_scalar(f.elem))
}

fn mlir_value_ty(t: &ValueTy) -> String {
    match t {
        ValueTy::Scalar(s) => mlir_scalar(*s).to_string(),
        ValueTy::Frag(f) => mlir_frag(f),
        ValueTy::Tensor(t) => mlir_tensor(t),
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

/// Where the kernel's signature gets the parameters of its fast divisors, known once the body is
/// written.
const FAST_DIV_PARAMS: &str = "{FAST_DIV_PARAMS}";

/// Which result of [`euclid`].
#[derive(Clone, Copy, PartialEq)]
enum Euclid {
    Quotient,
    Remainder,
}

/// Euclidean quotient or remainder of signed `x` by `y` (of type `ty`, a scalar or vector type):
/// r = x rem y, plus |y| when negative; q = (x - r) / y, which is exact. The last op defines `dst`
/// when given (else a temporary); returns its name.
fn euclid(w: &mut KernelWriter, ty: &str, x: &str, y: &str, want: Euclid, dst: Option<ValueId>, span: Span) -> String {
    let is_vec = ty.starts_with("vector<");
    let elem =
        if is_vec { ty.trim_end_matches('>').rsplit('x').next().unwrap_or("i32").to_string() } else { ty.to_string() };
    let zero = if is_vec {
        w.op(&format!("arith.constant dense<0> : {ty}"), span)
    } else {
        w.op(&format!("arith.constant 0 : {elem}"), span)
    };
    let r0 = w.op(&format!("arith.remsi {x}, {y} : {ty}"), span);
    let neg = w.op(&format!("arith.cmpi slt, {r0}, {zero} : {ty}"), span);
    // |y| without math.absi (which would need libdevice): max(y, 0 - y).
    let neg_y = w.op(&format!("arith.subi {zero}, {y} : {ty}"), span);
    let abs_y = w.op(&format!("arith.maxsi {y}, {neg_y} : {ty}"), span);
    let fixed = w.op(&format!("arith.addi {r0}, {abs_y} : {ty}"), span);
    let cond_ty = if is_vec { format!("{}, ", ty.replace(&elem, "i1")) } else { String::new() };
    let select = format!("arith.select {neg}, {fixed}, {r0} : {cond_ty}{ty}");
    let last = |w: &mut KernelWriter, text: &str| match dst {
        Some(d) => {
            w.define(d, text, span);
            v(d)
        }
        None => w.op(text, span),
    };
    if want == Euclid::Remainder {
        return last(w, &select);
    }
    let r = w.op(&select, span);
    let diff = w.op(&format!("arith.subi {x}, {r} : {ty}"), span);
    last(w, &format!("arith.divsi {diff}, {y} : {ty}"))
}

/// Whether a kernel calls a math function: those lower to libdevice, which must then be linked.
fn kernel_uses_math(kernel: &kir::Kernel) -> bool {
    fn any(insts: &[Inst]) -> bool {
        insts.iter().any(|i| match i {
            Inst::Math { .. } => true,
            other => other.regions().into_iter().any(any),
        })
    }
    any(&kernel.body)
}

/// A `cute` module in pieces: each kernel instance's `gpu.func`, and the manifest global, which
/// go inside one `gpu.module @kernels`. The pipeline compiles the pieces as one module
/// ([`CuteText::module`]) or, for PTX, each kernel in a module of its own
/// ([`CuteText::kernel_module`]) on its own thread.
pub struct CuteText {
    pub kernels: Vec<KernelText>,
    /// The `llvm.mlir.global` holding the manifest.
    pub manifest: String,
    /// The manifest's text (what `--emit=manifest` prints).
    pub manifest_text: String,
}

pub struct KernelText {
    /// The kernel instance's cubin symbol.
    pub symbol: String,
    pub text: String,
    /// Whether it calls a math function (which libdevice defines).
    pub uses_math: bool,
}

const MODULE_OPEN: &str = "module attributes {gpu.container_module} {\n  gpu.module @kernels {\n";
const MODULE_CLOSE: &str = "  }\n}\n";

impl CuteText {
    /// Every kernel, then the manifest: the whole program as one module.
    pub fn module(&self) -> String {
        let mut out = String::from(MODULE_OPEN);
        self.kernels.iter().for_each(|k| out.push_str(&k.text));
        out.push_str(&self.manifest);
        out.push_str(MODULE_CLOSE);
        out
    }

    /// Kernel `index` alone, with the manifest when `with_manifest` (one module of a program
    /// carries it).
    pub fn kernel_module(&self, index: usize, with_manifest: bool) -> String {
        let mut out = String::from(MODULE_OPEN);
        out.push_str(&self.kernels[index].text);
        if with_manifest {
            out.push_str(&self.manifest);
        }
        out.push_str(MODULE_CLOSE);
        out
    }

    /// Whether any kernel calls a math function.
    pub fn uses_math(&self) -> bool {
        self.kernels.iter().any(|k| k.uses_math)
    }
}

/// Lowers the kernels of a KIR module to `cute` IR text.
pub fn lower_to_cute(
    module: &kir::Module,
    file_name: &str,
    source: &str,
    arch: &str,
) -> Result<CuteText, Vec<Diagnostic>> {
    let mut kernels = Vec::new();
    let mut errors = Vec::new();
    let mut fast_divisors = Vec::new();
    let lines = LineIndex::new(source);
    for k in &module.kernels {
        let vars = crate::plan::kernel_vars(k);
        let mut w = KernelWriter {
            file: file_name,
            lines: &lines,
            k,
            out: String::new(),
            indent: 3,
            next: 0,
            memo: vec![HashMap::new()],
            errors: Vec::new(),
            non_negative_values: Default::default(),
            positive_values: Default::default(),
            vars,
            fast_divisors: Vec::new(),
        };
        w.kernel();
        kernels.push(KernelText { symbol: k.symbol.clone(), text: w.out, uses_math: kernel_uses_math(k) });
        fast_divisors.push(w.fast_divisors);
        errors.extend(w.errors);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // The manifest travels inside the cubin: the runtime reads it from the ELF symbol table.
    let manifest_text = crate::manifest::manifest_text(module, arch, &fast_divisors);
    let manifest = crate::manifest::manifest_global(&manifest_text);
    Ok(CuteText { kernels, manifest, manifest_text })
}

struct KernelWriter<'a> {
    file: &'a str,
    lines: &'a LineIndex<'a>,
    k: &'a kir::Kernel,
    out: String,
    indent: usize,
    next: usize,
    /// Materialized index expressions, one map per open region.
    memo: Vec<HashMap<Int, String>>,
    errors: Vec<Diagnostic>,
    /// Values known to be >= 0 (indices, extents, strides, counters) and > 0 (extents).
    non_negative_values: std::collections::HashSet<ValueId>,
    positive_values: std::collections::HashSet<ValueId>,
    /// The kernel's dynamic ABI values by position (`$k`, as the manifest numbers them).
    vars: HashMap<ValueId, usize>,
    /// The run-time divisors divided by with a multiplier and a shift (design.md (n)): each one's
    /// expression over the kernel's `$k`, in the order of the extra kernel parameters.
    fast_divisors: Vec<String>,
}

fn v(id: ValueId) -> String {
    format!("%v{id}")
}

impl KernelWriter<'_> {
    fn loc(&self, span: Span) -> String {
        let (l, c) = self.lines.line_col(span.start);
        format!("loc(\"{}\":{l}:{c})", escape(self.file))
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn tmp(&mut self) -> String {
        self.next += 1;
        format!("%t{}", self.next - 1)
    }

    /// Emits `%t = <op> loc` and returns `%t`.
    fn op(&mut self, text: &str, span: Span) -> String {
        let t = self.tmp();
        let loc = self.loc(span);
        self.line(&format!("{t} = {text} {loc}"));
        t
    }

    /// How an element access is written: `cute.load_at`/`store_at` with the coordinate in CuTe
    /// notation (its `?`s the `i32` operands), or `cute.load`/`store` at an element offset. Returns
    /// the load op's name, the operands and their types after the tensor, and the attribute.
    fn element_at(&mut self, at: &At, span: Span) -> (&'static str, String, String, String) {
        match at {
            At::Offset(offset) => ("load", format!(", {}", self.int(offset, span)), ", i32".into(), String::new()),
            At::Coord(c) => {
                let ints: Vec<String> = c.dyn_leaves().iter().map(|i| self.int(i, span)).collect();
                let operands: String = ints.iter().map(|i| format!(", {i}")).collect();
                (
                    "load_at",
                    operands,
                    ", i32".repeat(ints.len()),
                    format!(" {{coord = \"{}\"}}", escape(&c.to_string())),
                )
            }
        }
    }

    /// A layout as a `!cute.layout` value: `cute.make_layout` with its `?` entries as operands.
    fn make_layout(&mut self, l: &cute_layout::Layout, span: Span) -> (String, String) {
        let leaves: Vec<String> = l.dynamic_leaves().iter().map(|i| self.int(i, span)).collect();
        let ty = mlir_layout(l);
        let types = vec!["i32"; leaves.len()].join(", ");
        (self.op(&format!("\"cute.make_layout\"({}) : ({types}) -> {ty}", leaves.join(", ")), span), ty)
    }

    /// A view as the CuTe op that made it: the algebra's arguments as the `args` strings (a `?` in
    /// them is the next operand of the `i32` group, `@` the next of the `!cute.layout` group), for
    /// `cute-canonicalize` to fold; or a tiled copy's `partition_S`/`partition_D` with the copy built from its atom.
    fn view(&mut self, dst: ValueId, src: ValueId, how: &ViewHow, ty: &TensorTy, span: Span) {
        let mut operands = vec![v(src)];
        let mut types = vec![self.ty(src)];
        match how {
            ViewHow::Algebra { op, args } => {
                // Layout arguments and run-time integers are two operand groups (IRDL gives each
                // variadic group one type), each in argument order.
                let (mut layouts, mut layout_types, mut ints) = (Vec::new(), Vec::new(), Vec::new());
                let mut texts = Vec::new();
                for a in args {
                    if let XValue::Layout(l) = a {
                        let (name, t) = self.make_layout(l, span);
                        layouts.push(name);
                        layout_types.push(t);
                        texts.push("\"@\"".to_string());
                    } else {
                        for leaf in a.dyn_leaves() {
                            ints.push(self.int(&leaf, span));
                        }
                        texts.push(format!("\"{}\"", escape(&a.to_string())));
                    }
                }
                let segments = format!("array<i32: 1, {}, {}>", layouts.len(), ints.len());
                types.extend(layout_types);
                types.extend(ints.iter().map(|_| "i32".to_string()));
                operands.extend(layouts);
                operands.extend(ints);
                let text = format!(
                    "\"cute.{op}\"({}) {{args = [{}], operandSegmentSizes = {segments}}} : ({}) -> {}",
                    operands.join(", "),
                    texts.join(", "),
                    types.join(", "),
                    mlir_tensor(ty)
                );
                self.define(dst, &text, span);
            }
            ViewHow::Partition { dst: to_dst, elem, bits, tv, tile, tid } => {
                let atom_ty = format!("!cute.copy_atom<{}, {bits}>", mlir_scalar(*elem));
                let atom = self.op(&format!("\"cute.make_copy_atom\"() : () -> {atom_ty}"), span);
                let (tv_value, tv_ty) = self.make_layout(tv, span);
                let copy_ty = format!("!cute.tiled_copy<{}, {bits}, \"{tile}\", \"{tv}\">", mlir_scalar(*elem));
                let copy = self.op(
                    &format!("\"cute.make_tiled_copy\"({atom}, {tv_value}) : ({atom_ty}, {tv_ty}) -> {copy_ty}"),
                    span,
                );
                let t = self.int(tid, span);
                operands.extend([copy, t]);
                types.extend([copy_ty, "i32".into()]);
                let op = if *to_dst { "partition_d" } else { "partition_s" };
                self.define(
                    dst,
                    &format!("\"cute.{op}\"({}) : ({}) -> {}", operands.join(", "), types.join(", "), mlir_tensor(ty)),
                    span,
                );
            }
            ViewHow::Recast { .. } => {
                // The result's `?` entries are operands: as a new root, its `cute.dyn`s read them.
                for leaf in ty.layout.dynamic_leaves() {
                    operands.push(self.int(&leaf, span));
                    types.push("i32".into());
                }
                self.define(
                    dst,
                    &format!(
                        "\"cute.recast\"({}) : ({}) -> {}",
                        operands.join(", "),
                        types.join(", "),
                        mlir_tensor(ty)
                    ),
                    span,
                );
            }
            ViewHow::MmaPartition { operand, tiled, tid } => {
                let atom_ty = format!("!cute.mma_atom<\"{}\">", tiled.atom.name);
                let atom = self.op(&format!("\"cute.make_mma_atom\"() : () -> {atom_ty}"), span);
                let mma_ty = mlir_tiled_mma(tiled);
                let mma = self.op(&format!("\"cute.make_tiled_mma\"({atom}) : ({atom_ty}) -> {mma_ty}"), span);
                let t = self.int(tid, span);
                operands.extend([mma, t]);
                types.extend([mma_ty, "i32".into()]);
                let op = format!("partition_{}", operand.name().to_ascii_lowercase());
                self.define(
                    dst,
                    &format!("\"cute.{op}\"({}) : ({}) -> {}", operands.join(", "), types.join(", "), mlir_tensor(ty)),
                    span,
                );
            }
        }
    }

    fn ty(&self, id: ValueId) -> String {
        self.k.value_types.get(id as usize).map(mlir_value_ty).unwrap_or_else(|| "i32".into())
    }

    fn kernel(&mut self) {
        let mut params = Vec::new();
        for p in &self.k.params {
            let ty = match &p.kind {
                ParamKind::Tensor { ty, .. } => mlir_tensor(ty),
                ParamKind::Scalar(s) => mlir_scalar(*s).to_string(),
                ParamKind::Stream => unreachable!("elaboration refuses kernel stream parameters"),
            };
            params.push(format!("{}: {ty} {}", v(p.value), self.loc(p.span)));
        }
        // Shared memory past the static limit is dynamic: cute-lower-to-gpu places the allocations in
        // the launch's dynamic shared memory.
        let dynamic = self.k.dynamic_smem_bytes();
        let mut attr_list = Vec::new();
        if dynamic > 0 {
            attr_list.push(format!("cute.dynamic_smem = {dynamic} : i64"));
        }
        // TMA tensor maps: `byval` 128-byte parameters after the fast divisors; the pipeline makes
        // them `nvvm.grid_constant` once the function is an `llvm.func` (docs/design.md (q)).
        if !self.k.tmas.is_empty() {
            attr_list.push(format!("cute.tma_params = {} : i64", self.k.tmas.len()));
        }
        // A fixed block shape (a kernel that re-allocates registers): `.reqntid` for ptxas, and
        // thread indices known to be below it.
        if let Some([x, y, z]) = self.k.reqntid {
            attr_list.push(format!("known_block_size = array<i32: {x}, {y}, {z}>"));
        }
        // A cluster shape (`launch ... cluster(X, Y, Z)`): NVPTX writes `.explicitcluster` and
        // `.reqnctapercluster X, Y, Z`, so every launch of the kernel runs in such clusters.
        if let Some(c) = &self.k.cluster {
            attr_list.push(format!("nvvm.cluster_dim = array<i32: {}, {}, {}>", c.dims[0], c.dims[1], c.dims[2]));
        }
        let attrs =
            if attr_list.is_empty() { String::new() } else { format!(" attributes {{{}}}", attr_list.join(", ")) };
        self.line(&format!("gpu.func @{}({}{FAST_DIV_PARAMS}) kernel{attrs} {{", self.k.symbol, params.join(", ")));
        self.indent += 1;
        // The run-time values behind each tensor parameter's `?` entries.
        for p in &self.k.params {
            if let ParamKind::Tensor { ty, dyn_leaves } = &p.kind {
                // Extents and strides are positive, as the layout algebra assumes; the runtime's
                // checked launches refuse anything else.
                self.non_negative_values.extend(dyn_leaves.iter().copied());
                self.positive_values.extend(dyn_leaves.iter().copied());
                let t = mlir_tensor(ty);
                for (i, leaf) in dyn_leaves.iter().enumerate() {
                    let loc = self.loc(p.span);
                    self.line(&format!(
                        "{} = \"cute.dyn\"({}) {{index = {i} : i32}} : ({t}) -> i32 {loc}",
                        v(*leaf),
                        v(p.value)
                    ));
                }
            }
        }
        let body = &self.k.body;
        self.insts(body);
        let loc = self.loc(Span::new(self.k.span.end.saturating_sub(1), self.k.span.end));
        self.line(&format!("gpu.return {loc}"));
        self.indent -= 1;
        let loc = self.loc(self.k.span);
        self.line(&format!("}} {loc}"));
        // The multiplier and shift of each run-time divisor, after the declared parameters (the
        // kernel ABI the manifest's `fastdiv` lines describe).
        let mut extra = String::new();
        for i in 0..self.fast_divisors.len() {
            let sep = if self.k.params.is_empty() && i == 0 { "" } else { ", " };
            let _ = write!(extra, "{sep}%fdm{i}: i32 {loc}, %fds{i}: i32 {loc}");
        }
        for i in 0..self.k.tmas.len() {
            let sep = if self.k.params.is_empty() && self.fast_divisors.is_empty() && i == 0 { "" } else { ", " };
            let _ = write!(extra, "{sep}%tma{i}: !llvm.ptr {{llvm.align = 64 : i64}} {loc}");
        }
        self.out = self.out.replacen(FAST_DIV_PARAMS, &extra, 1);
    }

    fn insts(&mut self, insts: &[Inst]) {
        for i in insts {
            self.inst(i);
        }
    }

    fn region(&mut self, insts: &[Inst]) {
        self.indent += 1;
        self.memo.push(HashMap::new());
        self.insts(insts);
        self.memo.pop();
        self.indent -= 1;
    }

    /// The SSA name holding an index expression, computing it here if no enclosing region has.
    fn int(&mut self, i: &Int, span: Span) -> String {
        if let Some(name) = self.memo.iter().rev().find_map(|m| m.get(i)) {
            return name.clone();
        }
        let name = match i {
            Int::S(c) => self.op(&format!("arith.constant {c} : i32"), span),
            Int::D(d) => {
                let mut acc: Option<String> = None;
                for a in d.factors.iter() {
                    let x = self.atom(a, span);
                    acc = Some(match acc {
                        None => x,
                        Some(p) => self.op(&format!("arith.muli {p}, {x} : i32"), span),
                    });
                }
                let acc = acc.unwrap_or_else(|| self.int(&Int::S(1), span));
                if d.coef == 1 {
                    acc
                } else {
                    let c = self.int(&Int::S(d.coef), span);
                    self.op(&format!("arith.muli {acc}, {c} : i32"), span)
                }
            }
        };
        if let Some(m) = self.memo.last_mut() {
            m.insert(i.clone(), name.clone());
        }
        name
    }

    /// The SSA name of one factor. Compound factors are memoized like whole expressions, so
    /// `tid / n` used in several offsets is computed once.
    fn atom(&mut self, a: &Atom, span: Span) -> String {
        let op = match a {
            Atom::Var { id, .. } => return v(*id),
            Atom::Op(op) => op.clone(),
            other => {
                // Basis elements (identity layouts) are coordinates, never run-time integers here.
                self.errors.push(Diagnostic::error(
                    format!("cannot compute `{other:?}` at run time"),
                    span,
                    "unsupported index expression",
                ));
                return self.int(&Int::S(0), span);
            }
        };
        let key = Int::D(Dyn { coef: 1, factors: Arc::from(vec![a.clone()]) });
        if let Some(name) = self.memo.iter().rev().find_map(|m| m.get(&key)) {
            return name.clone();
        }
        if let Op::Div(x, y) | Op::Mod(x, y) = &*op {
            if let Some(k) = self.fast_divisor(y) {
                let q = self.fast_quotient(x, y, k, span);
                let result = if matches!(&*op, Op::Div(..)) {
                    q
                } else {
                    // The Euclidean remainder x - floor(x / y) * y, in 0..y for y > 0.
                    let (xs, ys) = (self.int(x, span), self.int(y, span));
                    let p = self.op(&format!("arith.muli {q}, {ys} : i32"), span);
                    self.op(&format!("arith.subi {xs}, {p} : i32"), span)
                };
                if let Some(m) = self.memo.last_mut() {
                    m.insert(key, result.clone());
                }
                return result;
            }
        }
        // The algebra's division is Euclidean (the remainder is never negative). Where both
        // operands are proven non-negative (coordinates, extents, thread indices) the cheaper
        // unsigned operations are exact; otherwise the signed Euclidean forms are built.
        let unsigned = match &*op {
            Op::Div(x, y) | Op::Mod(x, y) | Op::CeilDiv(x, y) => self.non_negative(x) && self.positive(y),
            _ => false,
        };
        let result = match (&*op, unsigned) {
            (Op::Add(x, y), _) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.addi {x}, {y} : i32"), span)
            }
            (Op::Min(x, y), _) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.minsi {x}, {y} : i32"), span)
            }
            (Op::Max(x, y), _) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.maxsi {x}, {y} : i32"), span)
            }
            (Op::Div(x, y), true) | (Op::Mod(x, y), true) | (Op::CeilDiv(x, y), true) => {
                let name = match &*op {
                    Op::Div(..) => "divui",
                    Op::Mod(..) => "remui",
                    _ => "ceildivui",
                };
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.{name} {x}, {y} : i32"), span)
            }
            (Op::CeilDiv(x, y), false) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.ceildivsi {x}, {y} : i32"), span)
            }
            (Op::Div(x, y), false) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                euclid(self, "i32", &x, &y, Euclid::Quotient, None, span)
            }
            (Op::Mod(x, y), false) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                euclid(self, "i32", &x, &y, Euclid::Remainder, None, span)
            }
        };
        if let Some(m) = self.memo.last_mut() {
            m.insert(key, result.clone());
        }
        result
    }

    /// The position of `y` among the kernel's run-time divisors when division by it goes through a
    /// multiplier and a shift the runtime computes: `y` is proven positive, not static (LLVM
    /// divides by constants itself), and an expression over the kernel's parameters only (the
    /// runtime evaluates it at launch, `$k` as in `require` lines).
    fn fast_divisor(&mut self, y: &Int) -> Option<usize> {
        if y.as_static().is_some() || !self.positive(y) {
            return None;
        }
        let text = crate::plan::expr_text(y, &self.vars)?;
        Some(match self.fast_divisors.iter().position(|t| *t == text) {
            Some(k) => k,
            None => {
                self.fast_divisors.push(text);
                self.fast_divisors.len() - 1
            }
        })
    }

    /// floor(x / y) for `y` the kernel's fast divisor `k` (multiplier `%fdmK`, shift `%fdsK`:
    /// m = ceil(2^(31+l) / y), l = ceil(log2 y)): for 0 <= n < 2^31, n / y = mulhi(2n, m) >> l
    /// (design.md (n)). A dividend not proven non-negative is folded first: with s = x >> 31 (all
    /// ones when x < 0), floor(x / y) = (floor((x ^ s) / y)) ^ s, since x ^ s = -x - 1 >= 0 then.
    /// Memoized as `x / y`, so `x % y` next to it reuses the quotient.
    fn fast_quotient(&mut self, x: &Int, y: &Int, k: usize, span: Span) -> String {
        let key = Int::D(Dyn { coef: 1, factors: Arc::from(vec![Atom::Op(Arc::new(Op::Div(x.clone(), y.clone())))]) });
        if let Some(name) = self.memo.iter().rev().find_map(|m| m.get(&key)) {
            return name.clone();
        }
        let xs = self.int(x, span);
        let sign = if self.non_negative(x) {
            None
        } else {
            let c31 = self.int(&Int::S(31), span);
            Some(self.op(&format!("arith.shrsi {xs}, {c31} : i32"), span))
        };
        let n = match &sign {
            Some(s) => self.op(&format!("arith.xori {xs}, {s} : i32"), span),
            None => xs,
        };
        let one = self.int(&Int::S(1), span);
        let n2 = self.op(&format!("arith.shli {n}, {one} : i32"), span);
        let wide = self.tmp();
        let loc = self.loc(span);
        self.line(&format!("{wide}:2 = arith.mului_extended {n2}, %fdm{k} : i32 {loc}"));
        let q = self.op(&format!("arith.shrui {wide}#1, %fds{k} : i32"), span);
        let q = match &sign {
            Some(s) => self.op(&format!("arith.xori {q}, {s} : i32"), span),
            None => q,
        };
        if let Some(m) = self.memo.last_mut() {
            m.insert(key, q.clone());
        }
        q
    }

    /// Whether an index expression is provably >= 0: built from non-negative values (thread and
    /// block indices, extents and strides, loop counters from a non-negative start) with
    /// non-negative constants.
    fn non_negative(&self, i: &Int) -> bool {
        i.proven_non_negative(&|id| self.non_negative_values.contains(&id), &|id| self.positive_values.contains(&id))
    }

    fn positive(&self, i: &Int) -> bool {
        i.proven_positive(&|id| self.positive_values.contains(&id))
    }

    /// An operand as an SSA name of type `ty`, or of `vector<len x ty>` when `frag` is set (scalars
    /// and constants are broadcast).
    fn operand(&mut self, o: &Operand, ty: Scalar, frag: Option<usize>, span: Span) -> String {
        let mt = mlir_scalar(ty);
        let scalar = match o {
            Operand::Value(id) => {
                let name = v(*id);
                let is_vec = matches!(self.k.value_types.get(*id as usize), Some(ValueTy::Frag(_)));
                if frag.is_none() || is_vec {
                    return name;
                }
                name
            }
            Operand::Int(i) => {
                if ty == Scalar::I32 || ty == Scalar::U32 {
                    self.int(i, span)
                } else if let Some(c) = i.as_static() {
                    if ty.is_float() {
                        self.float_const(c as f64, ty, span)
                    } else {
                        self.op(&format!("arith.constant {c} : {mt}"), span)
                    }
                } else {
                    let x = self.int(i, span);
                    self.op(&format!("arith.extsi {x} : i32 to {mt}"), span)
                }
            }
            Operand::Float(x) => self.float_const(*x, ty, span),
            Operand::Bool(b) => self.op(&format!("arith.constant {b}"), span),
        };
        match frag {
            Some(n) => self.op(&format!("vector.broadcast {scalar} : {mt} to vector<{n}x{mt}>"), span),
            None => scalar,
        }
    }

    /// Float constants are written as exact hexadecimal bit patterns; types narrower than f32 are
    /// built in f32 and truncated (round to nearest even, as a literal in CUDA C++).
    fn float_const(&mut self, x: f64, ty: Scalar, span: Span) -> String {
        self.float_const_into(None, x, ty, span)
    }

    /// A float constant, defining `dst` when given (else a fresh temporary).
    fn float_const_into(&mut self, dst: Option<ValueId>, x: f64, ty: Scalar, span: Span) -> String {
        if ty.is_fp8() {
            // The bits, rounded and saturated here as the device's conversion would.
            let c = self.op(&format!("arith.constant {} : i8", cute_lang::types::fp8_bits(x, ty) as i8), span);
            let cast = format!("arith.bitcast {c} : i8 to {}", mlir_scalar(ty));
            return match dst {
                Some(d) => {
                    self.define(d, &cast, span);
                    v(d)
                }
                None => self.op(&cast, span),
            };
        }
        let (text, last) = match ty {
            Scalar::F64 => (format!("arith.constant 0x{:016X} : f64", x.to_bits()), None),
            Scalar::F32 | Scalar::TF32 => (format!("arith.constant 0x{:08X} : f32", (x as f32).to_bits()), None),
            other => (format!("arith.constant 0x{:08X} : f32", (x as f32).to_bits()), Some(other)),
        };
        match (last, dst) {
            (None, Some(d)) => {
                self.define(d, &text, span);
                v(d)
            }
            (None, None) => self.op(&text, span),
            (Some(narrow), d) => {
                let c = self.op(&text, span);
                let cast = format!("arith.truncf {c} : f32 to {}", mlir_scalar(narrow));
                match d {
                    Some(d) => {
                        self.define(d, &cast, span);
                        v(d)
                    }
                    None => self.op(&cast, span),
                }
            }
        }
    }

    fn define(&mut self, dst: ValueId, text: &str, span: Span) {
        let loc = self.loc(span);
        self.line(&format!("{} = {text} {loc}", v(dst)));
    }

    fn inst(&mut self, inst: &Inst) {
        match inst {
            Inst::Special { dst, which, span } => {
                let (op, d) = match which {
                    Special::ThreadIdx(d) => ("gpu.thread_id", d),
                    Special::BlockIdx(d) => ("gpu.block_id", d),
                    Special::BlockDim(d) => ("gpu.block_dim", d),
                    Special::GridDim(d) => ("gpu.grid_dim", d),
                    // The cluster registers: upstream's gpu ops, which convert-gpu-to-nvvm turns
                    // into `nvvm.read.ptx.sreg.{clusterid,nclusterid,cluster.ctaid,cluster.nctaid}`.
                    Special::ClusterIdx(d) => ("gpu.cluster_id", d),
                    Special::ClusterDim(d) => ("gpu.cluster_dim", d),
                    Special::BlockIdxInCluster(d) => ("gpu.cluster_block_id", d),
                    Special::BlockInClusterDim(d) => ("gpu.cluster_dim_blocks", d),
                    Special::BlockRankInCluster => {
                        // No gpu op reads `%cluster_ctarank`: the NVVM one, already an i32.
                        self.non_negative_values.insert(*dst);
                        self.define(*dst, "nvvm.read.ptx.sreg.cluster.ctarank : i32", *span);
                        return;
                    }
                };
                let dim = ["x", "y", "z"][*d as usize % 3];
                self.non_negative_values.insert(*dst);
                if !matches!(
                    which,
                    Special::ThreadIdx(_)
                        | Special::BlockIdx(_)
                        | Special::ClusterIdx(_)
                        | Special::BlockIdxInCluster(_)
                ) {
                    self.positive_values.insert(*dst);
                }
                let idx = self.op(&format!("{op} {dim}"), *span);
                self.define(*dst, &format!("arith.index_cast {idx} : index to i32"), *span);
            }
            Inst::Binary { dst, op, ty, frag, a, b, span } => {
                let x = self.operand(a, *ty, *frag, *span);
                let y = self.operand(b, *ty, *frag, *span);
                let (f, s) = (ty.is_float(), ty.is_signed() || *ty == Scalar::I32);
                let name = match op {
                    BinaryOp::Add => {
                        if f {
                            "addf"
                        } else {
                            "addi"
                        }
                    }
                    BinaryOp::Sub => {
                        if f {
                            "subf"
                        } else {
                            "subi"
                        }
                    }
                    BinaryOp::Mul => {
                        if f {
                            "mulf"
                        } else {
                            "muli"
                        }
                    }
                    BinaryOp::Div => {
                        if f {
                            "divf"
                        } else if s {
                            "divsi"
                        } else {
                            "divui"
                        }
                    }
                    BinaryOp::Rem => {
                        if f {
                            "remf"
                        } else if s {
                            "remsi"
                        } else {
                            "remui"
                        }
                    }
                    BinaryOp::And => "andi",
                    BinaryOp::Or => "ori",
                    BinaryOp::Xor => "xori",
                    BinaryOp::Shl => "shli",
                    BinaryOp::Shr => {
                        if s {
                            "shrsi"
                        } else {
                            "shrui"
                        }
                    }
                    BinaryOp::Min => {
                        if f {
                            "minimumf"
                        } else if s {
                            "minsi"
                        } else {
                            "minui"
                        }
                    }
                    BinaryOp::Max => {
                        if f {
                            "maximumf"
                        } else if s {
                            "maxsi"
                        } else {
                            "maxui"
                        }
                    }
                };
                let t = self.ty(*dst);
                if s && !f && matches!(op, BinaryOp::Div | BinaryOp::Rem) {
                    // Integer `/` and `%` are Euclidean, as in the layout algebra (docs/language.md).
                    let want = if *op == BinaryOp::Div { Euclid::Quotient } else { Euclid::Remainder };
                    euclid(self, &t, &x, &y, want, Some(*dst), *span);
                } else {
                    self.define(*dst, &format!("arith.{name} {x}, {y} : {t}"), *span);
                }
            }
            Inst::Neg { dst, ty, frag, a, span } => {
                let x = self.operand(a, *ty, *frag, *span);
                let t = self.ty(*dst);
                if ty.is_float() {
                    self.define(*dst, &format!("arith.negf {x} : {t}"), *span);
                } else {
                    let z = self.operand(&Operand::Int(Int::S(0)), *ty, *frag, *span);
                    self.define(*dst, &format!("arith.subi {z}, {x} : {t}"), *span);
                }
            }
            Inst::Not { dst, ty, frag, a, span } => {
                let x = self.operand(a, *ty, *frag, *span);
                let ones = if *ty == Scalar::Bool {
                    self.operand(&Operand::Bool(true), *ty, *frag, *span)
                } else {
                    self.operand(&Operand::Int(Int::S(-1)), *ty, *frag, *span)
                };
                let t = self.ty(*dst);
                self.define(*dst, &format!("arith.xori {x}, {ones} : {t}"), *span);
            }
            Inst::Cmp { dst, op, ty, frag, a, b, span } => {
                let x = self.operand(a, *ty, *frag, *span);
                let y = self.operand(b, *ty, *frag, *span);
                let signed = ty.is_signed() || *ty == Scalar::I32;
                let pred = match (op, ty.is_float(), signed) {
                    (CmpOp::Eq, true, _) => "oeq",
                    (CmpOp::Ne, true, _) => "une",
                    (CmpOp::Lt, true, _) => "olt",
                    (CmpOp::Le, true, _) => "ole",
                    (CmpOp::Gt, true, _) => "ogt",
                    (CmpOp::Ge, true, _) => "oge",
                    (CmpOp::Eq, false, _) => "eq",
                    (CmpOp::Ne, false, _) => "ne",
                    (CmpOp::Lt, false, true) => "slt",
                    (CmpOp::Le, false, true) => "sle",
                    (CmpOp::Gt, false, true) => "sgt",
                    (CmpOp::Ge, false, true) => "sge",
                    (CmpOp::Lt, false, false) => "ult",
                    (CmpOp::Le, false, false) => "ule",
                    (CmpOp::Gt, false, false) => "ugt",
                    (CmpOp::Ge, false, false) => "uge",
                };
                let operand_ty = match frag {
                    Some(n) => format!("vector<{n}x{}>", mlir_scalar(*ty)),
                    None => mlir_scalar(*ty).to_string(),
                };
                let kind = if ty.is_float() { "cmpf" } else { "cmpi" };
                self.define(*dst, &format!("arith.{kind} {pred}, {x}, {y} : {operand_ty}"), *span);
            }
            Inst::Convert { dst, from, to, frag, a, span } => self.convert(*dst, *from, *to, *frag, a, *span),
            Inst::Select { dst, ty, frag, c, a, b, span } => {
                let cond = self.operand(c, Scalar::Bool, None, *span);
                let x = self.operand(a, *ty, *frag, *span);
                let y = self.operand(b, *ty, *frag, *span);
                let t = self.ty(*dst);
                let cond_ty = match (frag, c) {
                    (Some(n), Operand::Value(id))
                        if matches!(self.k.value_types.get(*id as usize), Some(ValueTy::Frag(_))) =>
                    {
                        format!("vector<{n}xi1>, ")
                    }
                    _ => String::new(),
                };
                self.define(*dst, &format!("arith.select {cond}, {x}, {y} : {cond_ty}{t}"), *span);
            }
            Inst::View { dst, src, how, ty, span } => self.view(*dst, *src, how, ty, *span),
            Inst::Math { dst, fun, ty, frag, a, span } => {
                let x = self.operand(a, *ty, *frag, *span);
                let t = self.ty(*dst);
                let text = match (fun, ty.is_float()) {
                    (MathFn::Abs, true) => format!("math.absf {x} : {t}"),
                    (MathFn::Abs, false) => format!("math.absi {x} : {t}"),
                    (MathFn::Round, _) => format!("math.roundeven {x} : {t}"),
                    (f, _) => format!("math.{} {x} : {t}", f.name()),
                };
                self.define(*dst, &text, *span);
            }
            Inst::Alloc { dst, ty, span } => {
                self.define(*dst, &format!("\"cute.alloc\"() : () -> {}", mlir_tensor(ty)), *span);
            }
            Inst::LaunchSmem { dst, ty, offset, span } => {
                self.define(
                    *dst,
                    &format!("\"cute.launch_smem\"() {{offset = {offset} : i64}} : () -> {}", mlir_tensor(ty)),
                    *span,
                );
            }
            Inst::Extract { dst, ty, frag, index, span } => {
                let ft = self.ty(*frag);
                self.define(
                    *dst,
                    &format!("vector.extract {}[{index}] : {} from {ft}", v(*frag), mlir_scalar(*ty)),
                    *span,
                );
            }
            Inst::Reduce { dst, op, ty, frag, init, span } => {
                let (f, s) = (ty.is_float(), ty.is_signed() || *ty == Scalar::I32);
                let kind = match op {
                    BinaryOp::Add => "add",
                    BinaryOp::Mul => "mul",
                    BinaryOp::Min => {
                        if f {
                            "minimumf"
                        } else if s {
                            "minsi"
                        } else {
                            "minui"
                        }
                    }
                    _ => {
                        if f {
                            "maximumf"
                        } else if s {
                            "maxsi"
                        } else {
                            "maxui"
                        }
                    }
                };
                let acc = init.as_ref().map(|i| format!(", {}", self.operand(i, *ty, None, *span))).unwrap_or_default();
                let ft = self.ty(*frag);
                self.define(
                    *dst,
                    &format!("vector.reduction <{kind}>, {}{acc} : {ft} into {}", v(*frag), mlir_scalar(*ty)),
                    *span,
                );
            }
            Inst::FromElements { dst, ty, elems, span } => {
                let xs: Vec<String> = elems.iter().map(|e| self.operand(e, *ty, None, *span)).collect();
                let t = self.ty(*dst);
                self.define(*dst, &format!("vector.from_elements {} : {t}", xs.join(", ")), *span);
            }
            Inst::Shuffle { dst, kind, ty, value, offset, span } => {
                let x = self.operand(value, *ty, None, *span);
                let o = self.operand(offset, Scalar::I32, None, *span);
                let w = self.int(&Int::S(32), *span);
                let k = match kind {
                    ShuffleKind::Xor => "xor",
                    ShuffleKind::Down => "down",
                    ShuffleKind::Up => "up",
                    ShuffleKind::Idx => "idx",
                };
                let loc = self.loc(*span);
                let valid = self.tmp();
                self.line(&format!(
                    "{}, {valid} = gpu.shuffle {k} {x}, {o}, {w} : {} {loc}",
                    v(*dst),
                    mlir_scalar(*ty)
                ));
            }
            Inst::Load { dst, tensor, ty, at, span } => {
                let (name, at, at_types, attr) = self.element_at(at, *span);
                let text = format!(
                    "\"cute.{name}\"({}{at}){attr} : ({}{at_types}) -> {}",
                    v(*tensor),
                    mlir_tensor(ty),
                    mlir_scalar(ty.elem)
                );
                self.define(*dst, &text, *span);
            }
            Inst::Store { value, tensor, ty, at, span } => {
                let x = self.operand(value, ty.elem, None, *span);
                let (name, at, at_types, attr) = self.element_at(at, *span);
                let loc = self.loc(*span);
                let et = mlir_scalar(ty.elem);
                let store = if name == "load" { "store" } else { "store_at" };
                self.line(&format!(
                    "\"cute.{store}\"({x}, {}{at}){attr} : ({et}, {}{at_types}) -> () {loc}",
                    v(*tensor),
                    mlir_tensor(ty)
                ));
            }
            Inst::LoadFrag { dst, tensor, ty, span } => {
                let t = self.ty(*dst);
                self.define(*dst, &format!("\"cute.load_frag\"({}) : ({}) -> {t}", v(*tensor), mlir_tensor(ty)), *span);
            }
            Inst::StoreFrag { value, tensor, ty, span } => {
                let loc = self.loc(*span);
                let t = self.ty(*value);
                self.line(&format!(
                    "\"cute.store_frag\"({}, {}) : ({t}, {}) -> () {loc}",
                    v(*value),
                    v(*tensor),
                    mlir_tensor(ty)
                ));
            }
            Inst::AsyncCopyGroup { wait, span } => {
                let loc = self.loc(*span);
                match wait {
                    None => self.line(&format!("nvvm.cp.async.commit.group {loc}")),
                    Some(n) => self.line(&format!("nvvm.cp.async.wait.group {n} {loc}")),
                }
            }
            Inst::Wgmma { dst, atom, a, a_ty, b, b_ty, c, scale_d, span } => {
                let (tc, td) = (self.ty(*c), self.ty(*dst));
                let scale = scale_d.as_ref().map(|p| self.operand(p, Scalar::Bool, None, *span));
                let (so, st) = match &scale {
                    Some(p) => (format!(", {p}"), ", i1"),
                    None => (String::new(), ""),
                };
                // An RS atom's A is a register fragment (a vector), an SS atom's a shared tensor.
                let ta = a_ty.as_ref().map(mlir_tensor).unwrap_or_else(|| self.ty(*a));
                self.define(
                    *dst,
                    &format!(
                        "\"cute.wgmma\"({}, {}, {}{so}) {{atom = \"{}\"}} : ({ta}, {}, {tc}{st}) -> {td}",
                        v(*a),
                        v(*b),
                        v(*c),
                        atom.name,
                        mlir_tensor(b_ty)
                    ),
                    *span,
                );
            }
            Inst::Warpgroup { op, span } => {
                let loc = self.loc(*span);
                match op {
                    kir::WarpgroupOp::Fence => self.line(&format!("\"cute.warpgroup_fence\"() : () -> () {loc}")),
                    kir::WarpgroupOp::CommitGroup => self.line(&format!("nvvm.wgmma.commit.group.sync.aligned {loc}")),
                    kir::WarpgroupOp::WaitGroup(n) => self.line(&format!("\"cute.warpgroup_wait_group\"() {{n = {n} : i64}} : () -> () {loc}")),
                    kir::WarpgroupOp::FenceProxyAsync => self.line(&format!("nvvm.fence.proxy {{kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}} {loc}")),
                    kir::WarpgroupOp::FenceMbarrierInit => self.line(&format!("nvvm.fence.mbarrier.init {loc}")),
                    kir::WarpgroupOp::RegAlloc(n) => self.line(&format!("nvvm.setmaxregister increase {n} {loc}")),
                    kir::WarpgroupOp::RegDealloc(n) => self.line(&format!("nvvm.setmaxregister decrease {n} {loc}")),
                }
            }
            Inst::Mbarrier { op, tensor, ty, offset, arg, span } => {
                let off = self.int(offset, *span);
                let (a, at) = match arg {
                    Some(x) => (format!(", {}", self.operand(x, Scalar::I32, None, *span)), ", i32"),
                    None => (String::new(), ""),
                };
                let loc = self.loc(*span);
                self.line(&format!(
                    "\"cute.mbarrier\"({}, {off}{a}) {{kind = \"{}\"}} : ({}, i32{at}) -> () {loc}",
                    v(*tensor),
                    op.kind(),
                    mlir_tensor(ty)
                ));
            }
            Inst::ClusterBarrier { op, span } => {
                // The NVVM ops, not `.aligned`: a divergent arrival stays correct.
                let loc = self.loc(*span);
                let name = match op {
                    kir::ClusterBarrierOp::Arrive => "nvvm.cluster.arrive",
                    kir::ClusterBarrierOp::ArriveRelaxed => "nvvm.cluster.arrive.relaxed",
                    kir::ClusterBarrierOp::Wait => "nvvm.cluster.wait",
                };
                self.line(&format!("{name} {loc}"));
            }
            Inst::DsmemLoad { dst, tensor, ty, offset, rank, span } => {
                let off = self.int(offset, *span);
                let r = self.operand(rank, Scalar::I32, None, *span);
                let t = mlir_scalar(ty.elem);
                self.define(
                    *dst,
                    &format!(
                        "\"cute.dsmem_load\"({}, {off}, {r}) : ({}, i32, i32) -> {t}",
                        v(*tensor),
                        mlir_tensor(ty)
                    ),
                    *span,
                );
            }
            Inst::DsmemStore { value, tensor, ty, offset, rank, span } => {
                let off = self.int(offset, *span);
                let r = self.operand(rank, Scalar::I32, None, *span);
                let x = self.operand(value, ty.elem, None, *span);
                let t = mlir_scalar(ty.elem);
                let loc = self.loc(*span);
                self.line(&format!(
                    "\"cute.dsmem_store\"({}, {off}, {r}, {x}) : ({}, i32, i32, {t}) -> () {loc}",
                    v(*tensor),
                    mlir_tensor(ty)
                ));
            }
            Inst::TmaLoad { tma, smem, smem_ty, bar, bar_ty, offset, coords, span } => {
                let off = self.int(offset, *span);
                let cs: Vec<String> = coords.iter().map(|c| self.int(c, *span)).collect();
                let loc = self.loc(*span);
                let mut ops = format!("{}, {}, {off}, %tma{tma}", v(*smem), v(*bar));
                let mut tys = format!("{}, {}, i32, !llvm.ptr", mlir_tensor(smem_ty), mlir_tensor(bar_ty));
                for c in &cs {
                    let _ = write!(ops, ", {c}");
                    tys.push_str(", i32");
                }
                self.line(&format!("\"cute.tma_load\"({ops}) : ({tys}) -> () {loc}"));
            }
            Inst::TmaStore { tma, smem, smem_ty, coords, span } => {
                let cs: Vec<String> = coords.iter().map(|c| self.int(c, *span)).collect();
                let loc = self.loc(*span);
                let mut ops = format!("{}, %tma{tma}", v(*smem));
                let mut tys = format!("{}, !llvm.ptr", mlir_tensor(smem_ty));
                for c in &cs {
                    let _ = write!(ops, ", {c}");
                    tys.push_str(", i32");
                }
                self.line(&format!("\"cute.tma_store\"({ops}) : ({tys}) -> () {loc}"));
            }
            // NVVM's ops translate to the `llvm.nvvm.cp.async.bulk.*` intrinsics (docs/design.md (q)).
            Inst::BulkGroup { op, span } => {
                let loc = self.loc(*span);
                match op {
                    kir::BulkGroupOp::Commit => self.line(&format!("nvvm.cp.async.bulk.commit.group {loc}")),
                    kir::BulkGroupOp::Wait { n, read: true } => {
                        self.line(&format!("nvvm.cp.async.bulk.wait_group {n} {{read}} {loc}"))
                    }
                    kir::BulkGroupOp::Wait { n, read: false } => {
                        self.line(&format!("nvvm.cp.async.bulk.wait_group {n} {loc}"))
                    }
                }
            }
            Inst::Mma { dst, atom, a, b, c, span } => {
                let (ta, tb, tc, td) = (self.ty(*a), self.ty(*b), self.ty(*c), self.ty(*dst));
                self.define(
                    *dst,
                    &format!(
                        "\"cute.mma\"({}, {}, {}) {{atom = \"{}\"}} : ({ta}, {tb}, {tc}) -> {td}",
                        v(*a),
                        v(*b),
                        v(*c),
                        atom.name
                    ),
                    *span,
                );
            }
            Inst::Copy { src, src_ty, dst, dst_ty, width, op, pred, span } => {
                let pred = pred.as_ref().map(|p| self.operand(p, Scalar::Bool, None, *span));
                let loc = self.loc(*span);
                let mut attrs: Vec<String> = width.iter().map(|w| format!("max_vector = {w} : i32")).collect();
                if *op != kir::CopyOp::Universal {
                    attrs.push(format!("op = \"{}\"", op.name()));
                }
                let attr = if attrs.is_empty() { String::new() } else { format!(" {{{}}}", attrs.join(", ")) };
                let (pred_operand, pred_ty) = match &pred {
                    Some(p) => (format!(", {p}"), ", i1"),
                    None => (String::new(), ""),
                };
                self.line(&format!(
                    "\"cute.copy\"({}, {}{pred_operand}){attr} : ({}, {}{pred_ty}) -> () {loc}",
                    v(*src),
                    v(*dst),
                    mlir_tensor(src_ty),
                    mlir_tensor(dst_ty)
                ));
            }
            Inst::If { cond, then, els, span } => {
                let c = self.operand(cond, Scalar::Bool, None, *span);
                self.line(&format!("scf.if {c} {{"));
                self.region(then);
                if !els.is_empty() {
                    self.line("} else {");
                    self.region(els);
                }
                let loc = self.loc(*span);
                self.line(&format!("}} {loc}"));
            }
            Inst::For { iv, lb, ub, step, body, exit, span } => {
                if self.non_negative(lb) && self.positive(step) {
                    self.non_negative_values.insert(*iv);
                }
                let (l, u, s) = (self.int(lb, *span), self.int(ub, *span), self.int(step, *span));
                let loc = self.loc(*span);
                let Some(exit) = exit else {
                    if step.as_static() != Some(1)
                        && self.non_negative(lb)
                        && self.non_negative(ub)
                        && self.positive(step)
                    {
                        // A strided loop (`for j in tid..n step block_dim.x`, `... step 32`): counted
                        // from 0 to the trip count, `iv = lb + t * step`. LLVM does not count the
                        // trips of `iv += step` with a bound it cannot relate to the start (the add
                        // might wrap for all it knows), so it would neither unroll the loop nor
                        // keep several loads in flight; with the count known it does
                        // (samples/row_sum.cute's kernels).
                        let span = *span;
                        let zero = self.op("arith.constant 0 : i32", span);
                        let one = self.op("arith.constant 1 : i32", span);
                        let over = self.op(&format!("arith.subi {u}, {l} : i32"), span);
                        let trips = self.op(&format!("arith.ceildivsi {over}, {s} : i32"), span);
                        let trips = self.op(&format!("arith.maxsi {trips}, {zero} : i32"), span);
                        let t = self.tmp();
                        self.line(&format!("scf.for {t} = {zero} to {trips} step {one} : i32 {{"));
                        self.indent += 1;
                        let scaled = self.op(&format!("arith.muli {t}, {s} : i32"), span);
                        self.define(*iv, &format!("arith.addi {l}, {scaled} : i32"), span);
                        self.indent -= 1;
                        self.region(body);
                        self.line(&format!("}} {loc}"));
                        return;
                    }
                    self.line(&format!("scf.for {} = {l} to {u} step {s} : i32 {{", v(*iv)));
                    self.region(body);
                    self.line(&format!("}} {loc}"));
                    return;
                };
                // A loop a `break` or `return` can end: an `scf.while` carrying the counter, which
                // goes on while `iv < ub` (signed, as `scf.for` compares) and the exit test is false.
                let (done, before) = (self.tmp(), self.tmp());
                self.line(&format!("{done} = scf.while ({before} = {l}) : (i32) -> i32 {{"));
                self.indent += 1;
                self.memo.push(HashMap::new());
                let lt = self.op(&format!("arith.cmpi slt, {before}, {u} : i32"), *span);
                self.insts(&exit.insts);
                let stop = self.operand(&exit.value, Scalar::Bool, None, *span);
                let t = self.op("arith.constant true", *span);
                let go_on = self.op(&format!("arith.xori {stop}, {t} : i1"), *span);
                let go = self.op(&format!("arith.andi {lt}, {go_on} : i1"), *span);
                self.line(&format!("scf.condition({go}) {before} : i32 {loc}"));
                self.memo.pop();
                self.indent -= 1;
                self.line("} do {");
                self.line(&format!("^bb0({}: i32):", v(*iv)));
                self.indent += 1;
                self.memo.push(HashMap::new());
                self.insts(body);
                let next = self.op(&format!("arith.addi {}, {s} : i32", v(*iv)), *span);
                self.line(&format!("scf.yield {next} : i32 {loc}"));
                self.memo.pop();
                self.indent -= 1;
                self.line(&format!("}} {loc}"));
            }
            Inst::While { cond, body, span } => {
                let loc = self.loc(*span);
                self.line("scf.while : () -> () {");
                self.indent += 1;
                self.memo.push(HashMap::new());
                self.insts(&cond.insts);
                let c = self.operand(&cond.value, Scalar::Bool, None, *span);
                self.line(&format!("scf.condition({c}) {loc}"));
                self.memo.pop();
                self.indent -= 1;
                self.line("} do {");
                self.indent += 1;
                self.memo.push(HashMap::new());
                self.insts(body);
                self.line(&format!("scf.yield {loc}"));
                self.memo.pop();
                self.indent -= 1;
                self.line(&format!("}} {loc}"));
            }
            Inst::Printf { segments, span } => {
                let mut format = String::new();
                let mut names = Vec::new();
                let mut types = Vec::new();
                for seg in segments {
                    let (x, ty) = match seg {
                        FmtSeg::Text(t) => {
                            format.push_str(&t.replace('%', "%%"));
                            continue;
                        }
                        FmtSeg::Int(i) => (self.int(i, *span), Scalar::I32),
                        FmtSeg::Value(ty, id) => (v(*id), *ty),
                    };
                    // C varargs promote floats to double and small integers to int.
                    let (x, t, conv) = if ty.is_float() {
                        let x = if ty == Scalar::F64 {
                            x
                        } else {
                            self.op(&format!("arith.extf {x} : {} to f64", mlir_scalar(ty)), *span)
                        };
                        (x, "f64", "%f")
                    } else if ty == Scalar::Bool || ty.size_bytes() < 4 {
                        let op = if ty.is_signed() { "extsi" } else { "extui" };
                        (
                            self.op(&format!("arith.{op} {x} : {} to i32", mlir_scalar(ty)), *span),
                            "i32",
                            if ty.is_signed() { "%d" } else { "%u" },
                        )
                    } else if ty.size_bytes() == 8 {
                        (x, "i64", if ty.is_signed() { "%lld" } else { "%llu" })
                    } else {
                        (x, "i32", if ty == Scalar::U32 { "%u" } else { "%d" })
                    };
                    format.push_str(conv);
                    names.push(x);
                    types.push(t);
                }
                let loc = self.loc(*span);
                let fmt = escape(&format);
                if names.is_empty() {
                    self.line(&format!("gpu.printf \"{fmt}\" {loc}"));
                } else {
                    self.line(&format!("gpu.printf \"{fmt}\", {} : {} {loc}", names.join(", "), types.join(", ")));
                }
            }
            Inst::Barrier { span } => {
                let loc = self.loc(*span);
                self.line(&format!("gpu.barrier {loc}"));
            }
            Inst::NamedBarrier { id, threads, arrive, span } => {
                let i = self.operand(id, Scalar::I32, None, *span);
                let n = self.operand(threads, Scalar::I32, None, *span);
                let loc = self.loc(*span);
                if *arrive {
                    // `nvvm.barrier.arrive` has no LLVM translation in MLIR 22 (only
                    // `convert-nvvm-to-llvm` lowers it): call the intrinsic it stands for.
                    self.line(&format!("llvm.call_intrinsic \"llvm.nvvm.barrier.cta.arrive.aligned.count\"({i}, {n}) : (i32, i32) -> () {loc}"));
                } else {
                    // The generic form: MLIR 22's custom parser of `nvvm.barrier` mistakes a
                    // trailing `loc(...)` for more of the op.
                    self.line(&format!("\"nvvm.barrier\"({i}, {n}) <{{operandSegmentSizes = array<i32: 1, 1, 0>}}> : (i32, i32) -> () {loc}"));
                }
            }
        }
    }

    fn convert(&mut self, dst: ValueId, from: Scalar, to: Scalar, frag: Option<usize>, a: &Operand, span: Span) {
        let t = self.ty(dst);
        // Constants: write the value directly in the target type.
        match a {
            Operand::Float(x) if frag.is_none() => {
                self.float_const_into(Some(dst), *x, to, span);
                return;
            }
            Operand::Int(i) if frag.is_none() && i.is_static() && from != Scalar::I32 => {
                let c = i.as_static().unwrap_or(0);
                if to.is_float() {
                    self.float_const_into(Some(dst), c as f64, to, span);
                } else if to == Scalar::Bool {
                    self.define(dst, &format!("arith.constant {} : i1", c != 0), span);
                } else {
                    self.define(dst, &format!("arith.constant {c} : {t}"), span);
                }
                return;
            }
            Operand::Bool(b) => {
                self.define(dst, &format!("arith.constant {b}"), span);
                return;
            }
            _ => {}
        }
        let x = self.operand(a, from, frag, span);
        let ft = match frag {
            Some(n) => format!("vector<{n}x{}>", mlir_scalar(from)),
            None => mlir_scalar(from).to_string(),
        };
        if from.is_fp8() || to.is_fp8() {
            self.convert_fp8(dst, from, to, frag, &x, span);
            return;
        }
        if matches!((from, to), (Scalar::F16, Scalar::BF16) | (Scalar::BF16, Scalar::F16)) {
            // Same width, different formats: no single `arith` op; f32 holds both exactly.
            let wide = ft.replace(mlir_scalar(from), "f32");
            let f = self.op(&format!("arith.extf {x} : {ft} to {wide}"), span);
            self.define(dst, &format!("arith.truncf {f} : {wide} to {t}"), span);
            return;
        }
        let op = arith_conversion(from, to);
        self.define(dst, &format!("arith.{op} {x} : {ft} to {t}"), span);
    }

    /// Defines `dst` (when given, else a temporary) as `text`; returns its name.
    fn last(&mut self, dst: Option<ValueId>, text: &str, span: Span) -> String {
        match dst {
            Some(d) => {
                self.define(d, text, span);
                v(d)
            }
            None => self.op(text, span),
        }
    }

    /// Conversions from and to 8-bit floats, which `arith` cannot lower for NVPTX: the PTX pair
    /// conversions `cvt.rn.f16x2.{e4m3x2,e5m2x2}` (widening, exact) and
    /// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` (narrowing: round to nearest even, saturating to the
    /// largest finite value; NaN stays NaN), as NVVM ops (sm_89+). Everything else goes through
    /// f16 (exact for every 8-bit float) or f32: f16 and bf16 widen exactly to f32 first; f64 and
    /// integers are converted to f32 first (rounded there).
    fn convert_fp8(&mut self, dst: ValueId, from: Scalar, to: Scalar, frag: Option<usize>, x: &str, span: Span) {
        let vt = |s: &str| match frag {
            Some(n) => format!("vector<{n}x{s}>"),
            None => s.to_string(),
        };
        let mt = |s: Scalar| vt(mlir_scalar(s));
        let d = Some(dst);
        if from.is_fp8() {
            let f16_last = to == Scalar::F16;
            let h = self.fp8_to_f16(if f16_last { d } else { None }, from, frag, x, span);
            if f16_last {
                return;
            }
            if to == Scalar::F64 {
                self.last(d, &format!("arith.extf {h} : {} to {}", vt("f16"), vt("f64")), span);
                return;
            }
            let f32_last = matches!(to, Scalar::F32 | Scalar::TF32);
            let f = self.last(
                if f32_last { d } else { None },
                &format!("arith.extf {h} : {} to {}", vt("f16"), vt("f32")),
                span,
            );
            if f32_last {
                return;
            }
            if to.is_fp8() {
                self.f32_to_fp8(dst, to, frag, &f, span);
            } else {
                let op = arith_conversion(Scalar::F32, to);
                self.last(d, &format!("arith.{op} {f} : {} to {}", vt("f32"), mt(to)), span);
            }
            return;
        }
        // To an 8-bit float: from f32 directly, from anything else through f32.
        let f = match from {
            Scalar::F32 | Scalar::TF32 => x.to_string(),
            _ => {
                let op = arith_conversion(from, Scalar::F32);
                self.op(&format!("arith.{op} {x} : {} to {}", mt(from), vt("f32")), span)
            }
        };
        self.f32_to_fp8(dst, to, frag, &f, span);
    }

    /// `x` (an 8-bit float scalar or vector of `from`) widened to f16, pairs at a time.
    fn fp8_to_f16(&mut self, dst: Option<ValueId>, from: Scalar, frag: Option<usize>, x: &str, span: Span) -> String {
        let f8 = mlir_scalar(from);
        let cvt = |w: &mut Self, pair: &str| {
            w.op(&format!("nvvm.convert.f8x2.to.f16x2 {pair} : vector<2xi8> ({f8}) -> vector<2xf16>"), span)
        };
        let Some(n) = frag else {
            // Both bytes of the pair hold the value, so either half of the result is it.
            let b = self.op(&format!("arith.bitcast {x} : {f8} to i8"), span);
            let pair = self.op(&format!("vector.broadcast {b} : i8 to vector<2xi8>"), span);
            let h = cvt(self, &pair);
            return self.last(dst, &format!("vector.extract {h}[0] : f16 from vector<2xf16>"), span);
        };
        let bytes = self.op(&format!("arith.bitcast {x} : vector<{n}x{f8}> to vector<{n}xi8>"), span);
        let mut acc = self.op(&format!("arith.constant dense<0.000000e+00> : vector<{n}xf16>"), span);
        for i in (0..n).step_by(2) {
            let last = i + 2 >= n;
            let text = if i + 1 < n {
                let pair = self.op(&format!("vector.extract_strided_slice {bytes} {{offsets = [{i}], sizes = [2], strides = [1]}} : vector<{n}xi8> to vector<2xi8>"), span);
                let h = cvt(self, &pair);
                format!("vector.insert_strided_slice {h}, {acc} {{offsets = [{i}], strides = [1]}} : vector<2xf16> into vector<{n}xf16>")
            } else {
                let b = self.op(&format!("vector.extract {bytes}[{i}] : i8 from vector<{n}xi8>"), span);
                let pair = self.op(&format!("vector.broadcast {b} : i8 to vector<2xi8>"), span);
                let h2 = cvt(self, &pair);
                let h = self.op(&format!("vector.extract {h2}[0] : f16 from vector<2xf16>"), span);
                format!("vector.insert {h}, {acc} [{i}] : f16 into vector<{n}xf16>")
            };
            acc = self.last(if last { dst } else { None }, &text, span);
        }
        acc
    }

    /// f32 `x` (scalar or vector) narrowed to the 8-bit float `to`, defining `dst`: pairs at a time,
    /// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b` puts `a` in the high byte, so a pair
    /// (x[i], x[i+1]) is converted as (a, b) = (x[i+1], x[i]) and lands in memory order.
    fn f32_to_fp8(&mut self, dst: ValueId, to: Scalar, frag: Option<usize>, x: &str, span: Span) {
        let f8 = mlir_scalar(to);
        let cvt = |w: &mut Self, hi: &str, lo: &str| {
            w.op(&format!("nvvm.convert.f32x2.to.f8x2 {hi}, {lo} {{rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>}} : vector<2xi8> ({f8})"), span)
        };
        let Some(n) = frag else {
            let pair = cvt(self, x, x);
            let b = self.op(&format!("vector.extract {pair}[0] : i8 from vector<2xi8>"), span);
            self.define(dst, &format!("arith.bitcast {b} : i8 to {f8}"), span);
            return;
        };
        if n % 2 == 0 {
            // Each pair as an i16 (x[i] in its low byte), the halves gathered and reinterpreted.
            let mut halves = Vec::with_capacity(n / 2);
            for i in (0..n).step_by(2) {
                let lo = self.op(&format!("vector.extract {x}[{i}] : f32 from vector<{n}xf32>"), span);
                let hi = self.op(&format!("vector.extract {x}[{}] : f32 from vector<{n}xf32>", i + 1), span);
                halves.push(self.op(&format!("nvvm.convert.f32x2.to.f8x2 {hi}, {lo} {{rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>}} : i16 ({f8})"), span));
            }
            let h = n / 2;
            let packed = self.op(&format!("vector.from_elements {} : vector<{h}xi16>", halves.join(", ")), span);
            let bytes = self.op(&format!("vector.bitcast {packed} : vector<{h}xi16> to vector<{n}xi8>"), span);
            self.define(dst, &format!("arith.bitcast {bytes} : vector<{n}xi8> to vector<{n}x{f8}>"), span);
            return;
        }
        let mut acc = self.op(&format!("arith.constant dense<0> : vector<{n}xi8>"), span);
        for i in (0..n).step_by(2) {
            let lo = self.op(&format!("vector.extract {x}[{i}] : f32 from vector<{n}xf32>"), span);
            acc = if i + 1 < n {
                let hi = self.op(&format!("vector.extract {x}[{}] : f32 from vector<{n}xf32>", i + 1), span);
                let pair = cvt(self, &hi, &lo);
                self.op(&format!("vector.insert_strided_slice {pair}, {acc} {{offsets = [{i}], strides = [1]}} : vector<2xi8> into vector<{n}xi8>"), span)
            } else {
                let pair = cvt(self, &lo, &lo);
                let b = self.op(&format!("vector.extract {pair}[0] : i8 from vector<2xi8>"), span);
                self.op(&format!("vector.insert {b}, {acc} [{i}] : i8 into vector<{n}xi8>"), span)
            };
        }
        self.define(dst, &format!("arith.bitcast {acc} : vector<{n}xi8> to vector<{n}x{f8}>"), span);
    }
}

/// The `arith` op converting `from` to `to` (neither an 8-bit float).
fn arith_conversion(from: Scalar, to: Scalar) -> &'static str {
    {
        let (fb, tb) = (from.size_bytes(), to.size_bytes());
        let signed = from.is_signed() || from == Scalar::I32;
        match (from.is_float(), to.is_float()) {
            (true, true) if mlir_scalar(from) == mlir_scalar(to) => "bitcast",
            (true, true) if tb > fb => "extf",
            (true, true) => "truncf",
            (false, true) => {
                if signed {
                    "sitofp"
                } else {
                    "uitofp"
                }
            }
            (true, false) => {
                if to.is_signed() || to == Scalar::I32 {
                    "fptosi"
                } else {
                    "fptoui"
                }
            }
            (false, false) if tb > fb => {
                if signed {
                    "extsi"
                } else {
                    "extui"
                }
            }
            (false, false) if tb < fb => "trunci",
            (false, false) => "bitcast",
        }
    }
}
