"""CustomResourceDefinitions as objects: defaults, initial status and validation (v1.37, v1).

The CRD's own REST behaviour; serving its resources is :mod:`asched.tools.sim.apiserver.crds`' job. What a
client can provoke, with the real server's fields and reasons (measured):

* ``metadata.name`` must be ``<plural>.<group>``; the group a DNS subdomain with a dot;
* names: plural, singular, kind, listKind required (singular and listKind default from the
  kind), DNS-1035 labels;
* ``spec.scope`` Namespaced or Cluster; versions with unique DNS-1035 names, exactly one of
  them the storage version, each with a schema (required in v1);
* the schema must be structural: a type on every specified node (``object`` at the root),
  ``items`` on arrays, no ``additionalProperties`` beside ``properties``, nothing but
  name/generateName under ``metadata``, no types inside ``anyOf``/``allOf``/``oneOf``/``not``,
  and defaults that validate against their node (as custom objects do, formats included).

Schema errors are reported under ``spec.validation.openAPIV3Schema`` when every version has
the same schema (the server folds them into its internal ``spec.validation``), else under
``spec.versions[i].schema.openAPIV3Schema``, as the real server does; the structural ones
sorted by their text, as ``ValidateStructural`` sorts them. The ``spec.versions`` errors
print the versions as JSON of the internal type (Go's field names), with the schema,
subresources and columns ``null`` (what Go prints when they are folded into the spec).
"""

from __future__ import annotations

from typing import Any, Final

from asched.tools.sim.apiserver import apierrors, schema, validation
from asched.tools.sim.apiserver.apierrors import FieldCause, GoLiteral
from asched.tools.sim.apiserver.hooks import Hooks, items, section

JSON = dict[str, Any]

SCOPES: Final = ["Cluster", "Namespaced"]
TYPES: Final = ["array", "boolean", "integer", "number", "object", "string"]
COLUMN_TYPES: Final = ["integer", "number", "string", "boolean", "date"]
#: keys a node inside anyOf/allOf/oneOf/not must not carry (they would not be structural).
_NOT_IN_COMBINATORS: Final = (
    "type",
    "default",
    "nullable",
    "additionalProperties",
    schema.PRESERVE,
    schema.INT_OR_STRING,
    schema.EMBEDDED,
)
_COMBINATORS: Final = ("allOf", "anyOf", "oneOf")


def _versions_literal(versions: list[JSON]) -> GoLiteral:
    """JSON of the internal versions (no JSON tags: Go's field names), their schema,
    subresources and columns ``null`` as v1.37 prints them (folded into the spec when every
    version has the same)."""
    return apierrors.go_json(
        [
            {
                "Name": version.get("name", ""),
                "Served": bool(version.get("served")),
                "Storage": bool(version.get("storage")),
                "Deprecated": bool(version.get("deprecated")),
                "DeprecationWarning": version.get("deprecationWarning"),
                "Schema": None,
                "Subresources": None,
                "AdditionalPrinterColumns": None,
                "SelectableFields": None,
            }
            for version in versions
        ],
        sort_keys=False,
    )


def _node(value: Any, path: str) -> JSON:
    if not isinstance(value, dict):
        raise validation.DecodeFailure(path, "expected a JSONSchemaProps object")
    return value


def _default_causes(node: JSON, path: str) -> list[FieldCause]:
    """A default must validate against its own node (``<path>.default``)."""
    if "default" not in node:
        return []
    bare = {key: value for key, value in node.items() if key != "default"}
    return [
        apierrors.FieldCause(cause.kind, f"{path}.default", cause.value, cause.detail)
        for cause in schema.validate(node["default"], bare)
    ]


def _combinator_causes(node: JSON, path: str) -> list[FieldCause]:
    causes: list[FieldCause] = []
    branches = [
        (f"{path}.{key}[{index}]", branch)
        for key in _COMBINATORS
        for index, branch in enumerate(node.get(key) or [])
    ]
    if isinstance(node.get("not"), dict):
        branches.append((f"{path}.not", node["not"]))
    int_or_string = bool(node.get(schema.INT_OR_STRING))
    for where, raw in branches:
        causes += _value_only_causes(_node(raw, where), where, int_or_string=int_or_string)
    return causes


def _value_only_causes(node: JSON, path: str, *, int_or_string: bool) -> list[FieldCause]:
    """Inside a combinator only value validations may appear (and, under
    ``x-kubernetes-int-or-string``, the ``integer``/``string`` types of its branches)."""
    causes = [
        apierrors.forbidden(f"{path}.{key}", "must be empty to be structural")
        for key in _NOT_IN_COMBINATORS
        if key in node
        and not (int_or_string and key == "type" and node[key] in ("integer", "string"))
    ]
    for name, child in (node.get("properties") or {}).items():
        where = f"{path}.properties[{name}]"
        causes += _value_only_causes(_node(child, where), where, int_or_string=False)
    if isinstance(node.get("items"), dict):
        causes += _value_only_causes(node["items"], f"{path}.items", int_or_string=False)
    return causes + _combinator_causes(node, path)


