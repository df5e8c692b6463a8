/* error.c - thread-local error state, the error handler and abort mode. */
#include "core/core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LT_ERROR_CAP 1024

static _Thread_local char error_message[LT_ERROR_CAP];
static _Thread_local lt_status error_status = LT_OK;

static lt_error_handler error_handler;
static void *error_handler_user;
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;

static bool abort_mode(void)
{
    static int cached = -1; /* read once: the environment is fixed at start */
    if (cached < 0) {
        const char *v = getenv("LT_ERRORS");
        cached = (v && strcmp(v, "abort") == 0) ? 1 : 0;
    }
    return cached == 1;
}

lt_status lt_error(lt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    error_status = status;

    pthread_mutex_lock(&handler_lock);
    lt_error_handler handler = error_handler;
    void *user = error_handler_user;
    pthread_mutex_unlock(&handler_lock);
    if (handler)
        handler(status, error_message, user);
    if (abort_mode()) {
        fprintf(stderr, "lazytensor: fatal error (LT_ERRORS=abort): %s: %s\n",
                lt_status_name(status), error_message);
        abort();
    }
    return status;
}

bool lt_error_pending(void) { return error_status != LT_OK; }

const char *lt_last_error(void) { return error_message; }

lt_status lt_last_status(void) { return error_status; }

void lt_clear_error(void)
{
    error_message[0] = '\0';
    error_status = LT_OK;
}

void lt_set_error_handler(lt_error_handler handler, void *user)
{
    pthread_mutex_lock(&handler_lock);
    error_handler = handler;
    error_handler_user = user;
    pthread_mutex_unlock(&handler_lock);
}

const char *lt_status_name(lt_status s)
{
    switch (s) {
    case LT_OK: return "LT_OK";
    case LT_ERR_NULL: return "LT_ERR_NULL";
    case LT_ERR_ARGUMENT: return "LT_ERR_ARGUMENT";
    case LT_ERR_SHAPE: return "LT_ERR_SHAPE";
    case LT_ERR_DTYPE: return "LT_ERR_DTYPE";
    case LT_ERR_DEVICE: return "LT_ERR_DEVICE";
    case LT_ERR_INDEX: return "LT_ERR_INDEX";
    case LT_ERR_MEMORY: return "LT_ERR_MEMORY";
    case LT_ERR_RELEASED: return "LT_ERR_RELEASED";
    case LT_ERR_STATE: return "LT_ERR_STATE";
    case LT_ERR_UNSUPPORTED: return "LT_ERR_UNSUPPORTED";
    case LT_ERR_IO: return "LT_ERR_IO";
    case LT_ERR_DIST: return "LT_ERR_DIST";
    }
    return "LT_ERR_UNKNOWN";
}
