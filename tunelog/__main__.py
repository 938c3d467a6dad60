"""`python -m tunelog`."""

from tunelog.cli import run

run()
