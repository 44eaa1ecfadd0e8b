"""`python -m prove ...` runs the CLI (see prove/cli.py)."""

from prove.cli import main

raise SystemExit(main())
