"""``python -m sparsefric``: the command line, as the ``sparsefric`` script."""

from sparsefric.cli import main

raise SystemExit(main())
