//! The front end's speed on a large file: a generated 10,000-line `.cute` source of many kernels,
//! device helpers and host launch functions with realistic bodies (the shapes of the samples:
//! index arithmetic, bounds checks, loops, tiling, layout algebra, launches). Measures `parse`
//! alone and `front_end` (parse and elaborate). The goal is well under 100 ms for the whole file.
//!
//! `cargo bench -p cute-lang --bench front_end`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

/// One unit of the generated file; `@` becomes the unit's number so every name is unique.
const UNIT: &str = r#"// ---- Unit @: elementwise kernels, a reduction, helpers and their launches ----

/* Vector add with a bounds check: one thread per element,
   block (256,1,1), grid (ceil(n/256),1,1). */
kernel vector_add_@(a: tensor<f32, gmem, (?):(1)>,
                    b: tensor<f32, gmem, (?):(1)>,
                    c: tensor<f32, gmem, (?):(1)>) {
    let i = block_idx.x * block_dim.x + thread_idx.x;
    if i < size(c) {
        c[i] = a[i] + b[i] * 2.0 - 1.0;
    }
}

kernel scale_rows_@(a: tensor<f32, gmem, (4,8):(8,1), align: 16>, b: tensor<f32, gmem, (4,8)>) {
    let m = thread_idx.x;
    let n = thread_idx.y;
    if m < 4 && n < 8 {
        b[m, n] = a[m, n] * 2.0 + 0.5;
    } else if m < 4 {
        b[m, 0] = 0.0;
    } else {
        b[0, 0] = 1.0;
    }
}

kernel row_sum_@(a: tensor<f32, gmem, (?,8):(?,1)>, out: tensor<f32, gmem, (?):(1)>) {
    let r = block_idx.x * block_dim.x + thread_idx.x;
    if r < size(out) {
        let mut acc = 0.0;
        for j in 0..8 {
            acc += a[r, j] * a[r, j];
        }
        out[r] = acc;
    }
}

kernel naive_add_@(gA: tensor<f32, gmem>, gB: tensor<f32, gmem>, gC: tensor<f32, gmem>) {
    let tid = block_idx.x * block_dim.x + thread_idx.x;
    let (m, n) = gA.shape;
    let ni = tid % n;
    let mi = tid / n;
    gC[mi, ni] = gA[mi, ni] + gB[mi, ni];
}

host naive_add_host_@(mA: tensor<f32, gmem, (?,?{div=4}):(?{div=4},1), align: 16>,
                      mB: tensor<f32, gmem, (?,?{div=4}):(?{div=4},1), align: 16>,
                      mC: tensor<f32, gmem, (?,?{div=4}):(?{div=4},1), align: 16>) {
    let threads = 256;
    let (m, n) = mA.shape;
    launch naive_add_@(mA, mB, mC) grid(m * n / threads) block(threads);
}

kernel tv_add_@(gA: tensor<f32, gmem>, gB: tensor<f32, gmem>, gC: tensor<f32, gmem>, const tv: layout) {
    let tidx = thread_idx.x;
    let bidx = block_idx.x;
    let blkA = gA[(_, _), bidx];
    let blkB = gB[(_, _), bidx];
    let blkC = gC[(_, _), bidx];
    let thrA = composition(blkA, tv)[tidx, _];
    let thrB = composition(blkB, tv)[tidx, _];
    let thrC = composition(blkC, tv)[tidx, _];
    thrC[_] = thrA.load() + thrB.load();
}

host tv_add_host_@(mA: tensor<f32, gmem, (?,?{div=4}):(?{div=4},1), align: 16>,
                   mB: tensor<f32, gmem, (?,?{div=4}):(?{div=4},1), align: 16>,
                   mC: tensor<f32, gmem, (?,?{div=4}):(?{div=4},1), align: 16>) {
    let thr_layout = make_layout((4, 32), stride: (32, 1));
    let val_layout = make_layout((4, 4), stride: (4, 1));
    let (tiler_mn, tv_layout) = make_layout_tv(thr_layout, val_layout);
    let gA = zipped_divide(mA, tiler_mn);
    let gB = zipped_divide(mB, tiler_mn);
    let gC = zipped_divide(mC, tiler_mn);
    launch tv_add_@(gA, gB, gC, tv_layout) grid(size(gC, mode: 1)) block(size(tv_layout, mode: 0));
}

fn mul_relu_@(a, b) {
    let t = a * b;
    return where(t > 0.0, t, 0.0);
}

kernel apply_@(const op: fn(f16, f16) -> f16,
               gA: tensor<f16, gmem>, gB: tensor<f16, gmem>, gC: tensor<f16, gmem>,
               const tv_layout: layout) {
    let tidx = thread_idx.x;
    let bidx = block_idx.x;
    let blk_coord = ((_, _), bidx);
    let thrA = composition(gA[blk_coord], tv_layout)[(tidx, _)];
    let thrB = composition(gB[blk_coord], tv_layout)[(tidx, _)];
    let thrC = composition(gC[blk_coord], tv_layout)[(tidx, _)];
    thrC[_] = op(thrA.load(), thrB.load());
}

host apply_host_@(mA: tensor<f16, gmem, (?,?{div=8}):(?{div=8},1), align: 16>,
                  mB: tensor<f16, gmem, (?,?{div=8}):(?{div=8},1), align: 16>,
                  mC: tensor<f16, gmem, (?,?{div=8}):(?{div=8},1), align: 16>) {
    let thr_layout = make_layout((4, 32), stride: (32, 1));
    let val_layout = make_layout((4, 8), stride: (8, 1));
    let (tiler_mn, tv_layout) = make_layout_tv(thr_layout, val_layout);
    let gA = zipped_divide(mA, tiler_mn);
    let gB = zipped_divide(mB, tiler_mn);
    let gC = zipped_divide(mC, tiler_mn);
    launch apply_@(mul_relu_@, gA, gB, gC, tv_layout)
        grid(size(gC, mode: 1)) block(size(tv_layout, mode: 0));
}

"#;

/// The benchmark's source: units until it has `lines` lines.
fn generate(lines: usize) -> String {
    let mut out = String::new();
    let mut unit = 0;
    while out.lines().count() < lines {
        out.push_str(&UNIT.replace('@', &unit.to_string()));
        unit += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let source = generate(10_000);
    let lines = source.lines().count();
    // A benchmark of error paths would measure the wrong thing: the file must be accepted.
    if let Err(d) = cute_lang::parse(&source) {
        panic!("the generated file does not parse: {}", d.message);
    }
    let accepted = match cute_lang::front_end(&source) {
        Ok(_) => true,
        Err(ds) => {
            eprintln!(
                "note: the front end rejects the generated file, timing its diagnostics path:\n{}",
                cute_lang::diag::render("bench.cute", &source, &ds[..1])
            );
            false
        }
    };
    let mut g = c.benchmark_group(format!("front_end/{lines}_lines"));
    g.throughput(Throughput::Bytes(source.len() as u64));
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("parse", |b| b.iter(|| cute_lang::parse(black_box(&source))));
    g.bench_function(if accepted { "parse+elaborate" } else { "parse+elaborate (rejected)" }, |b| {
        b.iter(|| cute_lang::front_end(black_box(&source)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
