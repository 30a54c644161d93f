//! The compilation pipeline: `.cute` → AST → `cute` IR → gpu/llvm → NVVM → PTX → cubin, each stage
//! printable.

use crate::ir;
use crate::passes;
use crate::ptxas;
use crate::timings::{KernelTimes, Timings};
use cute_abi::{Arch, UnknownArch};
use cute_lang::diag::Diagnostic;
use cute_lang::imports::Loader;
use cute_lang::sources::Sources;
use melior::ir::operation::OperationLike;
pub use melior::ir::Module;
use melior::pass::PassManager;
use melior::Context;
use std::cell::RefCell;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Ast,
    /// The manifest embedded in the cubin (kernels, parameters, host launch plans).
    Manifest,
    /// A typed C header for the file's kernels.
    Header,
    Cute,
    Gpu,
    Llvm,
    Ptx,
    Cubin,
}

impl Stage {
    pub const ALL: [Stage; 8] =
        [Stage::Ast, Stage::Manifest, Stage::Header, Stage::Cute, Stage::Gpu, Stage::Llvm, Stage::Ptx, Stage::Cubin];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Ast => "ast",
            Stage::Manifest => "manifest",
            Stage::Header => "header",
            Stage::Cute => "cute",
            Stage::Gpu => "gpu",
            Stage::Llvm => "llvm",
            Stage::Ptx => "ptx",
            Stage::Cubin => "cubin",
        }
    }
}

/// The target a source file asks to be built for with a line `// cutec-build: --arch ARCH` (the
/// samples that need sm_90a; scripts/gpu-suite/build.sh and the Python tests' fixture read the
/// same line), else sm_90. `cutec build` itself does not read it: the `--arch` option decides.
pub fn source_arch(source: &str) -> Result<Arch, UnknownArch> {
    match source.lines().find_map(|l| l.trim().strip_prefix("// cutec-build: --arch ")) {
        Some(name) => name.trim().parse(),
        None => Ok(Arch::default()),
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub arch: Arch,
    pub ptxas: Option<PathBuf>,
    /// The compile-time work the source may ask for (`cutec --compile-budget`).
    pub budget: cute_lang::Budget,
    /// Whether kernels check their run-time `assert`s (`cutec build --release-asserts`).
    pub asserts: Asserts,
    /// The winners of `cutec tune` (`cutec build --tuning FILE`): tuned host functions dispatch on
    /// the shape to them.
    pub tuning: Option<cute_lang::tune::Table>,
}

/// Kernels' run-time `assert`s: compiled (a check, and a report and `trap` where it fails), or
/// left out with the instructions that compute their conditions (`--release-asserts=off`, as
/// `NDEBUG` leaves out CUDA's). Static asserts are checked at compile time either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Asserts {
    #[default]
    On,
    Off,
}

pub enum Output {
    Text(String),
    Binary(Vec<u8>),
}

#[derive(Debug)]
pub enum CompileError {
    /// Errors in the `.cute` source, with spans.
    Source(Vec<Diagnostic>),
    /// Errors reported by MLIR (verifiers, passes), already formatted as `file:line:col: error: ...`.
    Mlir(Vec<String>),
    Ptxas(ptxas::PtxasError),
    Internal(String),
    /// A pass of ours panicked: a bug in the compiler, caught at the pass boundary.
    PassPanic(passes::PassPanic),
}

/// The upstream passes from the lowered `gpu` form to NVVM/LLVM inside the gpu.module. `cse` runs
/// first because our lowering writes each access's index arithmetic afresh (a thread's coordinate
/// is divided out once per copy, constants are not shared): the conversions then walk far fewer
/// ops, and the PTX is the same (docs/pipeline.md, "Build time", has the figures). No
/// `convert-vector-to-scf`: our passes make no vector transfers, so it could only cost time.
fn llvm_pipeline(arch: Arch, libdevice: Option<&Path>, ptx_version: Option<u32>) -> String {
    let link = libdevice.map(|p| format!(" l={}", p.display())).unwrap_or_default();
    format!(
        "nvvm-attach-target{{chip={} O=3 features={}{link}}},\
         gpu.module(cse,convert-scf-to-cf,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-arith-to-llvm,canonicalize,cse,reconcile-unrealized-casts),\
         ensure-debug-info-scope-on-llvm-func{{emission-kind=DebugDirectivesOnly}}",
        arch.name(),
        ptx_features(arch, ptx_version)
    )
}

