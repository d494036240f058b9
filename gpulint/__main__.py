"""`python -m gpulint`."""

from gpulint.cli import main

main()
