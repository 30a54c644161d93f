// RUN: %cutec opt %s --pass cute-vectorize | FileCheck %s --check-prefix=VEC
// RUN: %cutec opt %s --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: %cutec opt %s --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=LOWERED
// RUN: %cutec opt %s --pass cute-vectorize --pass cute-vectorize -o %t.vec.mlir
// RUN: %cutec opt %t.vec.mlir --pass cute-lower-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: not %cutec opt %S/Inputs/copy-async/errors.mlir 2>&1 | FileCheck %S/Inputs/copy-async/errors.mlir
// RUN: not %cutec opt %S/Inputs/copy-async/unproven.mlir --pass cute-vectorize --pass cute-lower-to-gpu 2>&1 | FileCheck %S/Inputs/copy-async/unproven.mlir
// RUN: not %cutec opt %S/Inputs/copy-async/unproven-align.mlir --pass cute-vectorize --pass cute-lower-to-gpu 2>&1 | FileCheck %S/Inputs/copy-async/unproven-align.mlir
// RUN: not %cutec opt %S/Inputs/copy-async/global-align.mlir --pass cute-vectorize --pass cute-lower-to-gpu 2>&1 | FileCheck %S/Inputs/copy-async/global-align.mlir
// RUN: not %cutec opt %S/Inputs/copy-async/global-align.mlir --pass cute-lower-to-gpu 2>&1 | FileCheck %S/Inputs/copy-async/global-align.mlir --check-prefix=NOVEC
// `cute.copy {op = "cp.async.cg" | "cp.async.ca"}` moves global memory to shared memory without
// registers: cute-vectorize records the width both layouts prove (capped by the atom's
// `max_vector`), and cute-lower-to-gpu issues one `nvvm.cp.async.shared.global` per chunk of exactly
// `max_vector` elements, the source and destination addresses each side's crd2idx of the chunk's
// first element. `.cg` moves 16 bytes; `.ca` 4, 8 or 16. A predicated copy zero-fills through the
// PTX `ignore-src` operand instead. Running cute-vectorize twice, or printing and re-parsing,
// changes nothing.
// LOWERED-NOT: cute.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // 32 contiguous bf16 in 16-byte chunks: four cp.async.cg of 16 bytes, at elements 0, 8, 16, 24
    // of both sides.
    // VEC-LABEL: gpu.func @cg(
    // VEC: "cute.copy"(%arg0, %{{.*}}) {dst_vector = 8 : i32, max_vector = 8 : i32, op = "cp.async.cg", src_vector = 8 : i32}
    // GPU-LABEL: llvm.mlir.global internal @__smem_cg_1() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<64 x bf16>
    // GPU-LABEL: gpu.func @cg(
    // GPU: %[[S:.*]] = llvm.mlir.addressof @__smem_cg_1 : !llvm.ptr<3>
    // GPU-NEXT: nvvm.cp.async.shared.global %[[S]], %arg0, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
    // GPU: %[[G8:.*]] = llvm.getelementptr %arg0[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
    // GPU: %[[S8:.*]] = llvm.getelementptr %[[S]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, bf16
    // GPU-NEXT: nvvm.cp.async.shared.global %[[S8]], %[[G8]], 16, cache = cg
    // GPU: arith.constant 16 : i32
    // GPU: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
    // GPU: arith.constant 24 : i32
    // GPU: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
    // GPU-NOT: nvvm.cp.async
    // GPU: gpu.return
    gpu.func @cg(%g: !cute.tensor<bf16, "gmem", 16, "(32):(1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(32):(1)">
      "cute.copy"(%g, %s) {max_vector = 8 : i32, op = "cp.async.cg"} : (!cute.tensor<bf16, "gmem", 16, "(32):(1)">, !cute.tensor<bf16, "smem", 16, "(32):(1)">) -> ()
      gpu.return
    }

    // cp.async.ca of 8 bytes: two f32 per chunk. The source's columns are 64 elements apart, the
    // destination's 2: chunk j reads element 64*j and writes element 2*j.
    // VEC-LABEL: gpu.func @ca8(
    // VEC: {dst_vector = 2 : i32, max_vector = 2 : i32, op = "cp.async.ca", src_vector = 2 : i32}
    // GPU-LABEL: gpu.func @ca8(
    // GPU: nvvm.cp.async.shared.global %{{.*}}, %arg0, 8, cache = ca
    // GPU: arith.constant 64 : i32
    // GPU: arith.constant 2 : i32
    // GPU: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache = ca
    // GPU: arith.constant 128 : i32
    // GPU: arith.constant 4 : i32
    // GPU: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache = ca
    // GPU: arith.constant 192 : i32
    // GPU: arith.constant 6 : i32
    // GPU: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache = ca
    // GPU-NOT: nvvm.cp.async
    // GPU: gpu.return
    gpu.func @ca8(%g: !cute.tensor<f32, "gmem", 16, "(2,4):(1,64)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(2,4):(1,2)">
      "cute.copy"(%g, %s) {max_vector = 2 : i32, op = "cp.async.ca"} : (!cute.tensor<f32, "gmem", 16, "(2,4):(1,64)">, !cute.tensor<f32, "smem", 16, "(2,4):(1,2)">) -> ()
      gpu.return
    }

    // cp.async.ca of 4 bytes: one f32 per copy, from a strided source (4-byte aligned).
    // VEC-LABEL: gpu.func @ca4(
    // VEC: {dst_vector = 1 : i32, max_vector = 1 : i32, op = "cp.async.ca", src_vector = 1 : i32}
    // GPU-LABEL: gpu.func @ca4(
    // GPU-SAME: %arg0: !llvm.ptr<1> {llvm.align = 4 : i64}
    // GPU-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
    // GPU-NOT: nvvm.cp.async
    // GPU: gpu.return
    gpu.func @ca4(%g: !cute.tensor<f32, "gmem", 4, "(4):(3)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(4):(1)">
      "cute.copy"(%g, %s) {max_vector = 1 : i32, op = "cp.async.ca"} : (!cute.tensor<f32, "gmem", 4, "(4):(3)">, !cute.tensor<f32, "smem", 16, "(4):(1)">) -> ()
      gpu.return
    }

    // With a predicate (zero-fill where it is false): inline PTX with the `ignore-src` predicate
    // operand, the predicate negated once for all chunks, the destination as a 32-bit shared
    // address. No `nvvm.cp.async` (its `src-size` form costs ptxas a SEL and an ISETP per chunk).
    // GPU-LABEL: gpu.func @predicated(
    // GPU: %[[TRUE:.*]] = arith.constant true
    // GPU-NEXT: %[[IGN:.*]] = arith.xori %arg1, %[[TRUE]] : i1
    // GPU-NEXT: %[[D0:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
    // GPU-NEXT: llvm.inline_asm has_side_effects "cp.async.ca.shared.global [$0], [$1], 8, $2;", "r,l,b,~{memory}" %[[D0]], %arg0, %[[IGN]] : (i32, !llvm.ptr<1>, i1) -> ()
    // GPU: %[[D1:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
    // GPU-NEXT: llvm.inline_asm has_side_effects "cp.async.ca.shared.global [$0], [$1], 8, $2;", "r,l,b,~{memory}" %[[D1]], %{{.*}}, %[[IGN]]
    // GPU-NOT: cp.async
    // GPU: gpu.return
    gpu.func @predicated(%g: !cute.tensor<f32, "gmem", 16, "(2,2):(1,64)">, %p: i1) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(2,2):(1,2)">
      "cute.copy"(%g, %s, %p) {max_vector = 2 : i32, op = "cp.async.ca"} : (!cute.tensor<f32, "gmem", 16, "(2,2):(1,64)">, !cute.tensor<f32, "smem", 16, "(2,2):(1,2)">, i1) -> ()
      gpu.return
    }

    // A 16-byte cp.async.ca into a padded shared tile: rows of 8 f32 (two chunks) 12 elements apart
    // in shared memory, 8 apart in global memory.
    // VEC-LABEL: gpu.func @ca16_padded(
    // VEC: {dst_vector = 4 : i32, max_vector = 4 : i32, op = "cp.async.ca", src_vector = 4 : i32}
    // GPU-LABEL: gpu.func @ca16_padded(
    // GPU: %[[S:.*]] = llvm.mlir.addressof @__smem_ca16_padded_1 : !llvm.ptr<3>
    // GPU-NEXT: nvvm.cp.async.shared.global %[[S]], %arg0, 16, cache = ca
    // GPU-NEXT: %[[GO0:.*]] = arith.constant 4 : i32
    // GPU-NEXT: %[[GX0:.*]] = arith.extsi %[[GO0]] : i32 to i64
    // GPU-NEXT: %[[G0:.*]] = llvm.getelementptr %arg0[%[[GX0]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    // GPU-NEXT: %[[SO0:.*]] = arith.constant 4 : i32
    // GPU-NEXT: %[[SX0:.*]] = arith.extsi %[[SO0]] : i32 to i64
    // GPU-NEXT: %[[S0:.*]] = llvm.getelementptr %[[S]][%[[SX0]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
    // GPU-NEXT: nvvm.cp.async.shared.global %[[S0]], %[[G0]], 16, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
    // GPU-NEXT: %[[GO1:.*]] = arith.constant 8 : i32
    // GPU-NEXT: %[[GX1:.*]] = arith.extsi %[[GO1]] : i32 to i64
    // GPU-NEXT: %[[G1:.*]] = llvm.getelementptr %arg0[%[[GX1]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    // GPU-NEXT: %[[SO1:.*]] = arith.constant 12 : i32
    // GPU-NEXT: %[[SX1:.*]] = arith.extsi %[[SO1]] : i32 to i64
    // GPU-NEXT: %[[S1:.*]] = llvm.getelementptr %[[S]][%[[SX1]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
    // GPU-NEXT: nvvm.cp.async.shared.global %[[S1]], %[[G1]], 16, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
    // GPU-NEXT: %[[GO2:.*]] = arith.constant 12 : i32
    // GPU-NEXT: %[[GX2:.*]] = arith.extsi %[[GO2]] : i32 to i64
    // GPU-NEXT: %[[G2:.*]] = llvm.getelementptr %arg0[%[[GX2]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    // GPU-NEXT: %[[SO2:.*]] = arith.constant 16 : i32
    // GPU-NEXT: %[[SX2:.*]] = arith.extsi %[[SO2]] : i32 to i64
    // GPU-NEXT: %[[S2:.*]] = llvm.getelementptr %[[S]][%[[SX2]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
    // GPU-NEXT: nvvm.cp.async.shared.global %[[S2]], %[[G2]], 16, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
    // GPU-NEXT: gpu.return
    gpu.func @ca16_padded(%g: !cute.tensor<f32, "gmem", 16, "(8,2):(1,8)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(8,2):(1,12)">
      "cute.copy"(%g, %s) {max_vector = 4 : i32, op = "cp.async.ca"} : (!cute.tensor<f32, "gmem", 16, "(8,2):(1,8)">, !cute.tensor<f32, "smem", 16, "(8,2):(1,12)">) -> ()
      gpu.return
    }
  }
}