/// The PTX ISA version a module is written in: the target's, or the newer one its instructions
/// need (`CuteText::ptx_version`, set by the lowering: PTX 8.1 for the vector `red` forms of
/// `cute.atomic_add_frag`, sm_90 only). Only such modules change: every other module's PTX stays
/// as it was. Each kernel of a module is compiled in the module's version (codegen.rs), so that
/// the parts join.
fn ptx_features(arch: Arch, ptx_version: Option<u32>) -> String {
    match ptx_version {
        Some(v) if v > arch.ptx_version() => format!("+ptx{v}"),
        _ => arch.ptx_features().to_string(),
    }
}

/// Our passes from the `cute` stage to the `gpu` stage, in order.
pub fn cute_passes() -> Vec<String> {
    [
        passes::canonicalize::NAME,
        passes::vectorize::NAME,
        passes::lower_mma::NAME,
        passes::lower_to_gpu::NAME,
        passes::slice_vectors::NAME,
        passes::hoist_arith::NAME,
    ]
    .map(String::from)
    .to_vec()
}

const PTX_PIPELINE: &str = "gpu-module-to-binary{format=isa}";

/// Owns the MLIR context and collects its diagnostics.
pub struct Session {
    pub context: Context,
    diagnostics: Rc<RefCell<Vec<String>>>,
}

/// `loc("file":3:5)` → `file:3:5`; other locations print as MLIR prints them.
fn location_prefix(loc: &str) -> String {
    let inner = loc.strip_prefix("loc(").and_then(|s| s.strip_suffix(')')).unwrap_or(loc);
    if let Some(rest) = inner.strip_prefix('"') {
        if let Some((file, lc)) = rest.split_once("\":") {
            return format!("{file}:{lc}");
        }
    }
    inner.to_string()
}

impl Session {
    pub fn new() -> Result<Session, CompileError> {
        let context = cute_dialect::new_context().map_err(|e| CompileError::Internal(e.0))?;
        let diagnostics = Rc::new(RefCell::new(Vec::new()));
        let sink = diagnostics.clone();
        context.attach_diagnostic_handler(move |d| {
            let severity = match d.severity() {
                melior::diagnostic::DiagnosticSeverity::Error => "error",
                melior::diagnostic::DiagnosticSeverity::Warning => "warning",
                melior::diagnostic::DiagnosticSeverity::Note => "note",
                melior::diagnostic::DiagnosticSeverity::Remark => "remark",
            };
            let mut text = format!("{}: {severity}: {d}", location_prefix(&d.location().to_string()));
            for i in 0..d.note_count() {
                if let Ok(n) = d.note(i) {
                    text.push_str(&format!("\n{}: note: {n}", location_prefix(&n.location().to_string())));
                }
            }
            sink.borrow_mut().push(text);
            true
        });
        Ok(Session { context, diagnostics })
    }

    fn take_diagnostics(&self) -> Vec<String> {
        std::mem::take(&mut *self.diagnostics.borrow_mut())
    }

    fn mlir_error(&self, fallback: &str) -> CompileError {
        let mut d = self.take_diagnostics();
        if d.is_empty() {
            d.push(format!("error: {fallback}"));
        }
        CompileError::Mlir(d)
    }

    /// The error of a pass manager run that failed: a pass's panic, else MLIR's diagnostics.
    fn pass_failure(&self) -> CompileError {
        match passes::take_panic() {
            Some(panic) => {
                // The panic's own diagnostic, which says the same.
                self.take_diagnostics();
                CompileError::PassPanic(panic)
            }
            None => self.mlir_error("a pass failed"),
        }
    }