def _metadata_causes(node: JSON, path: str) -> list[FieldCause]:
    allowed = {"type", "description", "properties"}
    named = set((node.get("properties") or {}).keys())
    if set(node) - allowed or named - {"name", "generateName"}:
        return [
            apierrors.forbidden(
                path,
                "must not specify anything other than name and generateName, but metadata is "
                "implicitly specified",
            )
        ]
    return []


def _type_causes(node: JSON, path: str, what: str) -> list[FieldCause]:
    kind = node.get("type")
    if kind is None:
        if node.get(schema.INT_OR_STRING) or node.get(schema.PRESERVE):
            return []
        return [apierrors.required(f"{path}.type", f"must not be empty for specified {what}")]
    if kind not in TYPES:
        return [apierrors.not_supported(f"{path}.type", kind, TYPES)]
    return []


def node_causes(node: JSON, path: str, what: str) -> list[FieldCause]:
    """Structural errors of one specified node and below (``what`` names its place)."""
    causes = _type_causes(node, path, what)
    properties = node.get("properties")
    if properties is not None and not isinstance(properties, dict):
        raise validation.DecodeFailure(f"{path}.properties", "expected an object")
    additional = node.get("additionalProperties")
    if properties and isinstance(additional, dict):
        causes.append(
            apierrors.forbidden(
                f"{path}.additionalProperties",
                "additionalProperties and properties are mutual exclusive",
            )
        )
    if node.get("type") == "array" and "items" not in node:
        causes.append(apierrors.required(f"{path}.items", "must be specified"))
    if node.get("uniqueItems") is True:
        causes.append(
            apierrors.forbidden(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    for name, child in (properties or {}).items():
        causes += node_causes(_node(child, path), f"{path}.properties[{name}]", "object fields")
    if "items" in node:
        causes += node_causes(_node(node["items"], path), f"{path}.items", "array items")
    if isinstance(additional, dict):
        causes += node_causes(additional, f"{path}.additionalProperties", "object fields")
    return causes + _combinator_causes(node, path) + _default_causes(node, path)


def root_causes(root: JSON, path: str) -> list[FieldCause]:
    """Structural errors of a version's ``openAPIV3Schema``."""
    kind = root.get("type")
    if kind is None:
        causes = [apierrors.required(f"{path}.type", "must not be empty at the root")]
    elif kind != "object":
        causes = [apierrors.invalid_value(f"{path}.type", kind, "must be object at the root")]
    else:
        causes = []
    properties = root.get("properties") or {}
    for name, child in properties.items() if isinstance(properties, dict) else ():
        where = f"{path}.properties[{name}]"
        if name == "metadata":
            causes += _metadata_causes(_node(child, where), where)
        else:
            causes += node_causes(_node(child, where), where, "object fields")
    causes += _combinator_causes(root, path)
    # ValidateStructural sorts its errors by their text (Go's map order is random); the
    # defaults are checked after it
    defaults = [cause for cause in causes if cause.field.endswith(".default")]
    structural = [cause for cause in causes if not cause.field.endswith(".default")]
    return sorted(structural, key=str) + defaults


def _schema_causes(versions: list[JSON]) -> list[FieldCause]:
    schemas = [(version.get("schema") or {}).get("openAPIV3Schema") for version in versions]
    causes: list[FieldCause] = []
    folded = len(versions) > 0 and all(s == schemas[0] for s in schemas)
    for index, root in enumerate(schemas):
        if root is None:
            causes.append(
                apierrors.required(
                    f"spec.versions[{index}].schema.openAPIV3Schema", "schemas are required"
                )
            )
            continue
        if folded and index > 0:
            continue
        path = (
            "spec.validation.openAPIV3Schema"
            if folded
            else f"spec.versions[{index}].schema.openAPIV3Schema"
        )
        causes += root_causes(_node(root, path), path)
    return causes


def _version_causes(versions: list[JSON]) -> list[FieldCause]:
    causes: list[FieldCause] = []
    for index, version in enumerate(versions):
        name = str(version.get("name") or "")
        if not name:
            causes.append(apierrors.required(f"spec.versions[{index}].name"))
        elif (why := validation.dns1035_label(name)) is not None:
            causes.append(apierrors.invalid_value(f"spec.versions[{index}].name", name, why))
        for column_index, column in enumerate(version.get("additionalPrinterColumns") or []):
            causes += _column_causes(
                column, f"spec.versions[{index}].additionalPrinterColumns[{column_index}]"
            )
    names = [version.get("name") for version in versions]
    literal = _versions_literal(versions)
    if len(set(names)) != len(names):
        causes.append(
            apierrors.invalid_value("spec.versions", literal, "must contain unique version names")
        )
    if sum(1 for version in versions if version.get("storage")) != 1:
        causes.append(
            apierrors.invalid_value(
                "spec.versions", literal, "must have exactly one version marked as storage version"
            )
        )
    if versions and (why := validation.dns1035_label(str(names[0] or ""))) is not None:
        causes.append(apierrors.invalid_value("spec.version", names[0], why))  # upstream's echo
    return causes + _schema_causes(versions)


def _column_causes(column: JSON, path: str) -> list[FieldCause]:
    causes: list[FieldCause] = []
    if not column.get("name"):
        causes.append(apierrors.required(f"{path}.name"))
    kind = column.get("type")
    if not kind:
        causes.append(apierrors.required(f"{path}.type"))
    elif kind not in COLUMN_TYPES:
        causes.append(apierrors.not_supported(f"{path}.type", kind, COLUMN_TYPES))
    if not column.get("jsonPath"):
        causes.append(apierrors.required(f"{path}.JSONPath"))
    return causes


def _names_causes(names: JSON) -> list[FieldCause]:
    causes: list[FieldCause] = []
    for field in ("plural", "singular"):
        value = str(names.get(field) or "")
        if not value:
            causes.append(apierrors.required(f"spec.names.{field}"))
        elif (why := validation.dns1035_label(value)) is not None:
            causes.append(apierrors.invalid_value(f"spec.names.{field}", value, why))
    for field in ("kind", "listKind"):
        value = str(names.get(field) or "")
        if not value:
            causes.append(apierrors.required(f"spec.names.{field}"))
        elif (why := validation.dns1035_label(value.lower())) is not None:
            causes.append(apierrors.invalid_value(f"spec.names.{field}", value, why))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        causes.append(
            apierrors.invalid_value(
                "spec.names.listKind", names["listKind"], "kind and listKind may not be the same"
            )
        )
    for index, short in enumerate(names.get("shortNames") or []):
        if (why := validation.dns1035_label(str(short))) is not None:
            causes.append(apierrors.invalid_value(f"spec.names.shortNames[{index}]", short, why))
    return causes


def crd_causes(obj: JSON, old: JSON | None) -> list[FieldCause]:
    """Every field error of a CRD (``old`` set on updates: group, names and scope stay)."""
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    group = str(spec.get("group") or "")
    causes: list[FieldCause] = []
    name = obj["metadata"].get("name", "")
    if name != f"{names.get('plural', '')}.{group}":
        causes.append(
            apierrors.invalid_value(
                "metadata.name", name, 'must be spec.names.plural+"."+spec.group'
            )
        )
    if not group:
        causes.append(apierrors.required("spec.group"))
    elif (why := validation.dns_subdomain(group)) is not None:
        causes.append(apierrors.invalid_value("spec.group", group, why))
    elif "." not in group:
        causes.append(
            apierrors.invalid_value("spec.group", group, "should be a domain with at least one dot")
        )
    scope = spec.get("scope")
    if not scope:
        causes.append(apierrors.required("spec.scope"))
    elif scope not in SCOPES:
        causes.append(apierrors.not_supported("spec.scope", scope, SCOPES))
    causes += _version_causes(items(spec, "versions", "spec.versions"))
    causes += _names_causes(names)
    if old is not None:
        before = old.get("spec") or {}
        for field, now, then in (
            ("spec.group", group, before.get("group")),
            ("spec.names.plural", names.get("plural"), (before.get("names") or {}).get("plural")),
            ("spec.scope", scope, before.get("scope")),
        ):
            if now != then:
                causes.append(apierrors.invalid_value(field, now, "field is immutable"))
    stored = (obj.get("status") or {}).get("storedVersions") or []
    if not stored:
        causes.append(
            apierrors.invalid_value(
                "status.storedVersions", None, "must have at least one stored version"
            )
        )
    return causes


class CustomResourceDefinitionHooks(Hooks):
    """CRDs: the v1 defaults, the status a new CRD starts with, the validation above."""

    def decode(self, obj: JSON) -> None:
        spec = section(obj, "spec", "spec")
        section(spec, "names", "spec.names")
        for index, version in enumerate(items(spec, "versions", "spec.versions")):
            where = f"spec.versions[{index}]"
            chosen = section(version, "schema", f"{where}.schema") if "schema" in version else {}
            if "openAPIV3Schema" in chosen:
                _node(chosen["openAPIV3Schema"], f"{where}.schema.openAPIV3Schema")

    def default(self, obj: JSON) -> None:
        spec = obj["spec"]
        names = spec["names"]
        kind = names.get("kind")
        if kind:
            names.setdefault("singular", str(kind).lower())
            names.setdefault("listKind", f"{kind}List")
        spec.setdefault("conversion", {"strategy": "None"})

    def initial_status(self, obj: JSON) -> JSON | None:
        storage = [
            version.get("name")
            for version in obj["spec"].get("versions") or []
            if version.get("storage")
        ]
        return {
            "conditions": None,
            "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": storage[:1] or None,
        }

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        return crd_causes(obj, old)
