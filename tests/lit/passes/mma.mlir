// RUN: %cutec opt %s | FileCheck %s --check-prefix=VERIFY
// RUN: %cutec opt %s --pass cute-canonicalize | FileCheck %s --check-prefix=FOLD
// RUN: %cutec opt %s --pass cute-canonicalize | FileCheck %s --check-prefix=FOLDED
// RUN: %cutec opt %s --pass cute-canonicalize -o %t.fold.mlir
// RUN: %cutec opt %t.fold.mlir --pass cute-canonicalize | FileCheck %s --check-prefix=FOLD
// RUN: %cutec opt %s --pass cute-lower-mma | FileCheck %s --check-prefix=MMA
// RUN: %cutec opt %s --pass cute-lower-mma -o %t.mma.mlir
// RUN: %cutec opt %t.mma.mlir --pass cute-lower-mma | FileCheck %s --check-prefix=MMA
// RUN: %cutec opt %s --pass cute-canonicalize --pass cute-vectorize --pass cute-lower-mma --pass cute-lower-to-gpu -o %t.gpu.mlir
// RUN: FileCheck %s --check-prefix=GPU < %t.gpu.mlir
// RUN: FileCheck %s --check-prefix=LOWERED < %t.gpu.mlir
//
// Tensor cores in the `cute` dialect. `cutec opt` parses and runs cute-verify: the MMA atoms,
// tiled MMAs and partitions below are accepted and print unchanged (prefix VERIFY). cute-canonicalize
// folds `cute.partition_a/b/c` with the tiled MMA's TV layouts into `cute.view`s of the partitioned
// tensor, at the offset the algebra gives for the thread (FOLD), erases the atoms and tiled MMAs
// nobody uses any more (FOLDED) and leaves `cute.mma` alone. cute-lower-mma turns each `cute.mma`
// into the atom's `mma.sync` as inline PTX on b32/f32 registers and leaves the partitions alone
// (MMA). Printing, re-parsing and running a pass again gives the same result; the whole pipeline
// leaves no `cute` op (GPU, LOWERED).

