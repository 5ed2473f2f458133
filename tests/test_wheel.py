"""gpureduce installs like a package: a wheel built from the checkout, and
one built from the source distribution alone, install into a fresh virtual
environment that has the same torch and nothing else, import there, and sum;
their metadata pins that torch; under another torch the import names both
and says what to do."""
import glob
import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest
import torch

# A fresh environment, a wheel and a full build from the sdist: minutes.
pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = ("import torch, reduce_op; x = torch.arange(10, dtype=torch.float32); "
         "print('SUM', reduce_op.sum(x).item(), reduce_op.__version__, reduce_op.__file__)")


def run(cmd, cwd, env=None, timeout=1800):
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, env=env)
    return proc.returncode, proc.stdout


def fresh_venv(path):
    """A virtual environment that sees this torch (a .pth naming the folders
    torch and its dependencies are installed in) and no gpureduce: the .pth
    files of those folders, such as the one naming the checkout, are not
    read for a folder that a .pth adds."""
    code, out = run([sys.executable, "-m", "venv", "--without-pip", str(path)], cwd=str(path.parent))
    assert code == 0, out
    python = str(path / "bin" / "python")
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=str(path))[1].strip()
    # torch's folder, and the others its dependencies may be in (a
    # --system-site-packages environment has them in the base Python's).
    sites = [os.path.dirname(os.path.dirname(torch.__file__))]
    sites += [p for p in sys.path if p.endswith("site-packages") and p not in sites]
    with open(os.path.join(purelib, "same_torch.pth"), "w") as f:
        f.write("".join(p + "\n" for p in sites))
    # pip itself, from this environment, installs into that one (--python).
    return python, purelib


def install_and_import(wheel, tmp_path, name):
    python, purelib = fresh_venv(tmp_path / name)
    code, out = run([python, "-c", "import reduce_op"], cwd=str(tmp_path))
    assert code != 0 and "No module named 'reduce_op'" in out, f"the fresh environment already had reduce_op:\n{out}"
    # Without --no-deps: pip checks the wheel's torch pin against the torch it sees.
    code, out = run([sys.executable, "-m", "pip", "--python", python, "install", "--no-index", wheel],
                    cwd=str(tmp_path))
    assert code == 0, out
    code, out = run([python, "-c", CHECK], cwd=str(tmp_path))
    assert code == 0, out
    line = [l for l in out.splitlines() if l.startswith("SUM ")][0]
    total, version, where = line.split()[1:]
    assert float(total) == 45.0
    assert where.startswith(purelib), f"imported from {where}, not the fresh environment"
    return python, purelib, version


def wheel_metadata(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read([n for n in names if n.endswith(".dist-info/METADATA")][0]).decode()
    return names, meta


def test_wheel_from_the_checkout(tmp_path):
    code, out = run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w",
                     str(tmp_path / "dist"), ROOT], cwd=str(tmp_path))
    assert code == 0, out
    (wheel,) = glob.glob(str(tmp_path / "dist" / "gpureduce-*.whl"))
    names, meta = wheel_metadata(wheel)
    # The version pip records for the installed torch: 2.13.0+cpu for the
    # CPU wheel; the GPU machine's torch 2.11.0+cu130 records 2.11.0.
    assert f"Requires-Dist: torch=={importlib.metadata.version('torch')}" in meta.splitlines(), meta
    assert "License-Expression: BSD-3-Clause" in meta or "License: BSD-3-Clause" in meta, meta
    assert any(n.startswith("reduce_op/_C") and n.endswith(".so") for n in names)
    assert not any(n.endswith(".link") for n in names), names
    python, purelib, version = install_and_import(wheel, tmp_path, "venv")
    import reduce_op
    assert version == reduce_op.__version__
    assert re.search(rf"^Version: {re.escape(version)}$", meta, re.M), meta

    # Under another torch (its recorded version changed), the import says
    # which torch the wheel was built for, which runs, and what to do.
    info = os.path.join(purelib, "reduce_op", "_build_info.py")
    with open(info) as f:
        text = f.read()
    with open(info, "w") as f:
        f.write(re.sub(r"TORCH_VERSION = .*", "TORCH_VERSION = '2.0.0+cu118'", text).replace(
            "CUDA_VERSION = None", "CUDA_VERSION = '11.8'"))
    code, out = run([python, "-c", "import reduce_op"], cwd=str(tmp_path))
    assert code != 0
    assert "built against torch 2.0.0+cu118 (CUDA 11.8)" in out and f"torch {torch.__version__}" in out, out
    assert "pip wheel --no-build-isolation ." in out, out


def test_sdist_builds_a_wheel(tmp_path):
    pytest.importorskip("build")
    import build  # noqa: F401 - the package, not the checkout's build/ folder
    env = dict(os.environ, MAX_JOBS=os.environ.get("MAX_JOBS", str(os.cpu_count() or 2)))
    code, out = run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path / "dist"), ROOT],
                    cwd=str(tmp_path), env=env, timeout=3600)
    assert code == 0, out[-6000:]
    (sdist,) = glob.glob(str(tmp_path / "dist" / "gpureduce-*.tar.gz"))
    with tarfile.open(sdist) as t:
        members = [m.split("/", 1)[1] for m in t.getnames() if "/" in m]
    tracked = subprocess.run(["git", "ls-files", "csrc", "tests"], cwd=ROOT, stdout=subprocess.PIPE, text=True).stdout.split()
    missing = [p for p in tracked if p not in members]
    assert not missing, f"the sdist lacks {missing[:20]}"
    assert "LICENSE" in members and "setup.py" in members
    assert not any(m.startswith("benchmarks/results") or m.endswith(".so") for m in members)
    # `python -m build` made the wheel from the unpacked sdist: it compiled.
    (wheel,) = glob.glob(str(tmp_path / "dist" / "gpureduce-*.whl"))
    install_and_import(wheel, tmp_path, "venv_sdist")


def test_isolated_build_explains(tmp_path):
    """An isolated build (plain `pip wheel .`, `python -m build`) has
    setuptools and no torch: it stops with the way to build, not "No module
    named 'torch'". Here: a fresh environment that sees only setuptools."""
    import setuptools

    only_setuptools = tmp_path / "only_setuptools"
    only_setuptools.mkdir()
    site = os.path.dirname(os.path.dirname(setuptools.__file__))
    for name in os.listdir(site):
        if name.split("-")[0] in ("setuptools", "pkg_resources", "_distutils_hack", "distutils"):
            os.symlink(os.path.join(site, name), only_setuptools / name)
    code, out = run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], cwd=str(tmp_path))
    assert code == 0, out
    python = str(tmp_path / "venv" / "bin" / "python")
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=str(tmp_path))[1].strip()
    with open(os.path.join(purelib, "only_setuptools.pth"), "w") as f:
        f.write(str(only_setuptools) + "\n")
    code, out = run([python, "-c", "import setuptools, importlib.util as u; print(u.find_spec('torch'))"], cwd=str(tmp_path))
    assert code == 0 and out.strip() == "None", out
    code, out = run([python, os.path.join(ROOT, "setup.py"), "dist_info", "--output-dir", str(tmp_path)], cwd=ROOT)
    assert code != 0
    assert "--no-build-isolation" in out and "No module named 'torch'" not in out, out
