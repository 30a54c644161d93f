// RUN: %cutec opt %s --pass cute-lower-to-gpu | FileCheck %s
// RUN: %cutec opt %s --pass cute-lower-to-gpu | FileCheck %s --check-prefix=ONCE
// RUN: %cutec opt %s --pass cute-lower-to-gpu -o %t.mlir
// RUN: %cutec opt %t.mlir | FileCheck %s
// RUN: not %cutec opt %S/Inputs/dynamic-smem/overflow.mlir --pass cute-lower-to-gpu 2>&1 | FileCheck %S/Inputs/dynamic-smem/overflow.mlir
// A kernel with `cute.dynamic_smem = N` (bytes; the front end sets it when its shared memory passes
// the 48 KiB a kernel may declare statically) gets its shared allocations from the launch's dynamic
// shared memory: one `extern __shared__` array, `__cute_dynamic_smem` (an external, 128-byte aligned
// addrspace(3) global of zero i8s), which every such kernel of the module shares. The allocations
// are placed one after another in program order, each starting 128-byte aligned (a row of
// the 32 banks, so that swizzles act as from address 0), and the attribute
// is removed. Kernels without it keep their own static globals.
// ONCE-NOT: cute.dynamic_smem
// ONCE-NOT: cute.
// ONCE-COUNT-1: llvm.mlir.global external @__cute_dynamic_smem()
// ONCE-NOT: @__cute_dynamic_smem()
// ONCE-NOT: cute.
// CHECK: llvm.mlir.global external @__cute_dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // bf16 (5,3):(1,5) is 15 elements, 30 bytes: rounded to 128. f32 (8,8):(1,9) reaches element 70:
    // 71 elements, 284 bytes, rounded to 384, at byte 128. bf16 7:1 is 14 bytes, at byte 512 (640
    // with its rounding).
    // CHECK-LABEL: gpu.func @three(
    // CHECK-SAME: %arg0: !llvm.ptr<1> {llvm.align = 16 : i64}) kernel {
    // CHECK-NEXT: %[[A:.*]] = llvm.mlir.addressof @__cute_dynamic_smem : !llvm.ptr<3>
    // CHECK-NEXT: %[[B0:.*]] = llvm.mlir.addressof @__cute_dynamic_smem : !llvm.ptr<3>
    // CHECK-NEXT: %[[O128:.*]] = arith.constant 128 : i64
    // CHECK-NEXT: %[[B:.*]] = llvm.getelementptr %[[B0]][%[[O128]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    // CHECK-NEXT: %[[C0:.*]] = llvm.mlir.addressof @__cute_dynamic_smem : !llvm.ptr<3>
    // CHECK-NEXT: %[[O512:.*]] = arith.constant 512 : i64
    // CHECK-NEXT: %[[C:.*]] = llvm.getelementptr %[[C0]][%[[O512]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    // The element type of each access is its tensor's.
    // CHECK: %[[PB:.*]] = llvm.getelementptr %[[B]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
    // CHECK-NEXT: llvm.load %[[PB]] {alignment = 4 : i64} : !llvm.ptr<3> -> f32
    // CHECK: %[[PA:.*]] = llvm.getelementptr %[[A]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, bf16
    // CHECK-NEXT: llvm.load %[[PA]] {alignment = 2 : i64} : !llvm.ptr<3> -> bf16
    // CHECK: %[[PC:.*]] = llvm.getelementptr %[[C]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, bf16
    // CHECK-NEXT: llvm.store %{{.*}}, %[[PC]] {alignment = 2 : i64} : bf16, !llvm.ptr<3>
    gpu.func @three(%g: !cute.tensor<f32, "gmem", 16, "(4):(1)">) kernel attributes {cute.dynamic_smem = 640 : i64} {
      %a = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(5,3):(1,5)">
      %b = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(8,8):(1,9)">
      %c = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "7:1">
      %c0 = arith.constant 0 : i32
      %c6 = arith.constant 6 : i32
      %x = "cute.load"(%b, %c0) : (!cute.tensor<f32, "smem", 16, "(8,8):(1,9)">, i32) -> f32
      %y = "cute.load"(%a, %c0) : (!cute.tensor<bf16, "smem", 16, "(5,3):(1,5)">, i32) -> bf16
      "cute.store"(%y, %c, %c6) : (bf16, !cute.tensor<bf16, "smem", 16, "7:1">, i32) -> ()
      gpu.return
    }

    // A second kernel shares the extern array (declared once) and starts again at byte 0; exactly N
    // bytes (the allocations rounded up to 128) is enough.
    // CHECK-LABEL: gpu.func @exact() kernel {
    // CHECK-NEXT: %[[A:.*]] = llvm.mlir.addressof @__cute_dynamic_smem : !llvm.ptr<3>
    // CHECK-NOT: llvm.getelementptr %[[A]][%c{{[0-9]+}}_i64]
    // CHECK: llvm.getelementptr %[[A]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
    gpu.func @exact() kernel attributes {cute.dynamic_smem = 128 : i64} {
      %a = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(16):(1)">
      %c0 = arith.constant 0 : i32
      %y = "cute.load"(%a, %c0) : (!cute.tensor<f32, "smem", 16, "(16):(1)">, i32) -> f32
      gpu.return
    }

    // Without the attribute: a static, internal global of the tensor's own element type.
    // CHECK: llvm.mlir.global internal @__smem_static_1() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<32 x f32>
    // CHECK-LABEL: gpu.func @static() kernel {
    // CHECK-NEXT: llvm.mlir.addressof @__smem_static_1 : !llvm.ptr<3>
    gpu.func @static() kernel {
      %a = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(16):(1)">
      %c0 = arith.constant 0 : i32
      %y = "cute.load"(%a, %c0) : (!cute.tensor<f32, "smem", 16, "(16):(1)">, i32) -> f32
      gpu.return
    }
  }
}
