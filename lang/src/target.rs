//! The target check: a module that uses a [`Feature`] its [`Arch`] lacks is refused, pointing at
//! the use. What each instruction needs is [`kir::Inst::required_feature`]; this is the one walker
//! over a kernel's instructions (and its launch's `cluster(...)`) that compares it with the target.

use crate::diag::Diagnostic;
use crate::kir::{self, FeatureUse};
use cute_abi::{Arch, Feature};

/// Refuses a module that uses instructions `arch` lacks: TMA, transaction-count mbarriers, clusters,
/// 8-bit float conversions and `stmatrix` need sm_90 or later; the wgmma atoms, their synchronizations and
/// `setmaxnreg` exist only on sm_90a (Hopper's arch-specific target). The error points at the first such use of a kernel
/// that needs the oldest target: a kernel that needs both sm_90 and sm_90a is told about sm_90 first.
pub fn check_arch(module: &kir::Module, arch: Arch) -> Result<(), Vec<Diagnostic>> {
    for k in &module.kernels {
        if let Some(missing) = first_missing(k, arch) {
            let (needs, help) = needs(missing.feature);
            return Err(vec![Diagnostic::error(
                format!("{}, which needs {needs}; this build is for {arch}", missing.what),
                missing.span,
                format!("not available on {arch}"),
            )
            .with_help(help)]);
        }
    }
    Ok(())
}

/// The first use in `kernel` of a feature `arch` lacks, among those whose oldest target is oldest.
fn first_missing(kernel: &kir::Kernel, arch: Arch) -> Option<FeatureUse> {
    // A launch's `cluster(...)` compiles to `.reqnctapercluster`, an sm_90 directive.
    let cluster = kernel.cluster.map(|c| FeatureUse {
        feature: Feature::Clusters,
        what: "a `cluster(...)` launch is a Hopper thread-block cluster launch".to_string(),
        span: c.span,
    });
    let mut uses: Vec<FeatureUse> = cluster.into_iter().collect();
    feature_uses(&kernel.body, &mut uses);
    uses.into_iter().filter(|u| !arch.supports(u.feature)).min_by_key(|u| oldest(u.feature))
}

/// Every feature use in `insts` and the regions nested in them, in program order.
fn feature_uses(insts: &[kir::Inst], out: &mut Vec<FeatureUse>) {
    for inst in insts {
        match inst.required_feature() {
            Some(u) => out.push(u),
            None => inst.regions().into_iter().for_each(|r| feature_uses(r, out)),
        }
    }
}

/// The oldest target that has `feature`.
fn oldest(feature: Feature) -> Arch {
    Arch::with(feature)[0]
}

