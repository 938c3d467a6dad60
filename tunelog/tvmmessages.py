"""Reading what TVM printed about operators it found no tuning record for (tvm-reference §10).

Pure: text in, `(target, workload)` pairs out. Two messages name an untuned workload:

* relay's DEBUG message, over three lines (or joined into one when pasted from a web page):
  `Cannot find tuning records for:` / `target=<target>` / `key=(<workload tuple>)`;
* the fallback context's WARNING on one line:
  `Cannot find config for target=<target>, workload=(<workload tuple>). A fallback ...`;
* `apply_graph_best`'s WARNING on one line (the graph tuner's output holds no record of it):
  `Config for target=<target>, workload=(<workload tuple>) is missing in ApplyGraphBest
  context. A fallback ...`;
* auto_scheduler's: `Cannot find tuned schedules for target=<target>, workload_key=<JSON
  list>. A fallback TOPI schedule ...`: the workload is the key's items, its hash first.

Any logging prefix before them is ignored. Web pages turn quotes typographic and escape HTML
characters; both are undone before reading. The workload is a Python tuple literal, read with
`ast.literal_eval` (never `eval`); a message whose tuple cannot be read is reported with its line
and reason, never dropped silently.

Task lists, which name workloads without a target, are read by `tasklists`.
"""

from __future__ import annotations

import ast
import html
import json
from collections.abc import Hashable, Iterable, Iterator
from typing import Any, NamedTuple

from tunelog.rules.nesting import MAX_NESTING, TOO_DEEP_REASON, nests_deeper_than

RECORDS_MARK = "Cannot find tuning records for:"
CONFIG_MARK = "Cannot find config for target="
GRAPH_MARK = "Config for target="  # `apply_graph_best`'s: "... is missing in ApplyGraphBest"
ANSOR_MARK = "Cannot find tuned schedules for target="  # auto_scheduler's ApplyHistoryBest
_ANSOR_KEY_MARK = ", workload_key="
_KEY_MARK = "key="
_TARGET_MARK = "target="
_WORKLOAD_MARK = ", workload="
# A message spans the mark line and at most this many continuation lines.
_CONTINUATION_LINES = 3
# Longest workload tuple read: real ones are a few hundred characters.
_MAX_TUPLE = 20_000

_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})

Workload = tuple[object, ...]


class UntunedMessage(NamedTuple):
    """One workload TVM said it has no tuning record for, and the line its message starts on."""

    target: str
    workload: Workload
    line: int
    # A "Cannot find config" warning: a template called directly (relay's choice queries
    # silently), which queried its own workload only, not the other templates of its layer.
    direct: bool = False
    # apply_graph_best's warning: relay asked the graph tuner's output, which lacks it.
    graph: bool = False
    # auto_scheduler's: the workload is its key's items (hash, shapes...), not a template's.
    ansor: bool = False


class UnreadMessage(NamedTuple):
    """A message that names an untuned workload tunelog could not read."""

    line: int
    reason: str


class ReadMessages(NamedTuple):
    """Every distinct (target, workload) in first-seen order, and the messages not read."""

    messages: list[UntunedMessage]
    unread: list[UnreadMessage]
    repeats: int  # messages naming a (target, workload) already listed


def normalise_text(line: str) -> str:
    """Undo what a web page does to console text: typographic quotes, HTML escapes."""
    if "&" in line:
        line = html.unescape(line)
    return line.translate(_TYPOGRAPHIC)


def read_messages(lines: Iterable[str]) -> ReadMessages:
    """The untuned workloads TVM's console output names (both message forms)."""
    found: dict[tuple[str, Hashable], UntunedMessage] = {}
    unread: list[UnreadMessage] = []
    repeats = 0
    for number, chunk in _message_chunks(lines):
        parsed = _parse_chunk(chunk)
        if isinstance(parsed, str):
            unread.append(UnreadMessage(number, parsed))
            continue
        target, workload, direct, graph = parsed
        ansor = ANSOR_MARK in chunk
        key = (target, workload_key(workload))
        if key in found:
            repeats += 1
            continue
        found[key] = UntunedMessage(target, workload, number, direct, graph, ansor)
    return ReadMessages(list(found.values()), unread, repeats)


def _message_chunks(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) of each message: the mark line joined with its continuation lines."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(lines, start=1):
        line = normalise_text(raw.rstrip("\r\n"))
        if any(mark in line for mark in (RECORDS_MARK, CONFIG_MARK, GRAPH_MARK, ANSOR_MARK)):
            if pending:
                yield start, " ".join(pending)
            start = number
            pending = [line]
            if _complete(line):
                yield start, line
                pending = []
        elif pending:
            pending.append(_after_prefix(line))
            joined = " ".join(pending)
            if _complete(joined) or len(pending) > _CONTINUATION_LINES:
                yield start, joined
                pending = []
    if pending:
        yield start, " ".join(pending)


def _after_prefix(line: str) -> str:
    """A continuation line from its `target=` or `key=` on: a logger may prefix each line."""
    for mark in (_TARGET_MARK, _KEY_MARK):
        at = line.find(mark)
        if at >= 0:
            return line[at:]
    return line.strip()


def _complete(text: str) -> bool:
    """The message text holds its whole workload tuple."""
    if ANSOR_MARK in text:  # one line: its key ends it (the DAG printed below is not read)
        return True
    for mark in (_KEY_MARK, _WORKLOAD_MARK):
        at = text.find(mark)
        if at >= 0:
            return _tuple_end(text, text.find("(", at)) is not None
    return False


