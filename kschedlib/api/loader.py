"""Read Kubernetes objects from wherever users have them.

Sources: a path (a file, or a directory read recursively for ``.json``/``.yaml``/``.yml``),
``"-"`` for standard input, JSON or YAML text, bytes, a dict, a list, a typed kschedlib
object, or an object of a Python Kubernetes client. Documents may be single objects,
``kind: List`` or typed lists (``PodList``, ``NodeList``, ...), multi-document YAML or
concatenated JSON (several ``kubectl get -o json`` outputs appended), and a conformance
scenario file. Every object is either decoded into its typed model, taken as the scheduler
configuration, or counted in the ignored summary: nothing is dropped silently.

JSON is parsed with :mod:`json`; YAML with libfyaml in its PyYAML mode when the optional
extra ``kschedlib[fastyaml]`` is installed (3-4x faster), else with PyYAML's C loader; both give
the same objects (YAML 1.1 as PyYAML reads it), and text using the few constructs where they
differ goes to PyYAML. Unquoted timestamps in YAML (``creationTimestamp: 2025-09-01T06:00:00Z``
as kubectl writes it) stay strings, the form the codec reads, as they are in JSON.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import yaml

from kschedlib.api.clients import check_not_snake_case, client_object_to_dict, is_client_object
from kschedlib.api.meta import KubeObject
from kschedlib.api.objects import KINDS
from kschedlib.errors import InvalidObjectError

try:  # the libyaml-backed loader is 10-20x faster; fall back to the pure-Python one
    from yaml import CSafeLoader as _YamlBase

    _CParser: Any = importlib.import_module("yaml._yaml").CParser
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _YamlBase  # type: ignore[assignment]

    _CParser = None

FILE_SUFFIXES = (".json", ".yaml", ".yml")
CONFIG_KIND = "KubeSchedulerConfiguration"
# Keys of a conformance scenario file (a dict without ``kind``).
_SCENARIO_KEYS = frozenset({"nodes", "pods", "pending"})


class _KubeYamlLoader(_YamlBase):
    """Safe loader that keeps YAML timestamps as the strings Kubernetes JSON carries."""


_KubeYamlLoader.add_constructor(
    "tag:yaml.org,2002:timestamp",
    yaml.constructor.SafeConstructor.construct_yaml_str,  # type: ignore[type-var]
)


# First characters of the plain scalars that may resolve to something other than a string.
_SPECIAL_FIRST = frozenset(
    c for c in _KubeYamlLoader.yaml_implicit_resolvers if c is not None and c != ""
)
_CONTAINERS = (dict, list)


class _Fallback(Exception):
    """The fast YAML path met something it leaves to the full loader (anchors, tags, merges)."""


def _yaml_documents_fast(text: str) -> list[Any]:
    """YAML documents built straight from libyaml's events, without the node graph.

    The same values as ``yaml.load_all(text, Loader=_KubeYamlLoader)`` for YAML as kubectl
    writes it (plain and quoted scalars, block and flow collections), 5-7x faster and with a
    fraction of the memory. Anchors, aliases, explicit tags and merge keys raise _Fallback."""
    get: Callable[[], Any] = _CParser(text).get_event
    loader = _KubeYamlLoader("")
    resolve: Callable[..., str] = loader.resolve
    ctors = _KubeYamlLoader.yaml_constructors
    resolved: dict[str, Any] = {}

    def special(value: str) -> Any:
        if value in resolved:
            return resolved[value]
        tag = resolve(yaml.ScalarNode, value, (True, False))
        if tag == "tag:yaml.org,2002:str":
            out: Any = value
        elif tag == "tag:yaml.org,2002:merge" or tag not in ctors:
            raise _Fallback
        else:
            out = ctors[tag](loader, yaml.ScalarNode(tag, value))
        if len(resolved) < 10_000:
            resolved[value] = out
        return out

    docs: list[Any] = []
    get()  # StreamStartEvent
    while True:
        ev = get()
        if type(ev) is yaml.StreamEndEvent:
            return docs
        root: Any = None
        stack: list[Any] = []
        keys: list[Any] = []
        nokey = keys  # a unique marker: no key pending in this mapping
        while True:
            ev = get()
            t = type(ev)
            value: Any
            if t is yaml.ScalarEvent:
                if ev.anchor is not None or (ev.tag is not None and ev.tag != "!"):
                    raise _Fallback
                value = ev.value
                if ev.implicit[0]:
                    if not value:
                        value = None
                    elif value[0] in _SPECIAL_FIRST:
                        value = special(value)
            elif t is yaml.MappingStartEvent or t is yaml.SequenceStartEvent:
                if ev.anchor is not None or (ev.tag is not None and not ev.implicit):
                    raise _Fallback
                value = {} if t is yaml.MappingStartEvent else []
            elif t is yaml.MappingEndEvent or t is yaml.SequenceEndEvent:
                stack.pop()
                keys.pop()
                continue
            elif t is yaml.DocumentEndEvent:
                break
            else:  # AliasEvent
                raise _Fallback
            if stack:
                top = stack[-1]
                if type(top) is list:
                    top.append(value)
                elif keys[-1] is nokey:
                    if type(value) in _CONTAINERS:
                        raise _Fallback
                    keys[-1] = value
                else:
                    top[keys[-1]] = value
                    keys[-1] = nokey
            else:
                root = value
            if type(value) in _CONTAINERS:
                stack.append(value)
                keys.append(nokey)
        if root is not None:
            docs.append(root)


def _load_libfyaml() -> Any:
    if os.environ.get("KSCHEDLIB_YAML", "").lower() == "pyyaml":
        return None
    try:
        return importlib.import_module("libfyaml")
    except ImportError:
        return None


_libfyaml: Any = _load_libfyaml()

# Plain scalars that libfyaml's PyYAML mode reads differently from PyYAML: sexagesimal numbers
# (``12:30`` is 750 for PyYAML), ``=`` and ``<<`` outside a merge, an empty key, integers
# beyond 64 bits, floats beyond double's normal range, ``?`` opening a flow entry, and
# escaped surrogate pairs. Text with anything like them (even inside a
# quoted string: a false alarm only costs speed) is read by PyYAML. The searches start with a
# literal so that they scan at memchr speed.
_END = r"[ \t]*(?:\r?\n|$|[,\]}#]|:(?:[ \t\r\n]|$))"
_SEXA_TAIL = re.compile(rf":[0-5]?[0-9](?:\.[0-9_]*)?{_END}")
_SEXA = re.compile(
    r"[-+]?(?:[1-9][0-9_]*(?::[0-5]?[0-9])+|[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*)"
)
_PREFIXED = re.compile(r"0[xXbB]")
_BIG_NUMBER = re.compile(  # beyond 64-bit integers, and floats with a three-digit exponent
    r"[-+]?(?:[0-9][0-9_]{18,}|0[xX][0-9a-fA-F_]{15,}|0[bB][01_]{62,}"
    r"|[0-9_]*\.[0-9_]*[eE][-+][0-9]{3,})"
)
_ODD_PLAIN = (re.compile(rf"={_END}"), re.compile(rf"<<{_END}"))
_SURROGATE = re.compile(r"\\[uU]0*[dD][89a-fA-F]")
_VALUE_STARTS = frozenset(" \t\r\n[{,")
_ZEROS = str.maketrans("123456789", "000000000")
_NUMBER_CHARS = frozenset("0123456789abcdefABCDEF_:.+-xXbB")


def _plain_token(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The run of number characters around text[start:end], if a value starts there."""
    while start > 0 and text[start - 1] in _NUMBER_CHARS:
        start -= 1
    while end < len(text) and text[end] in _NUMBER_CHARS:
        end += 1
    if start > 0 and text[start - 1] not in _VALUE_STARTS:
        return None
    while end > start and text[end - 1] == ":":  # a key's colon
        end -= 1
    return start, end


