/* ga_ledger.h: the transfer ledger: every byte that crosses between host and device
 * or between devices, and every host wait for a device (gpuarr.transfer_stats()). */
#ifndef GA_LEDGER_H
#define GA_LEDGER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t h2d_bytes, h2d_count;
    int64_t d2h_bytes, d2h_count;
    int64_t d2d_bytes, d2d_count;
    int64_t syncs;
} ga_transfer_stats;

typedef enum {
    GA_LEDGER_H2D,
    GA_LEDGER_D2H,        /* a read by the host: also one wait */
    GA_LEDGER_D2H_QUEUED, /* non_blocking: the wait comes when the host touches it */
    GA_LEDGER_D2D,
    GA_LEDGER_SYNC
} ga_ledger_kind;

#ifdef __cplusplus
extern "C" {
#endif

/* Count one crossing of `nbytes` (0 for GA_LEDGER_SYNC). Any thread. */
void ga_ledger_add(ga_ledger_kind kind, size_t nbytes);
/* Count one host wait for a GPU that happens outside ga_synchronize (an event's
 * synchronize, a read of a non-blocking copy). */
void ga_count_sync(void);
/* The ledger since the last reset (gpuarr.transfer_stats). */
void ga_ledger_get(ga_transfer_stats *out);
/* The ledger since the process started, which no reset changes (counting blocks). */
void ga_ledger_total(ga_transfer_stats *out);
void ga_ledger_reset(void);

#ifdef __cplusplus
}
#endif

#endif
