//! The layout functions of issue 14 (`crd2idx`, `idx2crd`, `take`, `dice`, `filter_zeros`,
//! `max_common_vector`/`_layout`, `recast_layout`), the register budget of `make_fragment`, and
//! `recast` of tensors, through the front end: what compile-time `print` shows, and what a kernel's
//! IR holds.

use cute_lang::front_end;
use cute_lang::kir::{Inst, Kernel, ViewHow};
use cute_lang::types::Scalar;

fn module(src: &str) -> cute_lang::kir::Module {
    match front_end(src) {
        Ok((_, m)) => m,
        Err(ds) => panic!("{}", cute_lang::diag::render("test.cute", src, &ds)),
    }
}

fn prints(src: &str) -> Vec<String> {
    module(src).prints
}

#[test]
fn layout_functions_at_compile_time() {
    let p = prints(
        r#"
host h(a: tensor<f32, gmem, (?,?):(?,1)>) {
    let l = make_layout((4, 8), stride: (8, 1));
    print(crd2idx((1, 2), (4, 8)), crd2idx((1, 2), (4, 8), (8, 1)), crd2idx(9, l), crd2idx((1, 2), a));
    print(idx2crd(9, (4, 8)), idx2crd(10, (4, 8), (8, 1)), idx2crd(7, (2, (2, 3))));
    print(take(make_layout((2, 3, 4, 5)), 1, 3), take(a, 1, 2));
    print(dice(make_layout(((2, 3), 5), stride: ((3, 6), 18)), ((2, _), 0)), dice((4, 8, 16), (1, _, 2)));
    print(filter_zeros(make_layout((4, 8), stride: (0, 1))), filter(make_layout((4, 8), stride: (0, 1))));
    print(max_common_vector(l, l), max_common_vector(make_layout((4, 8)), l), max_common_layout(make_layout((8, 8), stride: (1, 8)), make_layout((8, 8), stride: (1, 16))));
    print(recast_layout(u32, f16, make_layout((8, 64), stride: (64, 1))), recast_layout(16, 32, l), recast_layout(f16, bf16, l));
}
"#,
    );
    assert_eq!(
        p,
        [
            "9 10 10 ?",
            "(1,2) (1,2) (1,(1,1))",
            "(3,4):(2,6) tensor<ptr<f32, gmem, align<4>> o (?):(1)>",
            "(2,5):(3,18) (4,16)",
            "(1,8):(0,1) 8:1",
            "32 1 8:1",
            "(8,32):(32,1) (4,16):(16,1) (4,8):(8,1)",
        ]
    );
}

fn kernel<'a>(m: &'a cute_lang::kir::Module, name: &str) -> &'a Kernel {
    m.kernels.iter().find(|k| k.symbol == name).unwrap_or_else(|| panic!("no kernel {name}"))
}

#[test]
fn run_time_index_round_trips_through_idx2crd_and_crd2idx() {
    // A run-time index: the coordinate and the offset are symbolic in thread_idx.x.
    let m = module(
        r#"
kernel k(a: tensor<f32, gmem, (4,8):(8,1)>, out: tensor<i32, gmem, (32):(1)>) {
    let t = thread_idx.x;
    let (r, c) = idx2crd(t, (4, 8));
    print(r, c);
    out[t] = crd2idx((r, c), a.layout);
}
"#,
    );
    assert_eq!(m.prints, ["? ?"]);
    let k = kernel(&m, "k");
    assert!(k.body.iter().any(|i| matches!(i, Inst::Store { .. })), "{:?}", k.body);
}

#[test]
fn recast_makes_a_view_of_another_element_type() {
    let m = module(
        r#"
kernel r(a: tensor<f16, gmem, (8,64):(64,1), align: 16>, b: tensor<u32, gmem, (8,32):(32,1), align: 16>) {
    let frag = make_fragment(8, f16);
    copy(local_tile(a[thread_idx.x, _], 8, 0), frag);
    let w = recast(frag, u32);
    print(w);
    print(recast(a, u32));
    copy(w, local_tile(b[thread_idx.x, _], 4, 0));
    print(recast(make_fragment((2, 4), f32), f16));
}
"#,
    );
    assert_eq!(
        m.prints,
        [
            "tensor<ptr<u32, rmem, align<16>> o 4:1>",
            "tensor<ptr<u32, gmem, align<16>> o (8,32):(32,1)>",
            "tensor<ptr<f16, rmem, align<16>> o (4,4):(1,4)>",
        ]
    );
    let recasts: Vec<(Scalar, Scalar)> = kernel(&m, "r")
        .body
        .iter()
        .filter_map(|i| match i {
            Inst::View { how: ViewHow::Recast { from }, ty, .. } => Some((*from, ty.elem)),
            _ => None,
        })
        .collect();
    assert_eq!(recasts, [(Scalar::F16, Scalar::U32), (Scalar::F16, Scalar::U32), (Scalar::F32, Scalar::F16)]);
}

#[test]
fn register_budget_counts_32_bit_registers() {
    // 480 f16 are 240 registers: allowed; 241 f32 are not, nor 481 f16.
    let ok = "kernel k(a: tensor<f16, gmem, (8):(1)>) {\n    let r = make_fragment(480, f16);\n    r.fill(0.0);\n    let v = r.load();\n}\n";
    assert!(front_end(ok).is_ok());
    for (n, t) in [(241, "f32"), (481, "f16"), (121, "f64"), (241, "bool")] {
        let src = format!("kernel k(a: tensor<f16, gmem, (8):(1)>) {{\n    let r = make_fragment({n}, {t});\n}}\n");
        let e = front_end(&src).err().unwrap_or_else(|| panic!("{n} {t} accepted"));
        assert!(e[0].message.contains("more than the budget of 240"), "{}", e[0].message);
    }
}
