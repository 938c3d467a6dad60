"""Options shared by several commands, declared once."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from tunelog import optionvalues
from tunelog.cli.running import checked
from tunelog.filters import Filters

R = TypeVar("R")


JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")
]


# What each filter means is defined once, in tunelog.filters.
FilterTargetKey = Annotated[
    str | None,
    typer.Option(
        "--target-key",
        help="Only records whose target has this key (e.g. cuda).",
        callback=checked(functools.partial(optionvalues.not_empty, name="--target-key")),
    ),
]
FilterModel = Annotated[
    str | None,
    typer.Option(
        help="Only records whose target has this -model value.",
        callback=checked(functools.partial(optionvalues.not_empty, name="--model")),
    ),
]
FilterTemplate = Annotated[
    str | None,
    typer.Option(
        help="Only this template (task name), e.g. conv2d_nchw.cuda.",
        callback=checked(functools.partial(optionvalues.not_empty, name="--template")),
    ),
]
FilterTask = Annotated[
    str | None,
    typer.Option(
        help="Only templates whose name contains this text.",
        callback=checked(functools.partial(optionvalues.not_empty, name="--task")),
    ),
]
FilterForTarget = Annotated[
    str | None,
    typer.Option(
        "--for-target",
        metavar="TARGET",
        help="Answer as apply_history_best does when compiling for this target string "
        '(e.g. "cuda -model=titanx"; the model need not be in the log).',
        callback=checked(optionvalues.target_string),
    ),
]


FilterSource = Annotated[
    str | None,
    typer.Option(
        "--source",
        help="Only what this imported file held: its id (`3`, `#3`) or a path it was "
        "imported from (`tunelog sources`).",
        callback=checked(optionvalues.source_ref),
    ),
]
FilterLabel = Annotated[
    str | None,
    typer.Option(
        "--label",
        help="Only what the files imported with this --label held.",
        callback=checked(functools.partial(optionvalues.not_empty, name="--label")),
    ),
]
FilterTarget = Annotated[
    str | None,
    typer.Option(
        "--target",
        help="Only records whose target string is exactly this one (spaces around it aside).",
        callback=checked(functools.partial(optionvalues.not_empty, name="--target")),
    ),
]


# `export --top-k` and `export-metaschedule --top-k` (optionvalues.top_k is the API's check).
TopKOption = Annotated[
    int,
    typer.Option(
        "--top-k",
        min=1,
        metavar="K",
        help="Keep the K best distinct configs per slot (traces per workload for MetaSchedule).",
    ),
]

SortOption = Annotated[
    str | None,
    typer.Option(
        "--sort",
        metavar="KEY",
        help="latency (slowest first), gflops (least efficient first) or trials (fewest first).",
    ),
]


LayerArgument = Annotated[
    str,
    typer.Argument(
        metavar="LAYER",
        help="The layer: its shapes as `tunelog workloads` shows them, or its layer_key "
        "(workloads --json); a unique part of either is enough.",
    ),
]


# The filter options, in the order every command's help lists them; their names are the
# fields of `Filters`.
FILTER_OPTIONS: dict[str, Any] = {
    "target_key": FilterTargetKey,
    "model": FilterModel,
    "template": FilterTemplate,
    "task": FilterTask,
    "for_target": FilterForTarget,
    "source": FilterSource,
    "label": FilterLabel,
    "target": FilterTarget,
}
# What a command decorated with `filter_options` declares its `filters` parameter as (typer
# never sees it; the decorator always passes the options' Filters).
NO_FILTERS = Filters()
# Commands about one layer's trials, where no target string is answered for.
LAYER_FILTERS = ("target_key", "model", "template", "task", "source", "label")
NETWORK_FILTERS = ("target_key", "model", "for_target")


def filter_options(*names: str) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """A command's `filters: Filters` parameter, given as the filter options `names` (default:
    all of them) in its place: typer sees the options, the command gets one `Filters`."""
    chosen = names or tuple(FILTER_OPTIONS)

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(command, eval_str=True)
        params = list(signature.parameters.values())
        at = [p.name for p in params].index("filters")
        options = [
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=FILTER_OPTIONS[name]
            )
            for name in chosen
        ]
        # Keyword-only: typer passes every parameter by name.
        rest = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
        listed = [*rest[:at], *options, *rest[at + 1 :]]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> R:
            given = {name: kwargs.pop(name) for name in chosen}
            return command(filters=Filters(**given), **kwargs)

        wrapper.__signature__ = signature.replace(parameters=listed)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in listed}
        return wrapper

    return decorate
