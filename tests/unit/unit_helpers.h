/* Shared by the unit tests: double comparisons that print both values, and
 * capture of the one stderr line dlcomm writes for a bad input. */
#ifndef DL_UNIT_HELPERS_H
#define DL_UNIT_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

/* cmocka 1.1.5 compares floats only as float; sizes and times need double. */
#define assert_near(a, b, eps)                                                          \
    do {                                                                                \
        double a_ = (a), b_ = (b);                                                      \
        if (!(fabs(a_ - b_) <= (eps))) {                                                \
            print_error("%s = %.17g, want %s = %.17g (+- %g)\n", #a, a_, #b, b_,        \
                        (double)(eps));                                                 \
            fail();                                                                     \
        }                                                                               \
    } while (0)

/* stderr goes to a temporary file between begin and end; end returns what
 * was written (static buffer, NUL-terminated). */
typedef struct {
    int saved;
    FILE *tmp;
} unit_capture_t;

static inline void unit_capture_begin(unit_capture_t *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    assert_non_null(c->tmp);
    c->saved = dup(STDERR_FILENO);
    dup2(fileno(c->tmp), STDERR_FILENO);
}

static inline const char *unit_capture_end(unit_capture_t *c)
{
    static char buf[4096];
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    rewind(c->tmp);
    size_t n = fread(buf, 1, sizeof(buf) - 1, c->tmp);
    buf[n] = '\0';
    fclose(c->tmp);
    return buf;
}

/* Lines in s (a final line without a newline counts). */
static inline int unit_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        n += *p == '\n';
    return n + (*s && s[strlen(s) - 1] != '\n');
}

#endif
