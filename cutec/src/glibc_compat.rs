//! `arc4random`, defined in the executable. LLVM built on glibc 2.36 or later (Debian 12's LLVM
//! packages) calls it in `sys::Process::GetRandomNumber` (for temporary file names), and glibc has it
//! only since 2.36: linked from libc, it alone would make `cutec` need glibc 2.36, where the rest
//! (Rust's std) needs 2.34. Defined here, the static link takes this one, and the compiler wheel
//! runs on glibc 2.34 systems (Ubuntu 22.04, RHEL 9; python/build-compiler-wheel.sh). Same contract:
//! 32 random bits.

use std::io::Read;

#[no_mangle]
pub extern "C" fn arc4random() -> u32 {
    let mut bytes = [0u8; 4];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).is_ok() {
        return u32::from_ne_bytes(bytes);
    }
    // No /dev/urandom: std's per-process random hash keys, mixed with the time.
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(std::time::SystemTime::now()) as u32
}
