"""Reading what the samples print: device `printf` and `print_tensor` output, captured from the
process's stdout (pytest's `capfd`).

Device printf goes through the C library's stdout buffer, which is not flushed when stdout is a
file (as under capfd) until the process exits: `flushed_stdout(capfd)` flushes it first.
"""

import ctypes
import re

NUMBER = re.compile(r"[-+]?(?:inf|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_libc = ctypes.CDLL(None)


def flushed_stdout(capfd):
    """What the process wrote to fd 1 since the last read, the C library's buffer included."""
    _libc.fflush(None)
    return capfd.readouterr().out


def tensor_prints(out):
    """The values of each `print_tensor` in `out`, in order, as rows: after each line starting with
    `tensor` (its type and layout), the numbers of the next bracketed block (`[...]`, nested or
    not, over one or several lines), one list per printed line of it. Raises ValueError for a
    block that does not close."""
    lines = out.splitlines()
    prints = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("tensor"):
            i += 1
            continue
        header = lines[i]
        # The values start at the header's `[` if it has one (the layout before it is not data).
        texts = ([header[header.index("[") :]] if "[" in header else []) + lines[i + 1 :]
        depth, opened, rows, used = 0, False, [], 0
        for used, text in enumerate(texts, 1):  # noqa: B007 (read after the loop)
            if not opened and "[" not in text:
                continue
            opened = True
            depth += text.count("[") - text.count("]")
            rows.append([float(v) for v in NUMBER.findall(text)])
            if depth <= 0:
                break
        else:
            raise ValueError(f"print_tensor after {header.strip()!r}: no closed [...] block")
        prints.append(rows)
        i += max(used - (1 if "[" in header else 0), 0) + 1
    return prints


def tensor_values(out):
    """Each print_tensor's values, flat."""
    return [[v for row in rows for v in row] for rows in tensor_prints(out)]
