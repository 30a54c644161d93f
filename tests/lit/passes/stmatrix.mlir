// RUN: %cutec opt %s --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s
// RUN: not %cutec opt %S/Inputs/stmatrix/errors.mlir 2>&1 | FileCheck %S/Inputs/stmatrix/errors.mlir
// RUN: not %cutec opt %S/Inputs/stmatrix/strided.mlir --pass cute-vectorize --pass cute-lower-to-gpu 2>&1 | FileCheck %S/Inputs/stmatrix/strided.mlir
// `cute.copy {op = "stmatrix.x4"}`, ldmatrix's mirror: each lane's 8 register values (in the
// source's order: register j = values 2j, 2j+1) are bit-cast to four b32 registers, and the lane
// gives the shared-memory address of one row of 8 contiguous 16-bit elements (16 bytes, aligned).
// cute-lower-to-gpu emits one `nvvm.stmatrix` (x4, m8n8, b16; `.trans` is the column layout), which
// LLVM prints as `stmatrix.sync.aligned.m8n8.x4.shared.b16`.
// CHECK-NOT: cute.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @row(
    // CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c72_i32 : i32
    // CHECK: %[[P:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, bf16
    // CHECK: %[[V:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
    // CHECK: %[[W:.*]] = vector.bitcast %{{.*}} : vector<8xbf16> to vector<4xi32>
    // CHECK-NEXT: %[[R0:.*]] = vector.extract %[[W]][0] : i32 from vector<4xi32>
    // CHECK-NEXT: %[[R1:.*]] = vector.extract %[[W]][1] : i32 from vector<4xi32>
    // CHECK-NEXT: %[[R2:.*]] = vector.extract %[[W]][2] : i32 from vector<4xi32>
    // CHECK-NEXT: %[[R3:.*]] = vector.extract %[[W]][3] : i32 from vector<4xi32>
    // CHECK-NEXT: nvvm.stmatrix %{{.*}}, %[[R0]], %[[R1]], %[[R2]], %[[R3]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
    // CHECK-NEXT: gpu.return
    gpu.func @row() kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(16,64):(72,1)">
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %c16 = arith.constant 16 : i32
      %c72 = arith.constant 72 : i32
      %r16 = arith.remui %t, %c16 : i32
      %off = arith.muli %r16, %c72 : i32
      %row = "cute.view"(%s, %off) : (!cute.tensor<bf16, "smem", 16, "(16,64):(72,1)">, i32) -> !cute.tensor<bf16, "smem", 16, "(8):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<bf16, "rmem", 16, "(8):(1)">
      "cute.copy"(%r, %row) {op = "stmatrix.x4"} : (!cute.tensor<bf16, "rmem", 16, "(8):(1)">, !cute.tensor<bf16, "smem", 16, "(8):(1)">) -> ()
      gpu.return
    }

    // Two matrices, transposed: two registers, the column layout.
    // CHECK-LABEL: gpu.func @x2_trans(
    // CHECK: vector.bitcast %{{.*}} : vector<4xf16> to vector<2xi32>
    // CHECK: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32
    gpu.func @x2_trans() kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "(8):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<f16, "rmem", 16, "(2,2):(1,2)">
      "cute.copy"(%r, %s) {op = "stmatrix.x2.trans"} : (!cute.tensor<f16, "rmem", 16, "(2,2):(1,2)">, !cute.tensor<f16, "smem", 16, "(8):(1)">) -> ()
      gpu.return
    }
  }
}
