"""The parse tree of a CEL expression: compile errors with their position, literals, and
the helpers the compiler and the cost estimator share."""

from __future__ import annotations

from typing import Any

from kschedlib.api.cel.library import BOOL, BYTES, DOUBLE, INT, NULL, STRING, UINT, CelType, UInt

MACRO_NAMES = frozenset({"all", "exists", "exists_one", "existsOne", "map", "filter",
                         "transformList", "transformMap"})


class At:
    """A source position (line and column from 1)."""

    __slots__ = ("column", "line")

    def __init__(self, line: int, column: int) -> None:
        self.line = line
        self.column = column


class Issue(Exception):  # noqa: N818 - a compile error at a position
    def __init__(self, msg: str, node: Any) -> None:
        super().__init__(msg)
        self.msg = msg
        meta = getattr(node, "meta", None)
        self.line = getattr(meta, "line", None) or getattr(node, "line", None) or 1
        self.column = getattr(meta, "column", None) or getattr(node, "column", None) or 1

    def text(self) -> str:
        return f"ERROR: <input>:{self.line}:{self.column}: {self.msg}"


def one_line(s: str) -> str:
    return " ".join(s.split())


def escape_newlines(s: str) -> str:
    """One line of text whatever a message quotes (keys, tokens, values)."""
    return s.replace("\r", "\\r").replace("\n", "\\n")


_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, '"': 34, "'": 39,
            "\\": 92, "`": 96, "?": 63}


def _unescape(body: str, as_bytes: bool, node: Any) -> str | bytes:
    try:
        return _unescape_checked(body, as_bytes, node)
    except (ValueError, IndexError, OverflowError):
        raise Issue("Syntax error: invalid escape sequence", node) from None


def _unescape_checked(body: str, as_bytes: bool, node: Any) -> str | bytes:
    out: list[int] = []
    i, n = 0, len(body)
    enc = (lambda c: list(c.encode("utf-8"))) if as_bytes else (lambda c: [ord(c)])
    while i < n:
        c = body[i]
        if c != "\\":
            out.extend(enc(c))
            i += 1
            continue
        i += 1
        if i >= n:
            raise Issue("Syntax error: invalid escape sequence", node)
        e = body[i]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 1
        elif e in "xX":
            out.extend([int(body[i + 1:i + 3], 16)] if as_bytes
                       else enc(chr(int(body[i + 1:i + 3], 16))))
            i += 3
        elif e == "u" or e == "U":
            width = 4 if e == "u" else 8
            cp = int(body[i + 1:i + 1 + width], 16)
            if as_bytes or 0xD800 <= cp <= 0xDFFF or cp > 0x10FFFF:
                raise Issue("Syntax error: invalid unicode code point", node)
            out.append(cp)
            i += 1 + width
        elif e in "0123":
            v = int(body[i:i + 3], 8)
            out.extend([v] if as_bytes else enc(chr(v)))
            i += 3
        else:
            raise Issue(f"Syntax error: invalid escape sequence '\\{e}'", node)
    if as_bytes:
        return bytes(out)
    return "".join(chr(c) for c in out)


def literal(tok: Any) -> tuple[CelType, Any]:
    kind, text = tok.type, str(tok)
    if kind == "BOOL_LIT":
        return BOOL, text == "true"
    if kind == "NULL_LIT":
        return NULL, None
    if kind == "INT_LIT":
        neg = text.startswith("-")
        body = text[1:] if neg else text
        v = int(body, 16) if body[:2].lower() == "0x" else int(body)
        v = -v if neg else v
        if not -(2**63) <= v <= 2**63 - 1:
            raise Issue(f"invalid int literal: {text}", tok)
        return INT, v
    if kind == "UINT_LIT":
        body = text[:-1]
        v = int(body, 16) if body[:2].lower() == "0x" else int(body)
        if v > 2**64 - 1:
            raise Issue(f"invalid uint literal: {text}", tok)
        return UINT, UInt(v)
    if kind == "FLOAT_LIT":
        return DOUBLE, float(text)
    as_bytes = kind == "BYTES_LIT"
    s = text[1:] if as_bytes else text
    raw = s[:1] in ("r", "R")
    if raw:
        s = s[1:]
    q = 3 if s[:3] in ('"""', "'''") else 1
    body = s[q:-q]
    if raw:
        return (BYTES, body.encode("utf-8")) if as_bytes else (STRING, body)
    return (BYTES if as_bytes else STRING), _unescape(body, as_bytes, tok)


def unwrap(node: Any) -> Any:
    """The innermost node of a chain of single-child grammar levels."""
    while is_tree(node) and len(node.children) == 1 and is_tree(
            node.children[0]) and node.data in (
            "expr", "conditionalor", "conditionaland", "relation", "addition",
            "multiplication", "unary", "member", "primary"):
        node = node.children[0]
    return node


def is_tree(node: Any) -> bool:
    """A lark Tree (tokens are str subclasses without ``data``)."""
    return hasattr(node, "data") and hasattr(node, "children")


def simple_ident(node: Any) -> str | None:
    n = unwrap(node)
    if is_tree(n) and n.data == "ident":
        return str(n.children[0])
    return None


def namespace(node: Any) -> str | None:
    return simple_ident(node)
