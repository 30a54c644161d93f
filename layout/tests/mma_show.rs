//! `layout show` of MMA atoms and tiled MMAs (CuTe's `print_latex(tiled_mma)` picture), checked
//! against cells derived by hand from the PTX ISA's fragment tables, and the MMA values of the
//! expression language through the CLI.
//!
//! The PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type" (f16/bf16), with
//! `groupID = lane / 4` and `threadID_in_group = lane % 4` (tig below):
//!
//! - A (16 x 16, row m, column k), registers a0..a7 of lane L:
//!   `row = groupID` for a0, a1, a4, a5 and `groupID + 8` for a2, a3, a6, a7;
//!   `col = 2*tig + (i & 1)` for a0..a3 and `2*tig + (i & 1) + 8` for a4..a7.
//!   So A(0,0) is lane 0's a0 = T0V0; A(0,1) lane 0's a1 = T0V1; A(8,0) lane 0's a2 = T0V2;
//!   A(0,8) lane 0's a4 = T0V4; A(1,2): groupID 1, 2*tig = 2 so tig 1, lane 4*1 + 1 = 5, a0: T5V0.
//! - B (16 x 8, row k, column n), registers b0..b3:
//!   `row k = 2*tig + (i & 1)` for b0, b1 and `+ 8` for b2, b3; `col n = groupID`.
//!   So B(k=0,n=0) = T0V0; B(k=8,n=0) = lane 0's b2 = T0V2; B(k=0,n=1): groupID 1, tig 0,
//!   lane 4, b0: T4V0; B(k=1,n=0) = T0V1; B(k=2,n=0): tig 1, lane 1: T1V0.
//! - C/D (16 x 8, row m, column n), registers c0..c3:
//!   `row = groupID` for c0, c1 and `groupID + 8` for c2, c3; `col = 2*tig + (i & 1)`.
//!   So C(0,0) = T0V0; C(8,1) = lane 0's c3 = T0V3; C(0,2): tig 1, lane 1, c0: T1V0;
//!   C(15,7): groupID 7, tig 3, lane 31, c3: T31V3.
//!
//! The value index V of a thread is the register index i (CuTe numbers a thread's values in the
//! order of the instruction's registers), the thread index T the lane.

use cute_layout::cli::run;
use std::collections::HashMap;

fn cli(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &mut std::io::empty(), &mut out, &mut err);
    (code, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
}

fn show(expr: &str) -> String {
    let (code, out, err) = cli(&["show", expr]);
    assert_eq!(code, 0, "{err}");
    out
}

/// The three panels of a text picture, read back from the text: `(row, col) -> label` for A
/// (m, k), B (k, n) and C (m, n). A row of B is `  k  | cell | ... |`; a row of A and C is
/// `m  | A cells |   m  | C cells |`, so it splits at its pipes into k_cols + 1 + n_cols pieces.
fn panels(text: &str, k_cols: usize, n_cols: usize) -> [HashMap<(usize, usize), String>; 3] {
    let (mut a, mut b, mut c) = (HashMap::new(), HashMap::new(), HashMap::new());
    for line in text.lines() {
        let pieces: Vec<&str> = line.split('|').collect();
        let Ok(row) = pieces[0].trim().parse::<usize>() else { continue };
        // Pieces between pipes: drop the row label in front and the empty tail.
        let cells: Vec<&str> = pieces[1..pieces.len() - 1].iter().map(|p| p.trim()).collect();
        if cells.len() == n_cols {
            for (n, l) in cells.iter().enumerate() {
                assert!(b.insert((row, n), l.to_string()).is_none(), "B row {row} twice");
            }
        } else if cells.len() == k_cols + 1 + n_cols {
            assert_eq!(cells[k_cols].parse::<usize>().ok(), Some(row), "C's row label: {line}");
            for (k, l) in cells[..k_cols].iter().enumerate() {
                a.insert((row, k), l.to_string());
            }
            for (n, l) in cells[k_cols + 1..].iter().enumerate() {
                c.insert((row, n), l.to_string());
            }
        } else {
            panic!("unexpected picture line: {line}");
        }
    }
    [a, b, c]
}

const ATOM: &str = "make_mma_atom(bf16, f32, (16,8,16))";

