#include "host-fs/refusal_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "host-fs/log_escape.h"
#include "shared/log.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static time_t window_start;
static unsigned printed, suppressed;

static time_t now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

static void say_suppressed(void)
{
    if (suppressed)
        mt_warn("%u more refusals in the last %d s not logged", suppressed,
                REFUSAL_LOG_WINDOW_S);
    suppressed = 0;
}

void refusal_log(const char *fmt, ...)
{
    pthread_mutex_lock(&lock);
    time_t now = now_s();
    if (now - window_start >= REFUSAL_LOG_WINDOW_S) {
        say_suppressed();
        window_start = now;
        printed = 0;
    }
    if (printed >= REFUSAL_LOG_BURST) {
        suppressed++;
        pthread_mutex_unlock(&lock);
        return;
    }
    printed++;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): va_start is just above
    va_end(ap);
    /* the line holds what the peer sent (a path, a name): escaped */
    char safe[LOG_ESCAPE_MAX + 1];
    mt_warn("%s", log_escape(safe, sizeof(safe), line));
    pthread_mutex_unlock(&lock);
}

void refusal_log_flush(void)
{
    pthread_mutex_lock(&lock);
    say_suppressed();
    pthread_mutex_unlock(&lock);
}
