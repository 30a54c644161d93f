// RUN: %cutec opt %s --pass cute-vectorize | FileCheck %s --check-prefix=VEC
// RUN: %cutec opt %s --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: %cutec opt %s --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=LOWERED
// RUN: %cutec opt %s --pass cute-vectorize -o %t.vec.mlir
// RUN: %cutec opt %t.vec.mlir --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: not %cutec opt %S/Inputs/ldmatrix/errors.mlir 2>&1 | FileCheck %S/Inputs/ldmatrix/errors.mlir
// RUN: not %cutec opt %S/Inputs/ldmatrix/strided.mlir --pass cute-vectorize --pass cute-lower-to-gpu 2>&1 | FileCheck %S/Inputs/ldmatrix/strided.mlir
// RUN: not %cutec opt %S/Inputs/ldmatrix/sixteen.mlir --pass cute-vectorize --pass cute-lower-to-gpu 2>&1 | FileCheck %S/Inputs/ldmatrix/sixteen.mlir
// RUN: not %cutec opt %S/Inputs/ldmatrix/align8.mlir --pass cute-vectorize --pass cute-lower-to-gpu 2>&1 | FileCheck %S/Inputs/ldmatrix/align8.mlir
// `cute.copy {op = "ldmatrix.x4"}`: each lane gives the shared-memory address of one row of 8
// contiguous 16-bit elements (16 bytes, aligned) and receives four b32 registers, which are its 8
// MMA values in the destination's order (register j = values 2j, 2j+1). cute-lower-to-gpu emits one
// `nvvm.ldmatrix` (x4, m8n8, b16; `.trans` is the column layout), bitcasts the four registers to the
// 8 elements and stores them into the register tensor in chunks of its recorded width
// (`dst_vector`).
// LOWERED-NOT: cute.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Lane t addresses row t%16 of a (16,64) bf16 tile padded to 72 elements a row (144 bytes, so
    // every row starts 16-byte aligned); the 8 values land in one 16-byte register store.
    // VEC-LABEL: gpu.func @row(
    // VEC: "cute.copy"(%{{.*}}, %{{.*}}) {dst_vector = 8 : i32, op = "ldmatrix.x4", src_vector = 8 : i32}
    // GPU-LABEL: llvm.mlir.global internal @__smem_row_1() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<1152 x bf16>
    // GPU-LABEL: gpu.func @row(
    // GPU: %[[S:.*]] = llvm.mlir.addressof @__smem_row_1 : !llvm.ptr<3>
    // GPU: %[[ROW:.*]] = arith.muli %{{.*}}, %c72_i32 : i32
    // GPU-NEXT: %[[OFF:.*]] = arith.extsi %[[ROW]] : i32 to i64
    // GPU-NEXT: %[[P:.*]] = llvm.getelementptr %[[S]][%[[OFF]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, bf16
    // GPU: %[[R:.*]] = llvm.alloca %{{.*}} x bf16 {alignment = 16 : i64} : (i32) -> !llvm.ptr
    // GPU-NEXT: %[[LD:.*]] = nvvm.ldmatrix %[[P]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
    // GPU-NEXT: %[[R0:.*]] = llvm.extractvalue %[[LD]][0] : !llvm.struct<(i32, i32, i32, i32)>
    // GPU-NEXT: %[[R1:.*]] = llvm.extractvalue %[[LD]][1] : !llvm.struct<(i32, i32, i32, i32)>
    // GPU-NEXT: %[[R2:.*]] = llvm.extractvalue %[[LD]][2] : !llvm.struct<(i32, i32, i32, i32)>
    // GPU-NEXT: %[[R3:.*]] = llvm.extractvalue %[[LD]][3] : !llvm.struct<(i32, i32, i32, i32)>
    // GPU-NEXT: %[[V:.*]] = vector.from_elements %[[R0]], %[[R1]], %[[R2]], %[[R3]] : vector<4xi32>
    // GPU-NEXT: %[[E:.*]] = vector.bitcast %[[V]] : vector<4xi32> to vector<8xbf16>
    // GPU-NEXT: llvm.store %[[E]], %[[R]] {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr
    // GPU-NEXT: gpu.return
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
      "cute.copy"(%row, %r) {op = "ldmatrix.x4"} : (!cute.tensor<bf16, "smem", 16, "(8):(1)">, !cute.tensor<bf16, "rmem", 16, "(8):(1)">) -> ()
      gpu.return
    }

    // The destination in MMA order (2,2,2):(1,4,2) (register pairs 0, 2, 1, 3 of the fragment):
    // contiguous pairs only, so four 4-byte stores of elements 2j, 2j+1 at offsets 0, 4, 2, 6. The
    // transposed form loads with the column layout.
    // VEC-LABEL: gpu.func @trans_split(
    // VEC: "cute.copy"(%{{.*}}, %{{.*}}) {dst_vector = 2 : i32, op = "ldmatrix.x4.trans", src_vector = 8 : i32}
    // GPU-LABEL: gpu.func @trans_split(
    // GPU: %[[LD:.*]] = nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
    // GPU: %[[E:.*]] = vector.bitcast %{{.*}} : vector<4xi32> to vector<8xf16>
    // GPU-NEXT: %[[X0:.*]] = vector.extract_strided_slice %[[E]] {offsets = [0], sizes = [2], strides = [1]} : vector<8xf16> to vector<2xf16>
    // GPU-NEXT: llvm.store %[[X0]], %{{.*}} {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr
    // GPU: arith.constant 4 : i32
    // GPU: vector.extract_strided_slice %[[E]] {offsets = [2], sizes = [2], strides = [1]}
    // GPU: arith.constant 2 : i32
    // GPU: vector.extract_strided_slice %[[E]] {offsets = [4], sizes = [2], strides = [1]}
    // GPU: arith.constant 6 : i32
    // GPU: vector.extract_strided_slice %[[E]] {offsets = [6], sizes = [2], strides = [1]}
    // GPU-COUNT-1: llvm.store %{{.*}} {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr
    // GPU-NEXT: gpu.return
    gpu.func @trans_split() kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "(8):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<f16, "rmem", 16, "(2,2,2):(1,4,2)">
      "cute.copy"(%s, %r) {op = "ldmatrix.x4.trans"} : (!cute.tensor<f16, "smem", 16, "(8):(1)">, !cute.tensor<f16, "rmem", 16, "(2,2,2):(1,4,2)">) -> ()
      gpu.return
    }

    // Any 16-bit element type: i16 registers come back as vector<8xi16>.
    // GPU-LABEL: gpu.func @i16(
    // GPU: nvvm.ldmatrix
    // GPU: vector.bitcast %{{.*}} : vector<4xi32> to vector<8xi16>
    gpu.func @i16() kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<i16, "smem", 16, "(8):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<i16, "rmem", 16, "(8):(1)">
      "cute.copy"(%s, %r) {op = "ldmatrix.x4"} : (!cute.tensor<i16, "smem", 16, "(8):(1)">, !cute.tensor<i16, "rmem", 16, "(8):(1)">) -> ()
      gpu.return
    }
  }
}
