"""`python -m tunelog`."""

from tunelog.console import main

main()
