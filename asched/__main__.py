"""``python -m asched`` runs the command line (see :mod:`asched.cli`)."""

from asched.cli import main

raise SystemExit(main())
