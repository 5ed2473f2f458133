"""The random-shape sampler of the benchmark (benchmarks/random_cases.py)
drives a correctness test: a few hundred small cases of fixed seeds on the
CPU, and a larger run on the GPU, each checked against torch.sum (dtype,
shape, integer values exactly, floats against a float64 bound)."""
import os
import sys

import pytest
import torch

import reduce_op
from axes import HAS_CUDA, assert_matches_torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from random_cases import build, sample_cases, sum_args  # noqa: E402


def _check(case, device, gen):
    x = build(case, device, gen)
    kw = sum_args(case)
    ours = reduce_op.sum(x, **kw)
    assert_matches_torch(ours, x, kw.get("dim"), kw.get("keepdim", False), kw.get("dtype"))


def _check_all(cases, device, gen):
    for case in cases:
        try:
            _check(case, device, gen)
        except AssertionError as e:
            raise AssertionError(f"{case.label()}: {e}") from e


@pytest.mark.parametrize("seed", [101, 202, 303])
def test_random_cases_cpu(seed):
    gen = torch.Generator().manual_seed(seed)
    _check_all(sample_cases(120, seed, min_bytes=16, max_bytes=1 << 16), "cpu", gen)


def test_random_cases_cpu_two_threads():
    # Cases large enough for the CPU engine to split them into tasks (its
    # grains are 16K-32K elements), on two threads whatever the process's
    # default (tools/run_tests.sh runs its workers on one).
    gen = torch.Generator().manual_seed(404)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        _check_all(sample_cases(40, 404, min_bytes=1 << 17, max_bytes=1 << 21), "cpu", gen)
    finally:
        torch.set_num_threads(threads)


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_random_cases_cuda(seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    _check_all(sample_cases(250, seed, min_bytes=16, max_bytes=1 << 26), "cuda", gen)
