// RUN: %cutec opt %s --pass cute-lower-to-gpu | FileCheck %s
// RUN: %cutec opt %s --pass cute-lower-to-gpu -o %t.mlir
// RUN: %cutec opt %t.mlir | FileCheck %s

// A dynamic 1-D tensor: pointer plus one i32 for its extent; cute.dyn is that extent.
// CHECK-LABEL: gpu.func @dyn1d(
// CHECK-SAME: %[[P:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 4 : i64}, %[[N:[a-z0-9]+]]: i32, %[[I:[a-z0-9]+]]: i32)
// CHECK: arith.cmpi slt, %[[I]], %[[N]] : i32
// CHECK: %[[OFF:.*]] = arith.extsi %[[I]] : i32 to i64
// CHECK: llvm.getelementptr %[[P]][%[[OFF]]]
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: llvm.store
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @dyn1d(%t: !cute.tensor<f32, "gmem", 4, "?:1">, %i: i32) kernel {
      %n = "cute.dyn"(%t) {index = 0 : i32} : (!cute.tensor<f32, "gmem", 4, "?:1">) -> i32
      %c = arith.cmpi slt, %i, %n : i32
      scf.if %c {
        %x = "cute.load"(%t, %i) : (!cute.tensor<f32, "gmem", 4, "?:1">, i32) -> f32
        "cute.store"(%x, %t, %i) : (f32, !cute.tensor<f32, "gmem", 4, "?:1">, i32) -> ()
      }
      gpu.return
    }

// A view moves the pointer by its offset; its `?` entries are its own operands. A fragment of an
// (8,4) view, contiguous along its first mode, with a column stride that is a multiple of 8, moves in
// chunks of the recorded width (8 here): fragment elements 8k..8k+7 are column k, at k*stride.
// CHECK-LABEL: gpu.func @view_frag(
// CHECK-SAME: %[[P:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 16 : i64}, %[[M:[a-z0-9]+]]: i32, %[[S:[a-z0-9]+]]: i32, %[[O:[a-z0-9]+]]: i32)
// CHECK-NOT: cute.
// CHECK: %[[O64:.*]] = arith.extsi %[[O]] : i32 to i64
// CHECK: %[[V:.*]] = llvm.getelementptr %[[P]][%[[O64]]]
// CHECK: llvm.load %[[V]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK: vector.insert_strided_slice %{{.*}}, %{{.*}} {offsets = [0], strides = [1]} : vector<8xf16> into vector<32xf16>
// CHECK: %[[COL1:.*]] = arith.extsi %[[S]] : i32 to i64
// CHECK: llvm.getelementptr %[[V]][%[[COL1]]]
// CHECK: {offsets = [8], strides = [1]}
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
    gpu.func @view_frag(%t: !cute.tensor<f16, "gmem", 16, "(8,?):(1,?{div=8})">, %off: i32) kernel {
      %s = "cute.dyn"(%t) {index = 1 : i32} : (!cute.tensor<f16, "gmem", 16, "(8,?):(1,?{div=8})">) -> i32
      %v = "cute.view"(%t, %off, %s) : (!cute.tensor<f16, "gmem", 16, "(8,?):(1,?{div=8})">, i32, i32) -> !cute.tensor<f16, "gmem", 16, "(8,4):(1,?{div=8})">
      %f = "cute.load_frag"(%v) {vector = 8 : i32} : (!cute.tensor<f16, "gmem", 16, "(8,4):(1,?{div=8})">) -> vector<32xf16>
      "cute.store_frag"(%f, %v) {vector = 8 : i32} : (vector<32xf16>, !cute.tensor<f16, "gmem", 16, "(8,4):(1,?{div=8})">) -> ()
      gpu.return
    }

// Without a recorded width, fragments move one element at a time: scalar loads gathered by one
// `vector.from_elements` (a chain of one-element inserts would be two whole-vector shuffles each).
// CHECK-LABEL: gpu.func @scalar_frag(
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: vector.insert_strided_slice
// CHECK: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: gpu.return
    gpu.func @scalar_frag(%t: !cute.tensor<f32, "gmem", 4, "4:2">) kernel {
      %f = "cute.load_frag"(%t) : (!cute.tensor<f32, "gmem", 4, "4:2">) -> vector<4xf32>
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