    /// Parses textual IR (the `cute` dialect and upstream dialects) and verifies it.
    pub fn parse(&self, text: &str, name: &str) -> Result<Module<'_>, CompileError> {
        // Parse through the C API that takes a buffer name, so errors say `file:line:col`.
        let sref = |s: &str| mlir_sys::MlirStringRef { data: s.as_ptr() as *const _, length: s.len() };
        let op = unsafe { mlir_sys::mlirOperationCreateParse(self.context.to_raw(), sref(text), sref(name)) };
        if op.ptr.is_null() {
            return Err(self.mlir_error("the IR does not parse"));
        }
        if ir::op_name(op) != "builtin.module" {
            unsafe { mlir_sys::mlirOperationDestroy(op) };
            return Err(CompileError::Mlir(vec![format!(
                "{name}: error: expected a `builtin.module` at the top level"
            )]));
        }
        // The parser has verified the module.
        let mut module = unsafe { Module::from_raw(mlir_sys::mlirModuleFromOperation(op)) };
        // The cute ops' own checks (layouts, element types, sizes), which IRDL cannot express. The
        // pass changes nothing, so nothing needs verifying after it.
        self.run_passes_unverified(&mut module, &[passes::verify::NAME.to_string()])?;
        Ok(module)
    }

    /// Runs a list of passes: each entry is one of ours by name or an upstream pipeline element.
    /// The IR is verified after each pass, so an invalid rewrite is reported at the pass that made it.
    pub fn run_passes(&self, module: &mut Module, pipeline: &[String]) -> Result<(), CompileError> {
        self.pass_manager(pipeline)?.run(module).map_err(|_| self.pass_failure())
    }

    /// Runs a list of passes without verifying the IR between them: where the IR is verified once
    /// after them ([`Session::verify`]) or the passes are upstream's, whose output the build trusts.
    /// Verifying after every pass costs several percent of a build.
    pub fn run_passes_unverified(&self, module: &mut Module, pipeline: &[String]) -> Result<(), CompileError> {
        let pm = self.pass_manager(pipeline)?;
        pm.enable_verifier(false);
        pm.run(module).map_err(|_| self.pass_failure())
    }

    /// Verifies the module (every op's invariants and verifier, dominance).
    pub fn verify(&self, module: &Module) -> Result<(), CompileError> {
        if module.as_operation().verify() {
            Ok(())
        } else {
            Err(self.mlir_error("the IR does not verify"))
        }
    }

    fn pass_manager(&self, pipeline: &[String]) -> Result<PassManager<'_>, CompileError> {
        let pm = PassManager::new(&self.context);
        for element in pipeline {
            if let Some(p) = passes::find(element) {
                pm.add_pass((p.create)());
            } else {
                add_upstream(&pm, element)
                    .map_err(|e| CompileError::Mlir(vec![format!("error: invalid pass pipeline `{element}`: {e}")]))?;
            }
        }
        Ok(pm)
    }
}

/// Appends an upstream textual pipeline to the top-level pass manager (melior's
/// `parse_pass_pipeline` would replace the passes already added).
fn add_upstream(pm: &PassManager, pipeline: &str) -> Result<(), String> {
    unsafe extern "C" fn collect(s: mlir_sys::MlirStringRef, data: *mut c_void) {
        let out = unsafe { &mut *(data as *mut String) };
        let bytes = unsafe { std::slice::from_raw_parts(s.data as *const u8, s.length) };
        out.push_str(&String::from_utf8_lossy(bytes));
    }
    let mut message = String::new();
    let text = mlir_sys::MlirStringRef { data: pipeline.as_ptr() as *const _, length: pipeline.len() };
    let ok = unsafe {
        mlir_sys::mlirOpPassManagerAddPipeline(
            pm.as_operation_pass_manager().to_raw(),
            text,
            Some(collect),
            &mut message as *mut String as *mut c_void,
        )
    };
    if ok.value == 0 {
        Err(message)
    } else {
        Ok(())
    }
}

