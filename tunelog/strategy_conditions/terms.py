"""The terms the strategy conditions are written in: layout, groups, kernel shape, dtypes.

Pure data shared by `gpu` and `cpu` (each term one of relay's recurring tests, written once).
"""

from __future__ import annotations

from tunelog.conditions import Cond, Not, all_of, any_of, test

NEVER = any_of()
G1 = test("groups", "==", 1)
DEPTHWISE = test("depthwise", "==", True)
GROUPED = all_of(test("groups", "!=", 1), Not(DEPTHWISE))  # relay's group_conv2d branch
NCHW = test("layout", "==", "NCHW")
NHWC = test("layout", "==", "NHWC")
KERNEL4 = test("kernel_rank", "==", 4)
KERNEL5 = test("kernel_rank", "==", 5)
STRIDE1 = all_of(test("stride_h", "==", 1), test("stride_w", "==", 1))
DILATION1 = all_of(test("dilation_h", "==", 1), test("dilation_w", "==", 1))
INT8 = ("int8", "uint8")
FLOATS = ("float16", "float32", "float64", "bfloat16")  # `"float" in dtype`
BOTH_INT8 = all_of(test("dtype", "in", INT8), test("kernel_dtype", "in", INT8))
# relay's conv2d_NCHWc / depthwise_conv2d_NCHWc / dense_pack operators exist only after
# alter_op_layout, whose workloads are packed; a plain-layout workload is the conv2d's.
PACKED = Not(test("layout", "in", ("NCHW", "NHWC", "HWCN", "NCW", "NWC", "NCDHW", "NDHWC")))
# kernels 3x3 to 7x7, square, stride 1, dilation 1 (cuda judge_winograd, adreno image2d)
WINOGRAD_3_TO_7 = all_of(
    test("kh", ">", 2),
    test("kh", "<", 8),
    test("kw", ">", 2),
    test("kw", "<", 8),
    test("square_kernel", "==", True),
    STRIDE1,
    DILATION1,
)
WINOGRAD_3X3 = all_of(test("kh", "==", 3), test("kw", "==", 3), STRIDE1, DILATION1)


def divisible(*pairs: tuple[str, int]) -> Cond:
    """Every fact divides by its number (relay's channel multiples of 4 and the like)."""
    return all_of(*(test(fact, "divides", n) for fact, n in pairs))
