"""`python -m sandbox`: run the emulator from the command line."""

from __future__ import annotations

from sandbox.cli import command

if __name__ == "__main__":
    command(prog_name="python -m sandbox")
