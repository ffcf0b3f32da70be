"""``python -m sparsefric.cli``: the command line, as ``python -m sparsefric``."""

from sparsefric.cli import main

raise SystemExit(main())
