"""Course tooling: the book (the chapter table, ``_toc.yml``, the Sphinx extension, the self-check page)."""
