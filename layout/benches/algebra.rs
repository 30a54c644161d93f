//! Throughput of composition and logical_divide on static layouts (ops/s:
//! criterion reports `thrpt` in elements/s, one element = one operation).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use cute_layout::{composition, logical_divide, zipped_divide, Layout, Tiler};
use std::hint::black_box;

fn l(s: &str) -> Layout {
    s.parse().unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("static");
    g.throughput(Throughput::Elements(1));
    let (a, b) = (l("(6,2):(8,2)"), l("(4,3):(3,1)"));
    g.bench_function("composition (6,2):(8,2) o (4,3):(3,1)", |x| {
        x.iter(|| composition(black_box(&a), black_box(&b)).unwrap())
    });
    let (a2, b2) = (l("(16,256):(2048,1)"), l("((32,4),(8,4)):((128,4),(16,1))"));
    g.bench_function("composition (16,256):(2048,1) o TV", |x| {
        x.iter(|| composition(black_box(&a2), black_box(&b2)).unwrap())
    });
    let a3 = l("(9,(4,8)):(59,(13,1))");
    let t3: Tiler = "<3:3,(2,4):(1,8)>".parse().unwrap();
    g.bench_function("logical_divide (9,(4,8)):(59,(13,1)) / <3:3,(2,4):(1,8)>", |x| {
        x.iter(|| logical_divide(black_box(&a3), black_box(&t3)).unwrap())
    });
    let a4 = l("(4,2,3):(2,1,8)");
    let t4 = Tiler::Layout(l("4:2"));
    g.bench_function("logical_divide (4,2,3):(2,1,8) / 4:2", |x| {
        x.iter(|| logical_divide(black_box(&a4), black_box(&t4)).unwrap())
    });
    let a5 = l("(2048,2048):(2048,1)");
    let t5: Tiler = "(16,256)".parse().unwrap();
    g.bench_function("zipped_divide (2048,2048):(2048,1) / (16,256)", |x| {
        x.iter(|| zipped_divide(black_box(&a5), black_box(&t5)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