def _libfyaml_differs(text: str) -> bool:
    """Whether ``text`` may hold a plain scalar that libfyaml and PyYAML read differently."""
    if _SURROGATE.search(text) is not None or text.lstrip(" \t-").startswith(":"):
        return True
    for pat in (" :", "\t:", "\n:"):  # an empty key: only blanks and dashes before the colon
        i = text.find(pat)
        while i >= 0:
            if i + 2 >= len(text) or text[i + 2] in " \t\r\n":
                line = text[text.rfind("\n", 0, i + 1) + 1 : i + 1]
                if not line.replace("-", " ").strip():
                    return True
            i = text.find(pat, i + 1)
    for m in _SEXA_TAIL.finditer(text):
        tok = _plain_token(text, m.start(), m.start() + 1)
        if tok is not None and _SEXA.fullmatch(text, *tok):
            return True
    zeros = text.translate(_ZEROS)
    candidates = [m.start() for m in _PREFIXED.finditer(text)]
    for pat in ("0" * 19, "e-000", "e+000", "E-000", "E+000"):
        i = zeros.find(pat)
        while i >= 0:
            candidates.append(i)
            i = zeros.find(pat, i + len(pat))
    for i in candidates:
        tok = _plain_token(text, i, i + 1)
        if tok is not None and _BIG_NUMBER.fullmatch(text, *tok):
            return True
    i = text.find("?")
    while i >= 0:  # PyYAML takes ``?`` as a key in flow context even without a blank after it
        before = text[max(0, i - 40) : i].rstrip(" \t\r\n")
        if before.endswith(("[", "{", ",")):
            return True
        i = text.find("?", i + 1)
    for pat_re in _ODD_PLAIN:
        for m in pat_re.finditer(text):
            if m.start() == 0 or text[m.start() - 1] in _VALUE_STARTS:
                return True
    return False


