//! The views the front end makes with the layout algebra are re-run by the passes by their name
//! (`cute-canonicalize` folds `cute.<op>` through `cute_layout::expr`; which names it folds is
//! `cute_layout::expr::is_tensor_view_op`, asked by the compiler's `passes::algebra::is_foldable`):
//! every such name must be one `expr` knows as a view operation.

use cute_lang::imports::DiskLoader;
use cute_lang::kir::{Inst, Module, ViewHow};
use cute_lang::{front_end, front_end_files};
use std::collections::BTreeSet;

/// What the passes re-run by name (`passes::algebra::is_foldable` asks the same function).
fn passes_rerun(op: &str) -> bool {
    cute_layout::expr::is_tensor_view_op(op)
}

fn collect(insts: &[Inst], ops: &mut BTreeSet<String>) {
    for inst in insts {
        if let Inst::View { how: ViewHow::Algebra { op, .. }, .. } = inst {
            ops.insert(op.clone());
        }
        for region in inst.regions() {
            collect(region, ops);
        }
    }
}

fn view_ops(m: &Module) -> BTreeSet<String> {
    let mut ops = BTreeSet::new();
    for k in &m.kernels {
        collect(&k.body, &mut ops);
    }
    ops
}

/// Every layout builtin that gives a view of a tensor, applied to one.
const EVERY_VIEW: &str = "
kernel k(a: tensor<f32, gmem, (16,32):(32,1)>) {
    let tid = thread_idx.x;
    let v0 = composition(a, (4, 8));
    let v1 = coalesce(a);
    let v2 = coalesce(a, (1, 1));
    let v3 = flatten(a);
    let v4 = logical_divide(a, (4, 8));
    let v5 = zipped_divide(a, (4, 8));
    let v6 = tiled_divide(a, (4, 8));
    let v7 = flat_divide(a, (4, 8));
    let v8 = select(a, (1, 0));
    let v9 = group_modes(a, 0, 2);
    let v10 = get(a, 0);
    let v11 = take(a, 0, 1);
    let v12 = filter_zeros(a);
    let v13 = local_tile(a, (4, 8), (block_idx.x, 0));
    let v14 = local_partition(a, make_layout((4, 8)), tid);
    let v15 = a[tid, _];
}
";

#[test]
fn every_view_builtin_is_an_operation_the_passes_rerun() {
    let (_, m) =
        front_end(EVERY_VIEW).unwrap_or_else(|ds| panic!("{}", cute_lang::diag::render("t.cute", EVERY_VIEW, &ds)));
    let ops = view_ops(&m);
    for op in [
        "composition",
        "coalesce",
        "flatten",
        "logical_divide",
        "zipped_divide",
        "tiled_divide",
        "flat_divide",
        "select",
        "group_modes",
        "get",
        "make_view",
        "local_tile",
        "local_partition",
        "slice",
    ] {
        assert!(ops.contains(op), "no `{op}` view made: {ops:?}");
    }
    let unknown: Vec<&String> = ops.iter().filter(|op| !passes_rerun(op)).collect();
    assert!(unknown.is_empty(), "views the passes cannot re-run: {unknown:?}");
}

/// The same over every sample and lit test the front end accepts.
#[test]
fn the_samples_views_are_operations_the_passes_rerun() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut files = Vec::new();
    let mut dirs = vec![format!("{root}/samples"), format!("{root}/tests/lit")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path.display().to_string());
            } else if path.extension().is_some_and(|e| e == "cute") {
                files.push(path);
            }
        }
    }
    let mut ops = BTreeSet::new();
    for path in &files {
        let mut sources = DiskLoader::root(path).unwrap();
        if let Ok((_, m)) = front_end_files(&mut sources, &mut DiskLoader::default(), Default::default()) {
            ops.extend(view_ops(&m));
        }
    }
    assert!(ops.len() > 3, "too few views in the samples: {ops:?}");
    let unknown: Vec<&String> = ops.iter().filter(|op| !passes_rerun(op)).collect();
    assert!(unknown.is_empty(), "views the passes cannot re-run: {unknown:?}");
}
