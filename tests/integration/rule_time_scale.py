"""Time-compresses Prometheus rule files for tests whose data runs faster than
real time (stdlib only).

A simulator running S times faster than real time shows in one real second
what a fleet shows in S seconds, while the server evaluating the rules runs
in real time. A rule written for real time ("the HBM climbed over the last
20 minutes, for 5 minutes") then becomes true on the accelerated data if it
is read as "over the last 20/S minutes, for 5/S minutes".
`scale_rule_files` (one file's text: `scale_rule_text`) writes such copies:

- In every rule's `expr`, each PromQL duration is divided by S: range
  selectors `[20m]`, subquery ranges and steps `[30m:1m]` (a missing step
  stays missing), and `offset 5m` (also negative). `@` is refused (an
  absolute timestamp cannot be scaled). Durations are found by a small
  PromQL lexer that skips string literals, comments and label matchers, so
  a label value or a metric name that looks like a duration is never
  touched.
- Number literals that are seconds are divided by S: the second argument of
  `predict_linear(v, t)` (seconds ahead) when it is a lone number, and the
  literals the caller names per rule as "seconds" (for example a "less than
  1800 s left" threshold on a time computed from a slope, or a `* 60`
  turning a per-second rate into a per-minute one).
- Number literals that are rates per second are multiplied by S: the
  literals the caller names per rule as "per_second" (for example `>= 100`
  errors a second, or a bound on the rate of a counter of seconds, whose
  rate is a fraction in real time but S times that on accelerated data).
  Each named literal must occur in some rule of that name, otherwise
  scaling fails, so a changed rule file cannot be scaled silently wrong; a
  rule marked "strict" must have every number literal classified (as
  seconds, per second or "plain"), so a literal added to it later is not
  left unscaled unnoticed.
- Each rule's `for` and `keep_firing_for`, and each group's `interval` and
  `query_offset`.
Nothing else changes (names, labels, annotations, every other number).

Only those keys are rewritten, found by their place in the YAML structure
(`groups[].rules[].expr`, ...), not by a search over the whole file. Values
are decoded (plain, single- or double-quoted, literal `|` or folded `>`
block) and re-encoded as a literal block (expr) or a plain scalar
(durations). The input must be block-style YAML, as rule files are, except
that a rule may be a one-line flow mapping (`- {record: r, expr: e}`); its
changed values are rewritten in place (expr as a double-quoted scalar).
`rule_summary` decodes a file with the same reader, for checks.
"""

import json
import os
import re

UNIT_MS = {"ms": 1, "s": 1000, "m": 60000, "h": 3600000, "d": 86400000, "w": 604800000,
           "y": 31536000000}
