//! The C ABI end to end: examples/c/vector_add.c is compiled with gcc against
//! include/cute_runtime.h and linked against the static and the shared
//! library this build produced. Linking is checked everywhere; the program
//! runs for real where a GPU exists (elsewhere it must exit 77, SKIP, which
//! proves the no-driver path works from C). Skipped when gcc is absent.
//! runtime/tests/c/read_manifest.c reads the manifest of good and bad files from C.

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

/// Compiles `source` (relative to the repository root) into `out`.
fn compile(source: &str, out: &Path, extra: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut cmd = Command::new("gcc");
    cmd.args(["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(format!("-I{}", root.join("runtime/include").display()))
        .arg(root.join(source))
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
    compile("examples/c/vector_add.c", &exe, &[lib.to_str().unwrap(), "-lpthread", "-ldl", "-lm"]);
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
    compile("examples/c/vector_add.c", &exe, &[&format!("-L{}", dir.display()), "-lcute_runtime"]);
    run_and_check(&exe, &[("LD_LIBRARY_PATH", &dir)]);
}

/// `cute_manifest_read_file` from C on a cubin, a cubin whose manifest has a NUL byte, one whose
/// manifest was edited, and an empty, a text and a missing file (the same cases from Rust: tests/manifest_files.rs).
#[test]
fn c_reads_manifests_and_refuses_what_is_not_one() {
    if !have_gcc() {
        return;
    }
    let lib = target_dir().join("libcute_runtime.a");
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("read_manifest_c");
    compile("runtime/tests/c/read_manifest.c", &exe, &[lib.to_str().unwrap(), "-lpthread", "-ldl", "-lm"]);
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let good = std::fs::read(cubin()).unwrap();
    let mut nul = good.clone();
    let start = nul.windows(15).position(|w| w == b"cutec-manifest ").expect("the manifest text");
    let at = nul[start..].iter().position(|&b| b == b'\n').unwrap() + 1;
    nul[start + at] = 0;
    // A digit of the manifest changed (`stride=1` made `stride=4`): refused by the checksum.
    let mut edited = good.clone();
    let stride = edited[start..].windows(8).position(|w| w == b"stride=1").unwrap() + 7;
    edited[start + stride] = b'4';
    let files = [
        ("nul.cubin", &nul[..]),
        ("edited.cubin", &edited[..]),
        ("empty.cubin", &b""[..]),
        ("text.cubin", &b"hello\n"[..]),
    ];
    for (name, bytes) in files {
        std::fs::write(tmp.join(name), bytes).unwrap();
    }
    let path = |name: &str| tmp.join(name).display().to_string();
    let o = Command::new(&exe)
        .arg(cubin())
        .args(files.map(|(name, _)| path(name)))
        .arg(path("missing.cubin"))
        .output()
        .expect("run read_manifest");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let not_a_cubin = "is not a cubin (an ELF file, starting with 7f 45 4c 46)";
    let expected = [
        "CUTE_OK manifest".to_string(),
        format!(
            "CUTE_ERROR_INVALID_IMAGE null: invalid kernel image: cutec manifest line 2: a NUL byte at byte {at}: the manifest is damaged"
        ),
        format!(
            "CUTE_ERROR_INVALID_IMAGE null: invalid kernel image: cutec manifest line {}: manifest checksum mismatch: the cubin's manifest was altered or damaged; rebuild it with cutec build",
            String::from_utf8_lossy(&good[start..]).lines().position(|l| l.starts_with("checksum ")).unwrap() + 1
        ),
        format!("CUTE_ERROR_INVALID_IMAGE null: invalid kernel image: {} {not_a_cubin}: it is empty", path("empty.cubin")),
        format!(
            "CUTE_ERROR_INVALID_IMAGE null: invalid kernel image: {} {not_a_cubin}: it starts with 68 65 6c 6c 6f 0a",
            path("text.cubin")
        ),
        format!("CUTE_ERROR_IO null: cannot read {}: ", path("missing.cubin")),
    ];
    assert_eq!(lines.len(), expected.len(), "{stdout}");
    for (line, want) in lines.iter().zip(&expected) {
        assert!(line.starts_with(want.as_str()), "{line}\nwanted: {want}");
    }
}
