//! Finding and running ptxas, the PTX → cubin assembler.
//!
//! Search order: an explicit path (`--ptxas`), `CUTEC_PTXAS`, the project-local install made by
//! `scripts/setup.sh` (`.tools/python/nvidia/cu13/bin/ptxas`, looked for beside the cutec executable's
//! ancestors and the source tree it was built from), then `PATH`.

use cute_abi::Arch;
use std::path::{Path, PathBuf};
use std::process::Command;

const LOCAL: &str = ".tools/python/nvidia/cu13/bin/ptxas";

#[derive(Debug)]
pub enum PtxasError {
    NotFound { looked: Vec<String> },
    Failed { path: PathBuf, message: String },
}

impl std::fmt::Display for PtxasError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PtxasError::NotFound { looked } => write!(
                f,
                "ptxas not found (looked at: {}).\n  help: run `bash scripts/setup.sh` in the cutec checkout, or `python3 -m pip install --target .tools/python --no-deps nvidia-cuda-nvcc==13.0.88`; or point `--ptxas PATH` / the `CUTEC_PTXAS` variable at a ptxas from CUDA 12.4 or newer",
                looked.join(", ")
            ),
            PtxasError::Failed { path, message } => write!(f, "ptxas ({}) failed:\n{message}", path.display()),
        }
    }
}

/// Where a project-local install of `relative` may be: above the cutec executable, or in the source
/// tree cutec was built from.
fn local_candidates(relative: &str) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(Path::to_path_buf));
    }
    roots.push(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")));
    roots.into_iter().map(|r| r.join(relative)).collect()
}

const LIBDEVICE: &str = ".tools/python/nvidia/cu13/nvvm/libdevice/libdevice.10.bc";

/// libdevice, NVIDIA's bitcode library of math functions: `$CUTEC_LIBDEVICE`, then the
/// project-local install made by `scripts/setup.sh`.
pub fn find_libdevice() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CUTEC_LIBDEVICE") {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("CUTEC_LIBDEVICE={} is not a file", p.display())) };
    }
    local_candidates(LIBDEVICE).into_iter().find(|c| c.is_file()).ok_or_else(|| {
        format!("libdevice not found (looked for <checkout>/{LIBDEVICE}); math functions need it.\n  help: run `bash scripts/setup.sh`, or `python3 -m pip install --target .tools/python --no-deps nvidia-nvvm==13.0.88`, or set CUTEC_LIBDEVICE")
    })
}

pub fn find(explicit: Option<&Path>) -> Result<PathBuf, PtxasError> {
    let mut looked = Vec::new();
    if let Some(p) = explicit {
        if p.is_file() {
            return Ok(p.to_path_buf());
        }
        looked.push(format!("--ptxas {}", p.display()));
        return Err(PtxasError::NotFound { looked });
    }
    if let Some(p) = std::env::var_os("CUTEC_PTXAS") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        looked.push(format!("CUTEC_PTXAS={}", p.display()));
        return Err(PtxasError::NotFound { looked });
    }
    for c in local_candidates(LOCAL) {
        if c.is_file() {
            return Ok(c);
        }
    }
    looked.push(format!("<checkout>/{LOCAL}"));
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let c = dir.join("ptxas");
            if c.is_file() {
                return Ok(c);
            }
        }
    }
    looked.push("PATH".into());
    Err(PtxasError::NotFound { looked })
}

/// Assembles PTX into a cubin for `arch` (e.g. `sm_90a`), keeping line info for profilers.
pub fn assemble(ptxas: &Path, ptx: &str, arch: Arch) -> Result<Vec<u8>, PtxasError> {
    let failed = |message: String| PtxasError::Failed { path: ptxas.to_path_buf(), message };
    let dir = std::env::temp_dir().join(format!("cutec-{}-{}", std::process::id(), unique()));
    std::fs::create_dir_all(&dir).map_err(|e| failed(format!("cannot create {}: {e}", dir.display())))?;
    let input = dir.join("kernel.ptx");
    let output = dir.join("kernel.cubin");
    let result = (|| {
        std::fs::write(&input, ptx).map_err(|e| failed(format!("cannot write {}: {e}", input.display())))?;
        let out = Command::new(ptxas)
            .arg(format!("-arch={}", arch.name()))
            // ptxas optimizes the kernels of a module on as many threads as there are CPUs.
            .args(["-O3", "-lineinfo", "--split-compile", "0", "-o"])
            .arg(&output)
            .arg(&input)
            .output()
            .map_err(|e| failed(format!("cannot run: {e}")))?;
        if !out.status.success() {
            return Err(failed(String::from_utf8_lossy(&out.stderr).into_owned()));
        }
        std::fs::read(&output).map_err(|e| failed(format!("cannot read {}: {e}", output.display())))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