_DURATION_RE = re.compile(r"(?:[0-9]+(?:ms|s|m|h|d|w|y))+")
_DURATION_PART_RE = re.compile(r"([0-9]+)(ms|s|m|h|d|w|y)")
_IDENT_RE = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_NUMBER_RE = re.compile(
    r"0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class ScaleError(ValueError):
    pass


def parse_duration_ms(text):
    """A Prometheus duration ("1h30m", "250ms") -> milliseconds."""
    if not _DURATION_RE.fullmatch(text):
        raise ScaleError(f"not a duration: {text!r}")
    return sum(int(n) * UNIT_MS[u] for n, u in _DURATION_PART_RE.findall(text))


def format_duration_ms(ms):
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def scale_duration(text, factor):
    ms = parse_duration_ms(text)
    if ms == 0:
        return text
    scaled = round(ms / factor)
    if scaled < 1:
        raise ScaleError(f"duration {text} divided by {factor} is below 1ms")
    return text if scaled == ms else format_duration_ms(scaled)


def _format_number(value):
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


class _Lexer:
    """Walks a PromQL expression, copying it and rewriting durations."""

    def __init__(self, expr, factor, constants):
        self.s = expr
        self.i = 0
        self.out = []
        self.factor = factor
        self.constants = dict(constants)  # literal text -> multiplier
        self.found = {k: 0 for k in constants}
        self.brace = 0
        # Stack of open parentheses: (function name or None, argument index).
        self.parens = []
        self.changes = []
        self.literals = []  # (text, scaled automatically) of every number literal
        self.durations = []  # milliseconds of every duration, as written

    def emit(self, text):
        self.out.append(text)

    def skip_space(self):
        start = self.i
        while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
            self.i += 1
        self.emit(self.s[start:self.i])

    def string(self):
        quote = self.s[self.i]
        j = self.i + 1
        while j < len(self.s):
            c = self.s[j]
            if c == "\\" and quote != "`":
                j += 2
                continue
            if c == quote:
                break
            if c == "\n" and quote != "`":
                raise ScaleError(f"newline in string literal at {self.i}: {self.s!r}")
            j += 1
        if j >= len(self.s):
            raise ScaleError(f"unterminated string literal at {self.i}: {self.s!r}")
        self.emit(self.s[self.i:j + 1])
        self.i = j + 1

    def duration_here(self, what):
        m = _DURATION_RE.match(self.s, self.i)
        if not m:
            raise ScaleError(f"expected a duration after {what} at {self.i}: "
                             f"{self.s[self.i:self.i + 20]!r} in {self.s!r}")
        new = scale_duration(m.group(0), self.factor)
        self.durations.append(parse_duration_ms(m.group(0)))
        if new != m.group(0):
            self.changes.append((m.group(0), new))
        self.emit(new)
        self.i = m.end()

    def bracket(self):
        # '[' range ']' or '[' range ':' [step] ']'.
        self.emit("[")
        self.i += 1
        self.skip_space()
        self.duration_here("'['")
        self.skip_space()
        if self.i < len(self.s) and self.s[self.i] == ":":
            self.emit(":")
            self.i += 1
            self.skip_space()
            if self.i < len(self.s) and self.s[self.i] != "]":
                self.duration_here("':'")
                self.skip_space()
        if self.i >= len(self.s) or self.s[self.i] != "]":
            raise ScaleError(f"expected ']' at {self.i} in {self.s!r}")
        self.emit("]")
        self.i += 1

    def _in_seconds_arg(self):
        return bool(self.parens) and self.parens[-1]["name"] == "predict_linear" and \
            self.parens[-1]["arg"] == 1

    def number(self, m):
        text = m.group(0)
        value = float(int(text, 16)) if text.lower().startswith("0x") else float(text)
        scaled = None
        if self._in_seconds_arg():
            prev = "".join(self.out).rstrip()[-1:]
            after = self.s[m.end():].lstrip()[:1]
            if prev == "," and after == ")":
                scaled = value / self.factor  # predict_linear(v, <seconds>)
        self.literals.append((text, scaled is not None))
        if scaled is None and text in self.constants:
            self.found[text] += 1
            scaled = value * self.constants[text]
        if scaled is None:
            self.emit(text)
        else:
            if self._in_seconds_arg():
                self.parens[-1]["scaled"] = True
            new = _format_number(scaled)
            self.changes.append((text, new))
            self.emit(new)
        self.i = m.end()

    def run(self):
        s = self.s
        last_ident = None  # identifier just before a '(' names a function
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\r\n":
                self.skip_space()
                continue
            if c in "\"'`":
                self.string()
                last_ident = None
                continue
            if c == "#":
                end = s.find("\n", self.i)
                end = len(s) if end < 0 else end
                self.emit(s[self.i:end])
                self.i = end
                continue
            if self.brace:
                # Inside label matchers: names, operators, strings; no durations.
                if c == "}":
                    self.brace -= 1
                self.emit(c)
                self.i += 1
                continue
            if c == "{":
                self.brace += 1
                self.emit(c)
                self.i += 1
                last_ident = None
                continue
            if c == "[":
                self.bracket()
                last_ident = None
                continue
            if c == "@":
                raise ScaleError(f"'@' modifier cannot be time-scaled: {s!r}")
            if c == "(":
                self.parens.append({"name": last_ident, "arg": 0, "scaled": False})
                self.emit(c)
                self.i += 1
                last_ident = None
                continue
            if c == ")":
                if self._in_seconds_arg() and not self.parens[-1]["scaled"]:
                    raise ScaleError("predict_linear's seconds argument is an expression: "
                                     f"name its seconds literal for scaling: {s!r}")
                if self.parens:
                    self.parens.pop()
                self.emit(c)
                self.i += 1
                last_ident = None
                continue
            if c == ",":
                if self.parens:
                    self.parens[-1]["arg"] += 1
                self.emit(c)
                self.i += 1
                last_ident = None
                continue
            m = _NUMBER_RE.match(s, self.i)
            if c.isdigit() or (c == "." and m):
                self.number(m)
                last_ident = None
                continue
            m = _IDENT_RE.match(s, self.i)
            if m:
                word = m.group(0)
                self.emit(word)
                self.i = m.end()
                if word.lower() == "offset":
                    # The keyword, when a duration follows (else, e.g., a
                    # grouping label named offset).
                    j = self.i
                    while j < len(s) and s[j] in " \t\r\n":
                        j += 1
                    neg = j < len(s) and s[j] == "-"
                    k = j + 1 if neg else j
                    while neg and k < len(s) and s[k] in " \t\r\n":
                        k += 1
                    if _DURATION_RE.match(s, k):
                        self.emit(s[self.i:k])
                        self.i = k
                        self.duration_here("offset")
                        last_ident = None
                        continue
                last_ident = word
                continue
            self.emit(c)
            self.i += 1
            last_ident = None
        if self.brace or self.parens:
            raise ScaleError(f"unbalanced braces or parentheses in {s!r}")
        return "".join(self.out)


def scale_expr(expr, factor, seconds=(), per_second=(), changes=None, found=None,
               literals=None):
    """Returns expr with its durations divided by factor, and its number
    literals listed in `seconds` divided by factor and those in `per_second`
    multiplied by it. Without `found`, each listed literal must occur;
    with it (a dict), found[literal] is increased by its occurrences instead.
    If changes is a list, (old, new) pairs are appended to it; if literals is
    a list, (text, scaled automatically) of every number literal."""
    constants = {c: 1.0 / factor for c in seconds}
    for c in per_second:
        if c in constants:
            raise ScaleError(f"literal {c} listed as both seconds and per-second")
        constants[c] = float(factor)
    lexer = _Lexer(expr, factor, constants)
    out = lexer.run()
    if found is None:
        missing = [c for c, n in lexer.found.items() if n == 0]
        if missing:
            raise ScaleError(f"constants {missing} not found in {expr!r}")
    else:
        for c, n in lexer.found.items():
            found[c] = found.get(c, 0) + n
    if changes is not None:
        changes.extend(lexer.changes)
    if literals is not None:
        literals.extend(lexer.literals)
    return out


def expr_durations_ms(expr):
    """Milliseconds of every duration in expr (ranges, steps, offsets), in
    order; for comparing with an engine's printed form of the expression."""
    lexer = _Lexer(expr, 1, {})
    lexer.run()
    return lexer.durations


# ------------------------------------------------------------------ YAML

_KEY_RE = re.compile(r"^( *)(- +)?([A-Za-z_][A-Za-z0-9_]*) *:(?: +|$)(.*)$")
_BLOCK_RE = re.compile(r"^([|>])([+-]?)([1-9]?)([+-]?) *(#.*)?$")


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _fold(lines):
    """YAML flow folding of a multi-line quoted or plain scalar's lines."""
    out = ""
    pending_breaks = 0
    for n, line in enumerate(lines):
        text = line if n == 0 else line.lstrip(" \t")
        if n < len(lines) - 1:
            text = text.rstrip(" \t")
        if n > 0 and not text and n < len(lines) - 1:
            pending_breaks += 1
            continue
        if n > 0:
            out += "\n" * pending_breaks if pending_breaks else " "
        pending_breaks = 0
        out += text
    return out


def _decode_double(raw):
    out = []
    i = 0
    escapes = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
               "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
               "N": "\x85", "_": "\xa0"}
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            e = raw[i + 1]
            if e in escapes:
                out.append(escapes[e])
                i += 2
            elif e in "xuU":
                n = {"x": 2, "u": 4, "U": 8}[e]
                out.append(chr(int(raw[i + 2:i + 2 + n], 16)))
                i += 2 + n
            else:
                raise ScaleError(f"bad escape \\{e} in double-quoted scalar")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _read_quoted(lines, start, first, quote):
    """first: the value text after the key on lines[start], beginning with the
    quote. Returns (value, index of the last line used)."""
    buf = first[1:]
    idx = start
    while True:
        j = 0
        while j < len(buf):
            if quote == "'" and buf[j] == "'":
                if j + 1 < len(buf) and buf[j + 1] == "'":
                    j += 2
                    continue
                break
            if quote == '"' and buf[j] == "\\":
                j += 2
                continue
            if quote == '"' and buf[j] == '"':
                break
            j += 1
        if j < len(buf):
            break
        idx += 1
        if idx >= len(lines):
            raise ScaleError(f"unterminated quoted scalar starting on line {start + 1}")
        buf += "\n" + lines[idx]
    body, rest = buf[:j], buf[j + 1:].strip()
    if rest and not rest.startswith("#"):
        raise ScaleError(f"text after a quoted scalar on line {idx + 1}: {rest!r}")
    if quote == "'":
        return _fold(body.split("\n")).replace("''", "'"), idx
    # Double-quoted: an escaped line break joins without a space.
    parts = re.split(r"\\\n[ \t]*", body)
    return _decode_double(_fold("".join(parts).split("\n"))), idx


