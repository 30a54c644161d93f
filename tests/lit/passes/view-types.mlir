// RUN: not %cutec opt %s 2>&1 | FileCheck %s
// cute-verify checks a view's whole result type, not only its layout: the element type and memory
// space are the viewed tensor's, and the alignment is no more than the base's alignment and the
// view's offset prove (a claimed 16 bytes would let cute-vectorize emit a misaligned 16-byte load).
// A partition by a tiled copy or MMA must tile the static extents exactly, as the front end requires.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: !cute.tensor<f32, "gmem", 16, "(8,63):(63,1)">, %b: !cute.tensor<bf16, "gmem", 16, "(16,16):(16,1)">, %t: i32) kernel {
      // Row 1 starts 63 floats (252 bytes) in: 4-byte aligned.
      // CHECK: view-types.mlir:[[# @LINE + 1]]:12: error: `cute.slice`'s result type claims 16-byte alignment, but its offset 63 from a 16-byte aligned base proves only 4
      %r = "cute.slice"(%a) {args = ["(1,_)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 16, "(8,63):(63,1)">) -> !cute.tensor<f32, "gmem", 16, "(63):(1)">
      %ok = "cute.slice"(%a) {args = ["(1,_)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 16, "(8,63):(63,1)">) -> !cute.tensor<f32, "gmem", 4, "(63):(1)">
      // CHECK: view-types.mlir:[[# @LINE + 1]]:12: error: `cute.local_tile` views gmem f32 memory, but its result type says smem f32
      %s = "cute.local_tile"(%ok) {args = ["(4)", "(0)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 4, "(63):(1)">) -> !cute.tensor<f32, "smem", 4, "(4):(1)">
      // CHECK: view-types.mlir:[[# @LINE + 1]]:12: error: `cute.slice` views gmem bf16 memory, but its result type says gmem f32
      %e = "cute.slice"(%b) {args = ["(0,_)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<bf16, "gmem", 16, "(16,16):(16,1)">) -> !cute.tensor<f32, "gmem", 16, "(16):(1)">
      %atom = "cute.make_mma_atom"() : () -> !cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">
      %mma = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(2,2,1)", "(32,16,16)">
      // CHECK: view-types.mlir:[[# @LINE + 1]]:12: error: `cute.partition_a`: the tile's 32 does not divide the extent 16 of mode 0 of (16,16):(16,1): the last tile would reach past the tensor
      %p = "cute.partition_a"(%b, %mma, %t) : (!cute.tensor<bf16, "gmem", 16, "(16,16):(16,1)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(2,2,1)", "(32,16,16)">, i32) -> !cute.tensor<bf16, "gmem", 4, "((2,2,2),1,1):((1,128,8),0,0)">
      // CHECK: view-types.mlir:[[# @LINE + 1]]:12: error: `cute.view` of gmem f32 memory cannot be typed smem f32
      %v = "cute.view"(%a, %t) : (!cute.tensor<f32, "gmem", 16, "(8,63):(63,1)">, i32) -> !cute.tensor<f32, "smem", 16, "(4):(1)">
      gpu.return
    }
  }
}
