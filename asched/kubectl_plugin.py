"""``kubectl asched``: asched as a kubectl plugin (the ``kubectl-asched`` console script).

kubectl runs any ``kubectl-NAME`` executable on ``PATH`` as ``kubectl NAME``, passing the
arguments that follow unchanged, so ``kubectl asched explain -n shop web-7d9f`` runs
``kubectl-asched explain -n shop web-7d9f``. This module is only a front end: the
command is :mod:`asched.explain.command` (one home for its rules), parsed and run by
:func:`asched.cli.dispatch`, under the name ``kubectl asched``. kubectl's conventions
(``--kubeconfig``, ``--context``, ``-n/--namespace``, ``-o json|yaml|wide``, a merged
``$KUBECONFIG``) are that command's own options.

Run it as ``python -m asched.kubectl_plugin`` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from asched import cli

PROG: Final = "kubectl asched"
COMMANDS: Final = ("explain",)
DESCRIPTION: Final = "kubectl asched: the asched scheduler's tools, as a kubectl plugin."
EPILOG: Final = """\
examples:
  kubectl asched explain -n shop web-7d9f           why is this pod pending (or where would
                                                    it go), with asched's configuration
  kubectl asched explain shop/web-7d9f -o wide      every node and every plugin's score
  kubectl asched explain web-7d9f --context prod -o json

`kubectl asched explain --help` describes its options.
exit status: 0 explained, 1 the cluster cannot be read, 2 bad input.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kubectl asched``; return the process exit status."""
    parser = cli.build_parser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, commands=COMMANDS)
    return cli.dispatch(parser, argv)


if __name__ == "__main__":
    raise SystemExit(main())