fn ptx_of(module: &Module) -> Result<String, CompileError> {
    for op in ir::nested_ops(module.as_operation().to_raw()) {
        if ir::op_name(op) != "gpu.binary" {
            continue;
        }
        let objects = unsafe {
            mlir_sys::mlirOperationGetAttributeByName(
                op,
                mlir_sys::MlirStringRef { data: b"objects".as_ptr() as *const _, length: 7 },
            )
        };
        if objects.ptr.is_null() || unsafe { mlir_sys::mlirArrayAttrGetNumElements(objects) } == 0 {
            break;
        }
        let object = unsafe { mlir_sys::mlirArrayAttrGetElement(objects, 0) };
        let s = unsafe { mlir_sys::mlirGPUObjectAttrGetObject(object) };
        let bytes = unsafe { std::slice::from_raw_parts(s.data as *const u8, s.length) };
        return Ok(String::from_utf8_lossy(bytes).into_owned());
    }
    Err(CompileError::Internal("gpu-module-to-binary produced no object".into()))
}

/// What a compilation produced: the stage asked for, what compile-time `print` calls printed, and
/// how long each stage took.
pub struct Compiled {
    pub output: Output,
    pub prints: Vec<String>,
    /// What the front end could not check (`warning:`s), built anyway.
    pub warnings: Vec<Diagnostic>,
    pub timings: Timings,
}

/// Compiles `.cute` source up to `stage`.
pub fn compile(source: &str, file_name: &str, stage: Stage, options: &Options) -> Result<Compiled, CompileError> {
    compile_files(&mut Sources::new(file_name, source), &mut cute_lang::imports::NoFiles, stage, options)
}

/// [`compile`] of the root file of `sources` and the files it imports, which `loader` finds and
/// which are added to `sources`: source errors' spans are in its span space.
pub fn compile_files(
    sources: &mut Sources,
    loader: &mut dyn Loader,
    stage: Stage,
    options: &Options,
) -> Result<Compiled, CompileError> {
    let mut timings = Timings::default();
    // The threads that compile kernels make their MLIR contexts while the front end runs.
    let workers = (stage >= Stage::Ptx).then(crate::codegen::Workers::start);
    let (file, kir) = timings
        .time("front end", || {
            cute_lang::front_end_files_tuned(sources, loader, options.budget.clone(), options.tuning.as_ref())
        })
        .map_err(CompileError::Source)?;
    let (output, prints, warnings) = compile_stage(sources, (file, kir), workers, stage, options, &mut timings)?;
    Ok(Compiled { output, prints, warnings, timings })
}

