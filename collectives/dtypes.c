/* Data types, reduction ops, host conversions and the fill pattern. */
#include "collectives.h"
#include "pattern.h"

#include <math.h>
#include <string.h>

const char *const dl_dtype_names[DL_DT_COUNT] = {
    "float32", "float16", "bfloat16", "float64", "int32",  "int8",
    "uint8",   "int64",   "uint32",   "uint64",  "fp8e4m3", "fp8e5m2",
};

const char *const dl_op_names[DL_OP_COUNT] = {"sum", "prod", "min", "max", "avg"};

static const size_t dtype_size[DL_DT_COUNT] = {4, 2, 2, 8, 4, 1, 1, 8, 4, 8, 1, 1};

size_t dl_dtype_size(dl_dtype_t dt) { return dtype_size[dt]; }

int dl_dtype_is_float(dl_dtype_t dt)
{
    switch (dt) {
    case DL_DT_FLOAT32: case DL_DT_FLOAT16: case DL_DT_BFLOAT16: case DL_DT_FLOAT64:
    case DL_DT_FP8E4M3: case DL_DT_FP8E5M2:
        return 1;
    default:
        return 0;
    }
}

static int is_fp8(dl_dtype_t dt) { return dt == DL_DT_FP8E4M3 || dt == DL_DT_FP8E5M2; }
static int is_unsigned(dl_dtype_t dt)
{
    return dt == DL_DT_UINT8 || dt == DL_DT_UINT32 || dt == DL_DT_UINT64;
}

int dl_dtype_is_narrow(dl_dtype_t dt) { return is_fp8(dt); }
int dl_dtype_is_unsigned(dl_dtype_t dt) { return is_unsigned(dt); }

double dl_pattern(dl_dtype_t dt, int reduces, dl_op_t op, int rank, size_t i)
{
    return dl_pattern_value(is_fp8(dt), is_unsigned(dt), reduces, (int)op, rank, i);
}

double dl_pattern_reduced(dl_dtype_t dt, dl_op_t op, int nranks, size_t i)
{
    double acc = dl_pattern(dt, 1, op, 0, i);
    for (int r = 1; r < nranks; r++) {
        double v = dl_pattern(dt, 1, op, r, i);
        switch (op) {
        case DL_OP_SUM: case DL_OP_AVG: acc += v; break;
        case DL_OP_PROD: acc *= v; break;
        case DL_OP_MIN: acc = v < acc ? v : acc; break;
        case DL_OP_MAX: acc = v > acc ? v : acc; break;
        default: break;
        }
    }
    return op == DL_OP_AVG ? acc / nranks : acc;
}

/* IEEE half and bfloat16, round to nearest even. */
uint16_t dl_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = x & 0x7fffffu;
    if (((x >> 23) & 0xff) == 0xff) /* inf or nan */
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) { /* subnormal or zero */
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t h = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++; /* may carry into the exponent: still correct */
    return (uint16_t)(sign | h);
}

float dl_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
    if (exp == 0) {
        float v = ldexpf((float)mant, -24);
        return sign ? -v : v;
    }
    if (exp == 31)
        x = sign | 0x7f800000u | (mant << 13);
    else
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