def _strip_comment(text):
    m = re.search(r"(^|[ \t])#", text)
    return text[:m.start()] if m else text


def _fold_block(content):
    """The value of a folded (`>`) block scalar's content lines (indentation
    removed, empty lines ""): a line break between two lines of text that are
    not more indented becomes a space; empty lines are line breaks; breaks
    next to more-indented lines are kept."""
    value = None
    empty = 0
    prev_more = False
    for line in content:
        if not line:
            empty += 1
            continue
        more = line[0] in " \t"
        if value is None:
            value = "\n" * empty + line
        elif empty == 0 and not more and not prev_more:
            value += " " + line
        elif more or prev_more:
            value += "\n" * (empty + 1) + line
        else:
            value += "\n" * empty + line
        empty = 0
        prev_more = more
    return value or ""


def _read_value(lines, i, key_col, rest):
    """Decodes the scalar value of the key on line i. Returns (value, last)."""
    rest = rest.rstrip()
    if not _strip_comment(rest).strip():
        # Nothing after the key: a nested mapping or sequence follows, or a
        # plain scalar on the next lines.
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].lstrip().startswith("#")):
            j += 1
        if j >= len(lines) or _indent(lines[j]) < key_col or _KEY_RE.match(lines[j]) or \
                re.match(r"^ *-( |$)", lines[j]) or _indent(lines[j]) == key_col:
            return None, i
    if rest.startswith(("'", '"')):
        return _read_quoted(lines, i, rest, rest[0])
    m = _BLOCK_RE.match(rest)
    if m:
        style, chomp = m.group(1), m.group(2) or m.group(4)
        body = []
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > key_col):
            body.append(lines[j])
            j += 1
        while body and not body[-1].strip():
            body.pop()
        trailing = j - i - 1 - len(body)
        last = i + len(body)
        if not body:
            return "", last
        ind = int(m.group(3)) + key_col if m.group(3) else min(
            _indent(b) for b in body if b.strip())
        content = [b[ind:] if b.strip() else "" for b in body]
        if style == "|":
            value = "\n".join(content)
        else:
            value = _fold_block(content)
        if chomp == "+":
            value += "\n" * (1 + trailing)
        elif chomp != "-":
            value += "\n"
        return value, last
    if rest.startswith(("{", "[", "&", "*", "!")):
        raise ScaleError(f"line {i + 1}: flow, anchor or tag values are not supported: {rest!r}")
    parts = [_strip_comment(rest).strip()]
    j = i + 1
    while j < len(lines):
        line = lines[j]
        if line.strip() and (_indent(line) <= key_col or line.strip().startswith("#")):
            break
        if not line.strip():
            # A blank line continues the scalar only if more text follows.
            k = j
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k >= len(lines) or _indent(lines[k]) <= key_col:
                break
        parts.append(_strip_comment(line).strip())
        j += 1
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    if not parts[0] and len(parts) > 1:
        parts = parts[1:]
    return _fold(parts), j - 1


def _literal_block(key_line_prefix, value, key_col):
    pad = " " * (key_col + 2)
    lines = [ln.rstrip() for ln in value.strip("\n").split("\n")]
    indicator = "|2-" if lines and lines[0][:1] in (" ", "\t") else "|-"
    return [key_line_prefix + indicator] + [pad + ln if ln else "" for ln in lines]


def _flow_scalar_end(s, j):
    """End of a flow scalar or collection starting at s[j]."""
    c = s[j]
    if c in "'\"":
        k = j + 1
        while k < len(s):
            if c == "'" and s[k] == "'":
                if k + 1 < len(s) and s[k + 1] == "'":
                    k += 2
                    continue
                return k + 1
            if c == '"' and s[k] == "\\":
                k += 2
                continue
            if c == '"' and s[k] == '"':
                return k + 1
            k += 1
        raise ScaleError(f"unterminated quoted scalar in flow mapping: {s!r}")
    if c in "{[":
        depth = 0
        k = j
        while k < len(s):
            if s[k] in "'\"":
                k = _flow_scalar_end(s, k)
                continue
            if s[k] in "{[":
                depth += 1
            elif s[k] in "}]":
                depth -= 1
                if depth == 0:
                    return k + 1
            k += 1
        raise ScaleError(f"unbalanced flow collection (multi-line flow is not supported): {s!r}")
    k = j
    while k < len(s) and s[k] not in ",}]":
        k += 1
    return k


