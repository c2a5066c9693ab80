/* ga_visible_devices.h: CUDA_VISIBLE_DEVICES as the CUDA driver reads it, for the GPUs
 * that gpuarr makes itself (simulated GPUs in runtime/ga_device.c, emulated ones in
 * cuda/emu/). With real GPUs the driver applies the variable and gpuarr does nothing.
 *
 * The rules CUDA follows, so that device hiding can be taught without a GPU:
 * - unset: every device is visible, in its own order;
 * - a comma-separated list of device numbers: those devices, in the list's order,
 *   renumbered from 0 ("2,0" makes device 2 the first and device 0 the second);
 * - an empty value hides every device;
 * - the first invalid entry (not a number, a number with no device, a number listed
 *   twice, or a UUID, which these devices do not have) hides itself and every entry
 *   after it: "0,7,1" on 2 devices shows only device 0.
 * Header-only (static inline): the registry and the emulated CUDA runtime are built into
 * different libraries, and both must read the variable the same way. */
#ifndef GA_VISIBLE_DEVICES_H
#define GA_VISIBLE_DEVICES_H

#include <ctype.h>
#include <stdlib.h>

/* Fill map[0..return) with the physical numbers of the devices that `value` shows out
 * of `physical` (at most `cap` of them); value NULL means unset (all visible). */
static inline int
ga_visible_devices(const char *value, int physical, int *map, int cap)
{
    int n = 0;
    if (value == NULL) {
        for (; n < physical && n < cap; n++) {
            map[n] = n;
        }
        return n;
    }
    const char *p = value;
    while (*p != '\0' && n < cap) {
        while (*p == ' ') {
            p++;
        }
        if (!isdigit((unsigned char)*p)) {
            break; /* "", "-1", "GPU-<uuid>", ",,": invalid, so the rest is hidden */
        }
        char *end;
        long d = strtol(p, &end, 10);
        while (*end == ' ') {
            end++;
        }
        if ((*end != ',' && *end != '\0') || d >= physical) {
            break;
        }
        int dup = 0;
        for (int i = 0; i < n; i++) {
            dup |= map[i] == (int)d;
        }
        if (dup) {
            break;
        }
        map[n++] = (int)d;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

#endif /* GA_VISIBLE_DEVICES_H */
