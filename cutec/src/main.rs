//! `cutec`: the command-line driver. Argument parsing, file I/O and printing only; the work is in
//! the `cute-lang`, `cute-layout`, `cute-compiler` and `cute-lsp` crates.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use cute_abi::Arch;
use cute_compiler::{compile_files, Asserts, CompileError, Options, Output, Session, Stage};
use cute_lang::sources::Sources;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod glibc_compat;
mod tune_cli;

#[derive(Parser)]
#[command(name = "cutec", version, about = "Ahead-of-time compiler for .cute GPU kernels (CuTe layout algebra)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--emit` names are the pipeline's own stage names.
fn parse_stage(name: &str) -> Result<Stage, String> {
    Stage::ALL.into_iter().find(|s| s.name() == name).ok_or_else(|| {
        let names: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
        format!("unknown stage `{name}`; the stages are {}", names.join(", "))
    })
}

/// `--arch` takes the names of [`Arch::ALL`] and nothing else: clap lists them in `--help` and
/// refuses another name with the list, as a usage error (cute-abi stays free of clap).
fn arch_parser() -> impl TypedValueParser<Value = Arch> {
    PossibleValuesParser::new(Arch::ALL.map(Arch::name))
        .map(|name| Arch::from_name(&name).expect("clap accepts only the names of Arch::ALL"))
}

/// `--release-asserts` takes `on` or `off`.
fn asserts_parser() -> impl TypedValueParser<Value = Asserts> {
    PossibleValuesParser::new(["on", "off"]).map(|v| if v == "off" { Asserts::Off } else { Asserts::On })
}

/// `--compile-budget`: how much compile-time work (unrolled loop trips, statements, inlined calls,
/// kernel instances, instructions emitted) a file may ask for before elaboration stops with an error.
#[derive(clap::Args)]
struct BudgetArg {
    /// The most steps of compile-time work (statements elaborated, unrolled loop trips, inlined
    /// calls, kernel instances, instructions emitted by what they cost the back ends) a file may take.
    #[arg(long = "compile-budget", value_name = "STEPS", default_value_t = cute_lang::DEFAULT_BUDGET)]
    limit: u64,
}

impl BudgetArg {
    fn budget(&self) -> cute_lang::Budget {
        cute_lang::Budget::with_limit(self.limit)
    }
}

/// `-I DIR`: where `import "PATH";` looks after the importing file's directory.
#[derive(clap::Args)]
struct ImportArgs {
    /// A directory to find imported files in, after the importing file's own (repeatable, in order).
    #[arg(short = 'I', value_name = "DIR")]
    search_dirs: Vec<PathBuf>,
}

impl ImportArgs {
    fn loader(&self) -> cute_lang::imports::DiskLoader {
        cute_lang::imports::DiskLoader { search_dirs: self.search_dirs.clone() }
    }
}

/// A Makefile rule: `target` depends on every file of the program (spaces escaped).
fn deps_rule(target: &str, sources: &Sources) -> String {
    let escape = |p: &str| p.replace(' ', "\\ ");
    let deps: Vec<String> = sources.files().iter().map(|f| escape(&f.name)).collect();
    format!("{}: {}\n", escape(target), deps.join(" \\\n  "))
}

