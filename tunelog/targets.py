"""Target strings: parse `cuda -model=titanx`-style strings into kind, options, keys and model.

Pure functions, no I/O. The key rule is the one TVM 0.8-0.19 applies when AutoTVM decodes a
record (see tvm-reference §2), including two details the golden verdicts depend on:

* AutoTVM's decoder rewrites the legacy `-target=` option to `-mtriple=` before parsing;
* for `llvm`, TVM's CPU target parser appends the keys `arm_cpu`, `cpu` when the triple is an
  Arm A-profile one (`aarch64...`, or `arm...` unless `-mcpu` is a Cortex-M) or when `-mcpu` names
  a Cortex-M core; this runs before `-device` is appended, and counts as user-given keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tunelog.exceptions import TargetParseError

# Default keys per target kind, as registered by TVM (target_kind.cc).
DEFAULT_KEYS: dict[str, tuple[str, ...]] = {
    "llvm": ("cpu",),
    "c": ("cpu",),
    "stackvm": ("cpu",),
    "cuda": ("cuda", "gpu"),
    "nvptx": ("cuda", "gpu"),
    "rocm": ("rocm", "gpu"),
    "opencl": ("opencl", "gpu"),
    "vulkan": ("vulkan", "gpu"),
    "metal": ("metal", "gpu"),
    "webgpu": ("webgpu", "gpu"),
    "hexagon": ("hexagon", "cpu"),
    "aocl": ("aocl", "hls"),
    "aocl_sw_emu": ("aocl", "hls"),
    "sdaccel": ("sdaccel", "hls"),
    "ext_dev": (),
    "hybrid": (),
}

UNKNOWN_MODEL = "unknown"

# Options that newer TVMs reject, making the whole record unloadable.
REJECTED_OPTIONS: dict[str, str] = {
    "link-params": "TVM >= 0.10 rejects the -link-params target option",
    # Moved to relay.build's executor and runtime arguments (TVM 0.16 refuses each, checked).
    **{
        name: f"TVM 0.16 rejects the -{name} target option (relay.build's {home} now)"
        for name, home in (
            ("runtime", "runtime"),
            ("system-lib", "runtime"),
            ("executor", "executor"),
            ("interface-api", "executor"),
            ("unpacked-api", "executor"),
        )
    },
}

# Cortex-M cores TVM's M-profile parser recognises (matched as prefixes of -mcpu).
_CORTEX_M_PREFIXES = (
    "cortex-m0",
    "cortex-m3",
    "cortex-m55",
    "cortex-m4",
    "cortex-m7",
    "cortex-m33",
    "cortex-m35p",
    "cortex-m85",
)
_ARM_PARSER_KEYS = ("arm_cpu", "cpu")
_CPU_PARSER_KINDS = frozenset({"llvm", "c"})


@dataclass(frozen=True)
class Target:
    """A parsed target string.

    `options` keeps every `-name=value` flag in the order written (after the `-target` to
    `-mtriple` rewrite); a flag without `=` has the value `"1"`, as TVM parses it.
    """

    raw: str
    kind: str
    options: tuple[tuple[str, str], ...]
    keys: tuple[str, ...]
    model: str

    @property
    def known_kind(self) -> bool:
        """True when TVM registers this target kind (unknown kinds cannot be loaded)."""
        return self.kind in DEFAULT_KEYS

    def option(self, name: str) -> str | None:
        """The value of option `name` (without the dash), or None when absent."""
        for key, value in self.options:
            if key == name:
                return value
        return None

    def machine_option(self, name: str) -> str | None:
        """The value of option `name` as it names a machine: `-model=unknown` is no model at
        all (AutoTVM's rule, tvm-reference §2: `target.model` is "unknown" when absent, and no
        model slot is opened for it), so it is None, like an absent `-model`."""
        if name == "model":
            return None if self.model == UNKNOWN_MODEL else self.model
        return self.option(name)

    @property
    def load_problems(self) -> tuple[str, ...]:
        """Reasons a modern AutoTVM (0.10-0.19) cannot load a record with this target."""
        problems = [REJECTED_OPTIONS[name] for name, _ in self.options if name in REJECTED_OPTIONS]
        if not self.known_kind:
            problems.append(f"unknown target kind {self.kind!r}")
        return (*problems, *option_problems(self.raw))

    @property
    def fixed_by_dropping_options(self) -> bool:
        """Whether `sanitized` leaves a target string modern AutoTVM loads (`--fix-targets`
        helps): its only problems are options TVM rejects, none it cannot drop."""
        return bool(self.load_problems) and not parse_target(self.sanitized()).load_problems

    def sanitized(self) -> str:
        """The target string without the options modern TVM rejects (for export rewriting)."""
        kept = [
            token
            for token in self.raw.split()
            if token[1:].partition("=")[0] not in REJECTED_OPTIONS or not token.startswith("-")
        ]
        return " ".join(kept)


def _is_arm_profile(mtriple: str | None, mcpu: str | None) -> bool:
    """TVM's `cpu` target parser: A-profile triple or a Cortex-M `-mcpu`."""
    if mcpu is not None and mcpu.startswith(_CORTEX_M_PREFIXES):
        return True
    if mtriple is None:
        return False
    if mtriple.startswith("aarch64"):
        return True
    is_m_profile = mcpu is not None and mcpu.startswith("cortex-m")
    return mtriple.startswith("arm") and not is_m_profile


