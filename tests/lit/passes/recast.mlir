// RUN: %cutec opt %s --pass cute-canonicalize --pass cute-lower-to-gpu | FileCheck %s
// `cute.recast` is a root for cute-canonicalize: a view of it stays a view of it, and its `?`
// entries are its own operands. The lowering keeps the pointer and accesses it with the new type.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @words(
    // CHECK-SAME: %[[P:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 16 : i64}, %[[N:[a-z0-9]+]]: i32, %[[I:[a-z0-9]+]]: i32)
    gpu.func @words(%a: !cute.tensor<f16, "gmem", 16, "(?{div=8}):(1)">, %i: i32) kernel {
      %n = "cute.dyn"(%a) {index = 0 : i64} : (!cute.tensor<f16, "gmem", 16, "(?{div=8}):(1)">) -> i32
      %c2 = arith.constant 2 : i32
      %h = arith.divui %n, %c2 : i32
      %w = "cute.recast"(%a, %h) : (!cute.tensor<f16, "gmem", 16, "(?{div=8}):(1)">, i32) -> !cute.tensor<i32, "gmem", 16, "(?{div=4}):(1)">
      // The u32 at index %i is 4 * %i bytes from the base: a gep over i32 elements.
      // CHECK: %[[OFF:.*]] = arith.extsi %[[I]] : i32 to i64
      // CHECK: %[[Q:.*]] = llvm.getelementptr %[[P]][%[[OFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
      // CHECK: llvm.load %[[Q]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
      %v = "cute.load_at"(%w, %i) {coord = "?"} : (!cute.tensor<i32, "gmem", 16, "(?{div=4}):(1)">, i32) -> i32
      gpu.return
    }
  }
}