def _decode_flow_scalar(raw):
    raw = raw.strip()
    if raw.startswith("'"):
        return raw[1:-1].replace("''", "'")
    if raw.startswith('"'):
        return _decode_double(raw[1:-1])
    return raw


def _parse_flow_map(s, start):
    """s[start] == '{'. Returns ([(key, vstart, vend)], end)."""
    pairs = []
    j = start + 1
    while True:
        while j < len(s) and s[j] in " \t":
            j += 1
        if j >= len(s):
            raise ScaleError(f"unterminated flow mapping (multi-line flow is not supported): {s!r}")
        if s[j] == "}":
            return pairs, j + 1
        m = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|\"[^\"]*\"|'[^']*') *: *").match(s, j)
        if not m:
            raise ScaleError(f"cannot read flow mapping key at {j}: {s!r}")
        key = _decode_flow_scalar(m.group(1))
        vstart = m.end()
        vend = _flow_scalar_end(s, vstart)
        pairs.append((key, vstart, vend))
        j = vend
        while j < len(s) and s[j] in " \t":
            j += 1
        if j < len(s) and s[j] == ",":
            j += 1


class _Rule:
    def __init__(self, line):
        self.line = line
        self.name = None
        self.kind = None
        self.expr = None
        self.fields = {}  # for / keep_firing_for, decoded


def _process(text, factor, constants, report, found):
    """Walks a rule file. With factor None, only collects the rules.
    Returns (new text or None, [_Rule])."""
    lines = text.split("\n")
    out = []
    stack = []  # (column, key) of enclosing mapping keys
    rules = []
    rule = None
    deferred = []  # (index in out, rule, prefix, column) of expr values

    def scale_time(value, where, key):
        new = scale_duration(value.strip(), factor)
        if report is not None and new != value.strip():
            report.append(f"{where}: {key} {value.strip()} -> {new}")
        return new

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            out.append(line)
            i += 1
            continue
        flow = re.match(r"^( *)- +\{", line)
        if flow:
            col = len(flow.group(1))
            while stack and stack[-1][0] > col:
                stack.pop()
            if [k for _, k in stack][-2:] != ["groups", "rules"]:
                raise ScaleError(f"line {i + 1}: flow mapping outside a rules list")
            rule = _Rule(i + 1)
            rules.append(rule)
            pairs, end = _parse_flow_map(line, flow.end() - 1)
            rest = line[end:].strip()
            if rest and not rest.startswith("#"):
                raise ScaleError(f"line {i + 1}: text after a flow mapping: {rest!r}")
            edits = []
            for key, vs, ve in pairs:
                value = _decode_flow_scalar(line[vs:ve])
                if key in ("alert", "record"):
                    rule.name, rule.kind = value, key
                elif key == "expr":
                    rule.expr = value
                    rule.expr_span = (vs, ve)
                elif key in ("for", "keep_firing_for"):
                    rule.fields[key] = value
                    if factor is not None:
                        edits.append((vs, ve, scale_time(value, rule.name, key)))
            if rule.name is None or rule.expr is None:
                raise ScaleError(f"line {i + 1}: rule lacks alert/record or expr")
            if factor is not None:
                new_expr = _scale_rule_expr(rule, factor, constants, report, found)
                if new_expr != rule.expr:
                    edits.append((*rule.expr_span, json.dumps(new_expr)))
                for vs, ve, new in sorted(edits, reverse=True):
                    line = line[:vs] + new + line[ve:]
            out.append(line)
            i += 1
            continue
        m = _KEY_RE.match(line)
        if not m:
            raise ScaleError(f"line {i + 1}: not a key line where one was expected: {line!r}")
        indent, dash, key, rest = m.group(1), m.group(2) or "", m.group(3), m.group(4)
        col = len(indent) + len(dash)
        while stack and stack[-1][0] >= col:
            stack.pop()
        parents = [k for _, k in stack]
        in_rule = parents[-2:] == ["groups", "rules"]
        in_group = parents[-1:] == ["groups"]
        if in_rule and dash:
            rule = _Rule(i + 1)
            rules.append(rule)
        value, last = _read_value(lines, i, col, rest)
        prefix = f"{indent}{dash}{key}: "
        if in_rule and key in ("alert", "record"):
            rule.name, rule.kind = value.strip(), key
        if in_rule and key == "expr":
            rule.expr = value
            deferred.append((len(out), rule, prefix, col))
            out.append(None)
        elif in_rule and key in ("for", "keep_firing_for"):
            rule.fields[key] = value.strip()
            out.append(prefix + scale_time(value, rule.name, key) if factor is not None
                       else line)
        elif in_group and key in ("interval", "query_offset") and factor is not None:
            out.append(prefix + scale_time(value, "group", key))
        else:
            out.extend(lines[i:last + 1])
        if value is None:
            stack.append((col, key))
        i = last + 1
    for r in rules:
        if r.name is None or r.expr is None:
            raise ScaleError(f"rule at line {r.line} lacks alert/record or expr")
    if factor is None:
        return None, rules
    for n, r, prefix, col in deferred:
        scaled = _scale_rule_expr(r, factor, constants, report, found)
        out[n] = "\n".join(_literal_block(prefix, scaled, col))
    return "\n".join(out), rules