def _yaml_documents_libfyaml(text: str, shared: bool = False) -> list[Any] | None:
    """The documents as libfyaml reads them in PyYAML mode, or None to leave them to PyYAML.

    ``shared``: equal subtrees may come back as one object (libfyaml's deduplication, twice as
    fast); only for callers that read the documents and copy what they keep."""
    if _libfyaml_differs(text):
        return None
    try:
        docs = _libfyaml.loads_all(text, mode="pyyaml", dedup=shared, collect_diag=True)
        out = [d.to_python() for d in docs]
    except Exception:  # noqa: BLE001 - errors are reported by PyYAML, with its messages
        return None
    return [d for d in out if d is not None]


def _yaml_documents(text: str, shared: bool = False) -> list[Any]:
    return _yaml_documents_shared(text, shared)[0]


def _yaml_documents_shared(text: str, shared: bool) -> tuple[list[Any], bool]:
    """The documents, and whether equal subtrees may be one object in them."""
    if _libfyaml is not None:
        docs = _yaml_documents_libfyaml(text, shared)
        if docs is not None:
            return docs, shared
    return _yaml_documents_pyyaml(text), False


def _yaml_documents_pyyaml(text: str) -> list[Any]:
    if _CParser is not None:
        try:
            return _yaml_documents_fast(text)
        except _Fallback:
            pass
    return [d for d in yaml.load_all(text, Loader=_KubeYamlLoader) if d is not None]


class ObjectList(list[Any]):
    """Typed objects in input order, and what the input held besides them.

    ``ignored`` counts the objects of kinds kschedlib does not use (``ignored_objects`` keeps
    them), ``config`` is the KubeSchedulerConfiguration found (or None), ``skipped_files``
    the files of a directory that are not JSON/YAML, ``verbatim`` the ids of objects that
    come from a conformance scenario (taken as the scheduler saw them, never expanded)."""

    def __init__(self, items: Iterable[Any] = ()) -> None:
        super().__init__(items)
        self.ignored: Counter[str] = Counter()
        self.ignored_objects: list[dict[str, Any]] = []
        self.config: dict[str, Any] | None = None
        self.config_origin = ""
        self.skipped_files: list[str] = []
        self.verbatim: set[int] = set()

    def ignored_summary(self) -> str:
        """``ignored: 3 ConfigMap, 1 Ingress``, or "" when nothing was ignored."""
        return ignored_summary(self.ignored)


def ignored_summary(counts: Counter[str] | dict[str, int]) -> str:
    if not counts:
        return ""
    parts = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return "ignored: " + ", ".join(f"{n} {kind}" for kind, n in parts)


# ------------------------------------------------------------------ text to documents


def _decode_bytes(data: bytes, origin: str) -> str:
    # PowerShell's `>` writes UTF-16 with a byte-order mark.
    enc = "utf-16" if data.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8-sig"
    try:
        return data.decode(enc)
    except UnicodeDecodeError as exc:
        raise InvalidObjectError(
            origin, "", f"not UTF-8 text (byte {exc.start}): {exc.reason}"
        ) from None


