/* dlpack.h: gpuarr's declaration of the DLPack v1.1 exchange structs.
 *
 * Written from the DLPack specification's field list (dlpack.h v1.1 and the Python
 * protocol of the array API standard): only what gpuarr produces and consumes.
 * The layout must match the ABI exactly: other libraries read these structs.
 */
#ifndef GA_DLPACK_H
#define GA_DLPACK_H

#include <stdint.h>

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1)

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

/* device types gpuarr uses or accepts (an int32 in the ABI) */
enum {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
};

typedef struct {
    int32_t device_type;
    int32_t device_id;
} DLDevice;

enum {
    kDLInt = 0,
    kDLUInt = 1,
    kDLFloat = 2,
    kDLBfloat = 4,
    kDLComplex = 5,
    kDLBool = 6,
};

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL means C-contiguous */
    uint64_t byte_offset;
} DLTensor;

/* the legacy struct ("dltensor" capsules) */
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

/* the versioned struct ("dltensor_versioned" capsules) */
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif
