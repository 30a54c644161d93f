//! Swizzles against CuTe's definition, and what they are for: shared-memory
//! bank conflicts, counted by brute force.
//!
//! Every expected number here is derived by hand from CuTe's formula (in the
//! comment beside it), never by calling the code under test.

use cute_layout::expr::{eval_str, Value};
use cute_layout::{tup, ComposedLayout, Swizzle};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn ev(s: &str) -> String {
    eval_str(s).map(|v| v.to_string()).unwrap_or_else(|e| format!("error: {e}"))
}

fn sw(b: i64, m: i64, s: i64) -> Swizzle {
    Swizzle::new(b, m, s).unwrap()
}

// ------------------------------------------------------------ the definition

/// CuTe's Swizzle<B,M,S>, one bit at a time: for i < B, output bit
/// M - min(0,S) + i (a ZZZ bit) is XORed with input bit M + max(0,S) + i (the
/// matching YYY bit); every other bit is copied. A second formulation of
/// `x ^ shiftr(x & yyy_msk, S)`, written without masks or shifts of x.
fn reference_apply(b: i64, m: i64, s: i64, x: i64) -> i64 {
    let bit = |v: i64, k: i64| (v >> k) & 1;
    let mut out = x;
    for i in 0..b {
        let (y, z) = (m + s.max(0) + i, m - s.min(0) + i);
        if bit(x, y) == 1 {
            out ^= 1 << z;
        }
    }
    out
}

/// Every valid small swizzle (CuTe requires |S| >= B).
fn small_swizzles() -> Vec<(i64, i64, i64)> {
    let mut v = Vec::new();
    for b in 0..=4 {
        for m in 0..=4 {
            for s in -6i64..=6 {
                if s.abs() >= b {
                    v.push((b, m, s));
                }
            }
        }
    }
    v
}

#[test]
fn apply_is_cutes_formula_bit_for_bit() {
    for (b, m, s) in small_swizzles() {
        let z = sw(b, m, s);
        // Two periods, so bits above B+M+|S| are seen to pass through.
        for x in 0..2 * z.size() {
            assert_eq!(z.apply(x), reference_apply(b, m, s, x), "S<{b},{m},{s}>({x})");
        }
    }
}

#[test]
fn every_swizzle_is_a_bijective_involution_on_its_period() {
    for (b, m, s) in small_swizzles() {
        let z = sw(b, m, s);
        let n = z.size();
        assert_eq!(n, 1 << (b + m + s.abs()));
        let mut seen = vec![false; n as usize];
        for x in 0..n {
            let y = z.apply(x);
            assert!((0..n).contains(&y), "S<{b},{m},{s}>({x}) = {y} leaves [0,{n})");
            assert!(!seen[y as usize], "S<{b},{m},{s}> is not injective at {x}");
            seen[y as usize] = true;
            // YYY and ZZZ do not overlap (|S| >= B), so YYY is unchanged and
            // applying the swizzle again undoes it.
            assert_eq!(z.apply(y), x, "S<{b},{m},{s}> is not an involution at {x}");
            assert_eq!(y & !z.zzz_mask(), x & !z.zzz_mask(), "S<{b},{m},{s}> changed a bit outside ZZZ at {x}");
        }
    }
}

