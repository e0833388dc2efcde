"""asched.textfile: every way a user's file can be unreadable is one line naming the file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from asched import textfile
from asched.errors import InputError

PNG_HEADER = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def make(tmp_path: Path, kind: str) -> Path:
    """A file (or not) of the given kind under tmp_path."""
    path = tmp_path / "input.yaml"
    if kind == "directory":
        path.mkdir()
    elif kind == "binary":
        path.write_bytes(PNG_HEADER)
    elif kind == "latin-1":
        path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    elif kind == "nul":
        path.write_bytes(b"name: a\n\x00\x00")
    elif kind == "unreadable":
        path.write_text("a: 1\n")
        path.chmod(0)
    return path


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        pytest.param("missing", "No such file or directory", id="missing"),
        pytest.param("directory", "Is a directory", id="a directory"),
        # 0x89 is not a valid first byte of UTF-8, but the NUL at offset 8 is found first
        pytest.param("binary", "binary data, not text (NUL byte at offset 8)", id="a PNG"),
        # "name: caf" is 9 bytes, so the latin-1 e-acute is at offset 9
        pytest.param(
            "latin-1", "not UTF-8 text (byte 0xe9 at offset 9; a binary file?)", id="latin-1"
        ),
        # "name: a\n" is 8 bytes
        pytest.param("nul", "binary data, not text (NUL byte at offset 8)", id="NUL bytes"),
        pytest.param(
            "unreadable",
            "Permission denied",
            id="permission denied",
            marks=pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file"),
        ),
    ],
)
def test_unreadable_file_is_one_line_naming_it(tmp_path: Path, kind: str, reason: str) -> None:
    path = make(tmp_path, kind)
    with pytest.raises(InputError) as caught:
        textfile.read_text(path, "the pod")
    message = str(caught.value)
    assert message == f"{path}: cannot read the pod: {reason}"
    assert "\n" not in message


def test_a_device_is_refused_without_reading_it() -> None:
    # /dev/zero never ends: reading it would hang and fill memory
    with pytest.raises(InputError, match=re.escape("/dev/zero: cannot read x: not a regular file")):
        textfile.read_text("/dev/zero", "x")


def test_a_named_pipe_is_read(tmp_path: Path) -> None:
    # `--pod <(kubectl get pod web -o yaml)` hands asched a pipe
    read, write = os.pipe()
    os.write(write, b"kind: Pod\n")
    os.close(write)
    try:
        assert textfile.read_text(f"/dev/fd/{read}", "the pod") == "kind: Pod\n"
    finally:
        os.close(read)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a: [1\n", r"^f\.yaml:2:1: malformed YAML: ", id="unclosed flow"),
        pytest.param("a: 1\na: 2\n", r"^f\.yaml:2:1: malformed YAML: duplicate key 'a'", id="dup"),
    ],
)
def test_malformed_yaml_names_line_and_column(text: str, expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        textfile.parse_yaml(text, "f.yaml")


def test_duplicate_keys_can_be_allowed() -> None:
    # kubeconfigs are checked as kubernetes-asyncio reads them (safe_load): the later key wins
    assert textfile.parse_yaml("a: 1\na: 2\n", "k", unique_keys=False) == {"a": 2}


def _nested(levels: int, kind: str) -> str:
    # `levels` mappings/lists inside one another: {"a": {"a": ... {} ...}} or [[...]]
    if kind == "flow lists":
        return "[" * levels + "]" * levels
    if kind == "block mappings":
        return (
            "".join("  " * i + "a:\n" for i in range(levels - 1)) + "  " * (levels - 1) + "a: 1\n"
        )
    return '{"a": ' * (levels - 1) + "{}" + "}" * (levels - 1)


@pytest.mark.parametrize("kind", ["flow lists", "block mappings", "json"])
@pytest.mark.parametrize(
    ("levels", "refused"),
    [
        pytest.param(textfile.MAX_DEPTH, False, id="at the limit"),
        pytest.param(textfile.MAX_DEPTH + 1, True, id="one past it"),
        # past Python's recursion limit: the parser alone would raise RecursionError
        pytest.param(5000, True, id="far past it"),
    ],
)
def test_nesting_is_refused_past_the_limit_in_one_line(kind: str, levels: int, refused: bool):
    text = _nested(levels, kind)
    parse = {
        "flow lists": textfile.parse_yaml,
        "block mappings": textfile.parse_yaml,
        "json": textfile.parse_json,
    }[kind]
    if not refused:
        assert parse(text, "deep.yaml") is not None
        assert textfile.parse_yaml_all(text, "deep.yaml")[0] is not None
        return
    for read in (parse, textfile.parse_yaml_all):
        with pytest.raises(
            InputError,
            match=rf"^deep\.yaml(:\d+:\d+)?: (YAML|JSON) nested more than {textfile.MAX_DEPTH} levels deep$",
        ):
            read(text, "deep.yaml")
