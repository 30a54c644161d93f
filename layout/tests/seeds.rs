//! Every layout-algebra example with a printed result in shared/seeds/, as a
//! test with that result. Each case names its seed file; the expression is
//! our `eval` spelling of the seed's call.

use cute_layout::expr::eval_str;

fn ev(s: &str) -> String {
    eval_str(s).map(|v| v.to_string()).unwrap_or_else(|e| format!("error: {e}"))
}

fn check(cases: &[(&str, &str)]) {
    let mut bad = Vec::new();
    for (expr, want) in cases {
        let got = ev(expr);
        if got != *want {
            bad.push(format!("{expr}\n  want {want}\n  got  {got}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// cute-basics-layout-algebra-zh.md
#[test]
fn zh_sublayouts_and_concatenation() {
    check(&[
        ("make_layout((4,(3,6)))", "(4,(3,6)):(1,(4,12))"),
        ("get(make_layout((4,(3,6))), 0)", "4:1"),
        ("get(make_layout((4,(3,6))), 1)", "(3,6):(4,12)"),
        ("get(make_layout((4,(3,6))), 1, 0)", "3:4"),
        ("get(make_layout((4,(3,6))), 1, 1)", "6:12"),
        ("make_layout((2,3,5,7))", "(2,3,5,7):(1,2,6,30)"),
        ("select((2,3,5,7):(1,2,6,30), 1, 3)", "(3,7):(2,30)"),
        ("select((2,3,5,7):(1,2,6,30), 0, 1, 3)", "(2,3,7):(1,2,30)"),
        ("select((2,3,5,7):(1,2,6,30), 2)", "(5):(6)"),
        ("take((2,3,5,7):(1,2,6,30), 1, 3)", "(3,5):(2,6)"),
        ("take((2,3,5,7):(1,2,6,30), 1, 4)", "(3,5,7):(2,6,30)"),
        ("make_layout(3:1, 4:3)", "(3,4):(1,3)"),
        ("make_layout(4:3, 3:1)", "(4,3):(3,1)"),
        ("make_layout(make_layout(3:1, 4:3), make_layout(4:3, 3:1))", "((3,4),(4,3)):((1,3),(3,1))"),
        ("make_layout(3:1)", "(3):(1)"),
        ("make_layout(make_layout(3:1))", "((3)):((1))"),
        ("make_layout(3:1, make_layout(3:1), 3:1)", "(3,(3),3):(1,(1),1)"),
    ]);
    // take<1,1> is not allowed: empty layouts are not allowed.
    assert!(ev("take((2,3,5,7):(1,2,6,30), 1, 1)").starts_with("error: take"));
}

#[test]
fn zh_grouping_and_flattening() {
    check(&[
        ("group_modes((_2,_3,_5,_7):(_1,_2,_6,_30), 0, 2)", "((2,3),5,7):((1,2),6,30)"),
        ("group_modes(group_modes((2,3,5,7):(1,2,6,30), 0, 2), 1, 3)", "((2,3),(5,7)):((1,2),(6,30))"),
        ("flatten(((2,3),5,7):((1,2),6,30))", "(2,3,5,7):(1,2,6,30)"),
        ("flatten(((2,3),(5,7)):((1,2),(6,30)))", "(2,3,5,7):(1,2,6,30)"),
    ]);
}

#[test]
fn zh_coalesce_composition_complement() {
    check(&[
        ("coalesce((_2,(_1,_6)):(_1,(_6,_2)))", "12:1"),
        ("coalesce((2,(1,6)):(1,(6,2)), (1,1))", "(2,6):(1,2)"),
        ("make_layout(coalesce(get((2,(1,6)):(1,(6,2)), 0)), coalesce(get((2,(1,6)):(1,(6,2)), 1)))", "(2,6):(1,2)"),
        ("composition((12,(4,8)):(59,(13,1)), <3:4,8:2>)", "(3,(2,4)):(236,(26,1))"),
        (
            "make_layout(composition(get((12,(4,8)):(59,(13,1)), 0), 3:4), composition(get((12,(4,8)):(59,(13,1)), 1), 8:2))",
            "(3,(2,4)):(236,(26,1))",
        ),
        ("complement(4:1, 24)", "6:4"),
        // The seed prints 6:4 here, a known typo: (6,4):(4,1) has codomain 24,
        // so the complement of 6:4 is 4:1.
        ("complement(6:4, 24)", "4:1"),
    ]);
}

#[test]
fn zh_divides_and_partitions() {
    // logical_divide(A, B) = A o (B, B*)
    check(&[
        (
            "logical_divide((9,(4,8)):(59,(13,1)), <3:3,(2,4):(1,8)>)",
            "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))",
        ),
        ("shape(zipped_divide(make_layout((8,24)), (4,8)))", "((4,8),(2,3))"),
        // local_tile / inner_partition: the (4,8) tile at block (1,2).
        ("shape(local_tile(make_layout((8,24)), (4,8), (1,2)))", "(4,8)"),
        // thr_a = tiled_a(threadIdx.x, (_,_)) : (2,3)
        ("shape(slice(zipped_divide(make_layout((8,24)), (4,8)), (5,(_,_))))", "(2,3)"),
        ("shape(local_partition(make_layout((8,24)), make_layout((4,8)), 5))", "(2,3)"),
    ]);
    // TV partitioning: composition(A, tv) has the TV layout's shape (8,4).
    check(&[
        ("shape(composition(make_layout_right((4,8)), ((2,4),(2,2)):((8,1),(4,16))))", "((2,4),(2,2))"),
        ("size(get(composition(make_layout_right((4,8)), ((2,4),(2,2)):((8,1),(4,16))), 0))", "8"),
        ("size(get(composition(make_layout_right((4,8)), ((2,4),(2,2)):((8,1),(4,16))), 1))", "4"),
    ]);
}

/// cute-dsl-tutorials-and-tl-translation.md
#[test]
fn tutorials_printing_dynamic_layouts() {
    check(&[
        ("make_layout((?,2))", "(?,2):(1,?)"),
        ("make_layout((8,2))", "(8,2):(1,8)"),
        ("make_layout((8,5), (5,1))", "(8,5):(5,1)"),
        ("make_layout((4,3,2), (6,2,1))", "(4,3,2):(6,2,1)"),
    ]);
}

#[test]
fn tutorials_coalesce() {
    check(&[
        ("(2,(1,6)):(1,(?,2))", "(2,(1,6)):(1,(?,2))"),
        ("coalesce((2,(1,6)):(1,(?,2)))", "12:1"),
        ("coalesce((2,(1,6)):(1,(6,2)))", "12:1"),
        ("coalesce(((2,(3,4)),(3,2),1):((4,(8,24)),(2,6),12))", "(24,6):(4,2)"),
        ("size(((2,(3,4)),(3,2),1):((4,(8,24)),(2,6),12))", "144"),
        ("depth(coalesce(((2,(3,4)),(3,2),1):((4,(8,24)),(2,6),12)))", "1"),
        ("coalesce((2,(1,6)):(1,(6,2)), (1,1))", "(2,6):(1,2)"),
    ]);
    // 3. the function is kept: every index printed in the seed.
    for i in 0..144 {
        assert_eq!(
            ev(&format!("eval(((2,(3,4)),(3,2),1):((4,(8,24)),(2,6),12), {i})")),
            ev(&format!("eval((24,6):(4,2), {i})"))
        );
    }
    check(&[("eval((24,6):(4,2), 25)", "6"), ("eval((24,6):(4,2), 71)", "96"), ("eval((24,6):(4,2), 101)", "28")]);
}

#[test]
fn tutorials_composition() {
    check(&[
        ("composition((6,2):(?,2), (4,3):(3,1))", "((2,2),3):((?{div=3},2),?)"),
        ("composition((6,2):(8,2), (4,3):(3,1))", "((2,2),3):((24,2),8)"),
        ("composition((10,2):(16,4), (5,4):(1,5))", "(5,(2,2)):(16,(80,4))"),
        ("composition((?,(?,?)):(?,(?,?)), (3,8))", "(3,(?,?)):(?,(?,?))"),
        ("composition((12,(4,8)):(59,(13,1)), (3,8))", "(3,(4,2)):(59,(13,1))"),
    ]);
    // R_dynamic: ((5,1),(2,2)):((16,4),(80,4)) is the same function as the
    // static (5,(2,2)):(16,(80,4)): CuTe keeps the dynamic size-1 mode.
    for i in 0..20 {
        assert_eq!(
            ev(&format!("eval(((5,1),(2,2)):((16,4),(80,4)), {i})")),
            ev(&format!("eval((5,(2,2)):(16,(80,4)), {i})"))
        );
    }
}

#[test]
fn tutorials_divides() {
    check(&[
        ("logical_divide((4,2,3):(2,1,8), 4:2)", "((2,2),(2,3)):((4,1),(2,8))"),
        (
            "logical_divide((9,(4,8)):(59,(13,1)), <3:3,(2,4):(1,8)>)",
            "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))",
        ),
        ("zipped_divide((9,(4,8)):(59,(13,1)), <3:3,(2,4):(1,8)>)", "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"),
        ("tiled_divide((9,(4,8)):(59,(13,1)), <3:3,(2,4):(1,8)>)", "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"),
        ("flat_divide((9,(4,8)):(59,(13,1)), <3:3,(2,4):(1,8)>)", "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"),
    ]);
}

#[test]
fn tutorials_products() {
    check(&[
        ("logical_product((2,2):(4,1), 6:1)", "((2,2),(2,3)):((4,1),(2,8))"),
        ("blocked_product((2,5):(5,1), (3,4):(1,3))", "((2,3),(5,4)):((5,10),(1,30))"),
        ("raked_product((2,5):(5,1), (3,4):(1,3))", "((3,2),(4,5)):((10,5),(30,1))"),
        ("zipped_product((2,5):(5,1), (3,4):(1,3))", "((2,5),(3,4)):((5,1),(10,30))"),
        ("tiled_product((2,5):(5,1), (3,4):(1,3))", "((2,5),3,4):((5,1),10,30)"),
        ("flat_product((2,5):(5,1), (3,4):(1,3))", "(2,5,3,4):(5,1,10,30)"),
    ]);
}

#[test]
fn tutorials_elementwise_add() {
    check(&[
        ("zipped_divide((2048,2048):(2048,1), (1,4))", "((1,4),(2048,512)):((0,1),(2048,4))"),
        ("slice(((1,4),(2048,512)):((0,1),(2048,4)), (_,(3,5)))", "((1,4)):((0,1)) offset=6164"),
        ("make_layout_tv((4,32):(32,1), (4,8):(8,1))", "((16,256),((32,4),(8,4)):((128,4),(16,1)))"),
        ("zipped_divide((2048,2048):(2048,1), (16,256))", "((16,256),(128,8)):((2048,1),(32768,256))"),
        ("slice(((16,256),(128,8)):((2048,1),(32768,256)), ((_,_),0))", "(16,256):(2048,1) offset=0"),
        // The seed's hand-drawn figure prints the thread stride as 4; the
        // composition gives 8 (each thread owns 8 contiguous values).
        ("composition((16,256):(2048,1), ((32,4),(8,4)):((128,4),(16,1)))", "((32,4),(8,4)):((8,8192),(1,2048))"),
        ("size(get(((32,4),(8,4)):((128,4),(16,1)), 0))", "128"),
    ]);
}

/// cute-dsl-intro-reduce-sum.md: the tilers of make_layout_tv and the
/// zipped_divide of a (64,32) row-major tensor.
#[test]
fn reduce_sum_tv_layouts() {
    check(&[
        ("get(make_layout_tv((32):(1), (1):(1)), 0)", "(32)"),
        ("zipped_divide((64,32):(32,1), (1,32))", "((1,32),(64,1)):((0,1),(32,0))"),
        ("get(make_layout_tv((4,8):(8,1), (1):(1)), 0)", "(4,8)"),
        ("zipped_divide((64,32):(32,1), (4,8))", "((4,8),(16,4)):((32,1),(128,8))"),
        ("get(make_layout_tv(((2,4),8):((32,8),1), (1):(1)), 0)", "(8,8)"),
        ("zipped_divide((64,32):(32,1), (8,8))", "((8,8),(8,4)):((32,1),(256,8))"),
    ]);
}

/// four-ways-cute-copy.md: an 8x128 tile, 8 values per thread, 128 threads.
#[test]
fn four_ways_copy() {
    // (M, K) -> addr for a row-major 8x128 tile; flat_divide by (1,8):
    // (TileM, TileK, RestM, RestK), then select [0,1,3,2] and group (2,4).
    check(&[
        ("flat_divide((8,128):(128,1), (1,8))", "(1,8,8,16):(0,1,128,8)"),
        ("select(flat_divide((8,128):(128,1), (1,8)), (0,1,3,2))", "(1,8,16,8):(0,1,8,128)"),
        ("group_modes(select(flat_divide((8,128):(128,1), (1,8)), (0,1,3,2)), 2, 4)", "(1,8,(16,8)):(0,1,(8,128))"),
        ("slice((1,8,(16,8)):(0,1,(8,128)), (0,_,17))", "(8):(1) offset=136"),
        // Approach 3: TV layout ((16,8),8):((64,1),8) composed with the tile.
        ("composition((8,128):(128,1), ((16,8),8):((64,1),8))", "((16,8),8):((8,128),1)"),
        ("slice(composition((8,128):(128,1), ((16,8),8):((64,1),8)), (17,_))", "(8):(1) offset=136"),
    ]);
}

/// The issue's own examples.
#[test]
fn issue_examples() {
    check(&[
        ("12:1", "12:1"),
        ("(4,8):(8,1)", "(4,8):(8,1)"),
        ("((2,2),3):((24,2),8)", "((2,2),3):((24,2),8)"),
        ("<3:3,(2,4):(1,8)>", "<3:3,(2,4):(1,8)>"),
        ("(16,256)", "(16,256)"),
        ("composition((6,2):(8,2), (4,3):(3,1))", "((2,2),3):((24,2),8)"),
        ("complement(4:1, 24)", "6:4"),
        ("coalesce((2,(1,6)):(1,(6,2)), (1,1))", "(2,6):(1,2)"),
    ]);
}