#[test]
fn m16n8k16_picture_matches_the_ptx_fragment_tables() {
    let text = show(ATOM);
    let [a, b, c] = panels(&text, 16, 8);
    assert_eq!((a.len(), b.len(), c.len()), (16 * 16, 16 * 8, 16 * 8), "{text}");
    // The cells derived by hand in the header.
    for ((m, k), want) in
        [((0, 0), "T0V0"), ((0, 1), "T0V1"), ((8, 0), "T0V2"), ((0, 8), "T0V4"), ((1, 2), "T5V0"), ((15, 15), "T31V7")]
    {
        assert_eq!(a[&(m, k)], want, "A({m},{k})");
    }
    for ((k, n), want) in
        [((0, 0), "T0V0"), ((8, 0), "T0V2"), ((0, 1), "T4V0"), ((1, 0), "T0V1"), ((2, 0), "T1V0"), ((15, 7), "T31V3")]
    {
        assert_eq!(b[&(k, n)], want, "B(k={k},n={n})");
    }
    for ((m, n), want) in [((0, 0), "T0V0"), ((8, 1), "T0V3"), ((0, 2), "T1V0"), ((15, 7), "T31V3")] {
        assert_eq!(c[&(m, n)], want, "C({m},{n})");
    }
    // And every cell, from the table formulas of the header.
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        for i in 0..8 {
            let m = if i % 4 < 2 { g } else { g + 8 };
            let k = 2 * t + (i & 1) + if i >= 4 { 8 } else { 0 };
            assert_eq!(a[&(m, k)], format!("T{lane}V{i}"), "A a{i} of lane {lane}");
        }
        for i in 0..4 {
            let k = 2 * t + (i & 1) + if i >= 2 { 8 } else { 0 };
            assert_eq!(b[&(k, g)], format!("T{lane}V{i}"), "B b{i} of lane {lane}");
            let m = if i < 2 { g } else { g + 8 };
            assert_eq!(c[&(m, 2 * t + (i & 1))], format!("T{lane}V{i}"), "C c{i} of lane {lane}");
        }
    }
    // The title and legend: the atom's own TV layouts.
    assert!(
        text.starts_with("TiledMMA(SM80_16x8x16_F32BF16BF16F32_TN, atom layout (1,1,1), tile (16,8,16), 32 threads)\n"),
        "{text}"
    );
    assert!(text.contains("A (M,K) = (16,16), left of C: TV ((4,8),(2,2,2)):((32,1),(16,8,128))"), "{text}");
    assert!(text.contains("B (N,K) = (8,16), drawn K x N above C: TV ((4,8),(2,2)):((16,1),(8,64))"), "{text}");
    assert!(text.contains("C (M,N) = (16,8): TV ((4,8),(2,2)):((32,1),(16,8))"), "{text}");
    // The atom and the tiled MMA of one warp draw the same picture.
    assert_eq!(show(&format!("make_tiled_mma({ATOM}, (1,1,1))")), text);
    // B's columns line up with C's: the '+' of B's rules sit above those of C's.
    let rules: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with('+')).collect();
    let (b_rule, c_rule) = (rules[0], rules.last().unwrap());
    assert_eq!(b_rule.find('+'), c_rule.rfind(' ').map(|i| i + 1), "{b_rule}\n{c_rule}");
    assert!(c_rule.ends_with(b_rule.trim_start()));
}

