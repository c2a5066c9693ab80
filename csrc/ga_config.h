/* ga_config.h: limits shared by the core, the binding and the backends. */
#ifndef GA_CONFIG_H
#define GA_CONFIG_H

/* Most dimensions an array may have. Shapes and strides live inline in the array
 * (no second allocation per array); 24 keeps a Python array object small. */
#define GA_MAXDIMS 24

/* Most operands (outputs + inputs) of one elementwise kernel. */
#define GA_MAXARGS 4

/* Most devices of one kind the library tracks. */
#define GA_MAX_DEVICES 16

#if defined(__CUDACC__)
#define GA_HD __host__ __device__
#else
#define GA_HD
#endif

#endif
