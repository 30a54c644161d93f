"""`cutec.tune` and `cutec tune` / `python -m cutec tune`: times each candidate of a `.cute` file's
`tune` blocks on the GPU (the bench's method: CUDA events around every call, inputs rotated over
enough sets that each call misses the L2, the median), checks each against the default instance's
results on the same inputs, and builds a cubin whose host functions dispatch on the shape to the
winners (`cutec build --tuning`). docs/python.md ("Tuning") has the walk-through."""

import ast
import itertools
import json
import math
import os
import statistics
import sys

from . import _compile, _native

# Tolerances of the check against the default instance: |x - ref| <= ATOL + RTOL * |ref| per
# element (a different vector width or ILP changes no arithmetic here, but a different tile may
# change a reduction's order).
TOLERANCE = {"f16": (1e-2, 1e-2), "bf16": (2e-2, 2e-2), "f32": (1e-4, 1e-5), "f64": (1e-10, 1e-12)}
L2_FACTOR = 4  # input sets rotated over: at least L2_FACTOR x the L2 in bytes (bench.n_rotations)
MAX_SETS = 16


def _error(message):
    return _native.Error(message)


def _extent(text, env):
    """An integer expression of the shape variables (`M * N`, `N / 2`) for shape `env`."""

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name) and n.id in env:
            return env[n.id]
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
            if type(n.op) in ops:
                return ops[type(n.op)]
            if isinstance(n.op, (ast.Div, ast.FloorDiv)):
                return int(a / b)  # .cute's integer division truncates
            if isinstance(n.op, ast.Mod):
                return int(math.fmod(a, b))
        raise _error(f"cannot evaluate the extent `{text}`")

    return ev(ast.parse(text, mode="eval"))


def _make_args(torch, spec, env, device, gen):
    args, outputs = [], []
    for i, a in enumerate(spec["args"]):
        if a["kind"] == "int":
            args.append(_extent(a["value"], env))
            continue
        shape = [_extent(e, env) for e in a["shape"]]
        dtype = getattr(
            torch,
            {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}.get(a["dtype"], a["dtype"]),
        )
        if a["kind"] == "rand":
            t = (torch.rand(shape, generator=gen, device=device, dtype=torch.float32) * 2 - 1).to(dtype)
        else:
            t = torch.zeros(shape, device=device, dtype=dtype)
            outputs.append(i)
        args.append(t)
    return args, outputs


def _nbytes(args):
    return sum(a.numel() * a.element_size() for a in args if hasattr(a, "numel"))


def _time(torch, calls, iters):
    """Median ms of calls[i % len(calls)]() over `iters` calls, one CUDA event pair around each."""
    for i in range(3):
        calls[i % len(calls)]()
    torch.cuda.synchronize()
    evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    if hasattr(torch.cuda, "_sleep"):  # the GPU waits until every call is queued (bench.queue_timed)
        torch.cuda._sleep(int(iters * 20e-6 * 2e9))
    for k, (s, e) in enumerate(evs):
        s.record()
        calls[k % len(calls)]()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in evs)


def _check(torch, got, ref, dtype):
    atol, rtol = TOLERANCE.get(dtype, (0.0, 0.0))
    if got.dtype.is_floating_point:
        bad = (got.float() - ref.float()).abs() > atol + rtol * ref.float().abs()
        bad |= torch.isnan(got) != torch.isnan(ref)
    else:
        bad = got != ref
    n = int(bad.sum())
    return None if n == 0 else f"{n} of {got.numel()} elements differ from the default's (atol {atol}, rtol {rtol})"


def _spec(found, path, host):
    cmd = [found.exe, "tune", path, "--spec"] + (["--host", host] if host else [])
    r = _compile._run(found, cmd, cwd=os.path.dirname(path) or ".")
    if r.returncode != 0:
        raise _compile.CompileError(f"cutec tune {path} --spec failed:\n{r.stderr.strip()}", r.stderr, r.returncode)
    return json.loads(r.stdout)


def _parse_shape(s):
    if isinstance(s, str):
        try:
            s = [int(x) for x in s.split("x")]
        except ValueError:
            raise _error(f"`{s}` is not a shape (extents joined by `x`: `1024x4096`)") from None
    return tuple(int(x) for x in s)


