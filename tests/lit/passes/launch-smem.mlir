// RUN: %cutec opt %s --pass cute-verify | FileCheck %s --check-prefix=VERIFY
// RUN: %cutec opt %s --pass cute-canonicalize --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s
// RUN: %cutec opt %s --pass cute-canonicalize -o %t.mlir
// RUN: %cutec opt %t.mlir --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s
// RUN: not %cutec opt %S/Inputs/launch-smem/errors.mlir --pass cute-verify 2>&1 | FileCheck %S/Inputs/launch-smem/errors.mlir
// `cute.launch_smem {offset = N}`: a shared tensor N bytes into the launch's own dynamic shared
// memory (`smem(BYTES)`; CuTe DSL's SmemAllocator). cute-verify checks it is shared, static and
// 128-byte aligned; cute-lower-to-gpu makes it a pointer into `__cute_dynamic_smem`, after the
// bytes the compiler placed there when the kernel has `cute.dynamic_smem` (here 49280), and a
// swizzled one is swizzled from its own start.
// VERIFY: "cute.launch_smem"() {offset = 256 : i64}
// CHECK: llvm.mlir.global external @__cute_dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: gpu.func @alone(
// CHECK-NEXT: %[[B:.*]] = llvm.mlir.addressof @__cute_dynamic_smem : !llvm.ptr<3>
// CHECK-NEXT: %[[O:.*]] = arith.constant 256 : i64
// CHECK-NEXT: %[[P:.*]] = llvm.getelementptr %[[B]][%[[O]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK-NOT: cute.
// CHECK: %[[X:.*]] = arith.xori
// CHECK: llvm.getelementptr %[[P]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
// CHECK-LABEL: gpu.func @after_placed(
// CHECK-NEXT: llvm.mlir.addressof @__cute_dynamic_smem : !llvm.ptr<3>
// CHECK-NEXT: llvm.mlir.addressof @__cute_dynamic_smem : !llvm.ptr<3>
// CHECK-NEXT: arith.constant 49408 : i64
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @alone(%g: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) kernel {
      %s = "cute.launch_smem"() {offset = 256 : i64} : () -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %c8 = arith.constant 8 : i32
      %r = arith.remui %ti, %c8 : i32
      %c3 = arith.constant 3 : i32
      %x = "cute.load_at"(%s, %r, %c3) {coord = "(?,?)"} : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">, i32, i32) -> f16
      gpu.return
    }
    gpu.func @after_placed(%g: !cute.tensor<f32, "gmem", 16, "(64):(1)">) kernel attributes {cute.dynamic_smem = 49280 : i64} {
      %big = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(12320):(1)">
      %s = "cute.launch_smem"() {offset = 128 : i64} : () -> !cute.tensor<f32, "smem", 16, "(32):(1)">
      %c1 = arith.constant 1 : i32
      %x = "cute.load_at"(%s, %c1) {coord = "?"} : (!cute.tensor<f32, "smem", 16, "(32):(1)">, i32) -> f32
      %y = "cute.load_at"(%big, %c1) {coord = "?"} : (!cute.tensor<f32, "smem", 16, "(12320):(1)">, i32) -> f32
      gpu.return
    }
  }
}
