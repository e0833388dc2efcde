"""The Go text/template subset scheduler_perf's templates use, rendered as Go renders it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asched.tools.bench import go_template
from asched.tools.bench.go_template import TemplateError, TemplateUnsupported, go_params, parse


def render(text: str, **data: Any) -> str:
    return parse(text, "t.yaml").render(data)


@pytest.mark.parametrize(
    ("text", "data", "expected"),
    [
        pytest.param("name: pod-{{ .Index }}", {"Index": 7}, "name: pod-7", id="index"),
        pytest.param("maxSkew: {{ .Count }}", {"Count": 20}, "maxSkew: 20", id="count"),
        pytest.param("{{.name}}", {"name": "blue"}, "blue", id="param-string"),
        # 30 % 12 = 6 -> hostPort 86
        pytest.param("8{{ mod .Index 12 }}", {"Index": 30}, "86", id="mod"),
        # Go's % truncates: -7 % 3 = -1 (Python's would be 2)
        pytest.param("{{ mod -7 3 }}", {}, "-1", id="mod-negative-truncates"),
        # 30000 / 20 = 1500 (Mi)
        pytest.param("{{ div 30000 .Count }}Mi", {"Count": 20}, "1500Mi", id="div"),
        # 19 / 10 = 1.9, truncated to 1
        pytest.param(
            "toleration-{{ div .Index 10 }}", {"Index": 19}, "toleration-1", id="div-index"
        ),
        # Go's / truncates toward zero: -7 / 2 = -3 (Python's // would give -4)
        pytest.param("{{ div -7 2 }}", {}, "-3", id="div-negative-truncates"),
        # a float64 parameter 1e6 plus 0 -> int 1000000, printed whole
        pytest.param(
            "{{AddInt 0 .priority}}", go_params({"priority": 1000000}), "1000000", id="addint"
        ),
        # the same parameter printed directly: a float64, which %v prints as 1e+06
        pytest.param("{{.priority}}", go_params({"priority": 1000000}), "1e+06", id="float-param"),
        # 7 / 3 = 2.33.., truncated to 2
        pytest.param(
            "gang-{{DivideInt .Index .podsPerGroup}}",
            {"Index": 7, **go_params({"podsPerGroup": 3})},
            "gang-2",
            id="divideint",
        ),
        # 10 - 2.5 = 7.5 -> 7; 2 * 3 * 4 = 24; 7 % 4 = 3
        pytest.param("{{SubtractInt 10 2.5}}", {}, "7", id="subtractint"),
        pytest.param("{{MultiplyInt 2 3 4}}", {}, "24", id="multiplyint"),
        pytest.param("{{Mod 7 4}}", {}, "3", id="upstream-Mod"),
        # numeric strings convert (upstream's toFloat64): "1.5" + 1 = 2.5
        pytest.param('{{AddFloat "1.5" 1}}', {}, "2.5", id="addfloat-string"),
        pytest.param(
            "{{if .priority}}{{AddInt 0 .priority}}{{else}}1000{{end}}",
            {},
            "1000",
            id="if-missing-is-false",
        ),
        pytest.param(
            "{{if .priority}}{{AddInt 0 .priority}}{{else}}1000{{end}}",
            go_params({"priority": 5}),
            "5",
            id="if-set",
        ),
        pytest.param("{{if .n}}yes{{else}}no{{end}}", {"n": 0}, "no", id="if-zero-is-false"),
        pytest.param("{{if .s}}yes{{else}}no{{end}}", {"s": ""}, "no", id="if-empty-string"),
        pytest.param("{{if .l}}yes{{else}}no{{end}}", {"l": []}, "no", id="if-empty-list"),
        pytest.param(
            '{{if eq .mode "single"}}single: {}{{else}}all: {}{{end}}',
            {"mode": "single"},
            "single: {}",
            id="eq-string",
        ),
        pytest.param(
            '{{if eq .mode "single"}}single: {}{{else}}all: {}{{end}}',
            {"mode": "all"},
            "all: {}",
            id="eq-string-false",
        ),
        # eq with several arguments: true if the first equals any other
        pytest.param('{{eq .m "a" "b" "c"}}', {"m": "c"}, "true", id="eq-many"),
        pytest.param(
            "{{if eq .x 1}}one{{else if eq .x 2}}two{{else}}many{{end}}",
            {"x": 2},
            "two",
            id="else-if",
        ),
        pytest.param(
            "{{if .a}}{{if .b}}ab{{else}}a{{end}}{{end}}", {"a": True}, "a", id="nested-if"
        ),
        pytest.param("{{ lt .Index 3 }}", {"Index": 2}, "true", id="lt"),
        pytest.param("{{ not .x }}", {}, "true", id="not-missing"),
        pytest.param("{{ and .a .b }}", {"a": 1, "b": 0}, "0", id="and-returns-operand"),
        pytest.param("{{ or .a .b }}", {"a": 0, "b": "x"}, "x", id="or-returns-operand"),
        pytest.param("{{ div (mod .Index 12) 5 }}", {"Index": 23}, "2", id="parenthesized"),
        # printing a missing key: Go's <no value>
        pytest.param("x: {{.missing}}", {}, "x: <no value>", id="missing-prints-no-value"),
        # trim markers drop the whitespace (newlines too) on their side
        pytest.param("a  \n {{- .x -}} \n  b", {"x": 1}, "a1b", id="trim-both"),
        pytest.param("a {{- .x }} b", {"x": 1}, "a1 b", id="trim-left"),
        # {{-3}} is the number -3, not a trim marker
        pytest.param("a {{-3}}", {}, "a -3", id="negative-number-not-trim"),
        pytest.param("a{{/* a comment */}}b", {}, "ab", id="comment"),
        pytest.param('{{ "a\\tb" }}', {}, "a\tb", id="string-escape"),
        pytest.param("no actions at all", {}, "no actions at all", id="plain-text"),
    ],
)
def test_renders_as_go(text: str, data: dict[str, Any], expected: str) -> None:
    assert render(text, **data) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(100000.0, "100000", id="exponent-5-plain"),
        # exponent 6 and up: %e form, at least two exponent digits
        pytest.param(1000000.0, "1e+06", id="exponent-6"),
        pytest.param(1234567.0, "1.234567e+06", id="exponent-6-digits"),
        pytest.param(0.0001, "0.0001", id="exponent-minus-4-plain"),
        pytest.param(0.00001, "1e-05", id="exponent-minus-5"),
        pytest.param(1.5, "1.5", id="fraction"),
        pytest.param(3.0, "3", id="whole"),
        pytest.param(-2.5, "-2.5", id="negative"),
    ],
)
def test_floats_print_as_go_percent_v(value: float, expected: str) -> None:
    assert go_template.printed(value) == expected


def test_index_dependence_is_known_from_the_text() -> None:
    assert parse("name: n-{{ .Index }}").per_index
    assert parse("m: {{ div 30000 .Count }}").per_index is False
    assert parse("{{if .a}}{{ mod .Index 2 }}{{end}}").fields == {"a", "Index"}


@pytest.mark.parametrize(
    ("text", "named"),
    [
        pytest.param("{{ range .items }}x{{ end }}", "the action 'range'", id="range"),
        pytest.param("{{ with .x }}y{{ end }}", "the action 'with'", id="with"),
        pytest.param('{{ template "a" }}', "the action 'template'", id="template"),
        pytest.param("{{ .Index | printf }}", "a pipeline '|'", id="pipeline"),
        pytest.param("{{ $x := 1 }}", "a variable '$'", id="variable"),
        pytest.param("{{ printf .Index }}", "the function 'printf'", id="unknown-function"),
        pytest.param("{{ .a.b }}", "the chained field .a.b", id="chained-field"),
    ],
)
def test_outside_the_subset_is_refused_naming_the_expression(text: str, named: str) -> None:
    with pytest.raises(TemplateUnsupported) as caught:
        parse(text, "pod.yaml")
    message = str(caught.value)
    assert message.startswith("pod.yaml:1: ")
    assert named in message


@pytest.mark.parametrize(
    ("text", "data", "message"),
    [
        pytest.param("{{ div 1 0 }}", {}, "integer divide by zero", id="div-by-zero"),
        pytest.param("{{ DivideInt 1 0 }}", {}, "division by zero", id="divideint-by-zero"),
        # Go's div takes ints: a float64 parameter is a type error
        pytest.param(
            "{{ div .p 2 }}", go_params({"p": 4}), "expected int; got float64", id="div-float"
        ),
        # ints and floats do not compare in Go
        pytest.param("{{ eq .Index 1.0 }}", {"Index": 1}, "incompatible types", id="eq-int-float"),
        pytest.param('{{ eq .missing "a" }}', {}, "invalid type for comparison", id="eq-missing"),
    ],
)
def test_execution_errors_name_the_file_and_action(
    text: str, data: dict[str, Any], message: str
) -> None:
    with pytest.raises(TemplateError) as caught:
        parse(text, "obj.yaml").render(data)
    assert str(caught.value).startswith("obj.yaml: {{")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("{{ if .a }}x", "has no {{end}}", id="unclosed-if"),
        pytest.param("x{{ end }}", "unexpected {{end}}", id="stray-end"),
        pytest.param("{{ else }}", "unexpected {{else}}", id="stray-else"),
        pytest.param("a {{ .x ", "unclosed action", id="unclosed-action"),
        pytest.param("{{ mod 1 }}", "wrong number of args for mod: want 2 got 1", id="arity"),
        pytest.param("{{ 1 2 }}", "can't give argument to non-function", id="not-a-function"),
    ],
)
def test_malformed_templates_are_errors(text: str, message: str) -> None:
    with pytest.raises(TemplateError) as caught:
        parse(text, "bad.yaml")
    assert message in str(caught.value)


def test_params_are_float64_as_after_json() -> None:
    assert go_params({"a": 3, "b": True, "c": "x", "d": 1.5}) == {
        "a": 3.0,
        "b": True,
        "c": "x",
        "d": 1.5,
    }
    assert isinstance(go_params({"a": 3})["a"], float)


def test_load_reads_and_caches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "node.yaml"
    path.write_text("name: node-{{ .Index }}\n")
    first = go_template.load(path)
    assert first.render({"Index": 2}) == "name: node-2\n"
    assert go_template.load(path) is first
