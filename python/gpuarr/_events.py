"""Timing events: ``gpuarr.Event`` marks a point in a device's queue, as
``torch.cuda.Event`` does on a CUDA stream (docs/DESIGN.md, "Events").

A recorded event completes when the device has done the work queued before it, and
its timestamp is taken then, by the device's side: the CUDA runtime on a GPU, the
worker thread of a simulated GPU when it reaches the event, the host at once on the
CPU (whose work is done when each call returns). So ``start.elapsed_time(end)`` is the
time the device spent between the two records, not the time the host took to queue
the work."""
from . import _core

__all__ = ["Event", "synchronize"]

_CLOCKS = ("measured", "modeled")


class Event:
    """Event(enable_timing=True)

    A point in a device's queue. ``record(device=None)`` places it after the work
    queued on ``device`` so far (the default device when None); ``query()`` says
    whether that work is done without waiting; ``synchronize()`` waits for it; and
    ``start.elapsed_time(end)`` gives the milliseconds between two completed events
    of one device, measured by the device's clock::

        start, end = gpuarr.Event(), gpuarr.Event()
        start.record(gpuarr.gpu(0))
        y = x @ x
        end.record(gpuarr.gpu(0))
        end.synchronize()
        print(start.elapsed_time(end), "ms (measured)")
    """

    __slots__ = ("_handle", "_device", "_enable_timing")

    def __init__(self, enable_timing=True):
        self._enable_timing = bool(enable_timing)
        self._handle = None
        self._device = None

    @property
    def device(self):
        """The device of the last record, or None before the first."""
        return self._device

    def record(self, device=None):
        """record(device=None)

        Place the event after the work queued on ``device`` so far (the default
        device when None). Recording again moves it to the new point."""
        if device is None:
            device = _core.get_default_device()
        elif not isinstance(device, _core.Device):
            device = _core.Device(device)
        self._handle = _core._event_record(device)
        self._device = device

    def query(self):
        """query()

        True when the work queued before the event is done (True before the first
        record, as in CUDA); never waits."""
        if self._handle is None:
            return True
        return _core._event_query(self._handle)

    def synchronize(self):
        """synchronize()

        Wait on the host until the work queued before the event is done (a host
        wait, counted in ``gpuarr.transfer_stats()``'s syncs on a GPU)."""
        if self._handle is not None:
            _core._event_synchronize(self._handle)

    def elapsed_time(self, end, clock="measured"):
        """elapsed_time(end, clock="measured")

        Milliseconds from this event to ``end``, both recorded on one device and
        completed. ``clock="measured"`` (the default) is the device's measured time;
        ``clock="modeled"`` is the time a performance model of a real GPU predicts
        (``gpuarr.device_model``), only on GPUs that carry one
        (``GPUARR_SIMULATE_GPUS=2:T4``), else ValueError; it is known from the
        records on, without waiting."""
        if not isinstance(end, Event):
            raise TypeError(f"elapsed_time needs another gpuarr.Event, not "
                            f"{type(end).__name__}")
        if clock not in _CLOCKS:
            raise ValueError(f"elapsed_time: clock must be 'measured' or 'modeled', "
                             f"not {clock!r}")
        if not (self._enable_timing and end._enable_timing):
            raise ValueError("elapsed_time needs two events made with "
                             "Event(enable_timing=True)")
        for name, ev in (("start", self), ("end", end)):
            if ev._handle is None:
                raise ValueError(f"elapsed_time: the {name} event was never recorded; "
                                 f"call its record() first")
        if clock == "modeled":
            return _core._event_elapsed_modeled(self._handle, end._handle)
        return _core._event_elapsed(self._handle, end._handle)

    def __repr__(self):
        """__repr__()

        The event and where it was last recorded."""
        where = "not recorded" if self._device is None else f"recorded on {self._device}"
        return f"gpuarr.Event({where})"


def synchronize(device=None):
    """synchronize(device=None)

    Wait until all work queued on ``device`` (every GPU when None) is done; given a
    ``gpuarr.Event``, wait only for the work queued before it."""
    if isinstance(device, Event):
        device.synchronize()
        return
    _core.synchronize(device)


