// RUN: not %cutec opt %s 2>&1 | FileCheck %s
// RUN: not %cutec opt %s --pass cute-lower-mma 2>&1 | FileCheck %s
// RUN: not %cutec opt %S/Inputs/mma/no-atom.mlir 2>&1 | FileCheck %s --check-prefix=NOATOM
// RUN: not %cutec opt %S/Inputs/mma/unlowered.mlir --pass cute-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: %cutec opt %S/Inputs/mma/unlowered.mlir --pass cute-canonicalize --pass cute-vectorize --pass cute-lower-mma --pass cute-lower-to-gpu | FileCheck %s --check-prefix=ORDERED
// NOATOM: no-atom.mlir:4:12: error: 'cute.mma' op attribute "atom" is expected but not provided
// ORDER: unlowered.mlir:4:12: error: cute-lower-to-gpu: no lowering for `cute.mma`
// ORDERED: llvm.inline_asm "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// ORDERED: llvm.store %{{.*}}, %arg3 {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// ORDERED-NOT: cute.
// cute-verify checks what IRDL cannot: atoms by name, tiled MMAs against their atom, `cute.mma`
// fragments against the atom's TV layouts, and each partition's result type against the layout
// algebra. Every error points at its op; no pass (cute-lower-mma here) runs on IR that fails.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @atoms(%a: !cute.tensor<bf16, "gmem", 16, "(16,16):(16,1)">, %r: !cute.tensor<bf16, "gmem", 16, "(256):(1)">, %t: i32) kernel {
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:12: error: unknown MMA atom "SM80_16x8x32_F32BF16BF16F32_TN"; the atoms are SM80_16x8x16_F32F16F16F32_TN, SM80_16x8x16_F16F16F16F16_TN, SM80_16x8x16_F32BF16BF16F32_TN, SM80_16x8x8_F32TF32TF32F32_TN
      %x = "cute.make_mma_atom"() : () -> !cute.mma_atom<"SM80_16x8x32_F32BF16BF16F32_TN">
      %atom = "cute.make_mma_atom"() : () -> !cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: make_tiled_mma: mode 1: the permutation size 24 is not a multiple of atom 8 x layout 2 = 16
      %m1 = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(2,2,1)", "(32,24,16)">
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: make_tiled_mma: mode 2: the permutation size 8 is not a multiple of atom 16 x layout 1 = 16
      %m2 = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,8)">
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: the atom operand is SM80_16x8x16_F32BF16BF16F32_TN but the tiled MMA's type says SM80_16x8x16_F32F16F16F32_TN
      %m3 = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32F16F16F32_TN", "(1,1,1)", "(16,8,16)">
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: make_tiled_mma: the atom layout (8,8,1) needs 2048 threads; a block has at most 1024
      %m4 = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(8,8,1)", "(128,64,16)">
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: make_tiled_mma: the atom layout (1,0,1) needs positive extents
      %m5 = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,0,1)", "(16,8,16)">
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: "(2,2)" is not three static integers
      %m6 = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(2,2)", "(32,16,16)">
      %mma = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">
      // A partition's result type is what the algebra gives, modes as CuTe's partition_A gives them
      // (FrgV, RestM, RestK), not a canonical form of it.
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:12: error: `cute.partition_a` gives the layout ((2,2,2),1,1):((1,128,8),0,0) by the layout algebra, but its result type says "(2,2,2):(1,128,8)"
      %p = "cute.partition_a"(%a, %mma, %t) : (!cute.tensor<bf16, "gmem", 16, "(16,16):(16,1)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">, i32) -> !cute.tensor<bf16, "gmem", 4, "(2,2,2):(1,128,8)">
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: `cute.partition_c` gives the layout ((2,2),1,2):((1,128),0,8) by the layout algebra, but its result type says "((2,2),1,1):((1,64),0,0)"
      %pc = "cute.partition_c"(%a, %mma, %t) : (!cute.tensor<bf16, "gmem", 16, "(16,16):(16,1)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">, i32) -> !cute.tensor<bf16, "gmem", 4, "((2,2),1,1):((1,64),0,0)">
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: the layout algebra rejects the MMA partition: partition_A: tv_partition: zipped_divide: the tiler (16,16) has 2 modes but (256):(1) has only 1
      %pr = "cute.partition_a"(%r, %mma, %t) : (!cute.tensor<bf16, "gmem", 16, "(256):(1)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">, i32) -> !cute.tensor<bf16, "gmem", 4, "(2,2,2):(1,128,8)">
      // An op on a partition that failed is not reported again.
      // CHECK-NOT: error
      %s = "cute.slice"(%p) {args = ["(_,0,0)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<bf16, "gmem", 4, "(2,2,2):(1,128,8)">) -> !cute.tensor<bf16, "gmem", 4, "(2,2,2):(1,128,8)">
      gpu.return
    }

    gpu.func @fragments(%va: vector<8xbf16>, %vb: vector<4xbf16>, %vc: vector<4xf32>, %wa: vector<4xbf16>, %fa: vector<8xf16>, %hc: vector<4xf16>, %ta: vector<4xf32>, %tb: vector<4xf32>) kernel {
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: A holds one thread's 8 values of SM80_16x8x16_F32BF16BF16F32_TN as vector<8xbf16>, found vector<4xbf16>
      %d1 = "cute.mma"(%wa, %vb, %vc) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (vector<4xbf16>, vector<4xbf16>, vector<4xf32>) -> vector<4xf32>
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: A holds one thread's 8 values of SM80_16x8x16_F32BF16BF16F32_TN as vector<8xbf16>, found vector<8xf16>
      %d2 = "cute.mma"(%fa, %vb, %vc) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (vector<8xf16>, vector<4xbf16>, vector<4xf32>) -> vector<4xf32>
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: B holds one thread's 4 values of SM80_16x8x16_F32BF16BF16F32_TN as vector<4xbf16>, found vector<8xbf16>
      %d3 = "cute.mma"(%va, %va, %vc) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (vector<8xbf16>, vector<8xbf16>, vector<4xf32>) -> vector<4xf32>
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: C holds one thread's 4 values of SM80_16x8x16_F32BF16BF16F32_TN as vector<4xf32>, found vector<4xf16>
      %d4 = "cute.mma"(%va, %vb, %hc) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (vector<8xbf16>, vector<4xbf16>, vector<4xf16>) -> vector<4xf16>
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: the result is D = A*B + C, of C's type vector<4xf32>, not vector<4xf16>
      %d5 = "cute.mma"(%va, %vb, %vc) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (vector<8xbf16>, vector<4xbf16>, vector<4xf32>) -> vector<4xf16>
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: unknown MMA atom "SM80_16x8x16_BF16"; the atoms are
      %d6 = "cute.mma"(%va, %vb, %vc) {atom = "SM80_16x8x16_BF16"} : (vector<8xbf16>, vector<4xbf16>, vector<4xf32>) -> vector<4xf32>
      // tf32 m16n8k8 holds 2 B values per thread, not 4.
      // CHECK: mma-errors.mlir:[[# @LINE + 1]]:13: error: B holds one thread's 2 values of SM80_16x8x8_F32TF32TF32F32_TN as vector<2xf32>, found vector<4xf32>
      %d7 = "cute.mma"(%ta, %tb, %vc) {atom = "SM80_16x8x8_F32TF32TF32F32_TN"} : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
      gpu.return
    }
  }
}
