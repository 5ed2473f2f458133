import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def gen():
    g = torch.Generator()
    g.manual_seed(1234)
    return g


# The slow tier: every test that runs torch.compile, opcheck or torch's
# OpInfo samples, or starts a Python of its own (the drop-in examples, the
# quick benchmarks, the CPU-ISA routes), and the sweeps whose cases took a
# second or more together on a 2-core machine: 188 of 3910 tests and most
# of the suite's time there (2026-11-30). Left out unless --slow is given
# or GPUREDUCE_TEST_SLOW=1, as PyTorch's own slow tests are; CI
# (.ci/run) and the GPU runs (tools/device_steps.sh) take them.
#
# Tests left out (slow ones without --slow, CUDA ones without a GPU) are
# deselected rather than skipped: on the 2-core machine the 4345 skipped
# items' reports cost the fast tier 18 s of its 99 (2026-12-02). The
# summary says what was left out and why.
def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (CI does)")


_LEFT_OUT = {}


def _run_slow(config):
    return config.getoption("--slow") or os.environ.get("GPUREDUCE_TEST_SLOW") == "1"


def pytest_collection_modifyitems(config, items):
    run_slow = _run_slow(config)
    has_cuda = torch.cuda.is_available()
    kept, left_out = [], []
    counts = {"cuda": 0, "slow": 0}
    for item in items:
        if "cuda" in item.keywords and not has_cuda:
            counts["cuda"] += 1
            left_out.append(item)
        elif "slow" in item.keywords and not run_slow:
            counts["slow"] += 1
            left_out.append(item)
        else:
            kept.append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept
    _LEFT_OUT.update(counts)


_REASONS = {"cuda": "CUDA tests (no CUDA GPU here)", "slow": "tests marked slow (--slow runs them)"}


def pytest_terminal_summary(terminalreporter, config):
    # Under pytest-xdist the workers collect, and the controller, which
    # prints this, has no counts: it names what was left out.
    run_slow = _run_slow(config)
    for key in [k for k, on in (("cuda", not torch.cuda.is_available()), ("slow", not run_slow)) if on]:
        n = _LEFT_OUT.get(key)
        terminalreporter.write_line(f"left out: {n if n else 'the'} {_REASONS[key]}")
