"""Objects of the Python Kubernetes clients, turned into the API's camelCase JSON.

Supported: the official ``kubernetes`` client (its pydantic models from v36 on and the older
OpenAPI-generator models), lightkube models and resources, and kr8s objects. Nothing here
imports a client package unless the object passed in is one of its own, so kschedlib keeps
no dependency on any of them. Each object is serialised the way its own client does before
sending it to the API server.

A dict in the clients' snake_case form (what ``V1Pod.to_dict()`` returns) is recognised and
refused: decoding it would silently drop every field whose key is not camelCase.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from kschedlib.errors import InvalidObjectError

_API_CLIENT: Any = None

# V1Pod, V1beta1PodDisruptionBudget, V2HorizontalPodAutoscaler -> Pod, PodDisruptionBudget, ...
_VERSION_PREFIX = re.compile(r"^V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])")


def _module_root(obj: Any) -> str:
    module = getattr(type(obj), "__module__", "") or ""
    return module.split(".", 1)[0]


def is_client_object(obj: Any) -> bool:
    """True for an object of the official client, lightkube or kr8s."""
    return _module_root(obj) in ("kubernetes", "lightkube", "kr8s")


def _kind_from_class(obj: Any) -> str:
    name = type(obj).__name__
    if _module_root(obj) == "kubernetes":
        name = _VERSION_PREFIX.sub("", name)
    return name


def _official_client_dict(obj: Any) -> Any:
    """``ApiClient().sanitize_for_serialization(obj)``: what the client sends on the wire."""
    global _API_CLIENT
    if _API_CLIENT is None:
        # Imported only here: the object is the package's own, so the package is installed.
        _API_CLIENT = importlib.import_module("kubernetes.client").ApiClient()
    return _API_CLIENT.sanitize_for_serialization(obj)


def client_object_to_dict(obj: Any) -> Any:
    """The camelCase JSON form of a client object (a dict, or a list for list objects).

    ``kind`` is filled in from the class name when the object does not carry it (models
    built in Python usually leave ``kind`` and ``apiVersion`` empty)."""
    root = _module_root(obj)
    if root == "kubernetes":
        data = _official_client_dict(obj)
    elif root == "lightkube":
        data = obj.to_dict()
    elif root == "kr8s":
        raw = getattr(obj, "raw", None)
        if not isinstance(raw, dict):
            raise InvalidObjectError(type(obj).__name__, "", "kr8s object without a .raw dict")
        data = raw
    else:
        raise InvalidObjectError(type(obj).__name__, "", "not a Kubernetes client object")
    if isinstance(data, dict) and not data.get("kind"):
        data = {**data, "kind": _kind_from_class(obj)}
    return data


# Keys the clients' to_dict() writes where the API has a camelCase one. Any of them at the top
# level, in metadata or in spec/status is the mark of a snake_case dict.
_SNAKE_MARKERS = frozenset(
    {
        "api_version",
        "creation_timestamp",
        "resource_version",
        "owner_references",
        "generate_name",
        "managed_fields",
        "deletion_timestamp",
        "self_link",
    }
)


def _snake_key(d: Any) -> str | None:
    if not isinstance(d, dict):
        return None
    for k in d:
        if isinstance(k, str) and "_" in k and k.lower() == k and not k.startswith("_"):
            return k
    return None


def find_snake_case_key(data: dict[str, Any], *, deep: bool = True) -> str | None:
    """The field path of a snake_case key in a Kubernetes object dict, or None.

    Only the structural levels are looked at (top level, metadata, spec, status, and the
    first container): label, annotation and nodeSelector maps may hold underscores. With
    ``deep=False`` only the keys no Kubernetes object can have (``api_version``,
    ``metadata.creation_timestamp``, ...) count: custom resources may use snake_case."""
    for k in data:
        if k in _SNAKE_MARKERS:
            return k
    meta = data.get("metadata")
    if isinstance(meta, dict):
        for k in meta:
            if k in _SNAKE_MARKERS:
                return f"metadata.{k}"
    if not deep:
        return None
    for part in ("spec", "status"):
        key = _snake_key(data.get(part))
        if key is not None:
            return f"{part}.{key}"
    spec = data.get("spec")
    if isinstance(spec, dict):
        containers = spec.get("containers")
        if isinstance(containers, list) and containers:
            key = _snake_key(containers[0])
            if key is not None:
                return f"spec.containers[0].{key}"
        template = spec.get("template")
        if isinstance(template, dict):
            key = _snake_key(template.get("spec"))
            if key is not None:
                return f"spec.template.spec.{key}"
    return None


SNAKE_CASE_HELP = (
    "this dict uses snake_case keys, as the Python client's to_dict() returns them; "
    "Kubernetes JSON is camelCase and these fields would be lost. Pass the client object "
    "itself (e.g. Pod.from_dict(v1_pod) or load_objects(v1_pod)), or "
    "ApiClient().sanitize_for_serialization(v1_pod) / model.model_dump(by_alias=True)"
)


def check_not_snake_case(data: dict[str, Any], label: str, *, deep: bool = True) -> None:
    """Raise InvalidObjectError if ``data`` is a snake_case dict from a client's to_dict()."""
    key = find_snake_case_key(data, deep=deep)
    if key is not None:
        raise InvalidObjectError(label, key, SNAKE_CASE_HELP)


def as_api_dict(obj: Any, label: str = "object") -> Any:
    """A camelCase dict for ``obj``: client objects are converted, snake_case dicts refused,
    other values returned unchanged (the codec reports what is wrong with them)."""
    if isinstance(obj, dict):
        check_not_snake_case(obj, label)
        return obj
    if is_client_object(obj):
        data = client_object_to_dict(obj)
        return data
    return obj