// FOLDED-NOT: cute.partition_a
// FOLDED-NOT: cute.partition_b
// FOLDED-NOT: cute.partition_c
// FOLDED-NOT: cute.make_mma_atom
// FOLDED-NOT: cute.make_tiled_mma
// LOWERED-NOT: "cute.
// LOWERED-NOT: !cute.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // One warp, one m16n8k16 atom: A (16,16):(16,1) row-major (M,K), B (8,16):(16,1) (N,K), C
    // (16,8):(8,1) (M,N). Lane t holds A at row t/4 and columns 2*(t%4) + {0,1} (+8 rows, +8
    // columns): offset 16*(t/4) + 2*(t%4), values (2,2,2):(1,128,8). For the constant lane 5
    // (t/4 = 1, t%4 = 1): A 16 + 2 = 18; B (n = 1, k = 2) 16 + 2 = 18; C (m = 1, n = 2) 8 + 2 = 10.
    // VERIFY-LABEL: gpu.func @gmem(
    // VERIFY: %[[ATOM:.*]] = "cute.make_mma_atom"() : () -> !cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">
    // VERIFY-NEXT: %[[TILED:.*]] = "cute.make_tiled_mma"(%[[ATOM]]) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">
    // VERIFY-NEXT: "cute.partition_a"(%arg0, %[[TILED]], %{{.*}}) : ({{.*}}) -> !cute.tensor<bf16, "gmem", 4 : i64, "((2,2,2),1,1):((1,128,8),0,0)">
    // VERIFY: "cute.partition_b"(%arg1, %[[TILED]], %{{.*}}) : ({{.*}}) -> !cute.tensor<bf16, "gmem", 4 : i64, "((2,2),1,1):((1,8),0,0)">
    // VERIFY: "cute.partition_c"(%arg2, %[[TILED]], %{{.*}}) : ({{.*}}) -> !cute.tensor<f32, "gmem", 8 : i64, "((2,2),1,1):((1,64),0,0)">
    //
    // FOLD-LABEL: gpu.func @gmem(
    // FOLD: %[[T:.*]] = arith.index_cast
    // FOLD: %[[LANE:.*]] = arith.remui %[[T]], %c32_i32 : i32
    // FOLD: %[[T0:.*]] = arith.remui %[[LANE]], %c4_i32 : i32
    // FOLD: %[[K:.*]] = arith.muli %[[T0]], %c2_i32 : i32
    // FOLD: %[[T1:.*]] = arith.divui %[[LANE]], %c4_i32 : i32
    // FOLD: %[[M:.*]] = arith.muli %[[T1]], %c16_i32 : i32
    // FOLD: %[[OFF:.*]] = arith.addi %[[K]], %[[M]] : i32
    // FOLD: "cute.view"(%arg0, %[[OFF]]) : ({{.*}}, i32) -> !cute.tensor<bf16, "gmem", 4 : i64, "(2,2,2):(1,128,8)">
    // FOLD: %[[A5:.*]] = arith.constant 18 : i32
    // FOLD-NEXT: "cute.view"(%arg0, %[[A5]]) : ({{.*}}, i32) -> !cute.tensor<bf16, "gmem", 4 : i64, "(2,2,2):(1,128,8)">
    // FOLD: %[[B5:.*]] = arith.constant 18 : i32
    // FOLD-NEXT: "cute.view"(%arg1, %[[B5]]) : ({{.*}}, i32) -> !cute.tensor<bf16, "gmem", 4 : i64, "(2,2):(1,8)">
    // FOLD: %[[C5:.*]] = arith.constant 10 : i32
    // FOLD-NEXT: "cute.view"(%arg2, %[[C5]]) : ({{.*}}, i32) -> !cute.tensor<f32, "gmem", 8 : i64, "(2,2):(1,64)">
    // FOLD: gpu.return
    //
    // cute-lower-mma leaves the partitions to cute-canonicalize.
    // MMA-LABEL: gpu.func @gmem(
    // MMA: "cute.partition_a"
    // MMA: "cute.partition_b"
    // MMA: "cute.partition_c"
    //
    // GPU-LABEL: gpu.func @gmem(
    // GPU-SAME: %arg0: !llvm.ptr<1> {llvm.align = 16 : i64}, %arg1: !llvm.ptr<1> {llvm.align = 16 : i64}, %arg2: !llvm.ptr<1> {llvm.align = 16 : i64}) kernel
    // GPU: %[[C18:.*]] = arith.constant 18 : i32
    // GPU-NEXT: %[[O18:.*]] = arith.extsi %[[C18]] : i32 to i64
    // GPU-NEXT: llvm.getelementptr %arg0[%[[O18]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
    // GPU: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
    // GPU: %[[C10:.*]] = arith.constant 10 : i32
    // GPU-NEXT: %[[O10:.*]] = arith.extsi %[[C10]] : i32 to i64
    // GPU-NEXT: llvm.getelementptr %arg2[%[[O10]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    // GPU: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
    gpu.func @gmem(%a: !cute.tensor<bf16, "gmem", 16, "(16,16):(16,1)">, %b: !cute.tensor<bf16, "gmem", 16, "(8,16):(16,1)">, %c: !cute.tensor<f32, "gmem", 16, "(16,8):(8,1)">) kernel {
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %c0 = arith.constant 0 : i32
      %c5 = arith.constant 5 : i32
      %atom = "cute.make_mma_atom"() : () -> !cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">
      %mma = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">
      %pa = "cute.partition_a"(%a, %mma, %t) : (!cute.tensor<bf16, "gmem", 16, "(16,16):(16,1)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">, i32) -> !cute.tensor<bf16, "gmem", 4, "((2,2,2),1,1):((1,128,8),0,0)">
      %xa = "cute.load"(%pa, %c0) : (!cute.tensor<bf16, "gmem", 4, "((2,2,2),1,1):((1,128,8),0,0)">, i32) -> bf16
      %sa = "cute.partition_a"(%a, %mma, %c5) : (!cute.tensor<bf16, "gmem", 16, "(16,16):(16,1)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">, i32) -> !cute.tensor<bf16, "gmem", 4, "((2,2,2),1,1):((1,128,8),0,0)">
      %ya = "cute.load"(%sa, %c0) : (!cute.tensor<bf16, "gmem", 4, "((2,2,2),1,1):((1,128,8),0,0)">, i32) -> bf16
      %sb = "cute.partition_b"(%b, %mma, %c5) : (!cute.tensor<bf16, "gmem", 16, "(8,16):(16,1)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">, i32) -> !cute.tensor<bf16, "gmem", 4, "((2,2),1,1):((1,8),0,0)">
      %yb = "cute.load"(%sb, %c0) : (!cute.tensor<bf16, "gmem", 4, "((2,2),1,1):((1,8),0,0)">, i32) -> bf16
      %sc = "cute.partition_c"(%c, %mma, %c5) : (!cute.tensor<f32, "gmem", 16, "(16,8):(8,1)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(1,1,1)", "(16,8,16)">, i32) -> !cute.tensor<f32, "gmem", 8, "((2,2),1,1):((1,64),0,0)">
      %yc = "cute.load"(%sc, %c0) : (!cute.tensor<f32, "gmem", 8, "((2,2),1,1):((1,64),0,0)">, i32) -> f32
      gpu.return
    }

    // Four warps (2,2,1) over a (32,32,16) tile (the N permutation 32 gives each warp two atoms in
    // N), on a 3-stage shared-memory ring of 128x64 tiles with rows padded to 72 elements. Thread t
    // is lane t%32 of warp (m, n) = ((t/32)%2, (t/32)/2%2). A: rows 16*m + lane/4, so the offset
    // is 72*(lane/4) + 2*(lane%4) + 1152*m (16 rows of 72), values (FrgV, RestM 4, RestK 4, stage 3).
    // B: rows 8*n + lane/4: + 576*n, and the second atom in N 16 rows on (1152) merges with RestN's
    // 2304 into one mode 8:1152. C for the constant thread 5: (m,n) = (1,2), 72 + 2 = 74.
    // VERIFY-LABEL: gpu.func @staged(
    // VERIFY: "cute.make_tiled_mma"(%{{.*}}) : ({{.*}}) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(2,2,1)", "(32,32,16)">
    // VERIFY: "cute.partition_a"({{.*}}) -> !cute.tensor<bf16, "smem", 4 : i64, "((2,2,2),4,4,3):((1,576,8),2304,16,9216)">
    //
    // FOLD-LABEL: gpu.func @staged(
    // FOLD: %[[T:.*]] = arith.index_cast
    // FOLD: %[[S:.*]] = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16 : i64, "(128,64,3):(72,1,9216)">
    // FOLD: %[[LANE:.*]] = arith.remui %[[T]], %c32_i32 : i32
    // FOLD: %[[T0:.*]] = arith.remui %[[LANE]], %c4_i32 : i32
    // FOLD: %[[K:.*]] = arith.muli %[[T0]], %c2_i32 : i32
    // FOLD: %[[T1:.*]] = arith.divui %[[LANE]], %c4_i32 : i32
    // FOLD: %[[ROW:.*]] = arith.muli %[[T1]], %c72_i32 : i32
    // FOLD: %[[IN:.*]] = arith.addi %[[K]], %[[ROW]] : i32
    // FOLD: %[[W:.*]] = arith.divui %[[T]], %c32_i32 : i32
    // FOLD: %[[WM:.*]] = arith.remui %[[W]], %c2_i32{{.*}} : i32
    // FOLD: %[[WMO:.*]] = arith.muli %[[WM]], %c1152_i32 : i32
    // FOLD: %[[OA:.*]] = arith.addi %[[IN]], %[[WMO]] : i32
    // FOLD: "cute.view"(%[[S]], %[[OA]]) : ({{.*}}, i32) -> !cute.tensor<bf16, "smem", 4 : i64, "(2,2,2,4,4,3):(1,576,8,2304,16,9216)">
    // FOLD: %[[W2:.*]] = arith.divui %[[T]], %c32_i32{{.*}} : i32
    // FOLD: %[[WN:.*]] = arith.divui %[[W2]], %c2_i32{{.*}} : i32
    // FOLD: %[[WN2:.*]] = arith.remui %[[WN]], %c2_i32{{.*}} : i32
    // FOLD: %[[WNO:.*]] = arith.muli %[[WN2]], %c576_i32 : i32
    // FOLD: %[[OB:.*]] = arith.addi %{{.*}}, %[[WNO]] : i32
    // FOLD: "cute.view"(%[[S]], %[[OB]]) : ({{.*}}, i32) -> !cute.tensor<bf16, "smem", 4 : i64, "(2,2,8,4,3):(1,8,1152,16,9216)">
    // FOLD: %[[C74:.*]] = arith.constant 74 : i32
    // FOLD-NEXT: "cute.view"(%[[S]], %[[C74]]) : ({{.*}}, i32) -> !cute.tensor<bf16, "smem", 4 : i64, "(2,2,4,4,3):(1,576,2304,16,9216)">
    //
    // GPU-LABEL: llvm.mlir.global internal @__smem_staged_1() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<27648 x bf16>
    // GPU-LABEL: gpu.func @staged(
    // GPU: llvm.mlir.addressof @__smem_staged_1 : !llvm.ptr<3>
    // GPU: %[[C74:.*]] = arith.constant 74 : i32
    // GPU-NEXT: %[[O74:.*]] = arith.extsi %[[C74]] : i32 to i64
    // GPU-NEXT: llvm.getelementptr %{{.*}}[%[[O74]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, bf16
    // GPU: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<3> -> bf16
    gpu.func @staged() kernel {
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %c0 = arith.constant 0 : i32
      %c5 = arith.constant 5 : i32
      %atom = "cute.make_mma_atom"() : () -> !cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">
      %mma = "cute.make_tiled_mma"(%atom) : (!cute.mma_atom<"SM80_16x8x16_F32BF16BF16F32_TN">) -> !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(2,2,1)", "(32,32,16)">
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(128,64,3):(72,1,9216)">
      %pa = "cute.partition_a"(%s, %mma, %t) : (!cute.tensor<bf16, "smem", 16, "(128,64,3):(72,1,9216)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(2,2,1)", "(32,32,16)">, i32) -> !cute.tensor<bf16, "smem", 4, "((2,2,2),4,4,3):((1,576,8),2304,16,9216)">
      %xa = "cute.load"(%pa, %c0) : (!cute.tensor<bf16, "smem", 4, "((2,2,2),4,4,3):((1,576,8),2304,16,9216)">, i32) -> bf16
      %pb = "cute.partition_b"(%s, %mma, %t) : (!cute.tensor<bf16, "smem", 16, "(128,64,3):(72,1,9216)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(2,2,1)", "(32,32,16)">, i32) -> !cute.tensor<bf16, "smem", 4, "((2,2),(2,4),4,3):((1,8),(1152,2304),16,9216)">
      %xb = "cute.load"(%pb, %c0) : (!cute.tensor<bf16, "smem", 4, "((2,2),(2,4),4,3):((1,8),(1152,2304),16,9216)">, i32) -> bf16
      %pc = "cute.partition_c"(%s, %mma, %c5) : (!cute.tensor<bf16, "smem", 16, "(128,64,3):(72,1,9216)">, !cute.tiled_mma<"SM80_16x8x16_F32BF16BF16F32_TN", "(2,2,1)", "(32,32,16)">, i32) -> !cute.tensor<bf16, "smem", 4, "((2,2),4,(2,2),3):((1,576),2304,(16,32),9216)">
      %xc = "cute.load"(%pc, %c0) : (!cute.tensor<bf16, "smem", 4, "((2,2),4,(2,2),3):((1,576),2304,(16,32),9216)">, i32) -> bf16
      gpu.return
    }

    // bf16 inputs, f32 accumulators: A's 8 bf16 are 4 b32 registers (bitcast: element 2i in the low
    // half of register i), B's 4 are 2, C's 4 f32 are one `f` register each, tied to D ("0,1,2,3").
    // The PTX operands are D {$0..$3}, A {$4..$7}, B {$8,$9}, C {$10..$13}.
    // VERIFY-LABEL: gpu.func @bf16(
    // VERIFY: "cute.mma"(%arg0, %arg1, %arg2) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (vector<8xbf16>, vector<4xbf16>, vector<4xf32>) -> vector<4xf32>
    //
    // FOLD-LABEL: gpu.func @bf16(
    // FOLD-NEXT: %[[D:.*]] = "cute.mma"(%arg0, %arg1, %arg2) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (vector<8xbf16>, vector<4xbf16>, vector<4xf32>) -> vector<4xf32>
    // FOLD-NEXT: "cute.store_frag"(%[[D]], %arg3)
    //
    // MMA-LABEL: gpu.func @bf16(
    // MMA-NOT: "cute.mma"
    // MMA: %[[A:.*]] = vector.bitcast %arg0 : vector<8xbf16> to vector<4xi32>
    // MMA-NEXT: %[[A0:.*]] = vector.extract %[[A]][0] : i32 from vector<4xi32>
    // MMA-NEXT: %[[A1:.*]] = vector.extract %[[A]][1] : i32 from vector<4xi32>
    // MMA-NEXT: %[[A2:.*]] = vector.extract %[[A]][2] : i32 from vector<4xi32>
    // MMA-NEXT: %[[A3:.*]] = vector.extract %[[A]][3] : i32 from vector<4xi32>
    // MMA-NEXT: %[[B:.*]] = vector.bitcast %arg1 : vector<4xbf16> to vector<2xi32>
    // MMA-NEXT: %[[B0:.*]] = vector.extract %[[B]][0] : i32 from vector<2xi32>
    // MMA-NEXT: %[[B1:.*]] = vector.extract %[[B]][1] : i32 from vector<2xi32>
    // MMA-NEXT: %[[C0:.*]] = vector.extract %arg2[0] : f32 from vector<4xf32>
    // MMA-NEXT: %[[C1:.*]] = vector.extract %arg2[1] : f32 from vector<4xf32>
    // MMA-NEXT: %[[C2:.*]] = vector.extract %arg2[2] : f32 from vector<4xf32>
    // MMA-NEXT: %[[C3:.*]] = vector.extract %arg2[3] : f32 from vector<4xf32>
    // MMA-NEXT: %[[R:.*]] = llvm.inline_asm "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};", "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3" %[[A0]], %[[A1]], %[[A2]], %[[A3]], %[[B0]], %[[B1]], %[[C0]], %[[C1]], %[[C2]], %[[C3]] : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    // MMA-NEXT: %[[D0:.*]] = llvm.extractvalue %[[R]][0] : !llvm.struct<(f32, f32, f32, f32)>
    // MMA-NEXT: %[[D1:.*]] = llvm.extractvalue %[[R]][1] : !llvm.struct<(f32, f32, f32, f32)>
    // MMA-NEXT: %[[D2:.*]] = llvm.extractvalue %[[R]][2] : !llvm.struct<(f32, f32, f32, f32)>
    // MMA-NEXT: %[[D3:.*]] = llvm.extractvalue %[[R]][3] : !llvm.struct<(f32, f32, f32, f32)>
    // MMA-NEXT: %[[D:.*]] = vector.from_elements %[[D0]], %[[D1]], %[[D2]], %[[D3]] : vector<4xf32>
    // MMA-NEXT: "cute.store_frag"(%[[D]], %arg3)
    //
    // GPU-LABEL: gpu.func @bf16(
    // GPU: llvm.inline_asm "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
    // GPU: %[[D:.*]] = vector.from_elements
    // GPU-NEXT: llvm.store %[[D]], %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
    gpu.func @bf16(%a: vector<8xbf16>, %b: vector<4xbf16>, %c: vector<4xf32>, %out: !cute.tensor<f32, "gmem", 16, "4:1">) kernel {
      %d = "cute.mma"(%a, %b, %c) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (vector<8xbf16>, vector<4xbf16>, vector<4xf32>) -> vector<4xf32>
      "cute.store_frag"(%d, %out) : (vector<4xf32>, !cute.tensor<f32, "gmem", 16, "4:1">) -> ()
      gpu.return
    }

    // f16 accumulators are packed too: C's 4 f16 are 2 b32 registers tied to D's 2 ("=r", "0,1"),
    // and D comes back as a bitcast of the two registers.
    // MMA-LABEL: gpu.func @f16(
    // MMA: %[[A:.*]] = vector.bitcast %arg0 : vector<8xf16> to vector<4xi32>
    // MMA: %[[B:.*]] = vector.bitcast %arg1 : vector<4xf16> to vector<2xi32>
    // MMA: %[[C:.*]] = vector.bitcast %arg2 : vector<4xf16> to vector<2xi32>
    // MMA-NEXT: %[[C0:.*]] = vector.extract %[[C]][0] : i32 from vector<2xi32>
    // MMA-NEXT: %[[C1:.*]] = vector.extract %[[C]][1] : i32 from vector<2xi32>
    // MMA-NEXT: %[[R:.*]] = llvm.inline_asm "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {$0, $1}, {$2, $3, $4, $5}, {$6, $7}, {$8, $9};", "=r,=r,r,r,r,r,r,r,0,1" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C0]], %[[C1]] : (i32, i32, i32, i32, i32, i32, i32, i32) -> !llvm.struct<(i32, i32)>
    // MMA-NEXT: %[[D0:.*]] = llvm.extractvalue %[[R]][0] : !llvm.struct<(i32, i32)>
    // MMA-NEXT: %[[D1:.*]] = llvm.extractvalue %[[R]][1] : !llvm.struct<(i32, i32)>
    // MMA-NEXT: %[[P:.*]] = vector.from_elements %[[D0]], %[[D1]] : vector<2xi32>
    // MMA-NEXT: %[[D:.*]] = vector.bitcast %[[P]] : vector<2xi32> to vector<4xf16>
    // MMA-NEXT: "cute.store_frag"(%[[D]], %arg3)
    gpu.func @f16(%a: vector<8xf16>, %b: vector<4xf16>, %c: vector<4xf16>, %out: !cute.tensor<f16, "gmem", 16, "4:1">) kernel {
      %d = "cute.mma"(%a, %b, %c) {atom = "SM80_16x8x16_F16F16F16F16_TN"} : (vector<8xf16>, vector<4xf16>, vector<4xf16>) -> vector<4xf16>
      "cute.store_frag"(%d, %out) : (vector<4xf16>, !cute.tensor<f16, "gmem", 16, "4:1">) -> ()
      gpu.return
    }

    // tf32 m16n8k8: the fragments are f32 vectors (A 4, B 2 values); the inputs go as their bit
    // patterns in b32 registers, the accumulators as f32.
    // VERIFY-LABEL: gpu.func @tf32(
    // VERIFY: "cute.mma"(%arg0, %arg1, %arg2) {atom = "SM80_16x8x8_F32TF32TF32F32_TN"} : (vector<4xf32>, vector<2xf32>, vector<4xf32>) -> vector<4xf32>
    // MMA-LABEL: gpu.func @tf32(
    // MMA: %[[A:.*]] = vector.bitcast %arg0 : vector<4xf32> to vector<4xi32>
    // MMA: %[[B:.*]] = vector.bitcast %arg1 : vector<2xf32> to vector<2xi32>
    // MMA-NOT: vector.bitcast %arg2
    // MMA: llvm.inline_asm "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};", "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3" {{.*}} : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    gpu.func @tf32(%a: vector<4xf32>, %b: vector<2xf32>, %c: vector<4xf32>, %out: !cute.tensor<f32, "gmem", 16, "4:1">) kernel {
      %d = "cute.mma"(%a, %b, %c) {atom = "SM80_16x8x8_F32TF32TF32F32_TN"} : (vector<4xf32>, vector<2xf32>, vector<4xf32>) -> vector<4xf32>
      "cute.store_frag"(%d, %out) : (vector<4xf32>, !cute.tensor<f32, "gmem", 16, "4:1">) -> ()
      gpu.return
    }
  }
}