uint16_t dl_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u); /* quiet nan */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float dl_bf16_to_f32(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* fp8: only the small integers of the pattern need to round-trip, but the
 * conversion is general (saturating, round to nearest even). */
static uint8_t f_to_fp8(double v, int ebits, int mbits, int bias)
{
    uint8_t sign = v < 0 ? 0x80 : 0;
    double a = fabs(v);
    if (a == 0 || isnan(v))
        return isnan(v) ? 0x7f : sign;
    int e;
    double m = frexp(a, &e); /* a = m * 2^e, m in [0.5,1) */
    int exp = e - 1 + bias;
    int emax = (1 << ebits) - 1 - (ebits == 4 ? 0 : 1);
    if (exp <= 0) { /* subnormal */
        double q = nearbyint(ldexp(a, bias - 1 + mbits));
        return (uint8_t)(sign | (uint8_t)q);
    }
    double q = nearbyint((m * 2 - 1) * (1 << mbits));
    if (q >= (1 << mbits)) {
        q = 0;
        exp++;
    }
    if (exp > emax || (ebits == 4 && exp == emax && q == (1 << mbits) - 1))
        return (uint8_t)(sign | (ebits == 4 ? 0x7e : 0x7b)); /* saturate to max finite */
    return (uint8_t)(sign | (exp << mbits) | (int)q);
}

static double fp8_to_f(uint8_t b, int ebits, int mbits, int bias)
{
    int sign = b & 0x80, exp = (b >> mbits) & ((1 << ebits) - 1), mant = b & ((1 << mbits) - 1);
    double v = exp == 0 ? ldexp(mant, 1 - bias - mbits)
                        : ldexp(1.0 + (double)mant / (1 << mbits), exp - bias);
    return sign ? -v : v;
}

void dl_value_store(dl_dtype_t dt, void *dst, size_t i, double v)
{
    switch (dt) {
    case DL_DT_FLOAT32: ((float *)dst)[i] = (float)v; break;
    case DL_DT_FLOAT16: ((uint16_t *)dst)[i] = dl_f32_to_f16((float)v); break;
    case DL_DT_BFLOAT16: ((uint16_t *)dst)[i] = dl_f32_to_bf16((float)v); break;
    case DL_DT_FLOAT64: ((double *)dst)[i] = v; break;
    case DL_DT_INT32: ((int32_t *)dst)[i] = (int32_t)v; break;
    case DL_DT_INT8: ((int8_t *)dst)[i] = (int8_t)v; break;
    case DL_DT_UINT8: ((uint8_t *)dst)[i] = (uint8_t)v; break;
    case DL_DT_INT64: ((int64_t *)dst)[i] = (int64_t)v; break;
    case DL_DT_UINT32: ((uint32_t *)dst)[i] = (uint32_t)v; break;
    case DL_DT_UINT64: ((uint64_t *)dst)[i] = (uint64_t)v; break;
    case DL_DT_FP8E4M3: ((uint8_t *)dst)[i] = f_to_fp8(v, 4, 3, 7); break;
    case DL_DT_FP8E5M2: ((uint8_t *)dst)[i] = f_to_fp8(v, 5, 2, 15); break;
    default: break;
    }
}

double dl_value_load(dl_dtype_t dt, const void *src, size_t i)
{
    switch (dt) {
    case DL_DT_FLOAT32: return ((const float *)src)[i];
    case DL_DT_FLOAT16: return dl_f16_to_f32(((const uint16_t *)src)[i]);
    case DL_DT_BFLOAT16: return dl_bf16_to_f32(((const uint16_t *)src)[i]);
    case DL_DT_FLOAT64: return ((const double *)src)[i];
    case DL_DT_INT32: return ((const int32_t *)src)[i];
    case DL_DT_INT8: return ((const int8_t *)src)[i];
    case DL_DT_UINT8: return ((const uint8_t *)src)[i];
    case DL_DT_INT64: return (double)((const int64_t *)src)[i];
    case DL_DT_UINT32: return ((const uint32_t *)src)[i];
    case DL_DT_UINT64: return (double)((const uint64_t *)src)[i];
    case DL_DT_FP8E4M3: return fp8_to_f(((const uint8_t *)src)[i], 4, 3, 7);
    case DL_DT_FP8E5M2: return fp8_to_f(((const uint8_t *)src)[i], 5, 2, 15);
    default: return NAN;
    }
}

static double dtype_eps(dl_dtype_t dt)
{
    switch (dt) {
    case DL_DT_FLOAT32: return 0x1p-23;
    case DL_DT_FLOAT16: return 0x1p-10;
    case DL_DT_BFLOAT16: return 0x1p-7;
    case DL_DT_FLOAT64: return 0x1p-52;
    case DL_DT_FP8E4M3: return 0x1p-3;
    case DL_DT_FP8E5M2: return 0x1p-2;
    default: return 0;
    }
}

double dl_match_tolerance(dl_dtype_t dt, dl_op_t op, int nranks)
{
    if (op == DL_OP_AVG)
        return nranks * dtype_eps(dt);
    /* fp8 partial sums of the {0,1} pattern stay exact up to 16 (e4m3) or 8
     * (e5m2) ranks: exact there, n ulps only beyond. */
    if (is_fp8(dt) && nranks > (dt == DL_DT_FP8E4M3 ? 16 : 8))
        return nranks * dtype_eps(dt);
    return 0;
}

int dl_value_matches(dl_dtype_t dt, dl_op_t op, int nranks, double got, double want)
{
    return dl_values_match(dl_dtype_is_float(dt), !dl_dtype_is_float(dt) && op == DL_OP_AVG,
                           dl_match_tolerance(dt, op, nranks), got, want);
}