/// What a target must be for `feature` (`sm_90 or later`), and the help that says how to build for it.
fn needs(feature: Feature) -> (String, String) {
    match Arch::with(feature).as_slice() {
        [Arch::Sm90a] => (
            "the sm_90a target".to_string(),
            "build with `cutec build --arch sm_90a` (the cubin then runs on Hopper GPUs only)".to_string(),
        ),
        [oldest, later @ ..] => {
            let or: Vec<String> = later.iter().map(|a| format!("`{a}`")).collect();
            let or = if or.is_empty() { String::new() } else { format!(" (or {})", or.join(", ")) };
            (format!("{oldest} or later"), format!("build with `cutec build --arch {oldest}`{or}"))
        }
        [] => unreachable!("every feature has a target"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(source: &str) -> kir::Module {
        crate::front_end(source).unwrap_or_else(|d| panic!("{d:?}")).1
    }

    /// The one diagnostic of building `source` for `arch`: its message and help.
    fn refusal(source: &str, arch: Arch) -> (String, String) {
        let ds = check_arch(&module(source), arch).expect_err("refused");
        assert_eq!(ds.len(), 1);
        (ds[0].message.clone(), ds[0].help.clone().unwrap_or_default())
    }

    /// `body` as the body of a kernel `k` over `x`, launched with `clauses` after its grid.
    fn launched(body: &str, clauses: &str) -> String {
        format!(
            "kernel k(x: tensor<i32, gmem, (?):(1)>) {{\n{body}\n}}\n\n\
             host run(x: tensor<i32, gmem, (?):(1)>) {{\n    launch k(x) grid(size(x)) {clauses};\n}}\n"
        )
    }

    fn kernel(body: &str) -> String {
        launched(body, "block(128) smem(128)")
    }

    const SM90: &str = "build with `cutec build --arch sm_90` (or `sm_90a`)";
    const SM90A: &str = "build with `cutec build --arch sm_90a` (the cubin then runs on Hopper GPUs only)";

    /// Each feature, refused on the targets without it with its message and help, accepted on the others.
    #[test]
    fn each_feature_on_each_target() {
        let smem = "    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(2));\n";
        let cases = [
            (Feature::Wgmma, "    warpgroup_commit_group();".to_string(), "`warpgroup_commit_group` is a Hopper wgmma instruction"),
            (Feature::Setmaxnreg, "    warpgroup_reg_alloc(240);".to_string(), "`warpgroup_reg_alloc` (setmaxnreg) is a Hopper register re-allocation instruction"),
            (Feature::Tma, "    tma_store_arrive();".to_string(), "`tma_store_arrive` is a Hopper TMA instruction"),
            (Feature::MbarrierTx, format!("{smem}    mbarrier_arrive(bars[1]);"), "`mbarrier_arrive` is a Hopper mbarrier instruction"),
            (Feature::MbarrierTx, "    mbarrier_init_fence();".to_string(), "`mbarrier_init_fence` is a Hopper mbarrier instruction"),
            (Feature::Fp8Convert, "    let q = x[0].to(f8e4m3);\n    x[1] = q.to(i32);".to_string(), "the conversion from `i32` to `f8e4m3` is an 8-bit float conversion instruction"),
            (Feature::Clusters, "    cluster_wait();".to_string(), "`cluster_wait` is a Hopper thread-block cluster instruction"),
            (Feature::Stmatrix, "    let t = make_tiled_mma(make_mma_atom(bf16, f32, shape: (16, 8, 16)), (2, 4, 1), permutation: (32, 64, 16));\n    let r2s = make_tiled_copy_C(make_copy_atom(bf16, op: \"stmatrix.x4\"), t);\n    let s = make_smem_tensor(bf16, make_layout((32, 64), stride: (72, 1)));\n    copy(r2s, make_fragment(8, bf16), r2s.get_slice(thread_idx.x).partition_D(s));".to_string(), "`copy` with stmatrix.x4 is a Hopper stmatrix instruction"),
            (Feature::Clusters, "    let tile = make_smem_tensor(i32, make_layout(32));\n    dsmem_store(tile[0], 1, 7);".to_string(), "distributed shared memory (`dsmem_load`/`dsmem_store`) is a Hopper thread-block cluster feature"),
            (Feature::Clusters, "    atomic_add(x[0], 1, scope: \"cluster\");".to_string(), "`atomic_add` with `scope: \"cluster\"` is a Hopper atomic"),
            (Feature::AtomicsSm90, "    let h = make_smem_tensor(bf16, make_layout(8));\n    atomic_add(h[0], 1.0);".to_string(), "`atomic_add` on bf16 (`atom.add.noftz.bf16`) is a Hopper atomic"),
            (Feature::Clusters, "    let (cx, _, _) = cluster_idx();\n    x[0] = cx;".to_string(), "the cluster registers (`cluster_idx()`, `block_rank_in_cluster()`, ...) are a Hopper thread-block cluster feature"),
        ];
        for (feature, body, what) in cases {
            let source = kernel(&body);
            for arch in Arch::ALL {
                let result = check_arch(&module(&source), arch);
                assert_eq!(result.is_ok(), arch.supports(feature), "{feature:?} on {arch}");
                if arch.supports(feature) {
                    continue;
                }
                let (message, help) = refusal(&source, arch);
                let (needs, want_help) = if feature == Feature::Wgmma || feature == Feature::Setmaxnreg {
                    ("the sm_90a target", SM90A)
                } else {
                    ("sm_90 or later", SM90)
                };
                assert_eq!(message, format!("{what}, which needs {needs}; this build is for {arch}"));
                assert_eq!(help, want_help);
            }
        }
    }

    /// The proxy fence and conversions of constants to 8-bit floats (folded: no instruction) are on
    /// every target; uses nested in branches and loops are found.
    #[test]
    fn everywhere_and_nested() {
        let everywhere = kernel("    fence_proxy_async();\n    let c = (1.5).to(f8e4m3);\n    let d = (7).to(f8e5m2);");
        assert!(Arch::ALL.into_iter().all(|a| check_arch(&module(&everywhere), a).is_ok()));
        let nested =
            kernel("    for i in 0..4 {\n        if x[i] == 0 {\n            cluster_arrive();\n        }\n    }");
        let (message, _) = refusal(&nested, Arch::Sm80);
        assert!(message.starts_with("`cluster_arrive` is a Hopper"), "{message}");
    }

    /// A kernel that needs both sm_90 and sm_90a is told about sm_90 first on sm_80, even where the
    /// sm_90a instruction comes first; on sm_90 about sm_90a.
    #[test]
    fn oldest_target_first() {
        let both = kernel("    warpgroup_fence();\n    tma_store_wait(0);");
        assert!(refusal(&both, Arch::Sm80).0.starts_with("`tma_store_wait`"));
        assert!(refusal(&both, Arch::Sm90).0.starts_with("`warpgroup_fence`"));
        assert!(check_arch(&module(&both), Arch::Sm90a).is_ok());
    }

    /// A launch's `cluster(...)` is refused at the clause, before the kernel's cluster builtins.
    #[test]
    fn cluster_launch() {
        let source = launched("    x[0] = block_rank_in_cluster();", "block(32) cluster(2)");
        let ds = check_arch(&module(&source), Arch::Sm80).expect_err("sm_80 has no clusters");
        assert!(ds[0].message.starts_with("a `cluster(...)` launch is a Hopper thread-block cluster launch"));
        assert_eq!(&source[ds[0].primary.0.start..ds[0].primary.0.end], "cluster(2)");
        assert!(check_arch(&module(&source), Arch::Sm90).is_ok());
    }
}
