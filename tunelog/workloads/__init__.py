"""What a tuning task computes: operator family, layer identity, short text and FLOPs.

Pure: task names and argument lists in, strings and numbers out. Arguments come from JSON, so a
log may hold anything there: the readers check the type and size of every value they use and fall
back (fallback key, generic text, `None` FLOPs) on anything else. Nothing catches TypeError or
ValueError, so a bug in this package raises instead of passing for odd arguments.

One module per idea, each with its rule in its docstring:

* `families`: task name -> operator family and what the name says about its arguments;
* `calls`: a TOPI call's argument list read into a normalised convolution or matmul;
* `layerkey`: `layer_key`, one operator call across templates (tvm-reference §5);
* `facts`: `layer_facts`, what relay's strategy conditions test;
* `shorttext`: `short_args` and `call_fields`, text for people;
* `flopcount`: `flops` (tvm-reference §7); `gflops`, re-exported, is `rules.throughput`'s.

The canonical JSON of a fallback key is `rules.workloadidentity.sorted_json`.
"""

from tunelog.rules.throughput import gflops
from tunelog.workloads.facts import layer_facts, layer_key_and_facts
from tunelog.workloads.families import _name_info, operator_family
from tunelog.workloads.flopcount import flops
from tunelog.workloads.layerkey import layer_key
from tunelog.workloads.shorttext import call_fields, short_args

__all__ = [
    "_name_info",
    "call_fields",
    "flops",
    "gflops",
    "layer_facts",
    "layer_key",
    "layer_key_and_facts",
    "operator_family",
    "short_args",
]
