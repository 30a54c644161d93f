//! `cutec-build`: compile `.cute` kernels from a `build.rs`, like the `cc`
//! crate does for C, and embed the cubins in the Rust binary.
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     cutec_build::Build::new()
//!         .file("kernels/vector_add.cute")
//!         .arch(cutec_build::Arch::Sm90) // or .arch("sm_90")
//!         .compile("kernels"); // writes $OUT_DIR/kernels.rs
//! }
//! ```
//!
//! ```text
//! // src/main.rs (compiled for real in examples/rust-build)
//! mod kernels {
//!     include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
//! }
//! let module = cute_runtime::Module::load(&dev, kernels::VECTOR_ADD)?; // &[u8] cubin
//! ```
//!
//! For each file `NAME.cute` the generated module has `pub const NAME_UPPER:
//! &[u8]` (the cubin, via `include_bytes!`) and `pub const NAME_UPPER_PATH:
//! &str` (where it was written), plus `pub const ALL: &[(&str, &[u8])]`.
//! Each file is also recorded with `cargo:rerun-if-changed`, as are the
//! `CUTEC` and `CUTEC_ARCH` variables.
//!
//! Finding `cutec`: [`Build::cutec`], else `$CUTEC`, else `cutec` on `PATH`,
//! else `target/{release,debug}/cutec` of the cutec workspace this crate was
//! built from (a path fixed at compile time, for in-tree use). A missing
//! `cutec` or a compile error fails the build with cutec's own diagnostics.

// The doc example is a build script: its `fn main` is the point of showing it.
#![allow(clippy::needless_doctest_main)]

pub use cute_abi::Arch;
use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A set of `.cute` files to compile.
#[derive(Clone, Debug, Default)]
pub struct Build {
    files: Vec<PathBuf>,
    /// The target given to [`Build::arch`], or why it is none (an unknown name, reported by
    /// [`Build::try_compile`]).
    arch: Option<Result<Arch, String>>,
    cutec: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    headers: bool,
}

/// Why a build failed (also printed by [`Build::compile`], which panics with it).
#[derive(Debug)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Error {}

/// The Rust constant name for a `.cute` file: `vector_add.cute` → `VECTOR_ADD`.
pub fn const_name(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("kernel");
    let mut s: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

impl Build {
    /// An empty build.
    pub fn new() -> Build {
        Build::default()
    }
    /// Adds a `.cute` file (relative to the package root, as in `cc`).
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.files.push(path.as_ref().to_path_buf());
        self
    }
    /// Adds several files.
    pub fn files<P: AsRef<Path>>(&mut self, paths: impl IntoIterator<Item = P>) -> &mut Build {
        self.files.extend(paths.into_iter().map(|p| p.as_ref().to_path_buf()));
        self
    }
    /// The target: an [`Arch`] or its name (`"sm_90a"`); sm_90 by default, or `$CUTEC_ARCH`. An
    /// unknown name fails [`Build::try_compile`] with the list of targets.
    pub fn arch<A: TryInto<Arch, Error: std::fmt::Display>>(&mut self, arch: A) -> &mut Build {
        self.arch = Some(arch.try_into().map_err(|e| format!("cutec-build: {e}")));
        self
    }
    /// Uses this `cutec` executable.
    pub fn cutec(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.cutec = Some(path.as_ref().to_path_buf());
        self
    }
    /// Writes outputs here instead of `$OUT_DIR`.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }
    /// Also writes a typed C header `NAME.h` per file (`--emit=header`).
    pub fn headers(&mut self, yes: bool) -> &mut Build {
        self.headers = yes;
        self
    }

    /// Finds the cutec executable (see the crate docs for the order).
    pub fn find_cutec(&self) -> Result<PathBuf, Error> {
        if let Some(p) = &self.cutec {
            return Ok(p.clone());
        }
        if let Some(p) = env::var_os("CUTEC") {
            return Ok(PathBuf::from(p));
        }
        let exe = format!("cutec{}", env::consts::EXE_SUFFIX);
        if let Some(path) = env::var_os("PATH") {
            for dir in env::split_paths(&path) {
                let cand = dir.join(&exe);
                if cand.is_file() {
                    return Ok(cand);
                }
            }
        }
        // In-tree fallback: the workspace this crate lives in.
        let ws = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new("."));
        for profile in ["release", "debug"] {
            let cand = ws.join("target").join(profile).join(&exe);
            if cand.is_file() {
                return Ok(cand);
            }
        }
        Err(Error(
            "cutec-build: cannot find `cutec`: set CUTEC=/path/to/cutec, put it on PATH, \
             or build it (`cargo build -p cutec` in the cutec workspace)"
                .into(),
        ))
    }

    /// Compiles every file and writes `$OUT_DIR/{name}.rs`; returns its path.
    pub fn try_compile(&self, name: &str) -> Result<PathBuf, Error> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(
                env::var_os("OUT_DIR")
                    .ok_or_else(|| Error("cutec-build: OUT_DIR is not set (run from build.rs)".into()))?,
            ),
        };
        let cutec = self.find_cutec()?;
        println!("cargo:rerun-if-env-changed=CUTEC");
        println!("cargo:rerun-if-env-changed=CUTEC_ARCH");
        let arch = match (&self.arch, env::var("CUTEC_ARCH")) {
            (Some(given), _) => given.clone().map_err(Error)?,
            (None, Ok(name)) => name.parse().map_err(|e| Error(format!("cutec-build: CUTEC_ARCH: {e}")))?,
            (None, Err(_)) => Arch::default(),
        };
        let mut module = format!("// Generated by cutec-build ({}); do not edit.\n", cutec.display());
        let mut all = Vec::new();
        for file in &self.files {
            println!("cargo:rerun-if-changed={}", file.display());
            let cname = const_name(file);
            let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("kernel");
            let cubin = out_dir.join(format!("{stem}.cubin"));
            run(
                &cutec,
                &[file.as_os_str(), "--arch".as_ref(), arch.name().as_ref(), "-o".as_ref(), cubin.as_os_str()],
                file,
            )?;
            if self.headers {
                let h = out_dir.join(format!("{stem}.h"));
                run(&cutec, &[file.as_os_str(), "--emit=header".as_ref(), "-o".as_ref(), h.as_os_str()], file)?;
            }
            let _ = writeln!(module, "/// The cubin compiled from `{}` for {arch}.", file.display());
            // Generated items an application may not use must not warn in its build (as bindgen's).
            let _ = writeln!(
                module,
                "#[allow(dead_code)]\npub const {cname}: &[u8] = include_bytes!({:?});",
                cubin.display().to_string()
            );
            let _ = writeln!(module, "/// Where that cubin was written.");
            let _ = writeln!(
                module,
                "#[allow(dead_code)]\npub const {cname}_PATH: &str = {:?};",
                cubin.display().to_string()
            );
            all.push((stem.to_string(), cname));
        }
        let _ = writeln!(module, "/// Every cubin, by file stem.");
        let entries: Vec<String> = all.iter().map(|(s, c)| format!("({s:?}, {c})")).collect();
        let _ = writeln!(module, "#[allow(dead_code)]\npub const ALL: &[(&str, &[u8])] = &[{}];", entries.join(", "));
        let rs = out_dir.join(format!("{name}.rs"));
        std::fs::write(&rs, module).map_err(|e| Error(format!("cutec-build: cannot write {}: {e}", rs.display())))?;
        Ok(rs)
    }

    /// [`Build::try_compile`], failing the build script with the message.
    pub fn compile(&self, name: &str) {
        if let Err(e) = self.try_compile(name) {
            eprintln!("{e}");
            panic!("{e}");
        }
    }
}

