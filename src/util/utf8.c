/* Text that leaves dlcomm is valid UTF-8: what a user typed (a folder name,
 * a profile name) may hold any bytes, and a strict JSON or CSV reader must
 * still read the file. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), 0 if it is not one:
 * overlong forms, surrogates and code points above U+10FFFF are not. */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90) ||
        (c == 0xF4 && s[1] > 0x8F))
        return 0;
    return n;
}

int dl_utf8_valid(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_seq(p);
        if (!n)
            return 0;
        p += n;
    }
    return 1;
}

char *dl_utf8_fix(const char *s, const char *repl)
{
    size_t rl = strlen(repl), bad = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_seq(p);
        bad += !n;
        p += n ? n : 1;
    }
    char *out = malloc(strlen(s) + bad * rl + 1), *o = out;
    if (!out)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_seq(p);
        if (n) {
            memcpy(o, p, n);
            o += n;
            p += n;
        } else {
            memcpy(o, repl, rl);
            o += rl;
            p++;
        }
    }
    *o = '\0';
    return out;
}
