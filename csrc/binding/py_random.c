/* py_random.c: the private entry points behind gpuarr.random (python/gpuarr/random.py).
 * The numbers are made on the target device by its backend (ga_philox.h); the state
 * is one (seed, counter) pair for the process (ga_creation.h). */
#include "py_common.h"

#include "ga_ops.h" /* GA_RAND_DISTS */
#include "ga_creation.h"

/* _random(dist, shape, dtype, device, a, b, lo, hi) -> Array */
static PyObject *
fn_random(PyObject *m, PyObject *args)
{
    (void)m;
    int dist, dtype = -1;
    pyga_shape shape;
    ga_device dev;
    double a, b;
    long long lo, hi;
    if (!PyArg_ParseTuple(args, "iO&O&O&ddLL:_random", &dist, pyga_shape_converter, &shape,
                          pyga_dtype_converter, &dtype, pyga_device_converter, &dev, &a,
                          &b, &lo, &hi)) {
        return NULL;
    }
    if (dist < GA_RAND_UNIFORM || dist > GA_RAND_INTEGERS || dtype < 0) {
        PyErr_SetString(PyExc_ValueError, "_random: bad distribution or missing dtype");
        return NULL;
    }
    ga_array out;
    int st = ga_random(&out, dev, (ga_dtype)dtype, dist, shape.ndim, shape.dims, a, b, lo,
                       hi);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

static PyObject *
fn_get_state(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    uint64_t seed, counter;
    ga_random_get_state(&seed, &counter);
    return Py_BuildValue("(KK)", (unsigned long long)seed, (unsigned long long)counter);
}

static PyObject *
fn_set_state(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *so, *co;
    if (!PyArg_ParseTuple(args, "OO:_random_set_state", &so, &co)) {
        return NULL;
    }
    unsigned long long seed = PyLong_AsUnsignedLongLong(so);
    if (seed == (unsigned long long)-1 && PyErr_Occurred()) {
        return NULL;
    }
    unsigned long long counter = PyLong_AsUnsignedLongLong(co);
    if (counter == (unsigned long long)-1 && PyErr_Occurred()) {
        return NULL;
    }
    ga_random_set_state(seed, counter);
    Py_RETURN_NONE;
}

PyMethodDef pyga_random_functions[] = {
    {"_random", fn_random, METH_VARARGS,
     "_random(dist, shape, dtype, device, a, b, lo, hi): random numbers made on device."},
    {"_random_get_state", fn_get_state, METH_NOARGS, "(seed, counter) of the generator."},
    {"_random_set_state", fn_set_state, METH_VARARGS,
     "_random_set_state(seed, counter): restore the generator."},
    {NULL},
};