fn compile_stage(
    sources: &Sources,
    (file, kir): (cute_lang::ast::File, cute_lang::kir::Module),
    workers: Option<crate::codegen::Workers>,
    stage: Stage,
    options: &Options,
    timings: &mut Timings,
) -> Result<(Output, Vec<String>, Vec<Diagnostic>), CompileError> {
    let file_name = sources.root().name.as_str();
    timings.note(format!("{} of {} compile-budget steps", kir.compile_steps, options.budget.limit));
    if stage != Stage::Ast {
        cute_lang::check_arch(&kir, options.arch).map_err(CompileError::Source)?;
    }
    let prints = kir.prints.clone();
    let done = |o: Output| Ok((o, prints.clone(), kir.warnings.clone()));
    if stage == Stage::Ast {
        // The canonical `.cute` form: it re-parses to the same AST (lang/tests/roundtrip.rs).
        return done(Output::Text(cute_lang::pretty::print_file(&file)));
    }
    if stage == Stage::Manifest {
        // Lowering decides which run-time divisors get a multiplier and a shift (`fastdiv` lines).
        let cute = crate::lower::lower_to_cute(&kir, sources, options.arch.name(), options.asserts)
            .map_err(CompileError::Source)?;
        return done(Output::Text(cute.manifest_text));
    }
    if stage == Stage::Header {
        return done(Output::Text(crate::header::header_text(&kir, file_name)));
    }
    // Find ptxas before the expensive work, so a missing install is reported at once.
    let ptxas_path = if stage == Stage::Cubin {
        Some(ptxas::find(options.ptxas.as_deref()).map_err(CompileError::Ptxas)?)
    } else {
        None
    };
    let cute = timings
        .time("lower to cute IR", || crate::lower::lower_to_cute(&kir, sources, options.arch.name(), options.asserts))
        .map_err(CompileError::Source)?;
    let libdevice = if stage >= Stage::Llvm && cute.uses_math() {
        Some(ptxas::find_libdevice().map_err(CompileError::Internal)?)
    } else {
        None
    };
    if let Some(mut workers) = workers {
        let ptx = crate::codegen::ptx(&workers, &cute, file_name, options.arch, libdevice.as_deref(), timings)?;
        // The threads free their contexts while ptxas runs.
        workers.close();
        let Some(ptxas_path) = ptxas_path else { return done(Output::Text(ptx)) };
        let (cubin, notes) = timings
            .time("ptxas", || ptxas::assemble(&ptxas_path, &ptx, options.arch))
            .map_err(|e| ptxas_error(e, &ptx, sources, options.arch))?;
        let mut warnings = kir.warnings.clone();
        warnings.extend(notes.iter().map(|n| performance_warning(n, &kir)));
        return Ok((Output::Binary(cubin), prints, warnings));
    }
    // The text stages print the program as one module.
    let session = Session::new()?;
    let mut module = timings.time("parse", || session.parse(&cute.module(), file_name))?;
    let print = |m: &Module| Output::Text(format!("{}\n", m.as_operation()));
    if stage == Stage::Cute {
        return done(print(&module));
    }
    timings.time("cute passes", || session.run_passes(&mut module, &cute_passes()))?;
    if stage == Stage::Gpu {
        return done(print(&module));
    }
    timings.time("llvm passes", || {
        session.run_passes(&mut module, &[llvm_pipeline(options.arch, libdevice.as_deref(), cute.ptx_version())])
    })?;
    let module = tma_params_by_value(&session, module, file_name)?;
    done(print(&module))
}

/// A ptxas performance note as a warning on the kernel it names (its declaration; the file's start
/// for a kernel the module does not list).
fn performance_warning(note: &ptxas::PerformanceNote, kir: &cute_lang::kir::Module) -> Diagnostic {
    let kernel = kir.kernels.iter().find(|k| k.symbol == note.kernel);
    let name = kernel.map_or(note.kernel.as_str(), |k| k.source_name.as_str());
    // `kernel NAME`, the declaration's first words.
    let span = kernel.map_or(cute_lang::span::Span::new(0, 0), |k| {
        cute_lang::span::Span::new(k.span.start, (k.span.start + "kernel ".len() + name.len()).min(k.span.end))
    });
    let instance = if name == note.kernel { String::new() } else { format!(" (instance `{}`)", note.kernel) };
    Diagnostic::error(
        format!("ptxas: the wgmma pipeline of kernel `{name}`{instance} loses performance ({}): {}", note.code, note.message),
        span,
        "in this kernel",
    )
    .with_help("the kernel is correct but slower: ptxas serializes a kernel's wgmmas (or inserts waits) where a non-wgmma instruction touches their accumulator registers while they are in flight, where a wgmma, its fence or its wait is under a branch ptxas does not know to be warp-uniform, or where the accumulators do not fit the registers (docs/language.md, \"wgmma and ptxas\")")
}

