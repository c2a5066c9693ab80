/* ga_cuda_selftest_schedule.cu: kernels whose answer depends on the order in which
 * blocks and threads run, run by name through the exported
 * gpuarr_cuda_selftest_schedule (tests/cuda/test_cuda_emulation.py calls it through ctypes
 * under several GPUARR_CUDA_EMULATE_SCHEDULE seeds).
 *
 * Cases: "racy_neighbour" (each thread writes its shared-memory slot and reads its
 * neighbour's with no __syncthreads between: a race, which FAILS, returning 1 with
 * the wrong values in the message, whenever a thread runs before its neighbour) and
 * "neighbour_with_barrier" (the same with the barrier: always right); "block_order"
 * and "thread_order", which pass and report in the message the order in which the
 * blocks of a grid, and the threads of a block without and with a barrier, took a
 * ticket from an atomic counter. On a GPU these orders are whatever the hardware did;
 * in the emulator they are the schedule's, replayed by the same seed.
 * Spin waits between blocks: "chain_by_ticket" (each block takes a ticket from an
 * atomic counter and waits for the block with the previous ticket: ends on every
 * schedule, as k_scan.cu's tiles do) passes; "chain_by_block_index" (block b waits for
 * block b - 1, whichever runs first) must FAIL in the emulator, whose blocks run one
 * after another in a shuffled order: the wait for a later block is reported as a
 * deadlock (cudaErrorLaunchTimeout).
 */
#include "ga_cuda_selftest.h"
#include "k_common.cuh"

#include <stdio.h>
#include <string.h>

