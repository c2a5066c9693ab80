"""Read the leak and sanitizer reports of a CI stage and fail on those about gpuarr.

    python .ci/lsan_filter.py [--asan LOG_DIR] [--live LIVE_DIR]

--asan: AddressSanitizer/LeakSanitizer/UBSan logs. Every memory error or undefined
behaviour fails. A leak fails when a frame of its allocation stack lies in gpuarr's own
code (the _core module or a CUDA plugin): CPython and NumPy keep some allocations until
exit by design, and LeakSanitizer's own suppressions cannot say "only if none of these
frames is ours". A log's file name names the test that started its process
(tests/conftest.py), or only the pid for the pytest process itself.

--live: gpuarr's own reports of array storages still alive after the interpreter
finished (GPUARR_LEAK_REPORT_DIR, csrc/runtime/ga_live.h), each storage with the test that made
it. Any such report fails: LeakSanitizer sees these arrays only when timing lets it (a
thread pool's frame or an uncollected object in memory it does not scan holds them).
"""
import argparse
import pathlib
import re
import sys

# gpuarr/_core, not any _core: SciPy's HiGHS module is also named _core (its pybind11
# keeps function records until exit)
OURS = re.compile(r"gpuarr/_core\.cpython|libgpuarr_cuda|/csrc/")


def sanitizer_reports(log_dir):
    bad = []
    logs = sorted(pathlib.Path(log_dir).glob("*"))
    for log in logs:
        text = log.read_text(errors="replace")
        # "CHECK failed": the runtime itself gave up (an interceptor with no real
        # function behind it), and the process may still have exited with 0
        if ("ERROR: AddressSanitizer" in text or "runtime error:" in text
                or "CHECK failed" in text):
            bad.append(f"{log.name}: memory error, undefined behaviour or a sanitizer "
                       f"failure:\n{text[:4000]}")
            continue
        for block in re.split(r"\n(?=(?:Direct|Indirect) leak of )", text):
            if not block.startswith(("Direct leak", "Indirect leak")):
                continue
            stack = block.split("\n\n")[0]
            if OURS.search(stack):
                bad.append(f"{log.name}: leak in gpuarr:\n{stack}")
    print(f"sanitizer logs read: {len(logs)}; reports about gpuarr: {len(bad)}")
    return bad


def live_reports(live_dir):
    reports = sorted(pathlib.Path(live_dir).glob("live.*"))
    print(f"processes with arrays alive after exit: {len(reports)}")
    return [f"{r.name}: {r.read_text(errors='replace')[:4000]}" for r in reports]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--asan", metavar="LOG_DIR")
    ap.add_argument("--live", metavar="LIVE_DIR")
    args = ap.parse_args(argv)
    bad = []
    if args.asan:
        bad += sanitizer_reports(args.asan)
    if args.live:
        bad += live_reports(args.live)
    for b in bad[:20]:
        print(b, end="\n\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
