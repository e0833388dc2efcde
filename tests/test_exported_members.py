"""The public surface of ``asched`` is pinned: adding or removing a name is a decision."""

import asched


def test_exported_members() -> None:
    assert sorted(asched.__all__) == sorted(["__version__"])
    assert all(hasattr(asched, name) for name in asched.__all__)


def test_cli_lists_available_commands(capsys) -> None:
    from asched import cli

    parser = cli.build_parser()
    parser.print_help()
    out = capsys.readouterr().out
    for command in ("explain", "sim", "kube-apiserver", "run", "bench", "tune"):
        assert f"    {command} " in out, command