def _parse_chunk(chunk: str) -> tuple[str, Workload, bool, bool] | str:
    """(target, workload, whether it is a direct call's "Cannot find config", whether it is
    apply_graph_best's) of one message, or the reason it cannot be read."""
    if ANSOR_MARK in chunk:
        return _parse_ansor(chunk)
    direct = CONFIG_MARK in chunk
    graph = not direct and GRAPH_MARK in chunk
    if direct or graph:
        mark = CONFIG_MARK if direct else GRAPH_MARK
        rest = chunk[chunk.index(mark) + len(mark) :]
        target, sep, tail = rest.partition(_WORKLOAD_MARK)
        if not sep:
            return "no 'workload=' after the target"
    else:
        rest = chunk[chunk.index(RECORDS_MARK) + len(RECORDS_MARK) :]
        at_target = rest.find(_TARGET_MARK)
        at_key = rest.find(_KEY_MARK, at_target + 1)
        if at_target < 0 or at_key < 0:
            return "no 'target=' and 'key=' lines after the message"
        target = rest[at_target + len(_TARGET_MARK) : at_key]
        tail = rest[at_key + len(_KEY_MARK) :]
    target = target.strip()
    if not target:
        return "empty target"
    if graph and tail.lstrip().startswith("None"):
        return (
            "apply_graph_best ran past the end of the graph tuner's output (workload=None): the "
            "output is shorter than the network (another network's, or cut short); TVM fails "
            "after it"
        )
    workload = read_workload(tail.lstrip())
    if isinstance(workload, str):
        return workload
    return target, workload, direct, graph


def _parse_ansor(chunk: str) -> tuple[str, Workload, bool, bool] | str:
    """auto_scheduler's message: (target, the key's items as a tuple, False, False)."""
    rest = chunk[chunk.index(ANSOR_MARK) + len(ANSOR_MARK) :]
    target, sep, tail = rest.partition(_ANSOR_KEY_MARK)
    if not sep:
        return "no 'workload_key=' after the target"
    target = target.strip()
    if not target:
        return "empty target"
    try:  # the key is a JSON list; what follows it (". A fallback ...") is ignored
        items, end = json.JSONDecoder().raw_decode(tail.lstrip())
    except (ValueError, RecursionError):
        return "the workload key is not a JSON list"
    if not isinstance(items, list) or not items or not isinstance(items[0], str):
        return "the workload key is not a JSON list starting with its hash"
    if nests_deeper_than(tail.lstrip()[:end].encode("utf-8", "surrogateescape"), MAX_NESTING):
        return TOO_DEEP_REASON
    from tunelog.selection import AnsorKeyError, ansor_workload

    try:  # as auto_scheduler reads a key (a non-finite number is none)
        ansor_workload(json.dumps(items))
    except AnsorKeyError as exc:
        return f"the workload key cannot be read ({exc})"
    return target, tuple(as_tuple(item) for item in items), False, False


def _tuple_end(text: str, start: int) -> int | None:
    """Index just past the parenthesised expression opening at `start`, quotes respected."""
    if start < 0 or start >= len(text) or text[start] != "(":
        return None
    depth = 0
    quote = ""
    index = start
    limit = min(len(text), start + _MAX_TUPLE)
    while index < limit:
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None


def read_workload(text: str) -> Workload | str:
    """The workload tuple at the start of `text`, or the reason it cannot be read."""
    end = _tuple_end(text, 0)
    if end is None:
        return "the workload tuple is cut off or too long"
    if nests_deeper_than(text[:end].encode("utf-8", "surrogateescape"), MAX_NESTING):
        return TOO_DEEP_REASON
    try:
        value = ast.literal_eval(text[:end])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        return f"the workload is not a Python literal ({type(exc).__name__})"
    if not isinstance(value, tuple) or not value or not isinstance(value[0], str):
        return "the workload is not a tuple starting with a task name"
    odd = _not_json(value)
    if odd is not None:  # a Python literal no workload holds, and no JSON output can write
        return f"the workload holds {odd}"
    return value


def _not_json(value: object) -> str | None:
    """What in a literal no JSON value is (a complex, bytes, `...`, an integer past 64 bits),
    or None; looked at without recursion (its nesting is bounded before: `read_workload`)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (tuple, list, set, frozenset)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, bool) or item is None or isinstance(item, (str, float)):
            continue
        elif isinstance(item, int):
            if item.bit_length() > 64:
                return "an integer past 64 bits"
        else:
            return f"a value of type {type(item).__name__}, which no workload holds"
    return None


_MAPPING = ("a mapping",)  # marks a dict's items in `workload_key`, unlike any argument
_SET = ("a set",)


def workload_key(value: object) -> Hashable:
    """`value` (a workload, or its arguments) as a dictionary key: lists as tuples (as
    `as_tuple`), and what no TVM workload holds but a log line, a message or a task list may
    (a JSON object, a Python set) in a hashable form equal only to the same value's."""
    if isinstance(value, (list, tuple)):
        return tuple(workload_key(item) for item in value)
    if isinstance(value, dict):
        return (_MAPPING, tuple((workload_key(k), workload_key(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (_SET, frozenset(workload_key(item) for item in value))
    return value  # str, numbers, None, bool: hashable


def as_tuple(value: object) -> object:
    """Lists turned into tuples, recursively: the form TVM's dictionaries key workloads by."""
    if isinstance(value, (list, tuple)):
        return tuple(as_tuple(item) for item in value)
    return value


def workload_args(workload: Workload) -> list[Any]:
    """A workload's arguments as JSON values (tuples as lists), as a log stores them."""
    return [as_json_list(arg) for arg in workload[1:]]


def as_json_list(value: object) -> object:
    """Tuples turned into lists, recursively: a workload as JSON prints it (a set, which no
    TVM workload holds but a message may, as a list in the order of its items' reprs)."""
    if isinstance(value, (list, tuple)):
        return [as_json_list(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return [as_json_list(item) for item in sorted(value, key=repr)]
    return value
