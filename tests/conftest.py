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
# of the suite's time there (2026-11-30). Skipped unless
# --slow is given or GPUREDUCE_TEST_SLOW=1, as PyTorch's own slow tests are;
# CI (.ci/run) and the GPU runs (tools/device_steps.sh) take them.
def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (CI does)")


def pytest_collection_modifyitems(config, items):
    skip_cuda = pytest.mark.skip(reason="needs a CUDA GPU")
    run_slow = config.getoption("--slow") or os.environ.get("GPUREDUCE_TEST_SLOW") == "1"
    skip_slow = pytest.mark.skip(reason="slow: run with --slow")
    for item in items:
        if "cuda" in item.keywords and not torch.cuda.is_available():
            item.add_marker(skip_cuda)
        elif "slow" in item.keywords and not run_slow:
            item.add_marker(skip_slow)
