"""serde_json's message for malformed JSON (what VRL's parse_json reports), found only on the error path.

msgspec decodes; when it refuses a text, this scanner walks it the way
serde_json does to name the first problem and its line and column.
"""

from __future__ import annotations

_WS = " \t\n\r"


class _Found(Exception):
    def __init__(self, message: str, index: int) -> None:
        self.message, self.index = message, index


class _Scanner:
    def __init__(self, text: str) -> None:
        self.s, self.n, self.depth = text, len(text), 0

    def fail(self, message: str, index: int) -> None:
        raise _Found(message, index)

    def ws(self, i: int) -> int:
        while i < self.n and self.s[i] in _WS:
            i += 1
        return i

    def value(self, i: int) -> int:
        i = self.ws(i)
        if i >= self.n:
            self.fail("EOF while parsing a value", i)
        c = self.s[i]
        if c == "{":
            return self.container(i, "}", "an object")
        if c == "[":
            return self.container(i, "]", "a list")
        if c == '"':
            return self.string(i)
        if c == "-" or c.isdigit():
            return self.number(i)
        for word in ("true", "false", "null"):
            if c == word[0]:
                for k, expected in enumerate(word):
                    if i + k >= self.n:
                        self.fail("EOF while parsing a value", i + k)
                    if self.s[i + k] != expected:
                        self.fail("expected ident", i + k + 1)
                return i + len(word)
        self.fail("expected value", i + 1)
        return i

    def container(self, i: int, close: str, name: str) -> int:
        self.depth += 1
        if self.depth > 127:
            self.fail("recursion limit exceeded", i + 1)
        i = self.ws(i + 1)
        if i < self.n and self.s[i] == close:
            self.depth -= 1
            return i + 1
        while True:
            if close == "}":
                i = self.ws(i)
                if i >= self.n:
                    self.fail(f"EOF while parsing {name}", i)
                if self.s[i] != '"':
                    self.fail("key must be a string", i + 1)
                i = self.ws(self.string(i))
                if i >= self.n:
                    self.fail(f"EOF while parsing {name}", i)
                if self.s[i] != ":":
                    self.fail("expected `:`", i + 1)
                i += 1
            i = self.ws(self.value(i))
            if i >= self.n:
                self.fail(f"EOF while parsing {name}", i)
            if self.s[i] == close:
                self.depth -= 1
                return i + 1
            if self.s[i] != ",":
                self.fail(f"expected `,` or `{close}`", i + 1)
            i = self.ws(i + 1)
            if i < self.n and self.s[i] == close:
                self.fail("trailing comma", i + 1)

    def string(self, i: int) -> int:
        i += 1
        while True:
            if i >= self.n:
                self.fail("EOF while parsing a string", i)
            c = self.s[i]
            if c == '"':
                return i + 1
            if c == "\\":
                escape = self.s[i + 1 : i + 2]
                if not escape:
                    self.fail("EOF while parsing a string", i + 1)
                if escape == "u":
                    digits = self.s[i + 2 : i + 6]
                    if len(digits) < 4:
                        self.fail("EOF while parsing a string", self.n)
                    if any(d not in "0123456789abcdefABCDEF" for d in digits):
                        self.fail("invalid escape", i + 6)
                    i += 6
                    continue
                if escape not in '"\\/bfnrt':
                    self.fail("invalid escape", i + 2)
                i += 2
                continue
            if ord(c) < 0x20:
                self.fail("control character (\\u0000-\\u001F) found while parsing a string", i + 1)
            i += 1

    def number(self, i: int) -> int:
        start = i
        if self.s[i] == "-":
            i += 1
        if i >= self.n:
            self.fail("EOF while parsing a value", i)
        if self.s[i] == "0":
            i += 1
            if i < self.n and self.s[i].isdigit():
                self.fail("invalid number", i + 1)
        elif self.s[i].isdigit():
            while i < self.n and self.s[i].isdigit():
                i += 1
        else:
            self.fail("invalid number", i + 1)
        if i < self.n and self.s[i] == ".":
            i += 1
            if i >= self.n:
                self.fail("EOF while parsing a value", i)
            if not self.s[i].isdigit():
                self.fail("invalid number", i + 1)
            while i < self.n and self.s[i].isdigit():
                i += 1
        if i < self.n and self.s[i] in "eE":
            i += 1
            if i < self.n and self.s[i] in "+-":
                i += 1
            if i >= self.n:
                self.fail("EOF while parsing a value", i)
            if not self.s[i].isdigit():
                self.fail("invalid number", i + 1)
            while i < self.n and self.s[i].isdigit():
                i += 1
        if any(ch in ".eE" for ch in self.s[start:i]) and float(self.s[start:i]) in (float("inf"), float("-inf")):
            self.fail("number out of range", i)
        return i


def serde_json_error(text: str) -> str:
    """serde_json's ``<reason> at line L column C`` for a text msgspec refused."""
    scanner = _Scanner(text)
    try:
        end = scanner.ws(scanner.value(0))
        if end < len(text):
            scanner.fail("trailing characters", end + 1)
        return "expected value at line 1 column 1"
    except _Found as found:
        line = text.count("\n", 0, found.index) + 1
        at_char = not found.message.startswith("EOF") and found.message != "number out of range"
        line_start = text.rfind("\n", 0, found.index) + 1
        if at_char and found.index > line_start:  # serde_json counts the first byte of the offending character
            column = len(text[line_start : found.index - 1].encode("utf-8", "surrogatepass")) + 1
        else:
            column = len(text[line_start : found.index].encode("utf-8", "surrogatepass"))
        return f"{found.message} at line {line} column {column}"
