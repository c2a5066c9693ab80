"""``with gpuarr.profile() as prof:``: what each device queue and the host did, when
(docs/DESIGN.md, "Profiler").

The core records every operation at the point where it hands it to a backend (the
same points that ``gpuarr.testing.count_work`` counts, on every device kind) and
every host wait for a device. A GPU operation's start and end are taken in the
device's queue by two timing events (``gpuarr.Event``'s machinery), so they are the
device's times, not the host's; the host's side of it (queuing the call) is a
"launch" on the host's track. On the CPU the call is the operation. All times are
measured wall time on the host's monotonic clock, in microseconds from the start of
the profile. Copies between devices are events of their own (``kind`` "copy"):
their direction, bytes, source and destination, on the queue that ran them (a
GPU's compute queue, or its copy queue for a non-blocking copy to the host). On GPUs that carry a performance model (``GPUARR_SIMULATE_GPUS=2:T4``,
``gpuarr.device_model``) each record also has ``modeled_start_us`` /
``modeled_end_us``: the same interval on the modeled clocks, in microseconds from the
host's modeled time at the start of the profile (None without a model). The two are
never mixed: every column, axis and trace event says which clock it shows."""
import dataclasses
import json

from . import _core
from ._perf_model import device_model

__all__ = ["profile", "Profile", "ProfileEvent"]

