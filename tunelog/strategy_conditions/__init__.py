"""When relay's op strategies offer a template: the conditions on the layer, as data.

Pure data, read by `tunelog.strategies.relay_offers` through `tunelog.conditions.holds`.
Written from TVM v0.19.0's `python/tvm/relay/op/strategy/*.py` (tag v0.19.0, commit
c4dc0c29); each entry cites the file and lines of the `if` it transcribes. Nothing is copied.

Where a v0.19 strategy adds a template only under an `if`, the condition is written here, per
strategy key, relay operator and tuning task name (the same keys, operators and names as
`strategy_table.STRATEGIES`). A template with no entry is offered for every layer of its operator.
Facts come from the workload's own arguments (`workloads.layer_facts`), in relay's terms;
`kind` is the target kind read from the keys; `Target(...)` is what only the compile target
knows (-libs, -mattr/-mcpu features, tensor cores), which the log does not hold.

Templates without an entry on purpose: the `*without_weight_transform*` ones (their kernel is
already transformed, tunelog reads no facts from it, and each is a layer of its own), VTA and
bitserial templates (no facts read), and operators with one template per key.

The conditions are written in the terms of `terms`, per key in `gpu` and `cpu`; `CONDITIONS`
gathers them by strategy key.
"""

from __future__ import annotations

from tunelog.conditions import Cond
from tunelog.strategy_conditions.cpu import ARM_CONDITIONS, X86_CONDITIONS
from tunelog.strategy_conditions.gpu import (
    ADRENO_CONDITIONS,
    BIFROST_CONDITIONS,
    CUDA_CONDITIONS,
    INTEL_GRAPHICS_CONDITIONS,
    MALI_CONDITIONS,
    ROCM_CONDITIONS,
)

CONDITIONS: dict[str, dict[str, dict[str, Cond]]] = {
    "cuda": CUDA_CONDITIONS,
    "gpu": CUDA_CONDITIONS,
    "cpu": X86_CONDITIONS,
    "arm_cpu": ARM_CONDITIONS,
    "mali": MALI_CONDITIONS,
    "bifrost": BIFROST_CONDITIONS,
    "rocm": ROCM_CONDITIONS,
    "intel_graphics": INTEL_GRAPHICS_CONDITIONS,
    "adreno": ADRENO_CONDITIONS,
    # hls.py and hexagon.py offer no AutoTVM template: nothing to choose between
}