#[test]
fn sm80_128_byte_swizzle_for_16_bit_data() {
    // Swizzle<3,3,3>: bit_msk = 0b111, yyy_msk = 0b111 << (3+3) = 448 (bits
    // 6..8, the row of a 64-element row), zzz_msk = 0b111 << 3 = 56 (bits
    // 3..5, the 8-element column block). apply(x) = x ^ ((x & 448) >> 3).
    let z = sw(3, 3, 3);
    assert_eq!((z.yyy_mask(), z.zzz_mask()), (448, 56));
    for (x, want) in [
        (0, 0),
        (7, 7),      // inside one 8-element vector: M = 3 bits never move
        (8, 8),      // 8 & 448 = 0
        (63, 63),    // all of row 0 is unchanged
        (64, 72),    // 64 & 448 = 64; 64 >> 3 = 8; 64 ^ 8 = 72
        (72, 64),    // 72 & 448 = 64; 72 ^ 8 = 64
        (65, 73),    // 65 ^ 8
        (128, 144),  // 128 >> 3 = 16; 128 ^ 16 = 144
        (256, 288),  // 256 >> 3 = 32; 256 ^ 32 = 288
        (448, 504),  // 448 >> 3 = 56; 448 ^ 56 = 504
        (455, 511),  // 0b111_000_111 ^ 0b000_111_000 = 0b111_111_111
        (511, 455),  // 511 & 448 = 448; 511 ^ 56 = 455
        (512, 512),  // bit 9 is above YYY
        (576, 584),  // 512 + 64: 576 & 448 = 64; 576 ^ 8 = 584
        (1000, 976), // 1000 = 0b11_1110_1000: & 448 = 448 -> 56; bits 3..5 are 0b101, ^ 0b111 = 0b010: 1000 - 40 + 16
    ] {
        assert_eq!(z.apply(x), want, "S<3,3,3>({x})");
        assert_eq!(ev(&format!("eval(make_swizzle(3,3,3), {x})")), want.to_string());
    }
}

#[test]
fn sm80_64_and_32_byte_swizzles_for_16_bit_data() {
    // Swizzle<2,3,3>: yyy = 0b11 << 6 = 192, zzz = 0b11 << 3 = 24.
    let z = sw(2, 3, 3);
    assert_eq!((z.yyy_mask(), z.zzz_mask()), (192, 24));
    for (x, want) in [
        (64, 72),   // 64 >> 3 = 8
        (128, 144), // 128 >> 3 = 16
        (256, 256), // bit 8 is above YYY (S<3,3,3> would give 288)
        (216, 192), // 192 + 24: 216 & 192 = 192 -> 24; 216 ^ 24 = 192
        (320, 328), // 256 + 64: & 192 = 64 -> 8
    ] {
        assert_eq!(z.apply(x), want, "S<2,3,3>({x})");
    }
    // Swizzle<1,3,3>: yyy = 1 << 6 = 64, zzz = 1 << 3 = 8.
    let z = sw(1, 3, 3);
    assert_eq!((z.yyy_mask(), z.zzz_mask()), (64, 8));
    for (x, want) in [(64, 72), (72, 64), (128, 128), (16, 16), (80, 88), (192, 200)] {
        // 80 = 64 + 16 -> ^ 8 = 88; 192 = 128 + 64 -> ^ 8 = 200
        assert_eq!(z.apply(x), want, "S<1,3,3>({x})");
    }
}

#[test]
fn swizzles_for_32_bit_and_8_bit_data() {
    // Swizzle<3,2,3>, the 128-byte swizzle for 32-bit (tf32) elements as
    // CUTLASS's SM80 tf32 GEMM uses it over (8,32):(32,1): yyy = 7 << 5 = 224,
    // zzz = 7 << 2 = 28 (4-element = 16-byte vectors).
    let z = sw(3, 2, 3);
    assert_eq!((z.yyy_mask(), z.zzz_mask()), (224, 28));
    for (x, want) in [
        (3, 3),
        (32, 36),   // 32 >> 3 = 4
        (224, 252), // 224 >> 3 = 28; 224 ^ 28 = 252
        (100, 104), // 100 = 0b110_0100: & 224 = 96 -> 12; 100 ^ 12 = 0b110_1000 = 104
        (256, 256),
    ] {
        assert_eq!(z.apply(x), want, "S<3,2,3>({x})");
    }
    // Swizzle<3,4,3>: the same 128-byte pattern with 16-element vectors, i.e.
    // on byte addresses or 8-bit elements (the swizzle of SM90's
    // GMMA::Layout_K_SW128_Atom, which CuTe applies to byte addresses):
    // yyy = 7 << 7 = 896, zzz = 7 << 4 = 112.
    let z = sw(3, 4, 3);
    assert_eq!((z.yyy_mask(), z.zzz_mask()), (896, 112));
    for (x, want) in [
        (15, 15),
        (127, 127),
        (128, 144),   // 128 >> 3 = 16
        (256, 288),   // 256 >> 3 = 32
        (640, 720),   // 512 + 128: & 896 = 640 -> 80; 640 ^ 80 = 720
        (1008, 896),  // 896 + 112: 112 ^ 112 = 0
        (1024, 1024), // bit 10 is above YYY
    ] {
        assert_eq!(z.apply(x), want, "S<3,4,3>({x})");
    }
}

