"""`python -m cutec ARGS`: the cutec compiler's command line, run with the compiler and tools that
`cutec.compile` uses (`python -m cutec build k.cute -o k.cubin`, `python -m cutec check k.cute`).
`python -m cutec tune ...` times on the GPU here, in Python (cutec/_tune.py)."""

import os
import sys

from . import Error, _compile


def main():
    if sys.argv[1:2] == ["tune"]:
        from . import _tune

        sys.exit(_tune.main(sys.argv[2:]))
    try:
        found = _compile.find()
    except Error as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    env = os.environ if found.env is None else found.env
    os.execve(found.exe, [found.exe, *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
