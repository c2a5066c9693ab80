"""``with gpuarr.profile() as prof:``: what each device queue and the host did, when
(docs/DESIGN.md, "Profiler").

The core records every operation at the point where it hands it to a backend (the
same points that ``gpuarr.testing.count_work`` counts, on every device kind) and
every host wait for a device. A GPU operation's start and end are taken in the
device's queue by two timing events (``gpuarr.Event``'s machinery), so they are the
device's times, not the host's; the host's side of it (queuing the call) is a
"launch" on the host's track. On the CPU the call is the operation. All times are
measured wall time on the host's monotonic clock, in microseconds from the start of
the profile; ``modeled_start_us`` / ``modeled_end_us`` are None (no device carries a
performance model yet)."""
import dataclasses
import json

from . import _core

__all__ = ["profile", "Profile", "ProfileEvent"]

@dataclasses.dataclass(frozen=True)
class ProfileEvent:
    """One interval of a profile: ``device`` (a gpuarr Device; for a host record, the
    device it concerns), ``queue`` ("compute" for a device's queue, "host"), ``kind``
    ("op": an operation on a device's queue; "launch": the host queuing a GPU
    operation; "wait": the host waiting for a device, ``name`` says why), ``name``,
    ``start_us`` / ``end_us`` (measured, from the profile's start),
    ``modeled_start_us`` / ``modeled_end_us`` (None without a performance model),
    ``dtype``, ``shape`` and ``bytes`` (None where unknown)."""

    device: object
    queue: str
    kind: str
    name: str
    start_us: float
    end_us: float
    modeled_start_us: object = None
    modeled_end_us: object = None
    dtype: object = None
    shape: object = None
    bytes: object = None


def _track(ev):
    return "host" if ev.queue == "host" else f"{ev.device} {ev.queue}"


class Profile:
    """Profile()

    What ``gpuarr.profile()`` yields; its records are filled when the block ends:
    ``events`` (a list of ProfileEvent sorted by start), ``table()``,
    ``export_chrome_trace(path)`` and ``plot()``."""

    def __init__(self):
        """__init__()"""
        self.events = []
        self._t0 = None

    def _start(self):
        _core._prof_start()
        self._t0 = _core._prof_clock()

    def _stop(self):
        raw = _core._prof_stop()
        t0 = self._t0
        us = lambda ns: (ns - t0) / 1e3  # noqa: E731
        out = []
        for (dev, is_wait, _kind, name, dtype, shape, nbytes,
             hs, he, ds, de) in raw:
            dtname = None if dtype is None else str(dtype)
            if is_wait:
                out.append(ProfileEvent(dev, "host", "wait", name, us(hs), us(he),
                                        None, None, None, None, nbytes))
                continue
            out.append(ProfileEvent(dev, "compute", "op", name, us(ds), us(de),
                                    None, None, dtname, shape, nbytes))
            if dev.type == "gpu":
                out.append(ProfileEvent(dev, "host", "launch", name, us(hs), us(he),
                                        None, None, dtname, shape, nbytes))
        out.sort(key=lambda e: (e.start_us, e.end_us))
        self.events = out

    def table(self):
        """table()

        A text summary by track and operation: count, total and mean measured time
        (operations on device queues, and host waits by cause)."""
        groups = {}
        for e in self.events:
            if e.kind == "launch":
                continue
            key = (_track(e), e.kind, e.name)
            n, tot = groups.get(key, (0, 0.0))
            groups[key] = (n + 1, tot + (e.end_us - e.start_us))
        lines = [f"{'track':<20} {'kind':<5} {'name':<22} {'count':>6} "
                 f"{'total ms (measured)':>20} {'mean us (measured)':>19}"]
        for (track, kind, name), (n, tot) in sorted(groups.items(),
                                                    key=lambda kv: -kv[1][1]):
            lines.append(f"{track:<20} {kind:<5} {name[:22]:<22} {n:>6} "
                         f"{tot / 1e3:>20.3f} {tot / n:>19.1f}")
        return "\n".join(lines)

    def chrome_trace(self):
        """chrome_trace()

        The profile as a Trace Event format dict (what ``export_chrome_trace``
        writes): one "X" event per interval, one track (tid) per device queue and
        one for the host, all in process 0; times in microseconds, measured."""
        tracks = {}
        for e in self.events:
            tracks.setdefault(_track(e), len(tracks))
        trace = [{"name": "thread_name", "ph": "M", "pid": 0, "tid": tid,
                  "args": {"name": name}} for name, tid in tracks.items()]
        for e in self.events:
            args = {"device": str(e.device), "queue": e.queue, "clock": "measured"}
            if e.dtype is not None:
                args["dtype"] = e.dtype
            if e.shape is not None:
                args["shape"] = list(e.shape)
            if e.bytes is not None:
                args["bytes"] = e.bytes
            trace.append({"name": e.name, "cat": e.kind, "ph": "X", "pid": 0,
                          "tid": tracks[_track(e)], "ts": e.start_us,
                          "dur": max(e.end_us - e.start_us, 0.0), "args": args})
        return {"traceEvents": trace, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path):
        """export_chrome_trace(path)

        Write the profile in the Trace Event format, which Perfetto
        (ui.perfetto.dev) and chrome://tracing open."""
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)

    def plot(self, ax=None):
        """plot(ax=None)

        Draw the timeline with matplotlib: one row per device queue and one for the
        host, host waits in red. Returns the figure."""
        import matplotlib.pyplot as plt
        if ax is None:
            fig, ax = plt.subplots(figsize=(10, 1 + 0.6 * max(1, len(self._tracks()))))
        else:
            fig = ax.figure
        tracks = self._tracks()
        colors = {"op": "tab:blue", "launch": "tab:gray", "wait": "tab:red"}
        for row, name in enumerate(tracks):
            for e in self.events:
                if _track(e) == name:
                    ax.broken_barh([(e.start_us, max(e.end_us - e.start_us, 0.5))],
                                   (row - 0.4, 0.8), color=colors[e.kind])
        ax.set_yticks(range(len(tracks)))
        ax.set_yticklabels(tracks)
        ax.invert_yaxis()
        ax.set_xlabel("time (us, measured)")
        return fig

    def _tracks(self):
        seen = {}
        for e in self.events:
            seen.setdefault(_track(e), None)
        return sorted(seen, key=lambda t: (t != "host", t))


def profile():
    """profile()

    ``with gpuarr.profile() as prof:`` records, per device queue and for the host,
    every operation and host wait in the block; afterwards ``prof.events``,
    ``prof.table()``, ``prof.export_chrome_trace(path)`` and ``prof.plot()`` show
    them. Starting waits for the GPUs once (to align their clocks with the host's),
    uncounted; profiles do not nest."""
    return _Recording()


class _Recording:
    """The context manager behind profile()."""

    def __init__(self):
        self._prof = Profile()

    def __enter__(self):
        self._prof._start()
        return self._prof

    def __exit__(self, *exc):
        self._prof._stop()
        return False
