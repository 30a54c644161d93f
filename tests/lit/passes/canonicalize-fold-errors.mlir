// RUN: not %cutec opt %s --pass cute-canonicalize 2>&1 | FileCheck %s
// RUN: not %cutec opt %s --pass cute-lower-to-gpu 2>&1 | FileCheck %s
// CuTe's tensor ops are checked against the layout algebra when the IR is read (cute-verify), so
// neither canonicalize nor any other pass sees one whose type, operands or arguments are wrong.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @errors(%t: !cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">, %i: i32, %l: !cute.layout<"4:1">) kernel {
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: `cute.local_tile` gives the layout (8,16):(64,1) by the layout algebra, but its result type says "(8,16):(1,8)"
      %a = "cute.local_tile"(%t) {args = ["(8,16)", "(1,2)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">) -> !cute.tensor<f32, "gmem", 16, "(8,16):(1,8)">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: argument "(?,?)" has 2 `?` entries but the op has too few `i32` operands
      %b = "cute.local_tile"(%t, %i) {args = ["(8,16)", "(?,?)"], operandSegmentSizes = array<i32: 1, 0, 1>} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">, i32) -> !cute.tensor<f32, "gmem", 16, "(8,16):(64,1)">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: 0 `!cute.layout` and 1 `i32` operands are left over after the `args`
      %c = "cute.slice"(%t, %i, %i) {args = ["(?,_)"], operandSegmentSizes = array<i32: 1, 0, 2>} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">, i32, i32) -> !cute.tensor<f32, "gmem", 16, "64:1">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: the layout algebra rejects `slice`
      %d = "cute.slice"(%t) {args = ["(1,2,3)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">) -> !cute.tensor<f32, "gmem", 16, "1:0">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: invalid argument "(8,16": parse: expected
      %e = "cute.zipped_divide"(%t) {args = ["(8,16"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">) -> !cute.tensor<f32, "gmem", 16, "1:0">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: a layout operand must be made by `cute.make_layout` or a layout op
      %f = "cute.composition"(%t, %l) {args = ["@"], operandSegmentSizes = array<i32: 1, 1, 0>} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">, !cute.layout<"4:1">) -> !cute.tensor<f32, "gmem", 16, "4:64">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: `cute.make_layout` has 0 dynamic values but its layout (?,4):(1,?) has 2 `?` entries
      %g = "cute.make_layout"() : () -> !cute.layout<"(?,4):(1,?)">
      %atom = "cute.make_copy_atom"() : () -> !cute.copy_atom<f16, 128>
      %tv = "cute.make_layout"() : () -> !cute.layout<"(32,8):(8,1)">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:16: error: the copy atom moves 128 bits of f16 but the tiled copy's type says 128 bits of f32
      %copy1 = "cute.make_tiled_copy"(%atom, %tv) : (!cute.copy_atom<f16, 128>, !cute.layout<"(32,8):(8,1)">) -> !cute.tiled_copy<f32, 128, "(8,32)", "(32,8):(8,1)">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:16: error: the TV layout operand is (32,8):(8,1) but the tiled copy's type says (32,8):(1,32)
      %copy2 = "cute.make_tiled_copy"(%atom, %tv) : (!cute.copy_atom<f16, 128>, !cute.layout<"(32,8):(8,1)">) -> !cute.tiled_copy<f16, 128, "(8,32)", "(32,8):(1,32)">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:16: error: the TV layout (32,8):(8,1) reaches element 255 but the tile (8,16) has 128
      %copy3 = "cute.make_tiled_copy"(%atom, %tv) : (!cute.copy_atom<f16, 128>, !cute.layout<"(32,8):(8,1)">) -> !cute.tiled_copy<f16, 128, "(8,16)", "(32,8):(8,1)">
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:16: error: a copy atom of 24 bits does not move whole f16 elements (at most 128 bits)
      %atom2 = "cute.make_copy_atom"() : () -> !cute.copy_atom<f16, 24>
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: the coordinate "(?,_)" of one element cannot keep a mode (`_`): slice with `cute.slice`
      %m = "cute.load_at"(%t, %i) {coord = "(?,_)"} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">, i32) -> f32
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: the coordinate "(?,?)" has 2 `?` entries but the op has 1 `i32` operands
      %n = "cute.load_at"(%t, %i) {coord = "(?,?)"} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">, i32) -> f32
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: the coordinate (1,2,3) does not index the layout (64,64):(64,1)
      %o = "cute.load_at"(%t) {coord = "(1,2,3)"} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">) -> f32
      // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:12: error: a tensor of f32 cannot load a `f16`
      %p = "cute.load_at"(%t) {coord = "(1,2)"} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">) -> f16
      // A layout op on a failed one is not reported again.
      // CHECK-NOT: error
      %k = "cute.coalesce"(%a) {args = [], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 16, "(8,16):(1,8)">) -> !cute.tensor<f32, "gmem", 16, "8:1">
      gpu.return
    }

    // Each `?` of a type is its own run-time value: a named `?n` shared by two entries is refused.
    // CHECK: canonicalize-fold-errors.mlir:[[# @LINE + 1]]:5: error: invalid layout "(?n,4):(1,?n)" in !cute.tensor<f32, "gmem", 4 : i64, "(?n,4):(1,?n)">: a `?` in a type cannot be named
    gpu.func @named(%t: !cute.tensor<f32, "gmem", 4, "(?n,4):(1,?n)">) kernel {
      gpu.return
    }
  }
}
