/* ga_sort.c: sort and searchsorted in the core (contract in ga_sort.h). */
#include "ga_sort.h"

#include "ga_backend.h"
#include "ga_device.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_view.h"

/* x itself when C-contiguous, else a contiguous copy in `tmp` (released by caller). */
static int
contiguous(const ga_array *x, ga_array *tmp, const ga_array **out)
{
    if (ga_array_is_c_contiguous(x)) {
        *out = x;
        return GA_OK;
    }
    GA_TRY(ga_copy_new(x, tmp));
    *out = tmp;
    return GA_OK;
}

int
ga_sort_last(const ga_array *x, int descending, ga_array *values, ga_array *indices)
{
    if (x->ndim == 0) {
        return ga_error(GA_ERR_VALUE, "sort of a 0-d array: it has no axis to sort along");
    }
    const ga_backend *be;
    GA_TRY(ga_device_backend(ga_array_device(x), &be));
    if (be->sort == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED,
                        "sort/argsort/unique are not implemented on %s devices yet; "
                        "sort on the CPU (x.to(gpuarr.cpu())) or a simulated GPU",
                        be->name);
    }
    ga_array tmp = {0};
    const ga_array *c;
    GA_TRY(contiguous(x, &tmp, &c));
    int st = GA_OK;
    int have_v = 0, have_i = 0;
    if (values != NULL) {
        st = ga_array_empty(values, ga_array_device(x), x->dtype, x->ndim, x->shape);
        have_v = st == GA_OK;
    }
    if (st == GA_OK && indices != NULL) {
        st = ga_array_empty(indices, ga_array_device(x), GA_INT64, x->ndim, x->shape);
        have_i = st == GA_OK;
    }
    int64_t size = ga_array_size(x);
    if (st == GA_OK && size > 0) {
        ga_sort_desc d = {
            .dtype = (int32_t)x->dtype,
            .descending = descending != 0,
            .rows = size / x->shape[x->ndim - 1],
            .n = x->shape[x->ndim - 1],
            .keys = ga_array_data(c),
            .values = have_v ? ga_array_data(values) : NULL,
            .indices = have_i ? (int64_t *)ga_array_data(indices) : NULL,
        };
        ga_device_count_work(ga_array_device(x), GA_WORK_SORT, 1);
        st = ga_backend_status(be, be->sort(ga_device_local(ga_array_device(x)), &d));
        if (st == GA_OK && have_v) {
            ga_fault_flow(values, x);
        }
        if (st == GA_OK && have_i) {
            ga_fault_flow(indices, x);
        }
    }
    if (st == GA_OK && size == 0) {
        if (have_v) {
            ga_fault_flow(values, x);
        }
        if (have_i) {
            ga_fault_flow(indices, x);
        }
    }
    if (c == &tmp) {
        ga_array_release(&tmp);
    }
    if (st != GA_OK) {
        if (have_v) {
            ga_array_release(values);
        }
        if (have_i) {
            ga_array_release(indices);
        }
    }
    return st;
}

int
ga_searchsorted(const ga_array *sorted, const ga_array *values, int right, ga_array *out)
{
    if (sorted->ndim != 1) {
        return ga_error(GA_ERR_VALUE, "searchsorted: the sorted array must be 1-D, got %d "
                        "dimensions", sorted->ndim);
    }
    if (sorted->dtype != values->dtype) {
        return ga_error(GA_ERR_TYPE, "searchsorted: both arrays need one dtype");
    }
    GA_TRY(ga_check_same_device("searchsorted", sorted, values));
    const ga_backend *be;
    GA_TRY(ga_device_backend(ga_array_device(sorted), &be));
    if (be->searchsorted == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED,
                        "searchsorted is not implemented on %s devices yet; search on "
                        "the CPU (x.to(gpuarr.cpu())) or a simulated GPU", be->name);
    }
    ga_array t1 = {0}, t2 = {0};
    const ga_array *s, *v = NULL;
    GA_TRY(contiguous(sorted, &t1, &s));
    int st = contiguous(values, &t2, &v);
    int have_out = 0;
    if (st == GA_OK) {
        st = ga_array_empty(out, ga_array_device(values), GA_INT64, values->ndim,
                            values->shape);
        have_out = st == GA_OK;
    }
    if (st == GA_OK && ga_array_size(values) > 0) {
        ga_search_desc d = {
            .dtype = (int32_t)sorted->dtype,
            .right = right != 0,
            .n = sorted->shape[0],
            .m = ga_array_size(values),
            .sorted = ga_array_data(s),
            .values = ga_array_data(v),
            .out = (int64_t *)ga_array_data(out),
        };
        ga_device_count_work(ga_array_device(sorted), GA_WORK_SORT, 1);
        st = ga_backend_status(
            be, be->searchsorted(ga_device_local(ga_array_device(sorted)), &d));
        if (st == GA_OK) {
            ga_fault_flow(out, sorted);
            ga_fault_flow(out, values);
        }
    }
    if (s == &t1) {
        ga_array_release(&t1);
    }
    if (v == &t2) {
        ga_array_release(&t2);
    }
    if (st != GA_OK && have_out) {
        ga_array_release(out);
    }
    return st;
}
