//! `cutec tune`: checks the file's `tune` blocks and the shapes here, then hands the timing to
//! Python (`python -m cutec tune`, python/cutec/_tune.py), which has torch and the runtime and
//! calls back `cutec tune --spec` and `cutec build --tuning`. The compiler itself needs no GPU and
//! links no driver: a machine without one gets the Python side's clear error.

use std::path::{Path, PathBuf};

use cute_lang::tune::{Table, TuneSpec};

#[derive(clap::Args)]
pub struct TuneArgs {
    pub file: PathBuf,
    /// The shapes to time, one per bucket: `1024x4096` (as many extents as the block's variables).
    #[arg(long, num_args = 1.., value_name = "MxN")]
    shapes: Vec<String>,
    /// The tuned cubin.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Tune this host function only (default: every `tune` block).
    #[arg(long)]
    host: Option<String>,
    /// The target (default: the GPU's).
    #[arg(long)]
    arch: Option<String>,
    /// Also write the report (shape x candidate -> time) to this file (JSON).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Timed calls per candidate and shape (the median is kept).
    #[arg(long, default_value_t = 50)]
    iters: u32,
    /// Print the `tune` blocks as JSON and exit (what the Python side reads).
    #[arg(long)]
    spec: bool,
}

/// `--tuning FILE` read and parsed.
pub fn read_table(path: &Path) -> Result<Table, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("error: cannot read the tuning table `{}`: {e}", path.display()))?;
    Table::parse(&text).map_err(|e| format!("error: {}: {e}", path.display()))
}

fn parse_shape(s: &str) -> Option<Vec<i64>> {
    s.split('x').map(|x| x.parse::<i64>().ok().filter(|v| *v > 0)).collect()
}

pub fn run(args: &TuneArgs, source: &str, specs: &[TuneSpec]) -> Result<(), String> {
    let file = args.file.display();
    if specs.is_empty() {
        return Err(format!(
            "error: {file} has no `tune` block\n  help: add `tune HOST(M, N) {{ const NAME in [V1, V2]; args(...); }}` (docs/language.md, \"Tuning\")"
        ));
    }
    let chosen: Vec<&TuneSpec> =
        specs.iter().filter(|s| args.host.as_ref().is_none_or(|h| *h == s.host.name.name)).collect();
    if chosen.is_empty() {
        let names: Vec<&str> = specs.iter().map(|s| s.host.name.name.as_str()).collect();
        return Err(format!(
            "error: --host {}: {file} has no `tune` block for it (it tunes {})",
            args.host.as_deref().unwrap_or(""),
            names.join(", ")
        ));
    }
    if args.spec {
        let json: Vec<String> = chosen.iter().map(|s| s.to_json(source)).collect();
        println!("[{}]", json.join(", "));
        return Ok(());
    }
    if args.shapes.is_empty() || args.output.is_none() {
        return Err("error: `cutec tune` needs `--shapes MxN ...` and `-o FILE.cubin`".into());
    }
    for shape in &args.shapes {
        let Some(extents) = parse_shape(shape) else {
            return Err(format!(
                "error: --shapes: `{shape}` is not a shape (positive extents joined by `x`: `1024x4096`)"
            ));
        };
        for s in &chosen {
            let vars = &s.block.vars;
            if extents.len() != vars.len() {
                let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
                return Err(format!(
                    "error: --shapes: `{shape}` has {} extents; `tune {}({})` takes {}",
                    extents.len(),
                    s.host.name.name,
                    names.join(", "),
                    vars.len()
                ));
            }
        }
    }
    timing_in_python()
}

/// Runs `python -m cutec tune` with this process's arguments and this binary as the compiler.
fn timing_in_python() -> Result<(), String> {
    let python = std::env::var("CUTEC_PYTHON").unwrap_or_else(|_| "python3".into());
    let exe = std::env::current_exe().map_err(|e| format!("error: cannot find the cutec binary: {e}"))?;
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let probe = std::process::Command::new(&python).args(["-c", "import cutec._tune"]).output();
    if let Ok(out) = &probe {
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "error: `cutec tune` times the candidates on the GPU with the `cutec` Python package and torch, \
                 which `{python}` cannot import: {}\n  help: `pip install cutec torch` (or set CUTEC_PYTHON to a Python that has them)",
                why.trim().lines().last().unwrap_or("")
            ));
        }
    }
    let status = std::process::Command::new(&python)
        .args(["-m", "cutec"])
        .args(&argv)
        .env("CUTEC", exe)
        .status()
        .map_err(|e| {
            format!(
                "error: `cutec tune` times the candidates on the GPU with the `cutec` Python package and torch, \
                 but `{python}` cannot be run: {e}\n  help: install Python with `pip install cutec torch`, or set CUTEC_PYTHON"
            )
        })?;
    match status.code() {
        Some(0) => Ok(()),
        _ => Err(String::new()),
    }
}
