/* ga_ledger.c: the transfer ledger (ga_ledger.h): the counts behind
 * gpuarr.transfer_stats(). Its own file at the bottom of the runtime, beside no copy
 * code, because the copies (ga_transfer.c) and the waits below them (ga_host_ready.c)
 * both add to it. */
#include "ga_ledger.h"

#include "ga_platform.h"

/* The counters have a lock of their own: the core does not rely on the GIL (CPU
 * kernels run without it, and a counter may be added to from any thread). They only
 * grow: a reset moves `ledger_base`, so a count over a block (ga_ledger_total before
 * and after) stays right whatever the code inside the block resets. */
static ga_transfer_stats ledger, ledger_base;
static ga_mutex ledger_mu = GA_MUTEX_INIT;

void
ga_ledger_add(ga_ledger_kind kind, size_t nbytes)
{
    ga_mutex_lock(&ledger_mu);
    switch (kind) {
    case GA_LEDGER_H2D:
        ledger.h2d_bytes += (int64_t)nbytes;
        ledger.h2d_count++;
        break;
    case GA_LEDGER_D2H: /* a read by the host waits for the device */
        ledger.d2h_bytes += (int64_t)nbytes;
        ledger.d2h_count++;
        ledger.syncs++;
        break;
    case GA_LEDGER_D2H_QUEUED:
        ledger.d2h_bytes += (int64_t)nbytes;
        ledger.d2h_count++;
        break;
    case GA_LEDGER_D2D:
        ledger.d2d_bytes += (int64_t)nbytes;
        ledger.d2d_count++;
        break;
    case GA_LEDGER_SYNC:
        ledger.syncs++;
        break;
    }
    ga_mutex_unlock(&ledger_mu);
}

void
ga_ledger_get(ga_transfer_stats *out)
{
    ga_mutex_lock(&ledger_mu);
    out->h2d_bytes = ledger.h2d_bytes - ledger_base.h2d_bytes;
    out->h2d_count = ledger.h2d_count - ledger_base.h2d_count;
    out->d2h_bytes = ledger.d2h_bytes - ledger_base.d2h_bytes;
    out->d2h_count = ledger.d2h_count - ledger_base.d2h_count;
    out->d2d_bytes = ledger.d2d_bytes - ledger_base.d2d_bytes;
    out->d2d_count = ledger.d2d_count - ledger_base.d2d_count;
    out->syncs = ledger.syncs - ledger_base.syncs;
    ga_mutex_unlock(&ledger_mu);
}

void
ga_ledger_total(ga_transfer_stats *out)
{
    ga_mutex_lock(&ledger_mu);
    *out = ledger;
    ga_mutex_unlock(&ledger_mu);
}

void
ga_ledger_reset(void)
{
    ga_mutex_lock(&ledger_mu);
    ledger_base = ledger;
    ga_mutex_unlock(&ledger_mu);
}

void
ga_count_sync(void)
{
    ga_ledger_add(GA_LEDGER_SYNC, 0);
}
