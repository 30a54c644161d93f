//! Reading a cubin's manifest from files that are not what they should be, from Rust and
//! through the C ABI (`cute_manifest_read_file`, called as C calls it): no GPU needed.
//!
//! The rules: a file that cannot be read is an I/O error; an empty or non-ELF file is an error
//! for the C ABI and for `Manifest::from_cubin_file`, while `Manifest::from_file`/`from_cubin`
//! (which `Module` and Python use for any image kind) say `None`; an ELF cubin without a
//! manifest is `None` (C: `CUTE_OK` and NULL) everywhere; a manifest with a NUL byte before its
//! end, or whose bytes do not match its checksum line, is damaged, refused everywhere with the
//! same message.

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::path::{Path, PathBuf};

use cute_runtime::capi::{
    cute_last_error, cute_manifest_read_file, cute_string_free, CUTE_ERROR_INVALID_IMAGE, CUTE_ERROR_IO, CUTE_OK,
};
use cute_runtime::{Manifest, RuntimeError};

fn cubin() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/vector_add.sm_90.elf")).unwrap()
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `cute_manifest_read_file(path)`: the status, the manifest text (if any) and the last error.
fn read_from_c(path: &Path) -> (i32, Option<String>, String) {
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    let mut out: *mut c_char = std::ptr::null_mut();
    // SAFETY: a valid C string and out pointer; the returned string is freed below.
    unsafe {
        let status = cute_manifest_read_file(c_path.as_ptr(), &mut out);
        let text = (!out.is_null()).then(|| CStr::from_ptr(out).to_str().unwrap().to_string());
        cute_string_free(out);
        let error = CStr::from_ptr(cute_last_error()).to_str().unwrap().to_string();
        (status, text, error)
    }
}

/// The cubin with the byte of its manifest text at `at` (counted from the text's
/// start) replaced by `byte`.
fn with_manifest_byte(at: usize, byte: u8) -> Vec<u8> {
    let mut bytes = cubin();
    let start = bytes.windows(15).position(|w| w == b"cutec-manifest ").expect("the manifest text");
    bytes[start + at] = byte;
    bytes
}

#[test]
fn a_cubin_reads_the_same_from_rust_and_c() {
    let path = write("good.cubin", &cubin());
    let m = Manifest::from_cubin_file(&path).unwrap().expect("a manifest");
    assert_eq!(Manifest::from_file(&path).unwrap().as_ref(), Some(&m));
    let (status, text, _) = read_from_c(&path);
    assert_eq!((status, text), (CUTE_OK, Some(m.text)));
}

#[test]
fn an_empty_text_or_random_file_is_not_a_cubin() {
    let random: Vec<u8> = (0u32..256).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    for (name, bytes, found) in [
        ("empty.cubin", &b""[..], "it is empty".to_string()),
        ("text.cubin", &b"hello, not a cubin\n"[..], "it starts with 68 65 6c 6c 6f 2c 20 6e".to_string()),
        ("random.cubin", &random[..], "it starts with ".to_string()),
    ] {
        let path = write(name, bytes);
        let message = format!(
            "invalid kernel image: {} is not a cubin (an ELF file, starting with 7f 45 4c 46): {found}",
            path.display()
        );
        let e = Manifest::from_cubin_file(&path).unwrap_err();
        assert!(matches!(e, RuntimeError::InvalidImage(_)), "{e:?}");
        assert!(e.to_string().starts_with(&message), "{e}");
        // The image-level reader (used for PTX and fatbins too) finds no manifest.
        assert_eq!(Manifest::from_file(&path).unwrap(), None);
        let (status, text, error) = read_from_c(&path);
        assert_eq!((status, text), (CUTE_ERROR_INVALID_IMAGE, None), "{name}");
        assert!(error.starts_with(&message), "{error}");
    }
}

#[test]
fn an_unreadable_file_is_an_io_error() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    for path in [dir.join("missing.cubin"), dir.to_path_buf()] {
        assert!(matches!(Manifest::from_cubin_file(&path), Err(RuntimeError::Io { .. })));
        let (status, text, error) = read_from_c(&path);
        assert_eq!((status, text), (CUTE_ERROR_IO, None), "{error}");
        assert!(error.starts_with(&format!("cannot read {}", path.display())), "{error}");
    }
}

#[test]
fn a_cubin_without_a_manifest_is_ok_and_none() {
    let mut bytes = cubin();
    let mut renamed = 0;
    while let Some(at) = bytes.windows(16).position(|w| w == b"__cutec_manifest") {
        bytes[at + 15] = b'X';
        renamed += 1;
    }
    assert!(renamed > 0);
    let path = write("no-manifest.cubin", &bytes);
    assert_eq!(Manifest::from_cubin_file(&path).unwrap(), None);
    assert_eq!(Manifest::from_file(&path).unwrap(), None);
    let (status, text, _) = read_from_c(&path);
    assert_eq!((status, text), (CUTE_OK, None));
}

#[test]
fn a_nul_byte_in_the_manifest_is_refused_everywhere_alike() {
    let text = Manifest::from_cubin(&cubin()).unwrap().unwrap().text;
    let at = text.find('\n').unwrap() + 1;
    let path = write("nul.cubin", &with_manifest_byte(at, 0));
    let message = format!("cutec manifest line 2: a NUL byte at byte {at}: the manifest is damaged");
    for e in [Manifest::from_cubin_file(&path).unwrap_err(), Manifest::from_file(&path).unwrap_err()] {
        assert!(matches!(e, RuntimeError::InvalidImage(_)), "{e:?}");
        assert!(e.to_string().contains(&message), "{e}");
    }
    let (status, out, error) = read_from_c(&path);
    assert_eq!((status, out), (CUTE_ERROR_INVALID_IMAGE, None));
    assert!(error.contains(&message), "{error}");
    // The text itself with the NUL: the same refusal (Python's `parse_manifest` reads this way).
    let mut damaged = text.clone();
    damaged.replace_range(at..at + 1, "\0");
    assert!(Manifest::parse(&damaged).unwrap_err().to_string().contains(&message));
}

#[test]
fn an_edited_manifest_is_refused_everywhere_alike_by_its_checksum() {
    // `stride=1` of the first parameter made `stride=4`: still a well-formed manifest, which only
    // the checksum tells from the one cutec wrote.
    let text = Manifest::from_cubin(&cubin()).unwrap().unwrap().text;
    let at = text.find("stride=1").unwrap() + "stride=".len();
    let path = write("edited.cubin", &with_manifest_byte(at, b'4'));
    let message =
        "manifest checksum mismatch: the cubin's manifest was altered or damaged; rebuild it with cutec build";
    for e in [Manifest::from_cubin_file(&path).unwrap_err(), Manifest::from_file(&path).unwrap_err()] {
        assert!(matches!(e, RuntimeError::InvalidImage(_)), "{e:?}");
        assert!(e.to_string().contains(message), "{e}");
    }
    let (status, out, error) = read_from_c(&path);
    assert_eq!((status, out), (CUTE_ERROR_INVALID_IMAGE, None));
    assert!(error.contains(message), "{error}");
    let mut edited = text.clone();
    edited.replace_range(at..at + 1, "4");
    assert!(Manifest::parse(&edited).unwrap_err().to_string().contains(message));
}