#[test]
fn one_pattern_in_bytes_elements_and_vectors() {
    // The 128-byte pattern on byte addresses (S<3,4,3>) is S<3,3,3> on the
    // offsets of 2-byte elements, S<3,2,3> on 4-byte elements and S<3,0,3>
    // on 16-byte vectors: scaling the index by 2^k moves both masks up by k.
    let (bytes, e16, e32, vec16) = (sw(3, 4, 3), sw(3, 3, 3), sw(3, 2, 3), sw(3, 0, 3));
    for x in 0..4096 {
        assert_eq!(bytes.apply(2 * x), 2 * e16.apply(x), "{x}");
        assert_eq!(bytes.apply(4 * x), 4 * e32.apply(x), "{x}");
        assert_eq!(bytes.apply(16 * x), 16 * vec16.apply(x), "{x}");
    }
    // Likewise the 64- and 32-byte patterns (GMMA's SW64 and SW32 atoms,
    // Swizzle<2,4,3> and Swizzle<1,4,3> in bytes).
    for x in 0..4096 {
        assert_eq!(sw(2, 4, 3).apply(2 * x), 2 * sw(2, 3, 3).apply(x), "{x}");
        assert_eq!(sw(1, 4, 3).apply(2 * x), 2 * sw(1, 3, 3).apply(x), "{x}");
    }
}

#[test]
fn negative_shift_moves_yyy_up_and_zero_bits_is_the_identity() {
    // Swizzle<2,4,-3>: yyy = 0b11 << (4 + max(0,-3)) = 48, zzz = 0b11 << (4 -
    // min(0,-3)) = 384; shiftr by -3 is a shift left by 3.
    let z = sw(2, 4, -3);
    for (x, want) in [(16, 144), (48, 432), (128, 128), (384, 384), (400, 272)] {
        // 16 << 3 = 128; 48 << 3 = 384; 400 = 256+128+16: 16 -> 128, 400 ^ 128 = 272
        assert_eq!(z.apply(x), want, "S<2,4,-3>({x})");
    }
    let z = sw(0, 4, 3);
    assert!((0..1024).all(|x| z.apply(x) == x));
}

// ------------------------------------------------------------ bank conflicts

/// Shared memory on SM80/SM90: 32 banks, each serving one 4-byte word per
/// cycle; the word at byte address a is in bank (a / 4) % 32.
const BANKS: i64 = 32;
const WORD_BYTES: i64 = 4;

/// The conflict degree of one access phase (the accesses the hardware serves
/// together: 32 threads x 4 bytes, or 8 threads x 16 bytes for ldmatrix and
/// 128-bit loads): the most distinct words the phase touches in one bank.
/// Threads reading the same word are served by one broadcast, so only
/// distinct words count. It is the number of cycles the phase takes; 1 is
/// conflict-free.
fn conflict_degree(byte_addrs: impl IntoIterator<Item = i64>) -> usize {
    let mut words_in_bank: Vec<BTreeSet<i64>> = vec![BTreeSet::new(); BANKS as usize];
    for a in byte_addrs {
        let word = a.div_euclid(WORD_BYTES);
        words_in_bank[word.rem_euclid(BANKS) as usize].insert(word);
    }
    words_in_bank.iter().map(BTreeSet::len).max().unwrap_or(0)
}

