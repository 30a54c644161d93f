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
//!
//! One file per family of ops (Triton's `*OpToLLVM` layout): [`KernelWriter::inst`] dispatches
//! each instruction to its family.

mod arith;
mod asm;
mod asserts;
mod atomic;
mod barrier;
mod cluster;
mod control;
mod convert;
mod fast_math;
mod index;
mod kernel;
mod memory;
mod mma;
mod print;
mod thread;
mod tma;
mod types;
mod vector;

use types::mlir_value_ty;
pub use types::{mlir_layout, mlir_scalar, mlir_tensor, mlir_tiled_mma};

use cute_lang::diag::Diagnostic;
use cute_lang::kir::{self, Inst, ValueId};
use cute_lang::sources::{Lines, Sources};
use cute_lang::span::Span;
use cute_layout::Int;
use std::collections::HashMap;
use std::fmt::Write;

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

/// The PTX ISA version a kernel's instructions need beyond the target's (`major * 10 + minor`):
/// the vector `red` forms of `atomic_add(tile, fragment)` need PTX 8.1
/// (`cute_layout::atom::atomic::red_fragment`, which the lowering spells them from).
fn kernel_ptx_version(kernel: &kir::Kernel) -> Option<u32> {
    fn walk(insts: &[Inst]) -> Option<u32> {
        insts
            .iter()
            .filter_map(|i| match i {
                Inst::AtomicAddFrag { ty, .. } => {
                    cute_layout::atom::atomic::red_fragment_for(ty.elem, &ty.layout, ty.align).ok()?.ptx
                }
                other => other.regions().into_iter().filter_map(walk).max(),
            })
            .max()
    }
    walk(&kernel.body)
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
    /// The PTX ISA version it needs beyond the target's, if any ([`kernel_ptx_version`]).
    pub ptx_version: Option<u32>,
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

    /// The PTX ISA version the whole module needs beyond the target's, if any.
    pub fn ptx_version(&self) -> Option<u32> {
        self.kernels.iter().filter_map(|k| k.ptx_version).max()
    }
}

/// Lowers the kernels of a KIR module to `cute` IR text.
pub fn lower_to_cute(
    module: &kir::Module,
    sources: &Sources,
    arch: &str,
    asserts: crate::pipeline::Asserts,
) -> Result<CuteText, Vec<Diagnostic>> {
    let mut kernels = Vec::new();
    let mut errors = Vec::new();
    let mut fast_divisors = Vec::new();
    let lines = sources.lines();
    for k in &module.kernels {
        let vars = crate::plan::kernel_vars(k);
        let mut w = KernelWriter {
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
            asserts: asserts == crate::pipeline::Asserts::On,
            ix: if k.index64.is_some() { "i64" } else { "i32" },
            wide_values: Default::default(),
        };
        w.kernel();
        kernels.push(KernelText {
            symbol: k.symbol.clone(),
            text: w.out,
            uses_math: kernel_uses_math(k),
            ptx_version: kernel_ptx_version(k),
        });
        fast_divisors.push(w.fast_divisors);
        errors.extend(w.errors);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // The manifest travels inside the cubin: the runtime reads it from the ELF symbol table.
    let manifest_text =
        crate::manifest::manifest_text(module, arch, &fast_divisors, asserts == crate::pipeline::Asserts::On);
    let manifest = crate::manifest::manifest_global(&manifest_text);
    Ok(CuteText { kernels, manifest, manifest_text })
}

struct KernelWriter<'a> {
    /// Where each span is: its file, line and column (a program may be several files).
    lines: &'a Lines<'a>,
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
    /// Whether kernels' run-time `assert`s are compiled (`--release-asserts`).
    asserts: bool,
    /// The type index integers are computed in: `i64` in an `index(i64)` kernel, else `i32`
    /// (docs/language.md §2, "Index width").
    ix: &'static str,
    /// The values defined in that type although their KIR type is `i32`, in a 64-bit kernel:
    /// tensors' `?` extents and strides and loop counters (index integers themselves).
    wide_values: std::collections::HashSet<ValueId>,
}

fn v(id: ValueId) -> String {
    format!("%v{id}")
}

impl KernelWriter<'_> {
    fn loc(&self, span: Span) -> String {
        let (file, l, c) = self.lines.locate(span.start);
        format!("loc(\"{}\":{l}:{c})", escape(file))
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

    fn ty(&self, id: ValueId) -> String {
        self.k.value_types.get(id as usize).map(mlir_value_ty).unwrap_or_else(|| "i32".into())
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

    fn define(&mut self, dst: ValueId, text: &str, span: Span) {
        let loc = self.loc(span);
        self.line(&format!("{} = {text} {loc}", v(dst)));
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

    /// One instruction, by the family of ops it lowers to (a file each).
    fn inst(&mut self, inst: &Inst) {
        match inst {
            Inst::Special { .. } | Inst::Shuffle { .. } => self.thread(inst),
            Inst::Binary { .. }
            | Inst::Neg { .. }
            | Inst::Not { .. }
            | Inst::Cmp { .. }
            | Inst::Select { .. }
            | Inst::Math { .. } => self.arith(inst),
            Inst::Fma { .. } => self.fma(inst),
            Inst::Convert { dst, from, to, frag, a, span } => self.convert(*dst, *from, *to, *frag, a, *span),
            Inst::Extract { .. } | Inst::Reduce { .. } | Inst::FromElements { .. } => self.vector(inst),
            Inst::View { dst, src, how, ty, span } => self.view(*dst, *src, how, ty, *span),
            Inst::Alloc { .. }
            | Inst::LaunchSmem { .. }
            | Inst::Load { .. }
            | Inst::Store { .. }
            | Inst::LoadFrag { .. }
            | Inst::StoreFrag { .. }
            | Inst::Copy { .. }
            | Inst::AsyncCopyGroup { .. } => self.memory(inst),
            Inst::Mma { .. } | Inst::Wgmma { .. } | Inst::Warpgroup { .. } => self.mma(inst),
            Inst::TmaLoad { .. } | Inst::TmaStore { .. } | Inst::BulkGroup { .. } => self.tma(inst),
            Inst::Barrier { .. } | Inst::NamedBarrier { .. } | Inst::Mbarrier { .. } => self.barrier(inst),
            Inst::ClusterBarrier { .. } | Inst::DsmemLoad { .. } | Inst::DsmemStore { .. } => self.cluster(inst),
            Inst::Atomic { .. } | Inst::AtomicAddFrag { .. } => self.atomic(inst),
            Inst::If { .. } | Inst::For { .. } | Inst::While { .. } => self.control(inst),
            Inst::Printf { .. } => self.print(inst),
            Inst::Assert { .. } => self.assert(inst),
            Inst::Asm { .. } => self.asm(inst),
        }
    }
}
