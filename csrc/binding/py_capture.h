/* py_capture.h: the host-read refusal of gpuarr.capture (python/gpuarr/_capture.py).
 *
 * A captured step is meant to be replayed without Python between its operations, so
 * nothing inside it may depend on an array's value on the host. While a thread runs a
 * captured function (between _core._capture_enter and _core._capture_exit), every door
 * through which host code reads values (item(), bool(), float(), int(), numpy(),
 * __array__, the buffer protocol, __dlpack__, _data_ptr) refuses with a message that
 * names the door and the captured function. */
#ifndef PY_CAPTURE_H
#define PY_CAPTURE_H

/* 0 outside a capture; -1 with RuntimeError set (naming `what`) inside one. */
int pyga_capture_host_read(const char *what);

#endif
