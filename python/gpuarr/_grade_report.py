"""The teacher's table and CSV of ``python -m gpuarr.grade``.

The table: one line per student, a ``passed/total`` score per exercise (headed by its
number), the student's total, then the first failure of each failing exercise in
words ("exercise 5: timed out after 60 s"). The CSV: one row per student, a column per
exercise named after its file stem holding ``passed/total`` and one beside it
(``<stem>_reason``) with its first failure, the totals, then one column per test and
set of devices (1 passed, 0 failed, empty when the test did not run for that
student), for a gradebook that wants the detail.
"""
import csv
import re


def _short(stem):
    m = re.match(r"ex(\d+)", stem)
    return f"ex{m.group(1)}" if m else stem


def _stems(results):
    stems = []
    for r in results:
        for s in r.exercises:
            if s not in stems:
                stems.append(s)
    return stems


def _test_columns(results):
    cols = []
    for r in results:
        for e in r.exercises.values():
            for col, _, _ in e.tests:
                if col not in cols:
                    cols.append(col)
    return cols


def table(results):
    """The summary as text: a header, then one line per student."""
    stems = _stems(results)
    heads = [_short(s) for s in stems]
    cells = {r.name: [f"{r.exercises[s].passed}/{r.exercises[s].total}"
                      if s in r.exercises else "-" for s in stems] for r in results}
    widths = [max([len(h)] + [len(cells[r.name][i]) for r in results])
              for i, h in enumerate(heads)]
    name_w = max([len("student")] + [len(r.name) for r in results])
    totals = {r.name: f"{r.passed}/{r.total}" for r in results}
    total_w = max([len("total")] + list(map(len, totals.values())))
    head = (f"{'student':<{name_w}}  " + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths))
            + f"  {'total':>{total_w}}  first failure of each failing exercise")
    lines = [head, "-" * len(head)]
    for r in results:
        reasons = "; ".join(e.reason for e in r.exercises.values() if e.reason)
        lines.append(f"{r.name:<{name_w}}  "
                     + " ".join(f"{c:>{w}}" for c, w in zip(cells[r.name], widths))
                     + f"  {totals[r.name]:>{total_w}}  {reasons}".rstrip())
    return "\n".join(lines)


def write_csv(results, path):
    """The CSV for a gradebook (see the module's docstring)."""
    stems = _stems(results)
    cols = _test_columns(results)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", *[c for s in stems for c in (s, f"{s}_reason")],
                    "passed", "total", *cols])
        for r in results:
            per = []
            for s in stems:
                e = r.exercises.get(s)
                per += [f"{e.passed}/{e.total}", e.reason] if e else ["", ""]
            ok = {col: int(passed) for e in r.exercises.values() for col, passed, _ in e.tests}
            w.writerow([r.name, *per, r.passed, r.total, *[ok.get(c, "") for c in cols]])