#[derive(Subcommand)]
enum Command {
    /// Compile a .cute file to a cubin (or print an intermediate stage with --emit).
    Build {
        file: PathBuf,
        /// Output file; `-` or absent prints text stages to stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The stage to produce: ast, cute, gpu, llvm, ptx or cubin.
        #[arg(long, value_parser = parse_stage, default_value = "cubin")]
        emit: Stage,
        /// The target: sm_90 (Hopper and later), sm_90a (adds wgmma and setmaxnreg; Hopper only) or sm_80 (Ampere).
        #[arg(long, value_parser = arch_parser(), default_value_t = Arch::default())]
        arch: Arch,
        /// Path to ptxas (default: $CUTEC_PTXAS, the project-local install, then PATH).
        #[arg(long)]
        ptxas: Option<PathBuf>,
        /// Print each stage's wall-clock time to stderr.
        #[arg(long)]
        timings: bool,
        /// Kernels' run-time `assert`s: `on` checks them (a failed one prints where and traps),
        /// `off` leaves them out, conditions included (as NDEBUG does); static asserts are checked either way.
        #[arg(long = "release-asserts", value_name = "on|off", value_parser = asserts_parser(), default_value = "on")]
        asserts: Asserts,
        /// Replace a top-level `const`'s value before compiling: `-D BM=128` (repeatable; the value is
        /// a `.cute` expression on one line).
        #[arg(short = 'D', long = "const", value_name = "NAME=VALUE")]
        consts: Vec<cute_lang::overrides::ConstOverride>,
        /// A tuning table written by `cutec tune` (`HOST M,N | NAME=VALUE; ...` lines): each tuned
        /// host function dispatches on the shape to its winners.
        #[arg(long, value_name = "FILE")]
        tuning: Option<PathBuf>,
        #[command(flatten)]
        imports: ImportArgs,
        /// Write the files the build read (the source and every file it imports) to FILE, as a
        /// Makefile rule `OUTPUT: SOURCE IMPORTS...`.
        #[arg(long = "deps-file", value_name = "FILE")]
        deps_file: Option<PathBuf>,
        #[command(flatten)]
        budget: BudgetArg,
    },
    /// Time the candidates of the file's `tune` blocks on the GPU and build a cubin whose host
    /// functions dispatch on the shape to the winners (docs/python.md, "Tuning"). The timing runs
    /// in Python with the `cutec` package and torch (`python -m cutec tune`, the same arguments).
    Tune(tune_cli::TuneArgs),
    /// Parse and type-check .cute files without generating code.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        imports: ImportArgs,
        #[command(flatten)]
        budget: BudgetArg,
    },
    /// Run passes on textual MLIR, like mlir-opt: ours by name, or any upstream pipeline element.
    Opt {
        file: PathBuf,
        /// A pass to run (repeatable, in order), e.g. `cute-lower-to-gpu` or `canonicalize`.
        #[arg(long = "pass")]
        passes: Vec<String>,
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// List our passes and exit.
        #[arg(long)]
        list_passes: bool,
    },
    /// Run the language server on stdin/stdout, for editors: diagnostics, hover with layouts, go to
    /// definition, completion (docs/editor.md).
    Lsp {
        #[command(flatten)]
        budget: BudgetArg,
    },
    /// The layout algebra: `eval EXPR`, `eval -` (one expression a line), `show EXPR [--svg FILE]`.
    #[command(disable_help_flag = true)]
    Layout {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// Colour only when a person is reading: a pipe or file gets plain text.
fn stderr_stream() -> StandardStream {
    use std::io::IsTerminal;
    StandardStream::stderr(if std::io::stderr().is_terminal() { ColorChoice::Auto } else { ColorChoice::Never })
}

fn read_source(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("error: cannot read `{}`: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "error: `{}` is not valid UTF-8 (invalid byte at offset {})\n  help: .cute sources must be UTF-8 text",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

fn write_output(path: Option<&Path>, output: &Output) -> Result<(), String> {
    let bytes: &[u8] = match output {
        Output::Text(t) => t.as_bytes(),
        Output::Binary(b) => b,
    };
    match path {
        Some(p) if p != Path::new("-") => {
            std::fs::write(p, bytes).map_err(|e| format!("error: cannot write `{}`: {e}", p.display()))
        }
        _ => {
            if matches!(output, Output::Binary(_)) {
                return Err("error: refusing to write a cubin to the terminal\n  help: pass `-o FILE`".into());
            }
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|_| out.flush()).map_err(|e| format!("error: cannot write to stdout: {e}"))
        }
    }
}

/// Why `cutec` stops: the message for stderr (empty when already printed) and the exit status.
struct Failure {
    message: String,
    status: u8,
}

/// The exit status of an internal compiler error, as a panic anywhere else in `cutec` gives.
const INTERNAL_ERROR_STATUS: u8 = 101;

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure { message, status: 1 }
    }
}

