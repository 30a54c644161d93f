// RUN: %cutec opt %s --pass cute-lower-to-gpu | FileCheck %s
// RUN: %cutec opt %s --pass cute-lower-to-gpu -o %t.mlir
// RUN: %cutec opt %t.mlir | FileCheck %s

// A dynamic 1-D tensor: pointer plus one i32 for its extent; size() is that extent.
// CHECK-LABEL: gpu.func @dyn1d(
// CHECK-SAME: %[[P:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 4 : i64}, %[[N:[a-z0-9]+]]: i32, %[[I:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.cmpi slt, %[[I]], %[[N]] : i32
// CHECK: %[[OFF:.*]] = arith.extsi %[[I]] : i32 to i64
// CHECK: llvm.getelementptr %[[P]][%[[OFF]]]
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @dyn1d(%t: !cute.tensor<f32, "gmem", 4, "?:1">, %i: i32) kernel {
      %n = "cute.size"(%t) : (!cute.tensor<f32, "gmem", 4, "?:1">) -> i32
      %c = arith.cmpi slt, %i, %n : i32
      scf.if %c {
        %x = "cute.load"(%t, %i) : (!cute.tensor<f32, "gmem", 4, "?:1">, i32) -> f32
        "cute.store"(%x, %t, %i) : (f32, !cute.tensor<f32, "gmem", 4, "?:1">, i32) -> ()
      }
      gpu.return
    }

// A static row-major layout folds completely: (m, n) -> m*8 + n, size() is the constant 32.
// CHECK-LABEL: gpu.func @static2d(
// CHECK-SAME: %[[P:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 16 : i64}, %[[M:[a-z0-9]+]]: i32, %[[N:[a-z0-9]+]]: i32, %{{.*}}: !llvm.ptr<1>)
// CHECK-NOT: cute.
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : i32
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i32
// CHECK: %[[R:.*]] = arith.muli %[[M]], %[[C8]] : i32
// CHECK: arith.addi %[[R]], %[[N]] : i32
// CHECK: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> f16
    gpu.func @static2d(%t: !cute.tensor<f16, "gmem", 16, "(4,8):(8,1)">, %m: i32, %n: i32, %out: !llvm.ptr<1>) kernel {
      %s = "cute.size"(%t) : (!cute.tensor<f16, "gmem", 16, "(4,8):(8,1)">) -> i32
      %x = "cute.load"(%t, %m, %n) : (!cute.tensor<f16, "gmem", 16, "(4,8):(8,1)">, i32, i32) -> f16
      llvm.store %s, %out : i32, !llvm.ptr<1>
      gpu.return
    }

// One linear index into a hierarchical layout decomposes colexicographically over its leaves:
// i -> (i % 2) * 1 + (i / 2) * 4 for (2,?):(1,4), with the dynamic extent as an argument.
// CHECK-LABEL: gpu.func @linear(
// CHECK-SAME: %[[P:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 8 : i64}, %[[E:[a-z0-9]+]]: i32, %[[I:[a-z0-9]+]]: i32)
// CHECK: arith.remui %[[I]], %{{.*}} : i32
// CHECK: arith.divui %[[I]], %{{.*}} : i32
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> f64
    gpu.func @linear(%t: !cute.tensor<f64, "gmem", 8, "(2,?):(1,4)">, %i: i32) kernel {
      %x = "cute.load"(%t, %i) : (!cute.tensor<f64, "gmem", 8, "(2,?):(1,4)">, i32) -> f64
      gpu.return
    }

// Ops outside the cute dialect, and functions without tensors, are left alone.
// CHECK-LABEL: gpu.func @untouched(
// CHECK-SAME: %{{.*}}: i32) kernel
// CHECK-NEXT: gpu.return
    gpu.func @untouched(%i: i32) kernel {
      gpu.return
    }
  }
}