def tune(source, shapes, output, host=None, arch=None, iters=50, report=None, device=0, compiler=None, quiet=False):
    """Tunes the `tune` blocks of the `.cute` file `source` (a path) at `shapes` (`"1024x4096"` or
    tuples) and writes the tuned cubin to `output`. Returns the report: per host function,
    per shape, each candidate's median ms (or why it failed) and the chosen one. Needs a CUDA GPU
    and torch; raises `cutec.Error` otherwise."""
    text, path, label = _compile.read_source(source)
    if path is None:
        raise TypeError("cutec.tune takes the path of a .cute file, not its text")
    try:
        import torch
    except ImportError:
        raise _error("cutec tune times the candidates with torch on the GPU: `pip install torch`") from None
    if not torch.cuda.is_available():
        raise _error("cutec tune times the candidates on a GPU, and torch finds no CUDA device here")
    found = _compile.find(compiler)
    specs = _spec(found, path, host)
    shapes = [_parse_shape(s) for s in shapes]
    if not shapes:
        raise _error("cutec tune needs at least one shape")
    arch = _compile.choose_arch(arch, text, device)
    dev = torch.device("cuda", device)
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    from . import load

    result = {"arch": arch, "device": torch.cuda.get_device_name(device), "hosts": []}
    table = []
    for spec in specs:
        names = [c["name"] for c in spec["consts"]]
        for s in shapes:
            if len(s) != len(spec["vars"]):
                raise _error(
                    f"shape {s} has {len(s)} extents; `tune {spec['host']}({', '.join(spec['vars'])})` takes {len(spec['vars'])}"
                )
        candidates = [dict(zip(names, vs)) for vs in itertools.product(*(c["values"] for c in spec["consts"]))]
        modules = {}
        for c in candidates:
            key = "; ".join(f"{k}={v}" for k, v in c.items())
            try:
                modules[key] = load(_compile.build(path, arch=arch, consts=c, compiler=compiler), device)
            except _native.Error as e:
                modules[key] = e
        default = load(_compile.build(path, arch=arch, compiler=compiler), device)
        hres = {"host": spec["host"], "vars": spec["vars"], "shapes": []}
        for shape in shapes:
            row = _tune_shape(torch, spec, shape, modules, default, dev, l2, iters)
            hres["shapes"].append(row)
            if row["chosen"] is not None:
                table.append(f"{spec['host']} {','.join(map(str, shape))} | {row['chosen']}")
            elif not quiet:
                print(f"cutec tune: {spec['host']} {shape}: no candidate passed; the default stays", file=sys.stderr)
        result["hosts"].append(hres)
    _build_tuned(found, path, arch, table, output)
    result["output"] = os.fspath(output)
    if report is not None:
        with open(report, "w") as f:
            json.dump(result, f, indent=1)
    if not quiet:
        print(format_report(result))
    return result


def _tune_shape(torch, spec, shape, modules, default, dev, l2, iters):
    env = dict(zip(spec["vars"], shape))
    gen = torch.Generator(device=dev)
    gen.manual_seed(0)
    first, outputs = _make_args(torch, spec, env, dev, gen)
    per_set = max(1, _nbytes(first))
    nsets = 1 if per_set >= L2_FACTOR * l2 else max(2, min(MAX_SETS, math.ceil(L2_FACTOR * l2 / per_set)))
    sets = [first] + [_make_args(torch, spec, env, dev, gen)[0] for _ in range(nsets - 1)]
    fn = getattr(default, spec["host"])
    fn(*first)
    torch.cuda.synchronize()
    ref = [first[i].clone() for i in outputs]
    row = {"shape": list(shape), "sets": nsets, "times_ms": {}, "failed": {}, "chosen": None}
    default_ms = _time(torch, [lambda s=s: fn(*s) for s in sets], iters)
    row["default_ms"] = default_ms
    for key, mod in modules.items():
        if isinstance(mod, Exception):
            row["failed"][key] = f"refused by the compiler: {str(mod).splitlines()[-1]}"
            continue
        cfn = getattr(mod, spec["host"])
        try:
            for i in outputs:
                first[i].zero_()
            cfn(*first)
            torch.cuda.synchronize()
            why = None
            for i, r in zip(outputs, ref):
                why = why or _check(torch, first[i], r, spec["args"][i]["dtype"])
            if why:
                row["failed"][key] = why
                continue
            row["times_ms"][key] = _time(torch, [lambda s=s, f=cfn: f(*s) for s in sets], iters)
        except _native.Error as e:
            row["failed"][key] = f"refused: {e}"
    if row["times_ms"]:
        row["chosen"] = min(row["times_ms"], key=row["times_ms"].get)
    return row


def _build_tuned(found, path, arch, table, output):
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cutec-tune-") as tmp:
        tfile = os.path.join(tmp, "table.tuning")
        with open(tfile, "w") as f:
            f.write("# cutec tune: HOST M,N | the winner's consts\n" + "".join(line + "\n" for line in table))
        cmd = [found.exe, "build", path, "--arch", arch, "--tuning", tfile, "-o", os.fspath(output)]
        r = _compile._run(found, cmd, cwd=tmp)
    if r.returncode != 0:
        raise _compile.CompileError(f"cutec build --tuning failed:\n{r.stderr.strip()}", r.stderr, r.returncode)


def format_report(result):
    """The report as a table: per host and shape, each candidate's median µs, `*` the chosen one."""
    lines = [f"cutec tune on {result['device']} ({result['arch']}) -> {result['output']}"]
    for h in result["hosts"]:
        for row in h["shapes"]:
            shape = "x".join(map(str, row["shape"]))
            lines.append(f"{h['host']} {shape}: default {row['default_ms'] * 1e3:.1f} us ({row['sets']} input sets)")
            for key, ms in sorted(row["times_ms"].items(), key=lambda kv: kv[1]):
                mark = "*" if key == row["chosen"] else " "
                lines.append(f"  {mark} {ms * 1e3:9.1f} us  {key}")
            for key, why in row["failed"].items():
                lines.append(f"    {'failed':>9}     {key}: {why}")
    return "\n".join(lines)


def main(argv):
    """`python -m cutec tune FILE --shapes MxN ... -o OUT [--host H] [--arch A] [--iters K] [--report R]`."""
    import argparse

    p = argparse.ArgumentParser(prog="cutec tune")
    p.add_argument("file")
    p.add_argument("--shapes", nargs="+", default=[])
    p.add_argument("-o", "--output")
    p.add_argument("--host")
    p.add_argument("--arch")
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--report")
    p.add_argument("--spec", action="store_true")
    a = p.parse_args(argv)
    if a.spec or not a.shapes or not a.output:
        # The compiler checks the file and the arguments and prints the spec.
        found = _compile.find()
        os.execve(found.exe, [found.exe, "tune", *argv], os.environ if found.env is None else found.env)
    try:
        tune(a.file, a.shapes, a.output, host=a.host, arch=a.arch, iters=a.iters, report=a.report)
    except _native.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0
