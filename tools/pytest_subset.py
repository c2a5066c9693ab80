"""A pytest plugin: ``-p pytest_subset --subset=N`` keeps every Nth test of each test
file (its first test always), for the suite runs on emulated platforms (Windows under
Wine, Linux aarch64 under qemu), where the whole suite would take hours.

Every test file (so every module of gpuarr that a file tests) still runs, and so do
both device kinds: the kept tests are spread over each file's parametrisations
(devices, dtypes, shapes) rather than taken from its start. The selection depends on
the collected tests only, so a failure reproduces with the same N. The deselected
count is in pytest's summary line.
"""
import os


def pytest_addoption(parser):
    parser.addoption("--subset", type=int, default=1, metavar="N",
                     help="run every Nth test of each file (and each file's first)")


def pytest_collection_modifyitems(config, items):
    n = config.getoption("subset")
    if n <= 1:
        return
    kept, dropped, seen = [], [], {}
    for item in items:
        path = os.fspath(item.path)
        i = seen.get(path, 0)
        seen[path] = i + 1
        (kept if i % n == 0 else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