def _json_documents(text: str) -> list[Any]:
    """One JSON value, or several written one after another."""
    try:
        return [json.loads(text)]
    except json.JSONDecodeError as exc:
        if not exc.msg.startswith("Extra data"):
            raise
    decoder = json.JSONDecoder()
    docs: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            return docs
        doc, pos = decoder.raw_decode(text, pos)
        docs.append(doc)


def parse_documents(text: str | bytes, origin: str = "<text>") -> list[Any]:
    """The JSON or (multi-document) YAML documents of ``text``; empty documents dropped."""
    return _parse_documents(text, origin, shared=False)[0]


def _parse_documents(text: str | bytes, origin: str, shared: bool) -> tuple[list[Any], bool]:
    """parse_documents; ``shared`` lets equal YAML subtrees come back as one object, and the
    second value says whether they may have."""
    if isinstance(text, (bytes, bytearray)):
        text = _decode_bytes(bytes(text), origin)
    stripped = text.lstrip()
    try:
        if stripped[:1] in ("{", "["):
            try:
                return _json_documents(stripped), False
            except json.JSONDecodeError as exc:
                json_error = exc
            try:  # YAML flow style also starts with a brace
                return _yaml_documents_shared(text, shared)
            except yaml.YAMLError:
                raise InvalidObjectError(origin, "", f"invalid JSON: {json_error}") from None
        try:
            return _yaml_documents_shared(text, shared)
        except yaml.YAMLError as exc:
            raise InvalidObjectError(origin, "", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise InvalidObjectError(origin, "", "document nested too deeply") from None


# ------------------------------------------------------------------ sources to raw items


def _looks_like_path(s: str) -> bool:
    """A one-line string is a path unless it reads as a document (``key: value``, JSON)."""
    if "\n" in s or len(s) >= 4096:
        return False
    if os.path.exists(s):
        return True
    return ": " not in s and not s.lstrip().startswith(("{", "["))


def _read_path(path: str, out: ObjectList) -> Iterator[tuple[str, Any, bool]]:
    if os.path.isdir(path):
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for fname in sorted(files):
                full = os.path.join(root, fname)
                if fname.startswith("."):
                    continue
                if not fname.lower().endswith(FILE_SUFFIXES):
                    out.skipped_files.append(full)
                    continue
                yield from _read_file(full)
        return
    yield from _read_file(path)


def _read_file(path: str) -> Iterator[tuple[str, Any, bool]]:
    with open(path, "rb") as fh:
        data = fh.read()
    docs, shared = _parse_documents(data, path, shared=True)
    for doc in docs:
        yield path, doc, shared


def _raw_items(source: Any, out: ObjectList) -> Iterator[tuple[str, Any, bool]]:
    """(origin, document, shared) of one source; documents are dicts, typed objects or lists,
    ``shared`` when equal subtrees of parsed YAML may be one object."""
    if isinstance(source, os.PathLike):
        yield from _read_path(os.fspath(source), out)
    elif isinstance(source, str):
        if source == "-":
            docs, shared = _parse_documents(sys.stdin.buffer.read(), "<stdin>", shared=True)
            for doc in docs:
                yield "<stdin>", doc, shared
        elif _looks_like_path(source):
            if not os.path.exists(source):
                raise FileNotFoundError(f"no such file or directory: {source}")
            yield from _read_path(source, out)
        else:
            docs, shared = _parse_documents(source, "<text>", shared=True)
            for doc in docs:
                yield "<text>", doc, shared
    elif isinstance(source, (bytes, bytearray)):
        docs, shared = _parse_documents(bytes(source), "<bytes>", shared=True)
        for doc in docs:
            yield "<bytes>", doc, shared
    elif isinstance(source, (list, tuple)):
        for item in source:
            yield "<list>", item, False
    else:
        yield "<object>", source, False


# ------------------------------------------------------------------ documents to objects


def _flatten(doc: Any, origin: str) -> Iterator[Any]:
    """Single objects out of a document: Lists are unpacked, client objects converted."""
    if doc is None:
        return
    if isinstance(doc, KubeObject):
        yield doc
        return
    if isinstance(doc, list):
        for item in doc:
            yield from _flatten(item, origin)
        return
    if is_client_object(doc):
        doc = client_object_to_dict(doc)
        if isinstance(doc, list):
            yield from _flatten(doc, origin)
            return
    if not isinstance(doc, dict):
        raise InvalidObjectError(
            origin, "", f"expected a Kubernetes object, got {type(doc).__name__}"
        )
    kind = doc.get("kind")
    items = doc.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        item_kind = kind[: -len("List")]
        for item in items:
            if is_client_object(item):
                item = client_object_to_dict(item)
            if isinstance(item, dict) and not item.get("kind") and item_kind:
                item = {**item, "kind": item_kind}
            yield from _flatten(item, origin)
        return
    yield doc


def _with_origin(exc: InvalidObjectError, origin: str) -> InvalidObjectError:
    if origin.startswith("<") or exc.obj.startswith(origin):
        return exc
    return InvalidObjectError(f"{origin}: {exc.obj}", exc.field, exc.problem)


def _add(doc: Any, origin: str, out: ObjectList, shared: bool = False) -> None:
    """Decode ``doc`` into ``out``; ``shared``: it may share subtrees, copy what is kept raw."""
    if isinstance(doc, dict) and "kind" not in doc and _SCENARIO_KEYS & doc.keys():
        _add_scenario(doc, origin, out, shared)
        return
    for obj in _flatten(doc, origin):
        if not isinstance(obj, dict):
            out.append(obj)
            continue
        kind = obj.get("kind")
        if not isinstance(kind, str) or not kind:
            meta = obj.get("metadata")
            name = meta.get("name") if isinstance(meta, dict) else None
            what = f"object {name}" if isinstance(name, str) and name else "object"
            # Items of a client's list_*() call carry kind None; their to_dict() is snake_case.
            check_not_snake_case(obj, f"{origin}: {what}" if not origin.startswith("<") else what)
            raise InvalidObjectError(
                f"{origin}: {what}" if not origin.startswith("<") else what,
                "kind",
                "missing: every object needs its kind (as kubectl get -o json|yaml prints it)",
            )
        if kind == CONFIG_KIND:
            _set_config(out, copy.deepcopy(obj) if shared else obj, origin)
            continue
        decoder = KINDS.get(kind)
        if decoder is None:
            # A client's to_dict() output is an error, not ignored; custom resources may use
            # snake_case fields, so only the keys no Kubernetes object has count here.
            check_not_snake_case(obj, kind.lower(), deep=False)
            out.ignored[kind] += 1
            out.ignored_objects.append(copy.deepcopy(obj) if shared else obj)
            continue
        try:
            out.append(decoder(obj))
        except InvalidObjectError as exc:
            raise _with_origin(exc, origin) from None


def _set_config(out: ObjectList, config: dict[str, Any], origin: str) -> None:
    """One scheduler configuration per input: a second one is an error, not a silent pick."""
    if out.config is not None:
        raise InvalidObjectError(
            CONFIG_KIND, "", f"found twice ({out.config_origin} and {origin}): pass one"
        )
    out.config, out.config_origin = config, origin


def _add_scenario(doc: dict[str, Any], origin: str, out: ObjectList, shared: bool) -> None:
    from kschedlib.api.scenario import Scenario

    try:
        sc = Scenario.from_dict(doc)
    except InvalidObjectError as exc:
        raise _with_origin(exc, origin) from None
    if sc.config is not None:
        _set_config(out, copy.deepcopy(dict(sc.config)) if shared else dict(sc.config), origin)
    objs = [*sc.nodes, *sc.other_objects(), *sc.pods, *sc.pending]
    out.extend(objs)
    out.verbatim.update(id(o) for o in objs)


def load_objects(*sources: Any) -> ObjectList:
    """Typed objects from every source, in order (see the module docstring for the forms).

    Raises InvalidObjectError naming the file and the object's field path for bad input,
    FileNotFoundError for a missing path. The result is a list with the ignored-kinds
    summary and the scheduler configuration attached (:class:`ObjectList`)."""
    out = ObjectList()
    for source in sources:
        origin = "<input>"
        try:
            for origin, doc, shared in _raw_items(source, out):
                _add(doc, origin, out, shared)
        except RecursionError:  # thousands of nesting levels: a typed error, not a crash
            raise InvalidObjectError(origin, "", "nested too deeply") from None
    return out
