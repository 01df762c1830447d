"""`python -m fleetsim` runs the command line, like the `fleetsim` script."""

from fleetsim.cli import main

main()
