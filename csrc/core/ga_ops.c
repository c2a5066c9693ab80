/* ga_ops.c: names and arities of the operations, from the lists in ga_ops.h. */
#include "ga_ops.h"

const char *const ga_op_names[GA_NOPS] = {
#define GA_X_NAME(e, name, nin, out) [e] = #name,
    GA_ELEMENTWISE_OPS(GA_X_NAME)
#undef GA_X_NAME
};

const int ga_op_nin[GA_NOPS] = {
#define GA_X_NIN(e, name, nin, out) [e] = nin,
    GA_ELEMENTWISE_OPS(GA_X_NIN)
#undef GA_X_NIN
};

const char *const ga_reduce_names[GA_NREDUCE] = {
#define GA_X_NAME(e, name) [e] = #name,
    GA_REDUCE_OPS(GA_X_NAME)
#undef GA_X_NAME
};
