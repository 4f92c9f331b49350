"""``python -m lab_snippets.chapters toc|check`` (alias of ``python -m lab_snippets.book.chapters``)."""

import sys

from lab_snippets.book.chapters import main

sys.exit(main())
