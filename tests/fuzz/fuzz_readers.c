/* libFuzzer target over the run readers: any bytes go through the format
 * detection into the dlcomm, nccl-tests JSON or nccl-tests text reader;
 * what parses is then compared with itself and reported, so the code that
 * trusts a parsed run is exercised too. Build and run: scripts/fuzz-readers.sh. */
#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    if (!devnull) {
        dl_log_set_mute(1);
        devnull = fopen("/dev/null", "w");
    }
    dl_record_t r;
    if (dl_an_parse((const char *)data, size, "fuzz", &r) != DL_OK)
        return 0;
    dl_cmp_opts_t o = {.threshold = 0.05, .metric = DL_M_BUSBW, .min_size = 1};
    dl_cmp_t c;
    if (dl_an_compare(&r, &r, &o, &c) == DL_OK) {
        dl_an_cmp_print(devnull, &r, &r, &o, &c);
        dl_an_cmp_free(&c);
    }
    dl_an_report(devnull, &r, &r, 0);
    dl_an_report(devnull, &r, NULL, 1);
    dl_record_free(&r);
    return 0;
}
