/* Fill and check kernels: the pattern and expected values come from
 * collectives/pattern.h, the same code the host check runs. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "nccl_dev.h"
#include "pattern.h"

/* Element access by dtype (order of dl_dtype_t). */
__device__ static double load(const void *p, int dt, size_t i)
{
    switch (dt) {
    case 0: return ((const float *)p)[i];
    case 1: return __half2float(((const __half *)p)[i]);
    case 2: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case 3: return ((const double *)p)[i];
    case 4: return ((const int32_t *)p)[i];
    case 5: return ((const int8_t *)p)[i];
    case 6: return ((const uint8_t *)p)[i];
    case 7: return (double)((const int64_t *)p)[i];
    case 8: return ((const uint32_t *)p)[i];
    case 9: return (double)((const uint64_t *)p)[i];
    case 10: return (float)((const __nv_fp8_e4m3 *)p)[i];
    case 11: return (float)((const __nv_fp8_e5m2 *)p)[i];
    default: return nan("");
    }
}

__device__ static void store(void *p, int dt, size_t i, double v)
{
    switch (dt) {
    case 0: ((float *)p)[i] = (float)v; break;
    case 1: ((__half *)p)[i] = __float2half((float)v); break;
    case 2: ((__nv_bfloat16 *)p)[i] = __float2bfloat16((float)v); break;
    case 3: ((double *)p)[i] = v; break;
    case 4: ((int32_t *)p)[i] = (int32_t)v; break;
    case 5: ((int8_t *)p)[i] = (int8_t)v; break;
    case 6: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case 7: ((int64_t *)p)[i] = (int64_t)v; break;
    case 8: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case 9: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case 10: ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3((float)v); break;
    case 11: ((__nv_fp8_e5m2 *)p)[i] = __nv_fp8_e5m2((float)v); break;
    default: break;
    }
}

__global__ static void fill_kernel(void *buf, dl_dev_type_t t, int reduces, int op, int rank,
                                   size_t count)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        store(buf, t.dtype, i, dl_pattern_value(t.narrow, t.is_unsigned, reduces, op, rank, i));
}

__global__ static void check_kernel(const void *buf, dl_dev_type_t t, dl_dev_check_t c,
                                    unsigned long long *wrong)
{
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < c.count;
         i += (size_t)gridDim.x * blockDim.x) {
        int src_rank = 0;
        size_t src = 0;
        int how = dl_expected_source(c.coll, c.rank, c.nranks, c.root, c.per, i, c.voff, &src_rank,
                                     &src);
        if (how == 0)
            return;
        double want = how == 1 ? c.table[src % 64]
                               : dl_pattern_value(t.narrow, t.is_unsigned, 0, c.op, src_rank, src);
        if (!dl_values_match(t.is_float, t.int_avg, t.tol, load(buf, t.dtype, i), want)) {
            mine++;
            atomicMin(&wrong[1], (unsigned long long)i);
        }
    }
    if (mine)
        atomicAdd(wrong, mine);
}

__global__ static void spin_kernel(volatile int *flag, unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (!*flag && now - start < ns);
}

static unsigned grid_for(size_t count)
{
    size_t blocks = (count + 255) / 256;
    return blocks > 4096 ? 4096 : (blocks ? (unsigned)blocks : 1);
}

extern "C" cudaError_t dl_dev_fill(void *buf, const dl_dev_type_t *t, int reduces, int op,
                                   int rank, size_t count, cudaStream_t s)
{
    fill_kernel<<<grid_for(count), 256, 0, s>>>(buf, *t, reduces, op, rank, count);
    return cudaGetLastError();
}

extern "C" cudaError_t dl_dev_check(const void *buf, const dl_dev_type_t *t,
                                    const dl_dev_check_t *c, unsigned long long *d_wrong,
                                    cudaStream_t s)
{
    check_kernel<<<grid_for(c->count), 256, 0, s>>>(buf, *t, *c, d_wrong);
    return cudaGetLastError();
}

extern "C" cudaError_t dl_dev_spin(volatile int *flag, double seconds, cudaStream_t s)
{
    spin_kernel<<<1, 1, 0, s>>>(flag, (unsigned long long)(seconds * 1e9));
    return cudaGetLastError();
}
