// RUN: not %cutec opt %s 2>&1 | FileCheck %s
// RUN: not %cutec opt %S/Inputs/wgmma/offset.mlir --pass cute-canonicalize --pass cute-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=OFFSET
// RUN: %cutec opt %S/Inputs/wgmma/offset.mlir -o %t.mlir
// RUN: %cutec opt %t.mlir | FileCheck %s --check-prefix=ROUNDTRIP
// cute-verify checks a `cute.wgmma`: a wgmma atom; A and B in shared memory, of the atom's element
// types, one (rows, 16) tile each in a canonical K- or MN-major GMMA layout (the error names the layout
// and the first element out of place); C and D one thread's accumulators. cute-lower-to-gpu
// refuses a tile it cannot prove starts in the first row of its swizzle pattern.
// OFFSET: offset.mlir:13:12: error: cute-lower-to-gpu: cannot prove that the wgmma A tile (S<3,3,3> o (64,16):(64,1)) starts in the first row of its swizzle pattern, 16-byte aligned (a descriptor with base offset 0): its offset in the allocation must be a multiple of 1024 bytes plus 0 to 96 bytes in steps of 16
// ROUNDTRIP: "cute.wgmma"(%{{.*}}, %{{.*}}, %{{.*}}) {atom = "SM90_64x64x16_F32BF16BF16_SS"}
// ROUNDTRIP: "cute.warpgroup_wait_group"() {n = 1 : i64} : () -> ()
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%g: !cute.tensor<bf16, "gmem", 16, "(64,16):(16,1)">) kernel {
      %a = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">
      %pad = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(72,1)">
      %m = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(1,72)">
      %sw = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,4,3> o 0 o (64,16):(64,1)">
      %c = arith.constant dense<0.0> : vector<32xf32>
      %c16 = arith.constant dense<0.0> : vector<16xf32>
      // CHECK: wgmma-errors.mlir:[[# @LINE + 1]]:13: error: SM90_64x64x16_F32BF16BF16_SS: the A operand layout S<3,3,3> o (64,16):(72,1) is not a canonical K-major wgmma layout (128-byte swizzle): element (1,0) is at offset 72, the canonical layout S<3,3,3> o ((8,8),16):((64,SBO),1) has it at 64
      %d0 = "cute.wgmma"(%pad, %a, %c) {atom = "SM90_64x64x16_F32BF16BF16_SS"} : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(72,1)">, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      // An N-major B whose K-rows are padded is neither canonical form (the error names both).
      // CHECK: wgmma-errors.mlir:[[# @LINE + 1]]:13: error: SM90_64x64x16_F32BF16BF16_SS: the B operand layout S<3,3,3> o (64,16):(1,72) is not a canonical K-major wgmma layout (128-byte swizzle): element (0,1) is at offset 72, {{.*}}; nor is it MN-major: element (0,1) is at offset 72, the canonical layout S<3,3,3> o ((64,1),(8,2)):((1,LBO),(64,SBO)) has it at 64
      %d1 = "cute.wgmma"(%a, %m, %c) {atom = "SM90_64x64x16_F32BF16BF16_SS"} : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(1,72)">, vector<32xf32>) -> vector<32xf32>
      // CHECK: wgmma-errors.mlir:[[# @LINE + 1]]:13: error: SM90_64x64x16_F32BF16BF16_SS: the A operand's swizzle S<3,4,3> is not a wgmma swizzle; for 2-byte elements they are S<3,3,3>, S<2,3,3>, S<1,3,3>
      %d2 = "cute.wgmma"(%sw, %a, %c) {atom = "SM90_64x64x16_F32BF16BF16_SS"} : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,4,3> o 0 o (64,16):(64,1)">, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      // CHECK: wgmma-errors.mlir:[[# @LINE + 1]]:13: error: SM90_64x64x16_F32BF16BF16_SS reads A from shared memory, not gmem
      %d3 = "cute.wgmma"(%g, %a, %c) {atom = "SM90_64x64x16_F32BF16BF16_SS"} : (!cute.tensor<bf16, "gmem", 16, "(64,16):(16,1)">, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      // CHECK: wgmma-errors.mlir:[[# @LINE + 1]]:13: error: C holds one thread's 32 accumulators of SM90_64x64x16_F32BF16BF16_SS as vector<32xf32>, found vector<16xf32>
      %d4 = "cute.wgmma"(%a, %a, %c16) {atom = "SM90_64x64x16_F32BF16BF16_SS"} : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<16xf32>) -> vector<32xf32>
      // CHECK: wgmma-errors.mlir:[[# @LINE + 1]]:13: error: "SM80_16x8x16_F32BF16BF16F32_TN" is not a wgmma atom (SM90_64xNx16_..._SS or _RS)
      %d5 = "cute.wgmma"(%a, %a, %c) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      gpu.return
    }
  }
}
