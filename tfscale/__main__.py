"""`python -m tfscale` runs the CLI (the same as the `tfscale` command)."""

from tfscale.cli import main

main()