/// A shared-memory layout given in the expression language (a layout or a
/// composed layout): (row, col) -> element offset.
fn smem(src: &str) -> impl Fn(i64, i64) -> i64 {
    let v = eval_str(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    move |r, c| {
        let i = match &v {
            Value::Layout(l) => l.eval(&tup![r, c]),
            Value::Composed(cl) => cl.eval(&tup![r, c]),
            other => panic!("{other} is not a layout"),
        };
        i.unwrap().as_static().unwrap()
    }
}

/// The byte addresses one access phase reads: each element at `coords`, of
/// `elem_bytes` bytes (1, 2 or 4, so one element is inside one word).
fn phase_bytes(layout: &dyn Fn(i64, i64) -> i64, elem_bytes: i64, coords: &[(i64, i64)]) -> Vec<i64> {
    coords.iter().map(|&(r, c)| layout(r, c) * elem_bytes).collect()
}

/// One phase of ldmatrix (LDSM): 8 threads, thread t giving the address of
/// row `row0 + t`, and each reading 16 bytes from column `col0` on. Asserts
/// ldmatrix's precondition that each thread's 16 bytes are one contiguous,
/// 16-byte aligned vector (a swizzle must not split a vector: M must cover
/// 16 bytes), and returns the bytes the phase reads.
fn ldmatrix_phase(layout: &dyn Fn(i64, i64) -> i64, elem_bytes: i64, row0: i64, col0: i64) -> Vec<i64> {
    let per_row = 16 / elem_bytes;
    let mut bytes = Vec::new();
    for t in 0..8 {
        let coords: Vec<(i64, i64)> = (0..per_row).map(|k| (row0 + t, col0 + k)).collect();
        let row = phase_bytes(layout, elem_bytes, &coords);
        assert_eq!(row[0] % 16, 0, "thread {t}: row {} is not 16-byte aligned", row0 + t);
        assert!(
            row.windows(2).all(|w| w[1] == w[0] + elem_bytes),
            "thread {t}: row {} is not contiguous: {row:?}",
            row0 + t
        );
        bytes.extend(row);
    }
    bytes
}

/// The conflict degree of ldmatrix at every 8-row block and every 16-byte
/// column block of a (rows, cols) tile; all of them equal, or the first that
/// differs is reported.
fn ldmatrix_degree_everywhere(src: &str, elem_bytes: i64, rows: i64, cols: i64) -> usize {
    let layout = smem(src);
    let per_row = 16 / elem_bytes;
    let mut degrees = BTreeSet::new();
    for rb in 0..rows / 8 {
        for cb in 0..cols / per_row {
            degrees.insert(conflict_degree(ldmatrix_phase(&layout, elem_bytes, 8 * rb, per_row * cb)));
        }
    }
    assert_eq!(degrees.len(), 1, "{src}: the degree differs between blocks: {degrees:?}");
    degrees.into_iter().next().unwrap()
}

#[test]
fn conflict_degree_counts_distinct_words_per_bank() {
    // 32 threads x 4 consecutive bytes: one word per bank.
    assert_eq!(conflict_degree((0..32).map(|t| 4 * t)), 1);
    // All threads read one word: a broadcast, not a conflict.
    assert_eq!(conflict_degree((0..32).map(|_| 68)), 1);
    // The two halves of a word are one word.
    assert_eq!(conflict_degree([0, 2]), 1);
    // A 128-byte stride puts every thread in bank 0, each a different word.
    assert_eq!(conflict_degree((0..32).map(|t| 128 * t)), 32);
    // Words 0 and 32 share bank 0; word 1 is alone in bank 1.
    assert_eq!(conflict_degree([0, 128, 4]), 2);
}

#[test]
fn ldmatrix_of_an_8x64_bf16_row_major_tile() {
    // (8,64):(64,1), 2-byte elements: a row is 128 bytes = all 32 banks, so
    // the 16 bytes at column block j of row r are the words 32r + 4j + k
    // (k < 4), in banks 4j + k whatever r is: 8 rows, 8 distinct words in
    // each of those 4 banks.
    let plain = smem("(8,64):(64,1)");
    // Swizzle<3,3,3> XORs the row (bits 6..8) into the column block (bits
    // 3..5): row r's block j moves to block j ^ r, banks 4(j ^ r) + k, and
    // j ^ r takes 8 different values over the 8 rows.
    let swizzled = smem("composition(make_swizzle(3,3,3), (8,64):(64,1))");
    for j in 0..8 {
        let d = conflict_degree(ldmatrix_phase(&plain, 2, 0, 8 * j));
        assert!(d > 1, "block {j}: the unswizzled tile should conflict");
        assert_eq!(d, 8, "block {j}");
        assert_eq!(
            conflict_degree(ldmatrix_phase(&swizzled, 2, 0, 8 * j)),
            1,
            "block {j}: the swizzled tile conflicts"
        );
    }
}

#[test]
fn ldmatrix_of_a_64x64_bf16_tile_at_every_block() {
    // The SM80 128-byte atom tiled over the tile, as a GEMM's shared-memory
    // layout is built; the unswizzled tile is its inner layout.
    let tiled = "tile_to_shape(composition(make_swizzle(3,3,3), (8,64):(64,1)), (64,64))";
    assert_eq!(ev(tiled), "S<3,3,3> o 0 o (64,64):(64,1)");
    // Rows 8rb..8rb+7 have row % 8 = 0..7, so the argument of the 8x64 tile
    // holds at every row block: 8-way plain, conflict-free swizzled.
    let plain_degree = ldmatrix_degree_everywhere("(64,64):(64,1)", 2, 64, 64);
    assert!(plain_degree > 1);
    assert_eq!(plain_degree, 8);
    assert_eq!(ldmatrix_degree_everywhere(tiled, 2, 64, 64), 1);
    // The same with two pipeline stages: the stage stride (4096 elements)
    // is above the swizzle's bits and changes nothing.
    let staged = eval_str("tile_to_shape(composition(make_swizzle(3,3,3), (8,64):(64,1)), (64,64,2))").unwrap();
    assert_eq!(staged.to_string(), "S<3,3,3> o 0 o (64,64,2):(64,1,4096)");
    let Value::Composed(c) = staged else { panic!() };
    for stage in 0..2 {
        for (rb, cb) in [(0, 0), (3, 5), (7, 7)] {
            let at = |r: i64, col: i64| c.eval(&tup![r, col, stage]).unwrap().as_static().unwrap();
            assert_eq!(conflict_degree(ldmatrix_phase(&at, 2, 8 * rb, 8 * cb)), 1, "stage {stage} block ({rb},{cb})");
        }
    }
}

#[test]
fn mma_fragment_loads_of_32_threads() {
    // Without ldmatrix, the A fragment of mma.m16n8k16 is loaded 4 bytes a
    // thread: lane l reads row l / 4 and the two bf16 at columns
    // 8j + 2(l % 4) + {0,1}. Row-major 128-byte rows: word 32(l/4) + 4j +
    // l%4, bank 4j + l%4 for all 8 rows: 8-way. Swizzled: bank 4(j ^ row) +
    // l%4, 32 different banks.
    let plain = smem("(8,64):(64,1)");
    let swizzled = smem("S<3,3,3> o 0 o (8,64):(64,1)");
    for j in 0..8 {
        let coords: Vec<(i64, i64)> =
            (0..32).flat_map(|l| [(l / 4, 8 * j + 2 * (l % 4)), (l / 4, 8 * j + 2 * (l % 4) + 1)]).collect();
        assert_eq!(conflict_degree(phase_bytes(&plain, 2, &coords)), 8, "block {j}");
        assert_eq!(conflict_degree(phase_bytes(&swizzled, 2, &coords)), 1, "block {j}");
    }
}

#[test]
fn each_atom_is_conflict_free_for_its_row_width() {
    // (atom, element bytes, the target tile, ldmatrix degree without the
    // swizzle, with it). A row of R bytes puts rows r and r + 128/R in the
    // same banks, so the plain degree is 8 / (128/R) = R/16 for R <= 128.
    for (atom, elem_bytes, (rows, cols), plain, swizzled) in [
        // 32-byte rows of 16-bit data: 2-way; Swizzle<1,3,3> XORs row bit 2
        // into the column block, separating rows r and r + 4.
        ("composition(make_swizzle(1,3,3), (8,16):(16,1))", 2, (64, 16), 2, 1),
        // 64-byte rows: 4-way; Swizzle<2,3,3> XORs row bits 1..2.
        ("composition(make_swizzle(2,3,3), (8,32):(32,1))", 2, (64, 32), 4, 1),
        // 128-byte rows: 8-way; Swizzle<3,3,3> XORs row bits 0..2.
        ("composition(make_swizzle(3,3,3), (8,64):(64,1))", 2, (64, 64), 8, 1),
        // 128-byte rows of 32-bit data (tf32): Swizzle<3,2,3>.
        ("composition(make_swizzle(3,2,3), (8,32):(32,1))", 4, (64, 32), 8, 1),
        // 128-byte rows of 8-bit data (or bytes): Swizzle<3,4,3>.
        ("composition(make_swizzle(3,4,3), (8,128):(128,1))", 1, (64, 128), 8, 1),
        // The wrong atom for the width: Swizzle<2,3,3> on 128-byte rows only
        // tells 4 rows apart; rows r and r + 4 still share banks.
        ("composition(make_swizzle(2,3,3), (8,64):(64,1))", 2, (64, 64), 8, 2),
    ] {
        let tiled = format!("tile_to_shape({atom}, ({rows},{cols}))");
        let Value::Composed(c) = eval_str(&tiled).unwrap() else { panic!("{tiled} is not a composed layout") };
        assert_eq!(
            ldmatrix_degree_everywhere(&c.layout.to_string(), elem_bytes, rows, cols),
            plain,
            "{tiled} without its swizzle"
        );
        assert_eq!(ldmatrix_degree_everywhere(&tiled, elem_bytes, rows, cols), swizzled, "{tiled}");
    }
}

// ------------------------------------------------------------ the language

#[test]
fn swizzles_are_made_and_printed_as_in_cute() {
    for src in ["S<3,3,3>", "Sw<3,3,3>", "make_swizzle(3,3,3)", "Swizzle(3,3,3)", "cute.make_swizzle(3,3,3)"] {
        assert_eq!(ev(src), "S<3,3,3>", "{src}");
    }
    let atom = "S<3,3,3> o 0 o (8,64):(64,1)";
    for src in [
        atom,
        "composition(make_swizzle(3,3,3), (8,64):(64,1))",
        "composition(Swizzle(3,3,3), make_layout_right((8,64)))",
        "make_composed_layout(make_swizzle(3,3,3), 0, (8,64):(64,1))",
    ] {
        assert_eq!(ev(src), atom, "{src}");
    }
    assert_eq!(ev("make_composed_layout(S<2,3,3>, 32, (8,32):(32,1))"), "S<2,3,3> o 32 o (8,32):(32,1)");
    assert_eq!(atom.parse::<ComposedLayout>().unwrap().to_string(), atom);
    // A dynamic offset prints as `?` and reads back (`? o` is not a name).
    assert_eq!(ev("S<3,3,3> o ? o (8,64):(64,1)"), "S<3,3,3> o ? o (8,64):(64,1)");
    assert_eq!(ev("S<3,3,3> o ?{div=8} o 8:1"), "S<3,3,3> o ?{div=8} o 8:1");
    assert_eq!(ev("coalesce((?n,4):(1,?n))"), "?{div=4}:1");
}

#[test]
fn composed_layouts_evaluate_swizzle_of_offset_plus_layout() {
    let atom = "composition(make_swizzle(3,3,3), (8,64):(64,1))";
    // (1,0) -> 64 -> 64 ^ 8 = 72; (1,8) -> 72 -> 64; (7,63) -> 511 -> 455;
    // (2,17) -> 145, & 448 = 128 -> 16, 145 ^ 16 = 129; the integer 1 is the
    // colexicographic coordinate (1,0).
    for (crd, want) in [("(0,0)", 0), ("(1,0)", 72), ("(1,8)", 64), ("(7,63)", 455), ("(2,17)", 129), ("1", 72)] {
        assert_eq!(ev(&format!("eval({atom}, {crd})")), want.to_string(), "{crd}");
    }
    // The offset is added before the swizzle: 64 + (0,0) -> 64 -> 72.
    assert_eq!(ev("eval(make_composed_layout(make_swizzle(3,3,3), 64, (8,64):(64,1)), (0,0))"), "72");
    assert_eq!(ev(&format!("size({atom})")), "512");
    assert_eq!(ev(&format!("cosize({atom})")), "512");
    assert_eq!(ev(&format!("shape({atom})")), "(8,64)");
    assert_eq!(ev(&format!("stride({atom})")), "(64,1)");
    assert_eq!(ev(&format!("size({atom}, 1)")), "64");
    assert_eq!(ev(&format!("rank({atom})")), "2");
    // CuTe's cosize(ComposedLayout) is the inner layout's.
    assert_eq!(ev("cosize(S<3,3,3> o 0 o (8,8):(8,1))"), "64");
}

#[test]
fn tile_to_shape_keeps_the_swizzle() {
    let atom = "composition(make_swizzle(3,3,3), (8,64):(64,1))";
    for (shape, want) in [
        ("(128,64)", "S<3,3,3> o 0 o (128,64):(64,1)"),
        ("(128,128)", "S<3,3,3> o 0 o (128,(64,2)):(64,(1,8192))"),
        ("(128,64,3)", "S<3,3,3> o 0 o (128,64,3):(64,1,8192)"),
    ] {
        assert_eq!(ev(&format!("tile_to_shape({atom}, {shape})")), want, "{shape}");
        // The inner layout is what tile_to_shape makes of the plain atom.
        let plain = ev(&format!("tile_to_shape((8,64):(64,1), {shape})"));
        assert_eq!(want.strip_prefix("S<3,3,3> o 0 o "), Some(plain.as_str()));
    }
    assert!(ev(&format!("tile_to_shape({atom}, (100,64))")).contains("does not divide"));
    // Every element of the tiled tile is hit once: a permutation of 0..8192.
    let Value::Composed(c) = eval_str(&format!("tile_to_shape({atom}, (128,64))")).unwrap() else { panic!() };
    let mut seen = vec![false; 128 * 64];
    for r in 0..128 {
        for col in 0..64 {
            let i = c.eval(&tup![r, col]).unwrap().as_static().unwrap() as usize;
            assert!(!seen[i]);
            seen[i] = true;
        }
    }
    // Products act on the inner layout too, as CuTe's overloads do.
    assert_eq!(ev(&format!("blocked_product({atom}, (2,1))")), "S<3,3,3> o 0 o ((8,2),(64,1)):((64,512),(1,0))");
    assert_eq!(ev(&format!("logical_divide({atom}, (4,_))")), "S<3,3,3> o 0 o ((4,2),64):((64,256),1)");
}

#[test]
fn swizzle_errors_are_messages() {
    for (src, says) in [
        ("make_swizzle(3,3,2)", "|S| >= B"),
        ("make_swizzle(3,3)", "takes 3 arguments"),
        ("make_swizzle(3,3,?)", "static integer"),
        ("make_swizzle(70,3,3)", "out of range"),
        ("make_swizzle(21,21,21)", "spans more bits"),
        ("make_composed_layout((8,64):(64,1), 0, S<3,3,3>)", "must be a swizzle"),
        ("make_composed_layout(S<3,3,3>, (1,2), 8:1)", "must be an integer"),
        ("composition(S<3,3,3>, make_identity_layout((8,8)))", "basis strides"),
        ("S<1,0,1> o 1@0 o 8:1", "not an index"),
        ("eval(S<3,3,3> o ? o 8:1, 1)", "dynamic"),
        ("eval(make_swizzle(3,3,3), ?)", "dynamic"),
    ] {
        let got = ev(src);
        assert!(got.starts_with("error: ") && got.contains(says), "{src}: {got}");
    }
}

#[test]
fn the_cli_evaluates_and_draws_swizzles() {
    let run = |args: &[&str], input: &str| {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut inp = std::io::Cursor::new(input.as_bytes().to_vec());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = cute_layout::cli::run(&args, &mut inp, &mut out, &mut err);
        (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
    };
    let (code, out, _) = run(&["eval", "tile_to_shape(composition(make_swizzle(3,3,3), (8,64):(64,1)), (128,64))"], "");
    assert_eq!((code, out.as_str()), (0, "S<3,3,3> o 0 o (128,64):(64,1)\n"));
    let (code, out, _) =
        run(&["eval", "-"], "make_swizzle(2,3,3)\neval(S<3,3,3> o 0 o (8,64):(64,1), (1,0))\nmake_swizzle(3,3,1)\n");
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..2], ["S<2,3,3>", "72"]);
    assert!(lines[2].starts_with("error: swizzle"), "{}", lines[2]);
    // `show` draws the swizzled indices: row 1 starts at 72 (64 ^ 8).
    let (code, out, _) = run(&["show", "S<1,3,3> o 0 o (8,16):(16,1)"], "");
    assert_eq!(code, 0);
    let row1 = out.lines().find(|l| l.trim_start().starts_with("1  |")).unwrap();
    let cells: Vec<&str> = row1.split('|').map(str::trim).filter(|c| !c.is_empty()).collect();
    // Row 1 of (8,16):(16,1) is 16..31; S<1,3,3> only moves rows 4..7.
    assert_eq!(cells[1..3], ["16", "17"]);
    let row4 = out.lines().find(|l| l.trim_start().starts_with("4  |")).unwrap();
    let cells: Vec<&str> = row4.split('|').map(str::trim).filter(|c| !c.is_empty()).collect();
    // Row 4 is 64..79; 64 & 64 -> 8: 64 ^ 8 = 72, and 72 ^ 8 = 64 at column 8.
    assert_eq!((cells[1], cells[9]), ("72", "64"));
}

proptest! {
    /// No swizzle input makes the expression language panic.
    #[test]
    fn swizzle_expressions_never_panic(tokens in proptest::collection::vec(0usize..22, 0..30)) {
        const T: [&str; 22] = ["(", ")", ",", ":", "?", "_", "0", "3", "-3", "62", "9223372036854775807", "-9223372036854775808",
            "make_swizzle(", "Swizzle(", "make_composed_layout(", "composition(", "tile_to_shape(", "eval(", "cosize(", "S<3,3,3>", " o ", "(8,64):(64,1)"];
        let src: String = tokens.iter().map(|&k| T[k]).collect();
        let _ = eval_str(&src);
    }

    /// Any valid swizzle at any index: the formula, and an involution.
    #[test]
    fn apply_matches_the_reference_anywhere(b in 0i64..=8, m in 0i64..=20, s in -20i64..=20, x in any::<i64>()) {
        prop_assume!(s.abs() >= b);
        let z = sw(b, m, s);
        prop_assert_eq!(z.apply(x), reference_apply(b, m, s, x));
        prop_assert_eq!(z.apply(z.apply(x)), x);
    }
}

#[test]
fn extreme_swizzle_inputs_do_not_panic() {
    for src in [
        "eval(make_swizzle(3,3,3), -9223372036854775808)",
        "eval(make_swizzle(3,3,3), 9223372036854775807)",
        "eval(make_swizzle(0,62,0), 9223372036854775807)",
        "eval(make_swizzle(31,0,31), -1)",
        "eval(make_swizzle(1,0,-61), 1)",
        "eval(make_composed_layout(make_swizzle(3,3,3), 9223372036854775807, 8:1), 7)",
        "make_swizzle(-9223372036854775808,0,0)",
        "tile_to_shape(S<3,3,3> o 0 o 0:0, (0,0))",
        "cosize(S<3,3,3> o 0 o (2,2):(9223372036854775807,1))",
    ] {
        let _ = eval_str(src);
    }
}
