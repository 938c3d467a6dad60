"""Options shared by several commands, declared once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from tunelog import optionvalues
from tunelog.cli.running import checked

if TYPE_CHECKING:
    pass


JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")
]


# What each filter means is defined once, in tunelog.filters.
FilterTargetKey = Annotated[
    str | None,
    typer.Option("--target-key", help="Only records whose target has this key (e.g. cuda)."),
]
FilterModel = Annotated[
    str | None, typer.Option(help="Only records whose target has this -model value.")
]
FilterTemplate = Annotated[
    str | None, typer.Option(help="Only this template (task name), e.g. conv2d_nchw.cuda.")
]
FilterTask = Annotated[
    str | None, typer.Option(help="Only templates whose name contains this text.")
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
        help="Only what this imported file held: its id or path (`tunelog sources`).",
        callback=checked(optionvalues.source_id),
    ),
]
FilterLabel = Annotated[
    str | None, typer.Option("--label", help="Only what the files imported with this --label held.")
]
FilterTarget = Annotated[
    str | None,
    typer.Option("--target", help="Only records whose target string is exactly this one."),
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
