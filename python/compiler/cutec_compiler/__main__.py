"""`python -m cutec_compiler ARGS`: the `cutec` command."""

from . import main

main()
