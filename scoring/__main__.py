"""`python -m scoring ...`: see scoring/lib/cli.py."""

import os
import sys

# numpy's 2 MiB pages cost eval more system time than they save on its short-lived arrays (1.7 s against
# 0.9 s on the 352 MiB benchmark run); numpy reads this switch once, at import, and it is public.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

from .lib.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
