//! Identity layouts (strides `1@0`, `1@1`, ...) and counting tensors, with
//! results derived by hand from CuTe's documentation (pycute has no
//! ScaledBasis, so the differential test cannot cover them).

use cute_layout::expr::eval_str;
use cute_layout::{composition, zipped_divide, Int, IntTuple, Layout, Tiler};

fn ev(s: &str) -> String {
    eval_str(s).map(|v| v.to_string()).unwrap_or_else(|e| format!("error: {e}"))
}

#[test]
fn identity_layouts_print_as_cute() {
    assert_eq!(ev("make_identity_layout((4,8))"), "(4,8):(1@0,1@1)");
    assert_eq!(ev("make_identity_layout(((2,3),4))"), "((2,3),4):((1@0@0,1@1@0),1@1)");
    assert_eq!(ev("make_identity_layout(4)"), "4:1");
    assert_eq!(ev("make_identity_layout((?,8))"), "(?,8):(1@0,1@1)");
    assert_eq!(ev("make_identity_tensor((4,8))"), "ArithTuple(0,0) o (4,8):(1@0,1@1)");
}

#[test]
fn basis_strides_parse_and_round_trip() {
    for s in ["(4,8):(1@0,1@1)", "(4,8):(2@1,?@0)", "((2,3),4):((1@0@0,1@1@0),1@1)", "(2,2):(3@0,0)", "8:?{div=4}@1"] {
        assert_eq!(ev(s), s);
    }
    let l: Layout = "(4,8):(1@0,1@1)".parse().unwrap();
    assert_eq!(l, Layout::identity(cute_layout::tup![4, 8]).unwrap());
    assert!(l.is_static() && l.has_basis_strides());
    assert_eq!(l.basis_paths(), vec![vec![0], vec![1]]);
    assert!(ev("(1@0,2):(1,1)").contains("shapes are integers"));
    assert!(ev("(1,2)@0").starts_with("error: parse"));
}

#[test]
fn identity_maps_a_coordinate_to_itself() {
    assert_eq!(ev("eval(make_identity_layout((4,8)), 9)"), "(1,2)");
    assert_eq!(ev("eval(make_identity_layout((4,8)), 3)"), "(3,0)");
    assert_eq!(ev("eval(make_identity_layout((4,8)), (2,5))"), "(2,5)");
    assert_eq!(ev("eval(make_identity_layout(((2,3),4)), 17)"), "((1,2),2)");
    let l = Layout::identity(cute_layout::tup![3, 5]).unwrap();
    for i in 0..15 {
        assert_eq!(l.eval_coord(&IntTuple::from(i), None).unwrap(), cute_layout::tup![i % 3, i / 3]);
    }
}

#[test]
fn divides_and_composition_of_identity_layouts() {
    assert_eq!(ev("zipped_divide(make_identity_layout((4,8)), (2,4))"), "((2,4),(2,2)):((1@0,1@1),(2@0,4@1))");
    assert_eq!(ev("logical_divide(make_identity_layout((4,8)), (2,4))"), "((2,2),(4,2)):((1@0,2@0),(1@1,4@1))");
    assert_eq!(ev("tiled_divide(make_identity_layout((4,8)), (2,4))"), "((2,4),2,2):((1@0,1@1),2@0,4@1)");
    assert_eq!(ev("flat_divide(make_identity_layout((4,8)), (2,4))"), "(2,4,2,2):(1@0,1@1,2@0,4@1)");
    assert_eq!(ev("composition(make_identity_layout((4,8)), (4,8):(8,1))"), "(4,(4,2)):(2@1,(1@0,1@1))");
    assert_eq!(ev("composition(make_identity_layout((4,8)), 8:4)"), "8:1@1");
    assert_eq!(ev("composition(make_identity_layout((4,8)), 6:2)"), "(2,3):(2@0,1@1)");
    assert_eq!(ev("composition(make_identity_layout((12,8)), <(2,3):(3,1), _>)"), "((2,3),8):((3@0,1@0),1@1)");
    // Dynamic shapes go through the divides.
    assert_eq!(
        ev("zipped_divide(make_identity_layout((?,?{div=8})), (16,8))"),
        "((16,8),(?,?)):((1@0,1@1),(16@0,8@1))"
    );
    // Composition agrees with evaluation coordinate by coordinate.
    let a = Layout::identity(cute_layout::tup![6, 4]).unwrap();
    let t: Tiler = "(3,2)".parse().unwrap();
    let z = zipped_divide(&a, &t).unwrap();
    let b: Layout = "(3,2,2,2):(1,6,3,12)".parse().unwrap();
    let r = composition(&a, &b).unwrap();
    for i in 0..24 {
        let want = a.eval_coord(&IntTuple::from(b.call(i).unwrap()), None).unwrap();
        assert_eq!(r.eval_coord(&IntTuple::from(i), None).unwrap(), want, "at {i}");
    }
    assert_eq!(z.size().unwrap(), Int::S(24));
}

#[test]
fn coalesce_merges_only_equal_bases() {
    assert_eq!(ev("coalesce((2,2):(1@0,2@0))"), "4:1@0");
    assert_eq!(ev("coalesce(make_identity_layout((4,8)))"), "(4,8):(1@0,1@1)");
    assert_eq!(ev("coalesce((4,1,8):(1@0,1@1,1@1))"), "(4,8):(1@0,1@1)");
    assert_eq!(ev("coalesce((2,4):(1@0,2@1))"), "(2,4):(1@0,2@1)");
    assert_eq!(ev("filter((2,3,4):(1@0,0,1@1))"), "(2,4):(1@0,1@1)");
}