@dataclasses.dataclass(frozen=True)
class ProfileEvent:
    """One interval of a profile: ``device`` (a gpuarr Device; for a host record, the
    device it concerns), ``queue`` ("compute" for a device's queue, "copy" for its
    copy queue, "host"), ``kind`` ("op": an operation on a device's queue; "copy": a
    copy between two devices on the GPU's queue that ran it; "launch": the host
    queuing a GPU operation or copy; "wait": the host waiting for a device, ``name``
    says why), ``name`` (for a copy its direction: "host-to-device",
    "device-to-host", "device-to-device"), ``src`` / ``dst`` (a copy's source and
    destination devices; None otherwise),
    ``start_us`` / ``end_us`` (measured, from the profile's start),
    ``modeled_start_us`` / ``modeled_end_us`` (the modeled clocks, from the host's
    modeled time at the profile's start; None without a performance model),
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
    src: object = None
    dst: object = None


# the core's ga_prof_copy_kind (csrc/runtime/ga_profiler.h), by value
_COPY_NAMES = {1: "host-to-device", 2: "device-to-host", 3: "device-to-device"}


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
        self.model = None
        self._t0 = None
        self._t0_modeled = 0.0

    @property
    def modeled_label(self):
        """'modeled <GPU>' (the model the GPUs carry), or None without one."""
        return None if self.model is None else f"modeled {self.model.name}"

    def _start(self):
        _core._prof_start()
        self.model = device_model(_core.gpu(0)) if _core.num_gpus() else None
        self._t0_modeled = _core._model_host_now()
        self._t0 = _core._prof_clock()

    def _stop(self):
        raw = _core._prof_stop()
        t0, m0 = self._t0, self._t0_modeled
        us = lambda ns: (ns - t0) / 1e3  # noqa: E731
        mus = lambda s: None if s is None else (s - m0) * 1e6  # noqa: E731
        out = []
        for (dev, is_wait, _kind, name, dtype, shape, nbytes,
             hs, he, ds, de, (ms, me, mh, mhe), copy) in raw:
            dtname = None if dtype is None else str(dtype)
            if copy is not None:
                out += self._copy_events(dev, name, nbytes, hs, he, ds, de, mus(ms),
                                         mus(me), mus(mh), mus(mhe), copy, us)
                continue
            if is_wait:
                out.append(ProfileEvent(dev, "host", "wait", name, us(hs), us(he),
                                        mus(ms), mus(me), None, None, nbytes))
                continue
            out.append(ProfileEvent(dev, "compute", "op", name, us(ds), us(de),
                                    mus(ms), mus(me), dtname, shape, nbytes))
            if dev.type == "gpu":
                out.append(ProfileEvent(dev, "host", "launch", name, us(hs), us(he),
                                        mus(mh), mus(mh), dtname, shape, nbytes))
        out.sort(key=lambda e: (e.start_us, e.end_us))
        self.events = out

    @staticmethod
    def _copy_events(dev, name, nbytes, hs, he, ds, de, ms, me, mh, mhe, copy, us):
        """A copy's record: the copy on its GPU's queue, and on the host either the
        wait for it (a blocking copy to the host; `name` is the wait's cause) or
        the launch that queued it."""
        direction, src, dst, host_waits, on_copy_queue = copy
        cname = _COPY_NAMES[direction]
        queue = "copy" if on_copy_queue else "compute"
        evs = [ProfileEvent(dev, queue, "copy", cname, us(ds), us(de), ms, me,
                            None, None, nbytes, src, dst)]
        if host_waits:
            evs.append(ProfileEvent(dev, "host", "wait", name, us(hs), us(he), mh, mhe,
                                    None, None, nbytes, src, dst))
        else:
            evs.append(ProfileEvent(dev, "host", "launch", cname, us(hs), us(he), mh,
                                    mh, None, None, nbytes, src, dst))
        return evs

    def table(self):
        """table()

        A text summary by track and operation: count, total and mean measured time
        (operations and copies on device queues, a copy named by its direction and
        devices with the bytes it moved, and host waits by cause), and beside them the
        modeled time when the GPUs carry a model (columns "modeled <GPU>"; "-" for
        records without one, such as the CPU's)."""
        groups = {}
        for e in self.events:
            if e.kind == "launch":
                continue
            name = e.name
            if e.kind == "copy":
                short = {"host-to-device": "h2d", "device-to-host": "d2h",
                         "device-to-device": "d2d"}[e.name]
                name = f"{short} {e.src}->{e.dst}"
            key = (_track(e), e.kind, name)
            n, tot, mtot, nbytes = groups.get(key, (0, 0.0, None, 0))
            if e.modeled_start_us is not None:
                mtot = (mtot or 0.0) + (e.modeled_end_us - e.modeled_start_us)
            if e.kind == "copy" and e.bytes is not None:
                nbytes += e.bytes
            groups[key] = (n + 1, tot + (e.end_us - e.start_us), mtot, nbytes)
        label = self.modeled_label
        head = (f"{'track':<20} {'kind':<5} {'name':<22} {'copied MB':>10} "
                f"{'count':>6} {'total ms (measured)':>20} {'mean us (measured)':>19}")
        if label:
            head += f" {f'total ms ({label})':>24} {f'mean us ({label})':>23}"
        lines = [head]
        for (track, kind, name), (n, tot, mtot, nbytes) in sorted(
                groups.items(), key=lambda kv: -kv[1][1]):
            copied = f"{nbytes / 1e6:.3f}" if kind == "copy" else "-"
            line = (f"{track:<20} {kind:<5} {name[:22]:<22} {copied:>10} {n:>6} "
                    f"{tot / 1e3:>20.3f} {tot / n:>19.1f}")
            if label:
                line += (f" {'-':>24} {'-':>23}" if mtot is None else
                         f" {mtot / 1e3:>24.3f} {mtot / n:>23.1f}")
            lines.append(line)
        return "\n".join(lines)

    def chrome_trace(self):
        """chrome_trace()

        The profile as a Trace Event format dict (what ``export_chrome_trace``
        writes): one "X" event per interval, one track (tid) per device queue and
        one for the host (a device's copy queue is a track of its own); times in
        microseconds; a copy's args name its source and destination. Process 0 holds the measured
        times; with a GPU model, process 1 ("modeled <GPU>") the same intervals on
        the modeled clocks. Each event's args say its clock."""
        tracks = {}
        for e in self.events:
            tracks.setdefault(_track(e), len(tracks))
        label = self.modeled_label
        pids = [(0, "measured")] + ([(1, label)] if label else [])
        trace = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                  "args": {"name": clock}} for pid, clock in pids]
        trace += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                   "args": {"name": name}}
                  for pid, _ in pids for name, tid in tracks.items()]
        xs = []
        for e in self.events:
            args = {"device": str(e.device), "queue": e.queue}
            if e.src is not None:
                args["src"] = str(e.src)
                args["dst"] = str(e.dst)
            if e.dtype is not None:
                args["dtype"] = e.dtype
            if e.shape is not None:
                args["shape"] = list(e.shape)
            if e.bytes is not None:
                args["bytes"] = e.bytes
            times = [(0, "measured", e.start_us, e.end_us)]
            if label and e.modeled_start_us is not None:
                times.append((1, label, e.modeled_start_us, e.modeled_end_us))
            for pid, clock, start, end in times:
                xs.append({"name": e.name, "cat": e.kind, "ph": "X", "pid": pid,
                           "tid": tracks[_track(e)], "ts": start,
                           "dur": max(end - start, 0.0),
                           "args": dict(args, clock=clock)})
        xs.sort(key=lambda x: (x["ts"], x["dur"]))
        return {"traceEvents": trace + xs, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path):
        """export_chrome_trace(path)

        Write the profile in the Trace Event format, which Perfetto
        (ui.perfetto.dev) and chrome://tracing open."""
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)

    def plot(self, ax=None, clock="measured"):
        """plot(ax=None, clock="measured")

        Draw the timeline with matplotlib: one row per device queue (a GPU's copy
        queue beside its compute queue) and one for the host, copies in green, host
        waits in red, on the measured clock or (``clock="modeled"``, GPUs
        with a model only) the modeled one; the x axis says which. Returns the
        figure."""
        import matplotlib.pyplot as plt  # optional: only plot() needs it
        if clock not in ("measured", "modeled"):
            raise ValueError(f"plot: clock must be 'measured' or 'modeled', not "
                             f"{clock!r}")
        modeled = clock == "modeled"
        if modeled and self.modeled_label is None:
            raise ValueError("plot(clock='modeled'): the profiled GPUs carry no "
                             "performance model (GPUARR_SIMULATE_GPUS=2:T4); use "
                             "clock='measured'")
        events = [e for e in self.events
                  if not modeled or e.modeled_start_us is not None]
        tracks = [t for t in self._tracks() if any(_track(e) == t for e in events)]
        if ax is None:
            fig, ax = plt.subplots(figsize=(10, 1 + 0.6 * max(1, len(tracks))))
        else:
            fig = ax.figure
        colors = {"op": "tab:blue", "copy": "tab:green", "launch": "tab:gray",
                  "wait": "tab:red"}
        for row, name in enumerate(tracks):
            for e in events:
                if _track(e) == name:
                    start, end = ((e.modeled_start_us, e.modeled_end_us) if modeled
                                  else (e.start_us, e.end_us))
                    ax.broken_barh([(start, max(end - start, 0.5))],
                                   (row - 0.4, 0.8), color=colors[e.kind])
        ax.set_yticks(range(len(tracks)))
        ax.set_yticklabels(tracks)
        ax.invert_yaxis()
        ax.set_xlabel(f"time (us, {self.modeled_label if modeled else 'measured'})")
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