def _dedupe(keys: list[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for key in keys:
        seen.setdefault(key, None)
    return tuple(seen)


@lru_cache(maxsize=4096)
def parse_target(raw: str) -> Target:
    """Parse a target string as AutoTVM does when it decodes a record.

    Raises TargetParseError for an empty string or a malformed option.
    """
    text = raw.replace("-target=", "-mtriple=")
    tokens = text.split()
    if not tokens:
        raise TargetParseError("empty target string")
    kind = tokens[0]
    if kind.startswith("-"):
        raise TargetParseError(f"target string starts with an option: {raw!r}")
    options: list[tuple[str, str]] = []
    for token in tokens[1:]:
        if not token.startswith("-") or len(token) < 2:
            raise TargetParseError(f"bad target option {token!r} in {raw!r}")
        name, sep, value = token[1:].partition("=")
        if not name:
            raise TargetParseError(f"bad target option {token!r} in {raw!r}")
        options.append((name, value if sep else "1"))
    opts = dict(options)

    user_keys: list[str] | None = None
    if "keys" in opts:
        user_keys = [k for k in opts["keys"].split(",") if k]
    # TVM's CPU target parser, registered for `llvm` and `c` (microTVM's Cortex-M targets).
    if kind in _CPU_PARSER_KINDS and _is_arm_profile(opts.get("mtriple"), opts.get("mcpu")):
        merged = list(user_keys or [])
        merged += [k for k in _ARM_PARSER_KEYS if k not in merged]
        user_keys = merged
    keys: list[str] = list(user_keys or [])
    if "device" in opts:
        keys.append(opts["device"])
    if user_keys is None:
        keys.extend(DEFAULT_KEYS.get(kind, ()))
    model = opts.get("model", UNKNOWN_MODEL)
    return Target(raw=raw, kind=kind, options=tuple(options), keys=_dedupe(keys), model=model)


# Target options TVM reads as booleans: written without a value, they mean true.
_FLAG_OPTIONS = frozenset({"system-lib", "link-params", "unpacked-api", "fast-math"})


def query_target_problem(raw: str) -> str | None:
    """Why `raw` cannot be the target a question is asked for (`--for-target`), or None.

    Stricter than `parse_target`, which reads the records' own targets as AutoTVM's decoder
    does: the kind must be one TVM registers, and an option other than a boolean flag must
    have a value (`cuda -model` would read the model as "1", as TVM does).
    """
    try:
        target = parse_target(raw)
    except TargetParseError as exc:
        return str(exc)
    if not target.known_kind:
        return f"unknown target kind {target.kind!r} (TVM knows {', '.join(sorted(DEFAULT_KEYS))})"
    problems = option_problems(raw)
    return problems[0] if problems else None


def option_problems(raw: str) -> list[str]:
    """The options of a target string TVM reads otherwise than as `name=value`: an option
    other than a boolean flag without a value, or with an empty one (TVM's parser refuses
    `-keys=`; `parse_target` reads a bare `-model` as "1"), or one given twice (refused)."""
    problems = []
    seen: set[str] = set()
    for token in raw.replace("-target=", "-mtriple=").split()[1:]:
        name, sep, value = token[1:].partition("=")
        if not sep and name not in _FLAG_OPTIONS:
            problems.append(f"option -{name} has no value: write -{name}=VALUE")
        elif sep and not value:
            problems.append(f"option -{name}= has an empty value")
        if name in seen:  # TVM: 'The key "model" appears more than once'
            problems.append(f"option -{name} is given twice")
        seen.add(name)
    return problems