def _scale_rule_expr(rule, factor, constants, report, found):
    c = (constants or {}).get(rule.name, {})
    local = {}
    changes = []
    literals = []
    try:
        scaled = scale_expr(rule.expr, factor, c.get("seconds", ()), c.get("per_second", ()),
                            changes, local, literals)
        if c.get("strict"):
            known = {*c.get("seconds", ()), *c.get("per_second", ()), *c.get("plain", ())}
            unknown = sorted({t for t, auto in literals if not auto and t not in known})
            if unknown:
                raise ScaleError(f"number literals {unknown} are not classified as seconds, "
                                 "per_second or plain")
    except ScaleError as e:
        raise ScaleError(f"rule {rule.name} (line {rule.line}): {e}") from None
    if found is not None:
        for lit, n in local.items():
            found[(rule.name, lit)] = found.get((rule.name, lit), 0) + n
    if report is not None and changes:
        report.append(f"{rule.name}: " + ", ".join(f"{a} -> {b}" for a, b in changes))
    return scaled


def scale_rule_text(text, factor, constants=None, report=None, found=None):
    """Scales a rule file's text (see the module docstring) and returns it.

    constants maps a rule name (alert or record; every rule of that name) to
    {"seconds": [literal, ...], "per_second": [literal, ...]}: number
    literals of its expr that are seconds (divided by factor) or rates per
    second (multiplied by it); with "strict": True, every other number
    literal of the rule must be listed under "plain" (unitless: left alone),
    so a new literal in a rule that matters cannot go unexamined. Without
    `found`, every listed literal must occur in the file; with it (a dict),
    found[(rule, literal)] counts them so the caller can check over several
    files. report, if a list, receives one line per changed value. Raises
    ScaleError."""
    local = {} if found is None else found
    new, rules = _process(text, factor, constants, report, local)
    if found is None:
        names = {r.name for r in rules}
        for name, kinds in (constants or {}).items():
            for lit in (*kinds.get("seconds", ()), *kinds.get("per_second", ())):
                if name not in names or not local.get((name, lit)):
                    raise ScaleError(f"constant {lit} of rule {name} not found")
    return new


def rule_summary(text):
    """[(name, kind, expr, for)] of every rule in a rule file's text, decoded
    by the same reader (for checks)."""
    _, rules = _process(text, None, None, None, None)
    return [(r.name, r.kind, r.expr, r.fields.get("for")) for r in rules]


def scale_rule_files(sources, out_dir, factor, constants=None):
    """Writes a scaled copy of every file in sources into out_dir (same base
    names). Every literal in constants must occur in some rule of that name.
    Returns (written paths, report lines)."""
    found = {}
    report = []
    written = []
    for src in sources:
        with open(src, encoding="utf-8") as f:
            text = f.read()
        try:
            new = scale_rule_text(text, factor, constants, report, found)
        except ScaleError as e:
            raise ScaleError(f"{src}: {e}") from None
        dst = os.path.join(out_dir, os.path.basename(src))
        with open(dst, "w", encoding="utf-8") as f:
            f.write(new)
        written.append(dst)
    for name, kinds in (constants or {}).items():
        for lit in (*kinds.get("seconds", ()), *kinds.get("per_second", ())):
            if not found.get((name, lit)):
                raise ScaleError(f"the rules changed: no rule {name} has the constant {lit} "
                                 "listed for time scaling")
    return written, report
