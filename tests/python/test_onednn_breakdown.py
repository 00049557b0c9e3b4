"""scripts/bench/onednn_breakdown.py: oneDNN's verbose lines of every format (2.x, 3.x, 3.5's v1) summed by
primitive and propagation, creation lines, warm-up and other output left out; a failing command or
one without oneDNN is an error, not an empty table."""
import importlib.util
import sys

import pytest

from conftest import script

spec = importlib.util.spec_from_file_location(
    "onednn_breakdown", script("onednn_breakdown.py"))
onednn_breakdown = importlib.util.module_from_spec(spec)
spec.loader.exec_module(onednn_breakdown)

LINES = [
    "dnnl_verbose,info,oneDNN v2.6.3",
    "dnnl_verbose,create:cache_miss,cpu,convolution,jit:avx2,forward_training,src_f32,,alg,mb16,9.5",
    "dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,src_f32,,alg,mb16,1.25",
    "dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,src_f32,,alg,mb16,0.75",
    "dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src_f32,,,16x3,0.5",
    "onednn_verbose,primitive,exec,cpu,convolution,brg:avx2,backward_weights,src,,alg,mb16,2.0",
    "onednn_verbose,v1,info,oneDNN v3.13.3 (commit b38f97eb6f2173513112f15a0481750b8a66e901)",
    "onednn_verbose,v1,primitive,exec,cpu,convolution,brg_conv_fwd:avx512_core,forward_training,"
    "src:f32::blocked:acdb::f0,attr-scratchpad:user,alg:convolution_direct,mb16_ic16oc16,0.5",
    '{"times": [0.08]}',
]


def test_sums_executions_by_primitive_and_propagation():
    assert onednn_breakdown.breakdown(LINES) == {
        ("convolution", "forward_training"): (2.5, 3),
        ("reorder", "undef"): (0.5, 1),
        ("convolution", "backward_weights"): (2.0, 1),
    }


def test_warmup_leaves_out_the_first_steps_of_each_primitive():
    """Two steps: the convolution ran once a step, the reorder twice, so the first step's
    share of each is left out."""
    conv = "dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,src,,alg,mb16,"
    reorder = "dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src,,,16x3,"
    lines = [conv + "9.0", reorder + "5.0", reorder + "0.25", conv + "1.0", reorder + "0.5",
             reorder + "0.25"]
    assert onednn_breakdown.breakdown(lines, steps=2, warmup=1) == {
        ("convolution", "forward_training"): (1.0, 1), ("reorder", "undef"): (0.75, 2)}


def test_by_shape_splits_by_implementation_and_problem():
    conv = "onednn_verbose,exec,cpu,convolution,IMPL,backward_weights,src,,alg,PROBLEM,"
    a = "mb16_ic64oc32_ih8oh8kh3sh1dh0ph1_iw8ow8kw3sw1dw0pw1"
    b = "g2mb16_ic64oc32_ih8oh4kh1sh2dh0ph0_iw8ow4kw1sw2dw0pw0"
    lines = [conv.replace("IMPL", "jit").replace("PROBLEM", a) + "1.5",
             conv.replace("IMPL", "jit").replace("PROBLEM", a) + "0.5",
             conv.replace("IMPL", "brg").replace("PROBLEM", b) + "0.25",
             "onednn_verbose,exec,cpu,matmul,brg,undef,src,,,256x64:64x128:256x128,0.125"]
    assert onednn_breakdown.breakdown(lines, key=onednn_breakdown.by_shape) == {
        ("convolution", "backward_weights", "jit", a): (2.0, 2),
        ("convolution", "backward_weights", "brg", b): (0.25, 1),
        ("matmul", "undef", "brg", "256x64:64x128:256x128"): (0.125, 1)}


def test_flops_of_convolutions_and_matrix_products():
    # 2 x batch x input channels per group x output channels x output pixels x kernel pixels
    assert onednn_breakdown.flops(
        "convolution", "mb16_ic64oc32_ih8oh8kh3sh1dh0ph1_iw8ow8kw3sw1dw0pw1") == \
        2 * 16 * 64 * 32 * 64 * 9
    assert onednn_breakdown.flops(
        "convolution", "g2mb16_ic64oc32_ih8oh4kh1sh2dh0ph0_iw8ow4kw1sw2dw0pw0") == \
        2 * 16 * 32 * 32 * 16
    assert onednn_breakdown.flops("matmul", "256x64:64x128:256x128") == 2 * 256 * 64 * 128
    assert onednn_breakdown.flops("matmul", "3x256x64:3x64x128:3x256x128") == \
        2 * 3 * 256 * 64 * 128
    assert onednn_breakdown.flops("reorder", "16x3") is None


def test_a_command_without_onednn_output_is_an_error(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["onednn_breakdown.py", "--steps", "1", "--",
                                      sys.executable, "-c", "print('hello')"])
    with pytest.raises(SystemExit, match="printed no oneDNN executions"):
        onednn_breakdown.main()
    monkeypatch.setattr(sys, "argv", ["onednn_breakdown.py", "--steps", "1", "--",
                                      sys.executable, "-c", "raise SystemExit(3)"])
    with pytest.raises(SystemExit, match="exited with 3"):
        onednn_breakdown.main()