/// A 2x2 grid of warps: several threads hold each element of A (the two warps along N) and of B
/// (the two along M); the picture shows the lowest thread. Thread index t = lane + 32*(wm + 2*wn).
#[test]
fn tiled_mma_picture_shows_the_lowest_thread() {
    let text = show(&format!("make_tiled_mma({ATOM}, (2,2,1))"));
    let [a, b, c] = panels(&text, 16, 16);
    assert_eq!((a.len(), b.len(), c.len()), (32 * 16, 16 * 16, 32 * 16), "{text}");
    // A rows 0..15 belong to warps (0,0) and (0,1) (threads 0..31 and 64..95): 0..31 shown.
    assert_eq!(a[&(0, 0)], "T0V0");
    assert_eq!(a[&(1, 2)], "T5V0");
    assert_eq!(a[&(16, 0)], "T32V0");
    assert_eq!(a[&(17, 2)], "T37V0");
    // B columns 8..15 belong to warps (0,1) and (1,1) (threads 64..127): 64.. shown.
    assert_eq!(b[&(0, 8)], "T64V0");
    assert_eq!(b[&(0, 9)], "T68V0");
    assert_eq!(b[&(8, 8)], "T64V2");
    // C: one thread each.
    assert_eq!(c[&(16, 0)], "T32V0");
    assert_eq!(c[&(0, 8)], "T64V0");
    assert_eq!(c[&(24, 9)], "T96V3");
    let shown = |p: &HashMap<(usize, usize), String>| -> Vec<u32> {
        let mut t: Vec<u32> = p.values().map(|l| l[1..l.find('V').unwrap()].parse().unwrap()).collect();
        t.sort();
        t.dedup();
        t
    };
    assert_eq!(shown(&a), (0..64).collect::<Vec<_>>(), "A shows warps 0 and 1 only");
    assert_eq!(shown(&b), (0..32).chain(64..96).collect::<Vec<_>>(), "B shows warps 0 and 2 only");
    assert_eq!(shown(&c), (0..128).collect::<Vec<_>>());
    // A tile larger than atom x layout: B (32,16) has 8 values, the second N repeat is V4..V7.
    let text = show(&format!("make_tiled_mma({ATOM}, (2,2,1), (32,32,16))"));
    let [_, b, c] = panels(&text, 16, 32);
    assert_eq!(b[&(0, 16)], "T0V4");
    assert_eq!(c[&(0, 16)], "T0V4");
    assert_eq!(b.len(), 16 * 32);
}

#[test]
fn mma_values_through_the_cli() {
    let (code, out, _) = cli(&["eval", ATOM]);
    assert_eq!(code, 0);
    assert_eq!(out, "MMA_Atom(SM80_16x8x16_F32BF16BF16F32_TN, shape (16,8,16), TV A ((4,8),(2,2,2)):((32,1),(16,8,128)), B ((4,8),(2,2)):((16,1),(8,64)), C ((4,8),(2,2)):((32,1),(16,8)))\n");
    let (code, out, _) = cli(&["eval", &format!("layout_tv_A(make_tiled_mma({ATOM}, (2,2,1)))")]);
    assert_eq!((code, out.as_str()), (0, "(((4,8),2,2,1),(2,2,2)):(((64,1),16,0,512),(32,8,256))\n"));
    let (code, out, _) = cli(&["eval", &format!("make_tiled_mma({ATOM}, (2,2,1), permutation: (32,32,16))")]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with(
            "TiledMMA(SM80_16x8x16_F32BF16BF16F32_TN, atom layout (2,2,1), tile (32,32,16), 128 threads, TV A "
        ),
        "{out}"
    );
    // A TV layout alone draws as a layout; with its tile, as the TV picture (all holders shown).
    let (code, out, _) = cli(&["show", &format!("((32,16), layout_tv_A(make_tiled_mma({ATOM}, (2,2,1))))")]);
    assert_eq!(code, 0);
    assert!(out.contains("T0V0|T64V0"), "{out}");
    // wgmma atoms draw too: the RS atom's A (registers: one holder per element) and the shared
    // operands every thread of the warpgroup holds (the lowest thread shown).
    let (code, out, err) = cli(&["show", "make_mma_atom(bf16, f32, (64,64,16), a_src: \"rmem\")"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("TiledMMA(SM90_64x64x16_F32BF16BF16_RS") && out.contains("T127V7") && out.contains("T0V1023"),
        "{out}"
    );
    let (code, _, err) = cli(&["show", "make_mma_atom(bf16, f32, (64,256,16))"]);
    assert_eq!(code, 0, "{err}");
    // Errors exit 1 with a message.
    let (code, _, err) = cli(&["show", "make_mma_atom(\"fp8\", f32, (16,8,16))"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown element type 'fp8'"), "{err}");
    let (code, _, err) = cli(&["show", &format!("make_tiled_mma({ATOM}, (2,2,1), (4096,4096,16))")]);
    assert_eq!(code, 1);
    assert!(err.contains("exceed the limit"), "{err}");
}
