/* ga_error.c: the thread-local error message of the core. */
#include "ga_error.h"

#include <stdio.h>
#include <string.h>

#include "ga_platform.h"

#define GA_ERRMSG_SIZE 1024

static GA_THREAD_LOCAL char ga_errmsg[GA_ERRMSG_SIZE];

int
ga_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ga_errmsg, sizeof(ga_errmsg), fmt, ap);
    va_end(ap);
    return code;
}

const char *
ga_error_message(void)
{
    return ga_errmsg;
}

int
ga_error_context(int code, const char *context)
{
    size_t clen = strlen(context);
    if (clen > GA_ERRMSG_SIZE / 4) {
        clen = GA_ERRMSG_SIZE / 4;
    }
    size_t mlen = strlen(ga_errmsg);
    if (clen + 2 + mlen >= GA_ERRMSG_SIZE) {
        mlen = GA_ERRMSG_SIZE - 3 - clen;
    }
    memmove(ga_errmsg + clen + 2, ga_errmsg, mlen);
    memcpy(ga_errmsg, context, clen);
    ga_errmsg[clen] = ':';
    ga_errmsg[clen + 1] = ' ';
    ga_errmsg[clen + 2 + mlen] = '\0';
    return code;
}