/// `source_file` names the `.cute` file being built, for the help on reproducing a pass's panic
/// from its IR; `None` where the input is already IR (`cutec opt`).
fn report(err: CompileError, sources: &Sources, source_file: Option<&Path>) -> Failure {
    match err {
        CompileError::Source(diags) => {
            sources.emit(&mut stderr_stream(), &diags);
            String::new().into()
        }
        CompileError::Mlir(lines) => lines.join("\n").into(),
        CompileError::Ptxas(e) => format!("error: {e}").into(),
        CompileError::Internal(m) => format!("error: {m}").into(),
        CompileError::PassPanic(p) => {
            let mut message = format!("error: internal compiler error in the pass `{}`: {}", p.pass, p.message);
            if let Some(file) = source_file {
                let ir = file.with_extension("mlir");
                let passes = cute_compiler::pipeline::cute_passes();
                let upto = passes.iter().position(|n| n == p.pass).map_or(0, |i| i + 1);
                let opt: String = passes[..upto].iter().map(|n| format!(" --pass {n}")).collect();
                message.push_str(&format!(
                    "\n  help: to reproduce it on the IR: `cutec build --emit=cute {} -o {}`, then `cutec opt {}{opt}`",
                    file.display(),
                    ir.display(),
                    ir.display()
                ));
            }
            Failure { message, status: INTERNAL_ERROR_STATUS }
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Build {
            file,
            output,
            emit,
            arch,
            ptxas,
            timings,
            asserts,
            consts,
            tuning,
            imports,
            deps_file,
            budget,
        } => {
            let name = file.display().to_string();
            let mut disk = imports.loader();
            let mut loader = cute_lang::overrides::Overriding::new(&mut disk, &consts)
                .map_err(|e| format!("error: {}: {e}", file.display()))?;
            let mut sources = Sources::new(&name, loader.root(&name, &read_source(&file)?));
            let tuning = tuning.as_deref().map(tune_cli::read_table).transpose()?;
            let options = Options { arch, ptxas, budget: budget.budget(), asserts, tuning };
            let stage = emit;
            if stage == Stage::Cubin && output.as_deref().is_none_or(|p| p == Path::new("-")) {
                return Err(
                    String::from("error: `--emit=cubin` needs an output file\n  help: pass `-o FILE.cubin`").into()
                );
            }
            let compiled = compile_files(&mut sources, &mut loader, stage, &options)
                .map_err(|e| report(e, &sources, Some(&file)))?;
            loader.finish().map_err(|e| format!("error: {}: {e}", file.display()))?;
            // Compile-time `print` output goes to stderr, so stdout holds only the emitted stage.
            for line in &compiled.prints {
                eprintln!("{line}");
            }
            sources.emit_warnings(&mut stderr_stream(), &compiled.warnings);
            if timings {
                eprint!("{}", compiled.timings.report());
            }
            if let Some(deps) = deps_file {
                let target = output.as_deref().map_or_else(|| "-".into(), |p| p.display().to_string());
                std::fs::write(&deps, deps_rule(&target, &sources))
                    .map_err(|e| format!("error: cannot write `{}`: {e}", deps.display()))?;
            }
            Ok(write_output(output.as_deref(), &compiled.output)?)
        }
        Command::Check { files, imports, budget } => {
            let mut failed = false;
            for file in files {
                let source = match read_source(&file) {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("{e}");
                        failed = true;
                        continue;
                    }
                };
                let mut sources = Sources::new(file.display().to_string(), source);
                match cute_lang::front_end_files(&mut sources, &mut imports.loader(), budget.budget()) {
                    Ok((_, m)) => {
                        m.prints.iter().for_each(|p| println!("{p}"));
                        sources.emit_warnings(&mut stderr_stream(), &m.warnings);
                    }
                    Err(diags) => {
                        sources.emit(&mut stderr_stream(), &diags);
                        failed = true;
                    }
                }
            }
            if failed {
                Err(String::new().into())
            } else {
                Ok(())
            }
        }
        Command::Opt { file, passes, output, list_passes } => {
            if list_passes {
                for p in cute_compiler::passes::PASSES {
                    println!("{:<24} {}", p.name, p.summary);
                }
                return Ok(());
            }
            let source = read_source(&file)?;
            let name = file.display().to_string();
            let sources = Sources::new(&name, source.as_str());
            let session = Session::new().map_err(|e| report(e, &sources, None))?;
            let mut module = session.parse(&source, &name).map_err(|e| report(e, &sources, None))?;
            session.run_passes(&mut module, &passes).map_err(|e| report(e, &sources, None))?;
            use cute_compiler::pipeline::Module;
            let text = format!("{}\n", Module::as_operation(&module));
            Ok(write_output(output.as_deref(), &Output::Text(text))?)
        }
        Command::Tune(args) => {
            let source = read_source(&args.file)?;
            let name = args.file.display().to_string();
            let sources = Sources::new(&name, source.as_str());
            let file = cute_lang::parse(&source).map_err(|d| report(CompileError::Source(vec![d]), &sources, None))?;
            let specs =
                cute_lang::tune::specs(&file, &source).map_err(|d| report(CompileError::Source(d), &sources, None))?;
            Ok(tune_cli::run(&args, &source, &specs)?)
        }
        Command::Lsp { budget } => Ok(cute_lsp::run_stdio(budget.limit).map_err(|e| format!("error: {e}"))?),
        Command::Layout { args } => {
            let stdin = std::io::stdin();
            let mut input = stdin.lock();
            let mut out = std::io::stdout().lock();
            let mut err = std::io::stderr().lock();
            match cute_layout::cli::run(&args, &mut input, &mut out, &mut err) {
                0 => Ok(()),
                _ => Err(String::new().into()),
            }
        }
    }
}

fn main() -> ExitCode {
    cute_abi::process::die_quietly_on_closed_pipe();
    let cli = Cli::parse();
    // Errors are values everywhere; this only turns a bug into a clear message instead of a crash.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal compiler error: {info}\n  help: this is a bug in cutec; please report it with the input that caused it");
    }));
    // The front end walks the program recursively; a generous stack (as rustc gives itself) keeps
    // the deepest programs the parser accepts (lang::parse::MAX_DEPTH) far from its end.
    let worker = std::thread::Builder::new().stack_size(64 << 20).spawn(move || std::panic::catch_unwind(|| run(cli)));
    let outcome = match worker {
        Ok(handle) => handle.join().unwrap_or(Err(Box::new("the compiler thread failed"))),
        Err(e) => {
            eprintln!("error: cannot start the compiler thread: {e}");
            return ExitCode::FAILURE;
        }
    };
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(Failure { message, status })) => {
            if !message.is_empty() {
                eprintln!("{message}");
            }
            ExitCode::from(status)
        }
        Err(_) => ExitCode::from(INTERNAL_ERROR_STATUS),
    }
}