/// A ptxas failure: where its errors fall in the PTX of `asm` calls, source errors at those calls
/// (the program's own PTX, which cutec does not check), in whichever file of `sources` each call
/// is; else ptxas' own report.
fn ptxas_error(e: ptxas::PtxasError, ptx: &str, sources: &Sources, arch: Arch) -> CompileError {
    let ptxas::PtxasError::Failed { message, .. } = &e else { return CompileError::Ptxas(e) };
    let found = ptxas::asm_errors(ptx, message);
    if found.is_empty() {
        return CompileError::Ptxas(e);
    }
    let diagnostics = found
        .into_iter()
        .map(|a| {
            let file = a.file.as_deref().and_then(|name| sources.find(name)).unwrap_or(0);
            let source = &sources.files()[file].text;
            let start = source_offset(source, a.line, a.col);
            let local = cute_lang::span::Span::new(start, (start + "asm".len()).min(source.len()));
            let at = sources.global(file, local);
            Diagnostic::error(format!("ptxas refused the PTX of this `asm`: {}", a.message), at, "this `asm`").with_help(
                format!("`asm` is not checked by cutec: ptxas checks its PTX for the target ({}); fix the instruction, or build for a target that has it (`--arch`)", arch.name()),
            )
        })
        .collect();
    CompileError::Source(diagnostics)
}

/// The byte offset of 1-based `line` and `col` (in characters) of `source`; its end if past it.
fn source_offset(source: &str, line: usize, col: usize) -> usize {
    let start: usize = source.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    let rest = source.get(start..).unwrap_or("");
    start.min(source.len()) + rest.char_indices().nth(col.saturating_sub(1)).map_or(rest.len(), |(i, _)| i)
}

/// One module from `cute` text to PTX: the stages `--emit=ptx` runs, timed into `times`. The IR is
/// verified when parsed and after our passes; upstream's passes are trusted.
pub(crate) fn module_to_ptx(
    session: &Session,
    text: &str,
    file_name: &str,
    arch: Arch,
    libdevice: Option<&Path>,
    ptx_version: Option<u32>,
    times: &mut KernelTimes,
) -> Result<String, CompileError> {
    let mut module = times.time("parse", || session.parse(text, file_name))?;
    times.time("cute passes", || {
        session.run_passes_unverified(&mut module, &cute_passes())?;
        session.verify(&module)
    })?;
    times.time("llvm passes", || {
        session.run_passes_unverified(&mut module, &[llvm_pipeline(arch, libdevice, ptx_version)])
    })?;
    let mut module = tma_params_by_value(session, module, file_name)?;
    times.time("llvm to ptx", || session.run_passes_unverified(&mut module, &[PTX_PIPELINE.to_string()]))?;
    ptx_of(&module)
}

