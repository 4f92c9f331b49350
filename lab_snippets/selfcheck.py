"""Alias kept for the documented command ``python -m lab_snippets.selfcheck [--check]``.

The self-check lives in :mod:`lab_snippets.book.selfcheck`.
"""

import sys

from lab_snippets.book.selfcheck import main

if __name__ == "__main__":
    sys.exit(main())