fn run(cutec: &Path, args: &[&std::ffi::OsStr], file: &Path) -> Result<(), Error> {
    let out = Command::new(cutec)
        .arg("build")
        .args(args)
        .output()
        .map_err(|e| Error(format!("cutec-build: cannot run {}: {e}", cutec.display())))?;
    if !out.status.success() {
        return Err(Error(format!(
            "cutec-build: `{} build` failed for {}:\n{}{}",
            cutec.display(),
            file.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_names() {
        assert_eq!(const_name(Path::new("k/vector_add.cute")), "VECTOR_ADD");
        assert_eq!(const_name(Path::new("2d-copy.cute")), "_2D_COPY");
    }

    #[test]
    fn missing_cutec_is_a_readable_error() {
        let dir = std::env::temp_dir().join(format!("cutec-build-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = Build::new().cutec("/nonexistent/cutec").file("x.cute").out_dir(&dir).try_compile("k").unwrap_err();
        assert!(e.0.contains("cannot run /nonexistent/cutec"), "{e}");
    }

    #[test]
    fn an_unknown_arch_is_a_readable_error() {
        let e = Build::new()
            .arch("sm_75")
            .cutec("/nonexistent/cutec")
            .file("x.cute")
            .out_dir(std::env::temp_dir())
            .try_compile("k")
            .unwrap_err();
        assert_eq!(e.0, "cutec-build: unknown target `sm_75`; the targets are sm_80, sm_90, sm_90a");
        assert_eq!(Build::new().arch("sm_90a").arch, Some(Ok(Arch::Sm90a)));
        assert_eq!(Build::new().arch(Arch::Sm80).arch, Some(Ok(Arch::Sm80)));
    }

    #[test]
    fn generates_the_include_module_with_a_fake_cutec() {
        // A stand-in cutec that writes its -o argument, to test the plumbing without MLIR.
        let dir = std::env::temp_dir().join(format!("cutec-build-fake-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("cutec");
        std::fs::write(
            &fake,
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then printf 'CUBIN' > \"$2\"; fi; shift; done\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let rs =
            Build::new().cutec(&fake).file("kernels/vector_add.cute").out_dir(&dir).try_compile("kernels").unwrap();
        let text = std::fs::read_to_string(rs).unwrap();
        assert!(text.contains("pub const VECTOR_ADD: &[u8] = include_bytes!("), "{text}");
        assert!(text.contains("pub const ALL: &[(&str, &[u8])] = &[(\"vector_add\", VECTOR_ADD)];"), "{text}");
        assert_eq!(std::fs::read(dir.join("vector_add.cubin")).unwrap(), b"CUBIN");
    }
}
