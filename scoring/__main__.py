"""`python -m scoring ...`: see scoring/lib/cli.py."""

import sys

from .lib.cli import main

if __name__ == "__main__":
    sys.exit(main())