#[test]
fn counting_tensors_slice_and_tile() {
    assert_eq!(ev("local_tile(make_identity_tensor((128,64)), (16,8), (2,3))"), "ArithTuple(32,24) o (16,8):(1@0,1@1)");
    assert_eq!(ev("eval(local_tile(make_identity_tensor((128,64)), (16,8), (2,3)), (1,1))"), "(33,25)");
    assert_eq!(ev("local_partition(make_identity_tensor((8,8)), (4,2):(1,4), 5)"), "ArithTuple(1,1) o (2,4):(4@0,2@1)");
    assert_eq!(ev("slice(make_identity_tensor((4,8)), (_,3))"), "ArithTuple(0,3) o (4):(1@0)");
    assert_eq!(
        ev("zipped_divide(make_identity_tensor((4,8)), (2,4))"),
        "ArithTuple(0,0) o ((2,4),(2,2)):((1@0,1@1),(2@0,4@1))"
    );
}

#[test]
fn integer_only_operations_refuse_basis_strides() {
    for (e, op) in [
        ("complement(make_identity_layout((4,8)), 64)", "complement"),
        ("complement(make_identity_layout((4,8)))", "complement"),
        ("right_inverse(make_identity_layout((4,8)))", "right_inverse"),
        ("left_inverse(make_identity_layout((4,8)))", "left_inverse"),
        ("cosize(make_identity_layout((4,8)))", "cosize"),
        ("composition(32:1, make_identity_layout((4,8)))", "composition"),
        ("logical_product(make_identity_layout((4,8)), 2:1)", "logical_product"),
        ("idx2crd(5, (4,8), (1@0,1@1))", "idx2crd"),
    ] {
        let got = ev(e);
        assert!(got.starts_with(&format!("error: {op}")) && got.contains("basis element"), "{e}: {got}");
    }
    assert!(ev("composition(32:1, make_identity_layout((4,8)))").contains("mode 0"));
}

#[test]
fn show_draws_coordinates() {
    let g = cute_layout::show::grid_of(&eval_str("make_identity_layout((2,3))").unwrap()).unwrap();
    let t = cute_layout::show::to_text(&g);
    assert!(t.contains("| (0,0) | (0,1) | (0,2) |") && t.contains("| (1,0) | (1,1) | (1,2) |"), "{t}");
    let g = cute_layout::show::grid_of(&eval_str("local_tile(make_identity_tensor((8,8)), (2,4), (1,1))").unwrap())
        .unwrap();
    assert!(cute_layout::show::to_text(&g).contains("(3,7)"));
    assert!(cute_layout::show::grid_of(&eval_str("make_identity_layout((?,4))").unwrap()).is_err());
}

#[test]
fn basis_arithmetic_is_checked() {
    let e0 = Int::basis(&[0], &Int::ONE).unwrap();
    let e1 = Int::basis(&[1], &Int::ONE).unwrap();
    assert!(e0.mul(&e1).is_err());
    assert_eq!(e0.mul(&Int::S(3)).unwrap().to_string(), "3@0");
    assert_eq!(e0.mul(&Int::S(4)).unwrap().known_eq(&e0.mul(&Int::S(2)).unwrap().mul(&Int::S(2)).unwrap()), Some(true));
    assert_eq!(e0.known_eq(&e1), Some(false));
    assert_eq!(e0.known_eq(&Int::S(1)), Some(false));
    assert!(Int::basis(&[0], &Int::S(i64::MAX)).unwrap().mul(&Int::S(2)).is_err());
    let sum = e0.mul(&Int::S(3)).unwrap().add(&e1.mul(&Int::S(5)).unwrap()).unwrap();
    assert_eq!(sum.to_string(), "(3,5)");
}

/// The identity layout divided by any tiler that divides it maps each
/// element to the coordinate the same division of the compact layout maps it
/// to (its index, converted back to a coordinate).
#[test]
fn divided_identity_agrees_with_divided_compact_layout() {
    let mut checked = 0;
    for m in 1..=8i64 {
        for n in 1..=6i64 {
            for a in (1..=m).filter(|a| m % a == 0) {
                for b in (1..=n).filter(|b| n % b == 0) {
                    let shape = cute_layout::tup![m, n];
                    let id = Layout::identity(shape.clone()).unwrap();
                    let cm = Layout::col_major(shape.clone()).unwrap();
                    let t = Tiler::Shape(cute_layout::tup![a, b]);
                    let zi = zipped_divide(&id, &t).unwrap();
                    let zc = zipped_divide(&cm, &t).unwrap();
                    for i in 0..m * n {
                        let idx = zc.call(i).unwrap();
                        let want = cute_layout::idx2crd(&IntTuple::Int(idx), &shape).unwrap();
                        // Compared as arithmetic-tuple components: size-1 modes
                        // get stride 0 (as in CuTe), so a degenerate result may
                        // print the zero tuple as 0.
                        let got = zi.eval(&IntTuple::from(i)).unwrap().arith_components().unwrap();
                        let want: Vec<(Vec<u32>, Int)> = want
                            .leaves()
                            .into_iter()
                            .enumerate()
                            .filter(|(_, c)| !c.is(0))
                            .map(|(k, c)| (vec![k as u32], c))
                            .collect();
                        assert_eq!(got, want, "{zi} at {i}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100);
}
