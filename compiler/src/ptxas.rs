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

/// A performance note of a successful ptxas run on one kernel: ptxas tells, without failing, where
/// it serialized a kernel's wgmmas or inserted waits they need (its codes C7508-C7520, "Potential
/// Performance Loss", "warpgroup.wait is injected"). The kernel is correct, but its tensor-core
/// pipeline waits on itself.
#[derive(Debug, PartialEq)]
pub struct PerformanceNote {
    /// The cubin symbol of the kernel ptxas names.
    pub kernel: String,
    /// ptxas' code, e.g. `C7514`.
    pub code: String,
    /// What ptxas said after the code, without the kernel's name.
    pub message: String,
}

/// The performance notes in ptxas' `stderr` (lines `ptxas info : (C75NN) ... function 'NAME'`), once
/// each; but C7519, a `wgmma.fence` ptxas adds where a wgmma's registers come from two paths (a
/// wgmma issued on some trips only, samples/flash_attention_sm90.cute's P·V): one fence, no
/// serialization.
pub fn performance_notes(stderr: &str) -> Vec<PerformanceNote> {
    let mut notes: Vec<PerformanceNote> = Vec::new();
    for line in stderr.lines() {
        let Some(at) = line.find("(C75") else { continue };
        let rest = &line[at + 1..];
        let Some((code, text)) = rest.split_once(')') else { continue };
        if code == "C7519" {
            continue;
        }
        let Some(quoted) = text.rfind('\'') else { continue };
        let Some(open) = text[..quoted].rfind('\'') else { continue };
        let kernel = text[open + 1..quoted].to_string();
        let message = text[..open]
            .trim()
            .trim_end_matches("in the function")
            .trim_end_matches("for the function")
            .trim_end_matches("in function")
            .trim();
        let message =
            message.trim_start_matches("Potential Performance Loss:").split_whitespace().collect::<Vec<_>>().join(" ");
        // ptxas' line numbers are the PTX's.
        let message = message.replace("in around line", "around PTX line").replace(" by compiler", "");
        let note = PerformanceNote { kernel, code: code.to_string(), message };
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    notes
}

/// Assembles PTX into a cubin for `arch` (e.g. `sm_90a`), keeping line info for profilers; with
/// the performance notes ptxas printed ([`performance_notes`]).
pub fn assemble(ptxas: &Path, ptx: &str, arch: Arch) -> Result<(Vec<u8>, Vec<PerformanceNote>), PtxasError> {
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
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            return Err(failed(stderr));
        }
        let cubin = std::fs::read(&output).map_err(|e| failed(format!("cannot read {}: {e}", output.display())))?;
        Ok((cubin, performance_notes(&stderr)))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The comment code generation puts first in each `asm` block's PTX: `// cute-asm LINE:COL`, the
/// `.cute` line and column of the call, for [`asm_errors`]; `// cute-asm FILE:LINE:COL` for a call
/// in an imported file (the root file's calls keep the short form).
pub const ASM_MARKER: &str = "// cute-asm ";

/// One ptxas error inside the PTX of an `asm` call: the call's file (`None`: the root file),
/// 1-based line and column, and what ptxas said.
#[derive(Debug, PartialEq)]
pub struct AsmError {
    pub file: Option<String>,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

/// The errors of ptxas' `stderr` (`ptxas FILE, line N; error   : MESSAGE`) whose PTX line `N` falls
/// in an inline-asm block of `ptx` that cutec marked ([`ASM_MARKER`]), mapped to the `asm` call.
/// Empty when none does (the error is then the compiler's, not the program's PTX).
pub fn asm_errors(ptx: &str, stderr: &str) -> Vec<AsmError> {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut out = Vec::new();
    for e in stderr.lines() {
        let Some((_, rest)) = e.split_once(", line ") else { continue };
        let Some((n, message)) = rest.split_once("; error") else { continue };
        let Ok(n) = n.trim().parse::<usize>() else { continue };
        let message = message.trim_start().trim_start_matches(':').trim().to_string();
        // Back from the error's line to the start of its asm block: the marker is the block's
        // first line. An `// end inline asm` first means the line is outside every block.
        let block = lines[..n.min(lines.len())].iter().rev().find_map(|l| match l.trim() {
            t if t.starts_with(ASM_MARKER) => Some(Some(&t[ASM_MARKER.len()..])),
            "// end inline asm" => Some(None),
            _ => None,
        });
        let Some(Some((at, col))) = block.map(|b| b.and_then(|at| at.rsplit_once(':'))) else { continue };
        let (file, line) = match at.rsplit_once(':') {
            Some((file, line)) => (Some(file.to_string()), line),
            None => (None, at),
        };
        if let (Ok(line), Ok(col)) = (line.trim().parse(), col.trim().parse()) {
            out.push(AsmError { file, line, col, message });
        }
    }
    out
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error on a line of a marked asm block names the call; one outside every block does not.
    #[test]
    fn asm_errors_name_the_call() {
        let ptx = "\t.loc 1 5 13\n\t// begin inline asm\n\t// cute-asm 5:13\n\tlop9.b32 %r4, %r1;\n\t// end inline asm\n\tadd.s32 %r1, %r2, %r3;\n";
        let stderr = "ptxas /tmp/k.ptx, line 4; error   : Not a name of any known instruction: 'lop9'\n\
                      ptxas /tmp/k.ptx, line 6; error   : Unknown symbol '%r9'\n\
                      ptxas fatal   : Ptx assembly aborted due to errors\n";
        let got = asm_errors(ptx, stderr);
        let message = "Not a name of any known instruction: 'lop9'".to_string();
        assert_eq!(got, [AsmError { file: None, line: 5, col: 13, message: message.clone() }]);
        assert!(asm_errors(ptx, "ptxas /tmp/k.ptx, line 99; error   : x\n").is_empty());
        // A call in an imported file names it (a name may hold a `:`).
        let imported = ptx.replace("cute-asm 5:13", "cute-asm lib/a:b.cute:5:13");
        let want = AsmError { file: Some("lib/a:b.cute".into()), line: 5, col: 13, message };
        assert_eq!(asm_errors(&imported, stderr), [want]);
    }

    /// ptxas' performance notes (as ptxas 13 prints them) name their kernel and code, once each;
    /// other info lines are not notes.
    #[test]
    fn performance_notes_name_the_kernel() {
        let stderr = "ptxas info    : (C7517) warpgroup.wait is injected in around line 90 by compiler to allow use of registers defined by GMMA in function 'k_1'\n\
                      ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function 'k_1'\n\
                      ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function 'k_1'\n\
                      ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the function 'k'\n\
                      ptxas info    : (C7519) warpgroup.arrive is injected in around line 910 by compiler to allow use of registers in GMMA in function 'k_2'\n\
                      ptxas info    : Used 168 registers, used 1 barriers\n";
        let got = performance_notes(stderr);
        let codes: Vec<(&str, &str)> = got.iter().map(|n| (n.kernel.as_str(), n.code.as_str())).collect();
        assert_eq!(codes, [("k_1", "C7517"), ("k_1", "C7514"), ("k", "C7512")]);
        assert_eq!(
            got[0].message,
            "warpgroup.wait is injected around PTX line 90 to allow use of registers defined by GMMA"
        );
        assert_eq!(
            got[2].message,
            "wgmma.mma_async instructions are serialized due to insufficient register resources"
        );
        assert!(performance_notes("ptxas info    : Used 40 registers\n").is_empty());
    }
}
