"""CEL syntax: cel-python's grammar (imported on first use), the optional-syntax rewrite
(``.?field``, ``[?index]``) and syntax errors in cel-go's wording."""

from __future__ import annotations

from typing import Any

from kschedlib.api.cel.tree import escape_newlines, one_line

_OPT_IDENT_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_OPT_IDENT = _OPT_IDENT_START | frozenset("0123456789")


def _string_end(src: str, i: int) -> int:
    """Index after the string literal starting at ``i``."""
    raw = i > 0 and src[i - 1] in "rR"
    q = src[i]
    if src.startswith(q * 3, i):
        end = src.find(q * 3, i + 3)
        return len(src) if end < 0 else end + 3
    j = i + 1
    while j < len(src) and src[j] != q:
        j += 2 if src[j] == "\\" and not raw else 1
    return j + 1


def rewrite_optionals(src: str) -> str:
    """cel-go's optional syntax (``a.?b``, ``m[?k]``) as calls the grammar can parse;
    string literals are left alone."""
    if "?" not in src:
        return src
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = _string_end(src, i)
            out.append(src[i:j])
            i = j
            continue
        if c == "." and src.startswith(".?", i):
            j = i + 2
            if j < n and src[j] in _OPT_IDENT_START:
                k = j
                while k < n and src[k] in _OPT_IDENT:
                    k += 1
                out.append(f'._optField("{src[j:k]}")')
                i = k
                continue
        if c == "[" and src.startswith("[?", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src[j] in "\"'":
                    j = _string_end(src, j)
                    continue
                depth += {"[": 1, "]": -1}.get(src[j], 0)
                j += 1
            out.append(f"._optIndex({rewrite_optionals(src[i + 2:j - 1])})")
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _syntax_error(exc: Exception) -> str:
    """cel-go's one-line form of a parse error: ``ERROR: <input>:L:C: Syntax error: ...``."""
    line = getattr(exc, "line", None) or 1
    column = getattr(exc, "column", None) or 1
    token = getattr(exc, "token", None)
    if token is not None:
        shown = "<EOF>" if token.type == "$END" else escape_newlines(str(token))
        expected = sorted(getattr(exc, "expected", None) or [])
        what = f"mismatched input '{shown}'"
        if expected:
            what += " expecting {" + ", ".join(_terminal_name(e) for e in expected) + "}"
        return f"ERROR: <input>:{line}:{column}: Syntax error: {what}"
    char = getattr(exc, "char", None)
    if char is not None:
        return f"ERROR: <input>:{line}:{column}: Syntax error: token recognition error at: '{char}'"
    return f"ERROR: <input>:{line}:{column}: Syntax error: {one_line(str(exc))}"


def _terminal_name(name: str) -> str:
    """A grammar terminal as cel-go shows it: the literal text in quotes, else its name."""
    parser = _PARSER
    if parser is not None:
        for term in parser.terminals:
            if term.name == name:
                if type(term.pattern).__name__ == "PatternStr":
                    return f"'{term.pattern.value}'"
                break
    return name


_PARSER: Any = None


def _parse(src: str) -> Any:
    """The lark parse tree of cel-python's CEL grammar (imported on first use); a syntax
    error is raised as SyntaxError with cel-go's one-line text."""
    global _PARSER
    if _PARSER is None:
        from celpy.celparser import CELParser

        CELParser()
        _PARSER = CELParser.CEL_PARSER
    import lark

    try:
        return _PARSER.parse(src)
    except lark.exceptions.LarkError as exc:
        raise SyntaxError(_syntax_error(exc)) from None
