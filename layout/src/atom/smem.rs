//! Shared-memory placement: where an allocation starts and how many bytes it takes. The front end
//! places allocations by these rules and `cute-lower-to-gpu` addresses them by the same rules, read
//! back from the tensor types.

use crate::swizzle::Swizzle;

/// Where shared allocations start: 128 bytes, one row of the 32 banks, so that a swizzle, which
/// acts on offsets from its allocation, spreads accesses over the banks as it would from address 0.
pub const SMEM_ALIGN: u64 = 128;

/// The most alignment a shared allocation gets (a 128-byte swizzle's period of 8 rows).
pub const SMEM_MAX_ALIGN: u64 = 1024;

/// Where an allocation of `elem_bytes`-byte elements swizzled by `swizzle` starts: [`SMEM_ALIGN`],
/// and a swizzled one at a multiple of its swizzle's period in bytes (up to [`SMEM_MAX_ALIGN`]: 1024
/// for `S<3,3,3>` on 16-bit elements), so that the swizzle, which acts on offsets from the
/// allocation, is also the swizzle of the absolute shared-memory address bits, as the wgmma matrix
/// descriptors (and TMA) apply it. cute-lower-to-gpu places allocations by it, from the tensor type
/// it reads.
pub fn smem_align(swizzle: Option<Swizzle>, elem_bytes: u32) -> u64 {
    match swizzle {
        Some(sw) => (sw.size() as u64 * u64::from(elem_bytes)).clamp(SMEM_ALIGN, SMEM_MAX_ALIGN),
        None => SMEM_ALIGN,
    }
}

/// The bytes an allocation of `cosize` elements of `elem_bytes` takes in shared memory: whole
/// blocks of a swizzle's period (a swizzle maps each aligned 2^(B+M+|S|)-element block onto itself,
/// so the rounded size holds every swizzled offset), then rounded up to [`SMEM_ALIGN`] so the next
/// allocation starts aligned (cute-lower-to-gpu places allocations by the same rule).
pub fn smem_bytes(cosize: i64, elem_bytes: u32, swizzle: Option<Swizzle>) -> u64 {
    let elems = cosize.max(1) as u64;
    let elems = match swizzle {
        Some(sw) => elems.div_ceil(sw.size() as u64) * sw.size() as u64,
        None => elems,
    };
    (elems * u64::from(elem_bytes)).div_ceil(SMEM_ALIGN) * SMEM_ALIGN
}
