//! The C ABI end to end: examples/c/vector_add.c is compiled with gcc against
//! include/cute_runtime.h and linked against the static and the shared
//! library this build produced. Linking is checked everywhere; the program
//! runs for real where a GPU exists (elsewhere it must exit 77, SKIP, which
//! proves the no-driver path works from C). Skipped when gcc is absent.

use std::path::{Path, PathBuf};
use std::process::Command;

fn target_dir() -> PathBuf {
    // tests run from target/<profile>/deps/<test>-<hash>
    let exe = std::env::current_exe().expect("current exe");
    exe.parent().and_then(Path::parent).expect("target/<profile>").to_path_buf()
}

fn have_gcc() -> bool {
    Command::new("gcc").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn compile(out: &Path, extra: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut cmd = Command::new("gcc");
    cmd.args(["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(format!("-I{}", root.join("runtime/include").display()))
        .arg(root.join("examples/c/vector_add.c"))
        .args(extra)
        .arg("-o")
        .arg(out);
    let o = cmd.output().expect("run gcc");
    assert!(o.status.success(), "gcc failed: {cmd:?}\n{}", String::from_utf8_lossy(&o.stderr));
}

/// The cubin to run: CUTE_C_EXAMPLE_CUBIN, else the checked-in one.
fn cubin() -> PathBuf {
    std::env::var_os("CUTE_C_EXAMPLE_CUBIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/vector_add.sm_90.elf"))
}

fn run_and_check(exe: &Path, env: &[(&str, &Path)]) {
    let mut cmd = Command::new(exe);
    cmd.arg(cubin());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("run the C example");
    let stdout = String::from_utf8_lossy(&o.stdout);
    match o.status.code() {
        Some(0) => assert!(stdout.contains("refuse out of bounds") && stdout.trim_end().ends_with("PASS"), "{stdout}"),
        Some(77) => assert!(stdout.starts_with("SKIP: no CUDA driver/GPU"), "{stdout}"),
        other => panic!("C example exited {other:?}:\n{stdout}\n{}", String::from_utf8_lossy(&o.stderr)),
    }
}

#[test]
fn c_example_links_statically_and_runs_or_skips() {
    if !have_gcc() {
        eprintln!("gcc not found: C example not built");
        return;
    }
    let lib = target_dir().join("libcute_runtime.a");
    assert!(lib.exists(), "{} missing (runtime/Cargo.toml crate-type staticlib)", lib.display());
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("vector_add_c_static");
    compile(&exe, &[lib.to_str().unwrap(), "-lpthread", "-ldl", "-lm"]);
    run_and_check(&exe, &[]);
}

#[test]
fn c_example_links_against_the_shared_library() {
    if !have_gcc() {
        return;
    }
    let dir = target_dir();
    assert!(dir.join("libcute_runtime.so").exists(), "libcute_runtime.so missing");
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("vector_add_c_shared");
    compile(&exe, &[&format!("-L{}", dir.display()), "-lcute_runtime"]);
    run_and_check(&exe, &[("LD_LIBRARY_PATH", &dir)]);
}
