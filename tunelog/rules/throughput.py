"""GFLOPS as AutoTVM prints it (tvm-reference §7): a call's FLOPs over the mean cost.

Pure and light: the read commands compute it from the FLOPs stored per workload, without the
argument readers (`workloads`) that count them.
"""

from __future__ import annotations

import math


def gflops(flop: int | None, mean_cost_seconds: float) -> float | None:
    """GFLOPS as AutoTVM prints it: flop / mean cost / 1e9; None when either is unusable."""
    if flop is None:
        return None
    try:
        # Kept on purpose, and precise: float() of an int past ~1.8e308 raises OverflowError and
        # nothing else; a pre-check would have to redo float()'s rounding at that boundary.
        count, cost = float(flop), float(mean_cost_seconds)
    except OverflowError:
        return None
    if not math.isfinite(cost) or cost <= 0:
        return None
    return count / cost / 1e9