/// Kernels with TMA tensor maps (`cute.tma_params`): their generic `!llvm.ptr` parameters (the
/// tensor maps; tensors are `!llvm.ptr<1>`, every other parameter a scalar) become `byval` 128-byte
/// arrays aligned to 64 with `nvvm.grid_constant`, so NVPTX declares them `.param .align 64 .b8
/// NAME[128]` and takes their generic address with `cvta.param` instead of copying them to local
/// memory. Done on the `llvm.func` (the NVVM dialect accepts the attribute on kernel functions only,
/// and `convert-gpu-to-nvvm` drops `llvm.byval` from `gpu.func` arguments), by a textual round
/// trip of the function's header line, only for modules that have such a kernel. The module is
/// printed with its locations: without them the re-parsed module has none, and NVPTX writes no
/// `.loc` for any of its kernels (no line info for ptxas `-lineinfo`, and a module of TMA and
/// other kernels whose per-kernel parts no longer join, `ptx_join`).
fn tma_params_by_value<'c>(
    session: &'c Session,
    module: Module<'c>,
    file_name: &str,
) -> Result<Module<'c>, CompileError> {
    // Printing the module to look for the attribute would cost a few percent of a build.
    let tma_kernel = |op| ir::op_name(op) == "llvm.func" && ir::int_attr(op, "cute.tma_params").is_some();
    if !ir::nested_ops(module.as_operation().to_raw()).into_iter().any(tma_kernel) {
        return Ok(module);
    }
    let flags = melior::ir::operation::OperationPrintingFlags::new().enable_debug_info(true, false);
    let text = module.as_operation().to_string_with_flags(flags).map_err(|e| CompileError::Internal(e.to_string()))?;
    const BYVAL: &str = ": !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}";
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.lines() {
        if line.contains("llvm.func @") && line.contains("cute.tma_params") {
            // A parameter prints as `%argN: !llvm.ptr loc(...)`: the attributes go before its location.
            out.push_str(&line.replace(": !llvm.ptr loc(", &format!("{BYVAL} loc(")));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    session.parse(&out, file_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(o: Output) -> String {
        match o {
            Output::Text(t) => t,
            Output::Binary(_) => panic!("expected text"),
        }
    }

    /// ptxas' asm errors are mapped to the call by line and column, columns counting characters.
    #[test]
    fn source_offsets_count_characters() {
        let s = "ab\nx\u{e9} asm\n";
        assert_eq!(source_offset(s, 2, 4), s.find("asm").unwrap());
        assert_eq!(source_offset(s, 1, 1), 0);
        assert_eq!(source_offset(s, 9, 1), s.len());
    }

    /// A pass that panics fails the pass manager with the panic, naming the pass, instead of
    /// aborting the process (a panic cannot unwind through MLIR's C++ frames).
    #[test]
    fn a_panicking_pass_is_an_internal_error() {
        static ID: passes::PassId = passes::PassId(0);
        let session = Session::new().unwrap();
        let mut module = session.parse("module {}", "empty.mlir").unwrap();
        let pm = PassManager::new(&session.context);
        pm.add_pass(passes::external(&ID, "test-panic", "panics", |_| panic!("the test's panic")));
        match pm.run(&mut module).map_err(|_| session.pass_failure()) {
            Err(CompileError::PassPanic(p)) => {
                assert_eq!((p.pass, p.message.as_str()), ("test-panic", "the test's panic"));
            }
            other => panic!("expected the pass's panic, got {:?}", other.err()),
        }
        // Nothing is left over for the next run.
        assert!(session.take_diagnostics().is_empty() && passes::take_panic().is_none());
        session.run_passes(&mut module, &[passes::canonicalize::NAME.to_string()]).unwrap();
    }

    /// Every sample's `--emit=cute` output re-parses, holds no foldable op once canonicalized, and
    /// lowers to exactly the `gpu` stage that compiling the source directly gives.
    #[test]
    fn every_sample_round_trips_through_cute_ir() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples");
        let mut samples: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "cute"))
            .collect();
        samples.sort();
        assert!(samples.len() >= 17, "samples not found in {dir}");
        for path in samples {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let source = std::fs::read_to_string(&path).unwrap();
            let options =
                Options { arch: source_arch(&source).unwrap_or_else(|e| panic!("{name}: {e}")), ..Options::default() };
            let build = |stage| {
                let mut sources = cute_lang::imports::DiskLoader::root(&path).unwrap();
                let loader = &mut cute_lang::imports::DiskLoader::default();
                text(
                    compile_files(&mut sources, loader, stage, &options)
                        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
                        .output,
                )
            };
            let (cute, direct) = (build(Stage::Cute), build(Stage::Gpu));
            let session = Session::new().unwrap();
            let mut module =
                session.parse(&cute, &name).unwrap_or_else(|e| panic!("{name}: --emit=cute does not re-parse: {e:?}"));
            session.run_passes(&mut module, &[passes::canonicalize::NAME.to_string()]).unwrap();
            let folded = format!("{}", module.as_operation());
            for op in [
                "cute.local_tile",
                "cute.slice",
                "cute.composition",
                "cute.partition_s",
                "cute.partition_d",
                "cute.partition_a",
                "cute.partition_b",
                "cute.partition_c",
                "cute.load_at",
                "cute.store_at",
                "cute.make_layout",
            ] {
                assert!(!folded.contains(&format!("\"{op}\"")), "{name}: `{op}` left after cute-canonicalize");
            }
            session.run_passes(&mut module, &cute_passes()[1..]).unwrap();
            assert_eq!(format!("{}\n", module.as_operation()), direct, "{name}: the re-parsed IR lowers differently");
        }
    }
}
