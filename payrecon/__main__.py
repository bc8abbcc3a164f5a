"""`python -m payrecon` runs the command line."""

from payrecon.cli import main

main()
