"""`cutec.tune` on the GPU (docs/python.md, "Tuning"): samples/fast_add.cute's `add_tuned` tuned at
a few shapes; every candidate passes the check against the default instance; the tuned cubin's
results equal the default's on every tuned shape and on shapes between them; its dispatch launches
what the recorded winner's own build launches (grid and block), and its manifest records the
table. Skipped without a GPU or without the compiler (the `cutec-compiler` wheel, $CUTEC, or a
cargo build)."""

import pytest

import cutec
from conftest import SAMPLES, find_compiler

SHAPES = [(1024, 1024), (4096, 4096), (16384, 1024)]


@pytest.fixture(scope="module")
def tuned(gpu, tmp_path_factory):
    exe = cutec.find_compiler() or find_compiler()
    if exe is None:
        pytest.skip("no cutec compiler: pip install cutec-compiler, set CUTEC, or cargo build -p cutec")
    out = tmp_path_factory.mktemp("tune") / "fast_add.cubin"
    path = str(SAMPLES / "fast_add.cute")
    report = cutec.tune(path, [f"{m}x{n}" for m, n in SHAPES], out, iters=20, compiler=exe)
    print(cutec._tune.format_report(report))
    return exe, path, report, cutec.load(out)


def consts_of(key):
    return dict(kv.split("=", 1) for kv in key.split("; "))


def operands(torch, m, n):
    a = torch.randn(m, n, device="cuda", dtype=torch.float16)
    b = torch.randn(m, n, device="cuda", dtype=torch.float16)
    return a, b


def test_every_candidate_checked_and_timed(tuned):
    _, _, report, _ = tuned
    (host,) = report["hosts"]
    assert host["host"] == "add_tuned" and len(host["shapes"]) == len(SHAPES)
    for row in host["shapes"]:
        assert row["failed"] == {}, row["failed"]
        assert len(row["times_ms"]) == 2 * 3 * 3 * 2
        assert row["chosen"] == min(row["times_ms"], key=row["times_ms"].get)


def test_results_equal_the_defaults(gpu, tuned):
    torch = gpu
    exe, path, _, mod = tuned
    default = cutec.compile(path, compiler=exe)
    for m, n in SHAPES + [(2000, 3000), (8, 64), (20000, 4096)]:
        a, b = operands(torch, m, n)
        c, ref = torch.empty_like(a), torch.empty_like(a)
        mod.add_tuned(a, b, c)
        default.add_tuned(a, b, ref)
        torch.cuda.synchronize()
        assert torch.equal(c, ref), (m, n)
        assert torch.equal(c, a + b), (m, n)


def test_dispatch_takes_the_recorded_winner(gpu, tuned):
    torch = gpu
    exe, path, report, mod = tuned
    manifest = mod.manifest
    for row in report["hosts"][0]["shapes"]:
        m, n = row["shape"]
        assert f"tuned {m},{n} | {row['chosen']}" in manifest
        winner = cutec.compile(path, consts=consts_of(row["chosen"]), compiler=exe)
        args = (*operands(torch, m, n), torch.empty(m, n, device="cuda", dtype=torch.float16))
        got = [(x["grid"], x["block"]) for x in mod.add_tuned.check(*args)]
        want = [(x["grid"], x["block"]) for x in winner.add_tuned.check(*args)]
        assert got == want, (row["shape"], row["chosen"])
