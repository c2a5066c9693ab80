"""Read AddressSanitizer/LeakSanitizer/UBSan logs and fail on reports about gpuarr.

    python .ci/lsan_filter.py LOG_DIR

Every memory error or undefined behaviour fails. A leak fails when a frame of its
allocation stack lies in gpuarr's own code (the _core module or a CUDA plugin):
CPython and NumPy keep some allocations until exit by design, and LeakSanitizer's own
suppressions cannot say "only if none of these frames is ours".
"""
import pathlib
import re
import sys

OURS = re.compile(r"_core\.cpython|libgpuarr_cuda|/csrc/")


def main(log_dir):
    bad = []
    logs = sorted(pathlib.Path(log_dir).glob("*"))
    for log in logs:
        text = log.read_text(errors="replace")
        if "ERROR: AddressSanitizer" in text or "runtime error:" in text:
            bad.append(f"{log.name}: memory error or undefined behaviour:\n{text[:4000]}")
            continue
        for block in re.split(r"\n(?=(?:Direct|Indirect) leak of )", text):
            if not block.startswith(("Direct leak", "Indirect leak")):
                continue
            stack = block.split("\n\n")[0]
            if OURS.search(stack):
                bad.append(f"{log.name}: leak in gpuarr:\n{stack}")
    print(f"sanitizer logs read: {len(logs)}; reports about gpuarr: {len(bad)}")
    for b in bad[:20]:
        print(b, end="\n\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
