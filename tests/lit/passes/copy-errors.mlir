// RUN: not %cutec opt %s 2>&1 | FileCheck %s
// cute-verify: a copy moves every element, so both sides have one element type and one static size.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%a: !cute.tensor<f32, "gmem", 16, "8:1">, %b: !cute.tensor<f16, "gmem", 16, "8:1">, %c: !cute.tensor<f32, "gmem", 16, "4:1">, %d: !cute.tensor<f32, "gmem", 16, "?:1">) kernel {
      // CHECK: copy-errors.mlir:[[# @LINE + 1]]:7: error: `cute.copy` moves f32 elements into a tensor of f16
      "cute.copy"(%a, %b) : (!cute.tensor<f32, "gmem", 16, "8:1">, !cute.tensor<f16, "gmem", 16, "8:1">) -> ()
      // CHECK: copy-errors.mlir:[[# @LINE + 1]]:7: error: `cute.copy` of 8 elements (layout 8:1) into 4 (layout 4:1)
      "cute.copy"(%a, %c) : (!cute.tensor<f32, "gmem", 16, "8:1">, !cute.tensor<f32, "gmem", 16, "4:1">) -> ()
      // CHECK: copy-errors.mlir:[[# @LINE + 1]]:7: error: `cute.copy` needs tensors of static size, found layouts 8:1 and ?:1
      "cute.copy"(%a, %d) : (!cute.tensor<f32, "gmem", 16, "8:1">, !cute.tensor<f32, "gmem", 16, "?:1">) -> ()
      gpu.return
    }
  }
}