namespace {

const unsigned NEIGHBOURS = 256; /* threads of the racy block, GA_RED_BLOCK's size */
const unsigned ORDERED = 64;     /* blocks, or threads, whose order is recorded */

/* slot[t] = in[t], then out[t] = slot[t - 1] (thread 0 reads its own). Without the
 * barrier nothing makes thread t - 1's write happen before thread t's read. */
__global__ void
k_neighbour(const int32_t *in, int32_t *out, int barrier)
{
    __shared__ int32_t slot[NEIGHBOURS];
    unsigned t = threadIdx.x;
    slot[t] = in[t];
    if (barrier) {
        __syncthreads();
    }
    out[t] = slot[t == 0 ? 0 : t - 1];
}

/* Thread 0 of each block takes a ticket: order[ticket] = the block. */
__global__ void
k_block_order(unsigned *ticket, int32_t *order)
{
    if (threadIdx.x == 0) {
        order[atomicAdd(ticket, 1u)] = (int32_t)blockIdx.x;
    }
}

/* Every thread takes a ticket, after a barrier if `barrier`. */
__global__ void
k_thread_order(unsigned *ticket, int32_t *order, int barrier)
{
    if (barrier) {
        __syncthreads();
    }
    order[atomicAdd(ticket, 1u)] = (int32_t)threadIdx.x;
}

/* Block `me` (its ticket, or its index) waits until block me - 1 has set its flag,
 * then sets its own: done[me] = 1 + done[me - 1], so done[CHAIN - 1] == CHAIN. */
const unsigned CHAIN = 64;

__global__ void
k_chain(unsigned *ticket, volatile unsigned *done, int by_ticket)
{
    if (threadIdx.x != 0) {
        return;
    }
    const unsigned me = by_ticket ? atomicAdd(ticket, 1u) : blockIdx.x;
    unsigned before = 0;
    if (me > 0) {
        while ((before = done[me - 1]) == 0u) {
            __nanosleep(100);
        }
    }
    __threadfence();
    done[me] = before + 1;
}

int
chain(int dev, char *msg, size_t n, int by_ticket)
{
    const size_t bytes = (CHAIN + 1) * sizeof(unsigned);
    unsigned *d = NULL;
    unsigned done[CHAIN + 1];
    cudaStream_t s;
    int rc = 0;
    CASE_TRY(ga_cuda_stream(dev, &s));
    CASE_TRY(ga_cuda_alloc(dev, bytes, (void **)&d));
    CASE_TRY(CU(cudaMemsetAsync(d, 0, bytes, s)));
    GA_LAUNCH(k_chain, CHAIN, 32, 0, s, d + CHAIN, (volatile unsigned *)d, by_ticket);
    CASE_TRY(CU(cudaGetLastError()));
    CASE_TRY(CU(cudaMemcpyAsync(done, d, bytes, cudaMemcpyDeviceToHost, s)));
    CASE_TRY(CU(cudaStreamSynchronize(s)));
    if (done[CHAIN - 1] != CHAIN) {
        snprintf(msg, n, "the last block of the chain counted %u, want %u",
                 done[CHAIN - 1], CHAIN);
        rc = 1;
    }
done:
    ga_cuda_free(dev, d, bytes);
    return rc;
}

int
case_chain_by_ticket(int dev, char *msg, size_t n)
{
    return chain(dev, msg, n, 1);
}

int
case_chain_by_block_index(int dev, char *msg, size_t n)
{
    return chain(dev, msg, n, 0);
}

int
neighbour(int dev, char *msg, size_t n, int barrier)
{
    const size_t bytes = NEIGHBOURS * sizeof(int32_t);
    int32_t *d_in = NULL, *d_out = NULL;
    int32_t in[NEIGHBOURS], out[NEIGHBOURS];
    /* values never seen before in this process: a slot left over from an earlier
     * launch (shared memory is not cleared between blocks) cannot pass for a write */
    static int32_t salt = 0;
    cudaStream_t s;
    int rc = 0, wrong = 0;
    salt += 1000;
    for (unsigned t = 0; t < NEIGHBOURS; t++) {
        in[t] = (int32_t)(t * 7 + 1) + salt;
    }
    CASE_TRY(ga_cuda_stream(dev, &s));
    CASE_TRY(ga_cuda_alloc(dev, bytes, (void **)&d_in));
    CASE_TRY(ga_cuda_alloc(dev, bytes, (void **)&d_out));
    CASE_TRY(CU(cudaMemcpyAsync(d_in, in, bytes, cudaMemcpyHostToDevice, s)));
    GA_LAUNCH(k_neighbour, 1, NEIGHBOURS, 0, s, (const int32_t *)d_in, d_out, barrier);
    CASE_TRY(CU(cudaGetLastError()));
    CASE_TRY(CU(cudaMemcpyAsync(out, d_out, bytes, cudaMemcpyDeviceToHost, s)));
    CASE_TRY(CU(cudaStreamSynchronize(s)));
    for (unsigned t = 0; t < NEIGHBOURS; t++) {
        int32_t want = in[t == 0 ? 0 : t - 1];
        if (out[t] != want && wrong++ == 0) {
            snprintf(msg, n, "thread %u read %d from its neighbour's slot, want %d", t,
                     out[t], want);
        }
    }
    if (wrong) {
        size_t used = strlen(msg);
        snprintf(msg + used, n - used, " (%d of %u threads read a wrong value)", wrong,
                 NEIGHBOURS);
        rc = 1;
    }
done:
    ga_cuda_free(dev, d_in, bytes);
    ga_cuda_free(dev, d_out, bytes);
    return rc;
}

int
case_racy_neighbour(int dev, char *msg, size_t n)
{
    return neighbour(dev, msg, n, 0);
}

int
case_neighbour_with_barrier(int dev, char *msg, size_t n)
{
    return neighbour(dev, msg, n, 1);
}

/* Append `label` and the ORDERED tickets in `order` to msg; 1 if they are not a
 * permutation of 0..ORDERED-1. */
int
append_order(char *msg, size_t n, const char *label, const int32_t *order)
{
    int seen[ORDERED] = {0};
    size_t used = strlen(msg);
    snprintf(msg + used, n - used, "%s%s:", used ? " " : "", label);
    for (unsigned i = 0; i < ORDERED; i++) {
        if (order[i] < 0 || order[i] >= (int32_t)ORDERED || seen[order[i]]++) {
            return ga_st_say(msg, n, "the tickets are not a permutation");
        }
        used = strlen(msg);
        snprintf(msg + used, n - used, "%s%d", i ? "," : "", order[i]);
    }
    return 0;
}

/* Launch k_block_order (kind 0: ORDERED blocks) or k_thread_order (one block of
 * ORDERED threads) and append the order in which they took their tickets. */
int
record(int dev, char *msg, size_t n, const char *label, int kind, int barrier)
{
    const size_t bytes = ORDERED * sizeof(int32_t);
    unsigned *ticket = NULL;
    int32_t *d = NULL;
    int32_t order[ORDERED];
    cudaStream_t s;
    int rc = 0;
    CASE_TRY(ga_cuda_stream(dev, &s));
    CASE_TRY(ga_cuda_alloc(dev, sizeof(unsigned), (void **)&ticket));
    CASE_TRY(ga_cuda_alloc(dev, bytes, (void **)&d));
    CASE_TRY(CU(cudaMemsetAsync(ticket, 0, sizeof(unsigned), s)));
    if (kind == 0) {
        GA_LAUNCH(k_block_order, ORDERED, 32, 0, s, ticket, d);
    }
    else {
        GA_LAUNCH(k_thread_order, 1, ORDERED, 0, s, ticket, d, barrier);
    }
    CASE_TRY(CU(cudaGetLastError()));
    CASE_TRY(CU(cudaMemcpyAsync(order, d, bytes, cudaMemcpyDeviceToHost, s)));
    CASE_TRY(CU(cudaStreamSynchronize(s)));
    rc = append_order(msg, n, label, order);
done:
    ga_cuda_free(dev, ticket, sizeof(unsigned));
    ga_cuda_free(dev, d, bytes);
    return rc;
}

int
case_block_order(int dev, char *msg, size_t n)
{
    return record(dev, msg, n, "blocks", 0, 0);
}

int
case_thread_order(int dev, char *msg, size_t n)
{
    int rc = record(dev, msg, n, "plain", 1, 0);
    return rc ? rc : record(dev, msg, n, "barrier", 1, 1);
}

}  // namespace

/* Run the schedule self-test case `name` on `dev`: 0 when it passes (with the orders
 * in msg for the *_order cases); otherwise 1 and a message; 2 for an unknown name. */
extern "C" __attribute__((visibility("default"))) int
gpuarr_cuda_selftest_schedule(int dev, const char *name, char *msg, size_t n)
{
    static const struct {
        const char *name;
        int (*fn)(int, char *, size_t);
    } cases[] = {
        {"racy_neighbour", case_racy_neighbour},
        {"neighbour_with_barrier", case_neighbour_with_barrier},
        {"block_order", case_block_order},
        {"thread_order", case_thread_order},
        {"chain_by_ticket", case_chain_by_ticket},
        {"chain_by_block_index", case_chain_by_block_index},
    };
    msg[0] = '\0';
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (strcmp(cases[i].name, name) == 0) {
            return cases[i].fn(dev, msg, n);
        }
    }
    snprintf(msg, n, "no schedule self-test case named '%s'", name);
    return 2;
}
