#!/usr/bin/env python3
"""Differential test of cute-layout against pycute (nvidia-cutlass==4.2.0.0).

    scripts/pycute_diff.py --cases N --seed S [--bin PATH] [--show-ok K]

Generates N random cases (layouts of rank <= 4 and depth <= 3, every
operation pycute has), evaluates each with pycute in this process, pipes all
the expressions through ONE `eval -` process of the binary (`cute-layout`,
or `cutec` when PATH ends in `cutec`: then `cutec layout eval -` is run), and
compares:

* layouts by shape (as trees) and by function (their coalesced forms, which
  are canonical for the function on [0, size); strides of size-1 modes may
  print differently: CuTe gives them stride 0, pycute keeps a value);
* integers and coordinates by value.

When the two disagree on whether a case is valid:
* pycute raises: our side must raise too, or give a result that passes the
  operation's post-condition checked here by brute force; counted as skipped.
* we raise and pycute returns: pycute's result is checked against the
  post-condition (pycute does not check CuTe's divisibility preconditions and
  then returns wrong layouts); a failing pycute result counts as skipped, a
  passing one is a mismatch.

Prints each mismatch and a closing line `pycute-diff: P passed, F failed, K skipped`.
Exit status 0 when F == 0.
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile

try:
    import pycute as pc
except ImportError:  # pragma: no cover
    sys.stderr.write("pycute missing: pip install nvidia-cutlass==4.2.0.0 --no-deps\n")
    sys.exit(2)

MAX_SIZE = 2048
ENUM_LIMIT = 4096

# ----------------------------------------------------------------- printing


def fmt(t):
    if isinstance(t, tuple):
        return "(" + ",".join(fmt(x) for x in t) + ")"
    return str(t)


def lay(L):
    return fmt(L.shape) + ":" + fmt(L.stride)


def tiler(T):
    if isinstance(T, tuple):
        return "<" + ",".join(tiler(x) for x in T) + ">"
    return lay(T)


# ----------------------------------------------------------------- parsing our output


def parse_value(s):
    """CuTe notation -> python: int, tuple, or pc.Layout."""
    pos = 0

    def term():
        nonlocal pos
        if s[pos] == "(":
            pos += 1
            items = []
            if s[pos] == ")":
                pos += 1
                return tuple(items)
            while True:
                items.append(expr())
                if s[pos] == ")":
                    pos += 1
                    return tuple(items)
                assert s[pos] == ",", s
                pos += 1
        start = pos
        if s[pos] == "-":
            pos += 1
        while pos < len(s) and s[pos].isdigit():
            pos += 1
        return int(s[start:pos])

    def expr():
        nonlocal pos
        t = term()
        if pos < len(s) and s[pos] == ":":
            pos += 1
            d = term()
            return pc.Layout(t, d)
        return t

    v = expr()
    assert pos == len(s), s
    return v


# ----------------------------------------------------------------- generation


def gen_shape(rng, depth=0, top=True):
    if top:
        rank = rng.choice([1, 1, 2, 2, 2, 3, 3, 4])
        if rank == 1 and rng.random() < 0.5:
            return gen_leaf(rng)
        return tuple(gen_shape(rng, depth + 1, False) for _ in range(rank))
    if depth < 3 and rng.random() < 0.3:
        return tuple(gen_shape(rng, depth + 1, False) for _ in range(rng.choice([1, 2, 2, 3])))
    return gen_leaf(rng)


def gen_leaf(rng):
    return rng.choice([1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 8, 8])


def leaves(t):
    return pc.flatten(t) if isinstance(t, tuple) else (t,)


def unflatten(like, vals):
    it = iter(vals)

    def go(t):
        if isinstance(t, tuple):
            return tuple(go(x) for x in t)
        return next(it)

    return go(like)


def gen_strides(rng, shape):
    kind = rng.random()
    flat = leaves(shape)
    if kind < 0.55:
        # injective: an ordered compact layout with optional gaps
        order = list(range(len(flat)))
        rng.shuffle(order)
        strides = [0] * len(flat)
        acc = 1
        for k in order:
            if rng.random() < 0.25:
                acc *= rng.choice([2, 3, 4])
            strides[k] = acc
            acc *= flat[k]
    elif kind < 0.75:
        strides = list(pc.flatten(pc.prefix_product(shape))) if isinstance(shape, tuple) else [1]
    else:
        strides = [rng.choice([0, 1, 1, 2, 3, 4, 6, 8, 12, 16, 32]) for _ in flat]
    return unflatten(shape, strides) if isinstance(shape, tuple) else strides[0]


def gen_layout(rng, max_size=MAX_SIZE):
    while True:
        s = gen_shape(rng)
        if pc.product(s) <= max_size:
            return pc.Layout(s, gen_strides(rng, s))


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def gen_compact_of_size(rng, n):
    """A compact-ish layout whose size divides or equals n."""
    target = rng.choice(divisors(n))
    factors = []
    rest = target
    while rest > 1 and len(factors) < 3:
        d = rng.choice([x for x in divisors(rest) if x > 1])
        factors.append(d)
        rest //= d
    if rest > 1:
        factors.append(rest)
    if not factors:
        factors = [1]
    shape = tuple(factors) if len(factors) > 1 else factors[0]
    return pc.Layout(shape, gen_strides(rng, shape))


def gen_tiler_for(rng, A):
    """A layout tiler or a by-mode tuple of layout tilers for A."""
    if rng.random() < 0.5 or not isinstance(A.shape, tuple):
        return gen_compact_of_size(rng, pc.size(A))
    k = rng.randint(1, len(A.shape))
    return tuple(gen_compact_of_size(rng, pc.size(A[i])) for i in range(k))


def gen_case(rng):
    """Returns (op, expr_for_us, pycute_thunk, check) ."""
    A = gen_layout(rng)
    op = rng.choice(
        [
            "size",
            "cosize",
            "eval",
            "eval_hier",
            "coalesce",
            "coalesce_profile",
            "filter",
            "composition",
            "composition",
            "composition_random",
            "composition_bymode",
            "complement",
            "complement",
            "right_inverse",
            "left_inverse",
            "logical_divide",
            "logical_divide",
            "zipped_divide",
            "tiled_divide",
            "logical_product",
            "logical_product",
            "zipped_product",
            "tiled_product",
            "crd2idx",
            "idx2crd",
            "slice",
            "crd2idx_int",
            "idx2crd_strided",
            "take",
        ]
    )
    if op == "size":
        return op, f"size({lay(A)})", lambda: pc.size(A), None
    if op == "cosize":
        return op, f"cosize({lay(A)})", lambda: pc.cosize(A), None
    if op == "eval":
        i = rng.randrange(pc.size(A))
        return op, f"eval({lay(A)}, {i})", lambda: A(i), None
    if op == "eval_hier":
        i = rng.randrange(pc.size(A))
        c = pc.idx2crd(i, A.shape)
        return op, f"eval({lay(A)}, {fmt(c)})", lambda: A(c), None
    if op == "crd2idx":
        i = rng.randrange(pc.size(A))
        c = pc.idx2crd(i, A.shape)
        return op, f"crd2idx({fmt(c)}, {fmt(A.shape)}, {fmt(A.stride)})", lambda: pc.crd2idx(c, A.shape, A.stride), None
    if op == "idx2crd":
        i = rng.randrange(pc.size(A))
        return op, f"idx2crd({i}, {fmt(A.shape)})", lambda: pc.idx2crd(i, A.shape), None
    if op == "crd2idx_int":
        i = rng.randrange(pc.size(A))
        return op, f"crd2idx({i}, {fmt(A.shape)}, {fmt(A.stride)})", lambda: pc.crd2idx(i, A.shape, A.stride), None
    if op == "idx2crd_strided":
        # CuTe's idx2crd(idx, shape, stride) inverts compact layouts.
        C = gen_compact_of_size(rng, pc.size(A))
        if pc.size(C) == 1:
            # 1:0 — pycute divides by the stride 0; CuTe's answer (0) is ours.
            return "size", f"size({lay(A)})", lambda: pc.size(A), None
        i = rng.randrange(pc.size(C))
        return op, f"idx2crd({i}, {fmt(C.shape)}, {fmt(C.stride)})", lambda: pc.idx2crd(i, C.shape, C.stride), None
    if op == "take":
        if not isinstance(A.shape, tuple):
            return "size", f"size({lay(A)})", lambda: pc.size(A), None
        b = rng.randrange(len(A))
        e = rng.randint(b + 1, len(A))
        # CuTe's take<B,E>: modes [B,E) (pycute has no take; its make_layout of the modes is one).
        return op, f"take({lay(A)}, {b}, {e})", lambda: pc.make_layout([A[k] for k in range(b, e)]), None
    if op == "slice":
        if not isinstance(A.shape, tuple):
            return "size", f"size({lay(A)})", lambda: pc.size(A), None
        crd = tuple(None if rng.random() < 0.5 else rng.randrange(pc.product(s)) for s in A.shape)
        if all(c is not None for c in crd):
            crd = (None,) + crd[1:]
        ours = "(" + ",".join("_" if c is None else str(c) for c in crd) + ")"

        def py():
            layout, off = pc.slice_and_offset(crd, A)
            return (layout, off)

        return op, f"slice({lay(A)}, {ours})", py, None
    if op == "coalesce":
        return op, f"coalesce({lay(A)})", lambda: pc.coalesce(A), ("same_function", A)
    if op == "coalesce_profile":
        prof = tuple(1 for _ in range(rng.randint(1, len(A)))) if isinstance(A.shape, tuple) else 1
        return op, f"coalesce({lay(A)}, {fmt(prof)})", lambda: pc.coalesce(A, prof), ("same_function", A)
    if op == "filter":
        return op, f"filter({lay(A)})", lambda: pc.filter(A), None
    if op in ("composition", "composition_random"):
        B = gen_compact_of_size(rng, pc.size(A)) if op == "composition" else gen_layout(rng, 256)
        return "composition", f"composition({lay(A)}, {lay(B)})", lambda: pc.composition(A, B), ("composition", A, B)
    if op == "composition_bymode":
        if not isinstance(A.shape, tuple):
            B = gen_compact_of_size(rng, pc.size(A))
            return (
                "composition",
                f"composition({lay(A)}, {lay(B)})",
                lambda: pc.composition(A, B),
                ("composition", A, B),
            )
        T = tuple(gen_compact_of_size(rng, pc.size(A[i])) for i in range(rng.randint(1, len(A.shape))))
        return op, f"composition({lay(A)}, {tiler(T)})", lambda: pc.composition(A, T), ("bymode_composition", A, T)
    if op == "complement":
        cot = rng.choice([pc.cosize(A), pc.cosize(A) * rng.randint(1, 4), rng.randint(1, 64)])
        return op, f"complement({lay(A)}, {cot})", lambda: pc.complement(A, cot), ("complement", A, cot)
    if op == "right_inverse":
        return op, f"right_inverse({lay(A)})", lambda: pc.right_inverse(A), ("right_inverse", A)
    if op == "left_inverse":
        return op, f"left_inverse({lay(A)})", lambda: pc.left_inverse(A), ("left_inverse", A)
    T = gen_tiler_for(rng, A)
    fns = {
        "logical_divide": pc.logical_divide,
        "zipped_divide": pc.zipped_divide,
        "tiled_divide": pc.tiled_divide,
        "logical_product": pc.logical_product,
        "zipped_product": pc.zipped_product,
        "tiled_product": pc.tiled_product,
    }
    f = fns[op]
    kind = "divide" if "divide" in op else "product"
    return op, f"{op}({lay(A)}, {tiler(T)})", lambda: f(A, T), (kind, A, T, op)


# ----------------------------------------------------------------- comparison


def is_layout(x):
    return isinstance(x, pc.Layout)


def canon(L):
    c = pc.coalesce(L)
    return (c.shape, c.stride)


def values(L):
    n = pc.size(L)
    if n > ENUM_LIMIT:
        return None
    return [L(i) for i in range(n)]


def same(ours, ref):
    if is_layout(ref):
        if not is_layout(ours):
            return False
        return ours.shape == ref.shape and canon(ours) == canon(ref)
    if isinstance(ref, tuple) and len(ref) == 2 and is_layout(ref[0]):  # slice
        return isinstance(ours, tuple) and len(ours) == 2 and same(ours[0], ref[0]) and ours[1] == ref[1]
    return ours == ref


def valid(check, R):
    """Brute-force post-condition of the operation for a result R."""
    try:
        if check is None or not is_layout(R) and check[0] not in ("bymode_composition",):
            return False
        kind = check[0]
        if kind == "same_function":
            A = check[1]
            return pc.size(R) == pc.size(A) and values(R) == values(A)
        if kind == "composition":
            A, B = check[1], check[2]
            return pc.size(R) == pc.size(B) and all(R(i) == A(B(i)) for i in range(min(pc.size(B), ENUM_LIMIT)))
        if kind == "bymode_composition":
            A, T = check[1], check[2]
            return all(valid(("composition", A[i], T[i]), R[i]) for i in range(len(T)))
        if kind == "complement":
            A, cot = check[1], check[2]
            if not complementable(A) or 0 in leaves(R.shape):
                return False
            full = pc.make_layout(A, R)
            v = values(full)
            return v is not None and len(set(v)) == len(v) and pc.size(R) * pc.size(A) >= min(cot, 1)
        if kind == "injective":
            return injective(check[1])
        if kind == "right_inverse":
            A = check[1]
            return all(A(R(i)) == i for i in range(pc.size(R)))
        if kind == "left_inverse":
            A = check[1]
            return all(R(A(i)) == i for i in range(pc.size(A)))
        if kind == "divide":
            A, T = check[1], check[2]
            # CuTe's divide needs each tiler to be injective (its complement).
            if not all(complementable(t) for t in (T if isinstance(T, tuple) else (T,))):
                return False
            # The tile modes have the tilers' sizes.
            ts = T if isinstance(T, tuple) else (T,)
            if not isinstance(T, tuple):
                tiles = [R[0]]
            elif check[3] == "logical_divide":
                tiles = [R[i][0] for i in range(len(T))]
            else:
                tiles = [R[0][i] for i in range(len(T))]
            if [pc.size(t) for t in tiles] != [pc.size(t) for t in ts]:
                return False
            return pc.size(R) == pc.size(A) and sorted(values(R)) == sorted(values(A))
        if kind == "product":
            A, T = check[1], check[2]
            # CuTe's product needs the (per-mode) A to be injective.
            parts = [A[i] for i in range(len(T))] if isinstance(T, tuple) else [A]
            if not all(complementable(a) for a in parts):
                return False
            sz = pc.size(A) * (pc.size(T) if is_layout(T) else 1)
            if not is_layout(T):
                sz = pc.size(A)
                for i, t in enumerate(T):
                    sz = sz // pc.size(A[i]) * pc.size(A[i]) * pc.size(t)
            return pc.size(R) == sz and 0 not in leaves(R.shape)
    except Exception:
        return False
    return False


def complementable(L):
    """CuTe's complement precondition: sorted by stride, each stride reaches
    past the span of the modes before it (else CuTe's static_assert
    "Non-injective Layout detected in complement" fires; pycute returns a
    layout with a size-0 mode)."""
    modes = sorted((d, s) for s, d in zip(leaves(L.shape), leaves(L.stride)) if s != 1 and d != 0)
    cur = 1
    for d, s in modes:
        if d < cur:
            return False
        cur = s * d
    return True


def injective(L):
    v = values(L)
    return v is not None and len(set(v)) == len(v)


def deviation(op, check, ours):
    """Cases where pycute is known to deviate from CuTe C++ and ours follows
    C++: right_inverse of a non-injective layout or one with stride-0 modes
    (C++ coalesces first, skips stride-0 modes and takes the first mode with
    the next stride; pycute sorts the uncoalesced modes and stops at the
    first stride that does not continue, e.g. a stride 0); ours must still
    be a valid right inverse. left_inverse of a non-injective layout (no
    left inverse exists; both answers are arbitrary)."""
    if op == "right_inverse":
        A = check[1]
        flat = [(s, d) for s, d in zip(leaves(A.shape), leaves(A.stride)) if s != 1]
        degenerate = any(d == 0 for _, d in flat) or len({d for _, d in flat}) != len(flat) or not injective(A)
        return degenerate and ours[0] == "ok" and valid(check, ours[1])
    if op == "left_inverse":
        return not injective(check[1])
    return False


def run_ours(binary, exprs):
    with tempfile.TemporaryFile("w+") as f:
        f.write("\n".join(exprs))
        f.write("\n")
        f.flush()
        f.seek(0)
        cmd = [binary, "layout", "eval", "-"] if os.path.basename(binary).startswith("cutec") else [binary, "eval", "-"]
        out = subprocess.run(cmd, stdin=f, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(f"{binary} exited with {out.returncode}")
    lines = out.stdout.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(exprs):
        sys.exit(f"expected {len(exprs)} result lines, got {len(lines)}")
    return lines


def parse_ours(line):
    if line.startswith("error:"):
        return "error", line
    if " offset=" in line:
        value, off = line.split(" offset=")
        return "ok", (parse_value(value), int(off))
    return "ok", parse_value(line)


def default_bin():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for p in ("target/release/cute-layout", "target/debug/cute-layout"):
        q = os.path.join(root, p)
        if os.path.exists(q):
            return q
    return "cute-layout"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--bin", default=None, help="cute-layout or cutec binary (default: target/{release,debug}/cute-layout)"
    )
    ap.add_argument("--chunk", type=int, default=50000, help="cases per eval - process")
    ap.add_argument("--max-report", type=int, default=30)
    args = ap.parse_args()
    binary = args.bin or default_bin()
    rng = random.Random(args.seed)
    passed = failed = skipped = deviations = 0
    reported = 0
    per_op = {}
    done = 0
    while done < args.cases:
        n = min(args.chunk, args.cases - done)
        cases = []
        for _ in range(n):
            op, expr, thunk, check = gen_case(rng)
            try:
                ref = ("ok", thunk())
            except Exception as e:  # pycute raised (assertion, division by zero...)
                ref = ("error", repr(e))
            cases.append((op, expr, ref, check))
        lines = run_ours(binary, [c[1] for c in cases])
        for (op, expr, ref, check), line in zip(cases, lines):
            st = per_op.setdefault(op, [0, 0, 0])
            try:
                ours = parse_ours(line)
            except Exception:
                ours = ("unparsable", line)
            verdict = None
            if ref[0] == "error":
                if ours[0] == "error" or (ours[0] == "ok" and valid(check, ours[1])):
                    verdict = "skip"
                else:
                    verdict = "fail"
            elif ours[0] == "error":
                verdict = "skip" if not valid(check, ref[1]) else "fail"
            elif ours[0] == "ok" and same(ours[1], ref[1]):
                verdict = "pass"
            elif deviation(op, check, ours):
                verdict = "skip"
                deviations += 1
            else:
                verdict = "fail"
            if verdict == "pass":
                passed += 1
                st[0] += 1
            elif verdict == "skip":
                skipped += 1
                st[2] += 1
            else:
                failed += 1
                st[1] += 1
                if reported < args.max_report:
                    reported += 1
                    r = ref[1]
                    rs = (
                        lay(r)
                        if is_layout(r)
                        else (
                            f"{lay(r[0])} offset={r[1]}"
                            if isinstance(r, tuple) and len(r) == 2 and is_layout(r[0])
                            else str(r)
                        )
                    )
                    print(f"MISMATCH {expr}\n   ours:   {line}\n   pycute: {rs}")
        done += n
    for op in sorted(per_op):
        p, f, k = per_op[op]
        print(f"  {op:20s} {p:8d} passed {f:6d} failed {k:6d} skipped")
    print(f"  ({deviations} of the skipped are known pycute deviations from CuTe C++, see deviation())")
    print(f"pycute-diff: {passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
