// The classic reduction progression as real, selectable kernels: reduce0 to
// reduce7 after Harris, and a tensor-core version after Dakkak et al. (ICS
// 2019). Unlike the well-known listings they are correct for any n: every
// load is bounds-checked, and shared memory is padded with the identity.
//
// Every variant finishes the classic way: the host launches it again over the
// per-block partials until one value remains (a launch is the grid barrier).
// The production engine lives in ../engine/ and ../reduce_cuda.cuh; nothing here is shared
// with it on purpose, so that each step reads on its own.
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAStream.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <ATen/record_function.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../../classic.h"
#include "../device_info.h"

namespace gpureduce {
namespace classic {
namespace {

constexpr int kBlock = 256;

template <typename acc_t, typename in_t>
__device__ __forceinline__ acc_t load_or_zero(const in_t* in, int64_t i, int64_t n) {
  return i < n ? static_cast<acc_t>(in[i]) : acc_t(0);
}

// reduce0: interleaved addressing; `tid % (2*s)` leaves most lanes of each
// warp idle (divergent warps).
template <typename in_t, typename acc_t>
__global__ void reduce0(const in_t* in, acc_t* out, int64_t n) {
  __shared__ acc_t s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = load_or_zero<acc_t>(in, int64_t(blockIdx.x) * blockDim.x + tid, n);
  __syncthreads();
  for (unsigned st = 1; st < blockDim.x; st *= 2) {
    if (tid % (2 * st) == 0) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// reduce1: interleaved addressing with a strided index: no divergence, but
// the stride makes threads of a warp hit the same shared-memory banks.
template <typename in_t, typename acc_t>
__global__ void reduce1(const in_t* in, acc_t* out, int64_t n) {
  __shared__ acc_t s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = load_or_zero<acc_t>(in, int64_t(blockIdx.x) * blockDim.x + tid, n);
  __syncthreads();
  for (unsigned st = 1; st < blockDim.x; st *= 2) {
    const unsigned index = 2 * st * tid;
    if (index < blockDim.x) s[index] += s[index + st];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// reduce2: sequential addressing: contiguous active threads, no bank conflicts.
template <typename in_t, typename acc_t>
__global__ void reduce2(const in_t* in, acc_t* out, int64_t n) {
  __shared__ acc_t s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = load_or_zero<acc_t>(in, int64_t(blockIdx.x) * blockDim.x + tid, n);
  __syncthreads();
  for (unsigned st = blockDim.x / 2; st > 0; st /= 2) {
    if (tid < st) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// reduce3: the first add happens during the global load, so each block covers
// twice the elements and no thread idles in the first step.
template <typename in_t, typename acc_t>
__global__ void reduce3(const in_t* in, acc_t* out, int64_t n) {
  __shared__ acc_t s[kBlock];
  const unsigned tid = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * (blockDim.x * 2) + tid;
  s[tid] = load_or_zero<acc_t>(in, i, n) + load_or_zero<acc_t>(in, i + blockDim.x, n);
  __syncthreads();
  for (unsigned st = blockDim.x / 2; st > 0; st /= 2) {
    if (tid < st) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// The last 64 values, reduced by warp 0 without __syncthreads. The classic
// listing relies on `volatile` and implicit warp-synchronous execution, which
// is a race under independent thread scheduling (Volta and later); each step
// here separates its read from its write with __syncwarp.
template <typename acc_t>
__device__ __forceinline__ acc_t last_warp(acc_t* s, unsigned tid) {
  acc_t v = s[tid] + s[tid + 32];
  for (int off = 16; off > 0; off /= 2) {
    __syncwarp();
    s[tid] = v;
    __syncwarp();
    v += s[tid + off];
  }
  return v;
}

// reduce4: reduce3 with the last warp unrolled.
template <typename in_t, typename acc_t>
__global__ void reduce4(const in_t* in, acc_t* out, int64_t n) {
  __shared__ acc_t s[kBlock];
  const unsigned tid = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * (blockDim.x * 2) + tid;
  s[tid] = load_or_zero<acc_t>(in, i, n) + load_or_zero<acc_t>(in, i + blockDim.x, n);
  __syncthreads();
  for (unsigned st = blockDim.x / 2; st > 32; st /= 2) {
    if (tid < st) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid < 32) {
    const acc_t v = last_warp(s, tid);
    if (tid == 0) out[blockIdx.x] = v;
  }
}

// The tree of reduce5 and reduce6: every step known at compile time.
template <int BS, typename acc_t>
__device__ __forceinline__ acc_t unrolled_block_tree(acc_t* s, unsigned tid) {
  if constexpr (BS >= 1024) { if (tid < 512) s[tid] += s[tid + 512]; __syncthreads(); }
  if constexpr (BS >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
  if constexpr (BS >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
  if constexpr (BS >= 128) { if (tid < 64) s[tid] += s[tid + 64]; __syncthreads(); }
  acc_t v = acc_t(0);
  if (tid < 32) v = last_warp(s, tid);
  return v;
}

// reduce5: completely unrolled, with the block size a template parameter.
template <int BS, typename in_t, typename acc_t>
__global__ void __launch_bounds__(BS) reduce5(const in_t* in, acc_t* out, int64_t n) {
  __shared__ acc_t s[BS];
  const unsigned tid = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * (BS * 2) + tid;
  s[tid] = load_or_zero<acc_t>(in, i, n) + load_or_zero<acc_t>(in, i + BS, n);
  __syncthreads();
  const acc_t v = unrolled_block_tree<BS>(s, tid);
  if (tid == 0) out[blockIdx.x] = v;
}

template <typename T>
struct alignas(16) Vec16 {
  static constexpr int kCount = 16 / sizeof(T);
  T v[kCount];
};

// Many elements per thread: a grid-stride loop over 16-byte vectors with
// several loads in flight, then the elements past the last whole vector.
// Needs a 16-byte aligned `in` (the host guarantees it).
template <int BS, typename in_t, typename acc_t>
__device__ __forceinline__ acc_t grid_stride_sum(const in_t* in, int64_t n) {
  constexpr int V = Vec16<in_t>::kCount;
  constexpr int kInFlight = 4;
  const int64_t n_vec = n / V;
  const int64_t stride = int64_t(gridDim.x) * BS;
  const auto* vin = reinterpret_cast<const Vec16<in_t>*>(in);
  acc_t sums[kInFlight] = {};
  int64_t i = int64_t(blockIdx.x) * BS + threadIdx.x;
  for (; i + (kInFlight - 1) * stride < n_vec; i += kInFlight * stride) {
    Vec16<in_t> w[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) w[u] = vin[i + u * stride];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u)
#pragma unroll
      for (int k = 0; k < V; ++k) sums[u] += static_cast<acc_t>(w[u].v[k]);
  }
  for (; i < n_vec; i += stride) {
    const Vec16<in_t> w = vin[i];
#pragma unroll
    for (int k = 0; k < V; ++k) sums[0] += static_cast<acc_t>(w.v[k]);
  }
  for (int64_t j = n_vec * V + int64_t(blockIdx.x) * BS + threadIdx.x; j < n; j += stride)
    sums[0] += static_cast<acc_t>(in[j]);
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

// reduce6: many elements per thread (grid-stride loop), then reduce5's tree.
template <int BS, typename in_t, typename acc_t>
__global__ void __launch_bounds__(BS) reduce6(const in_t* in, acc_t* out, int64_t n) {
  __shared__ acc_t s[BS];
  const unsigned tid = threadIdx.x;
  s[tid] = grid_stride_sum<BS, in_t, acc_t>(in, n);
  __syncthreads();
  const acc_t v = unrolled_block_tree<BS>(s, tid);
  if (tid == 0) out[blockIdx.x] = v;
}

template <typename acc_t>
__device__ __forceinline__ acc_t warp_shuffle_sum(acc_t v) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

// Warp shuffles, one shared-memory round, then one more warp of shuffles.
template <int BS, typename acc_t>
__device__ __forceinline__ acc_t shuffle_block_sum(acc_t v) {
  __shared__ acc_t warp_sums[BS / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_shuffle_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < BS / 32 ? warp_sums[lane] : acc_t(0);
  if (warp == 0) v = warp_shuffle_sum(v);
  return v;
}

// reduce7: reduce6's loads, with the block reduced by warp shuffles.
template <int BS, typename in_t, typename acc_t>
__global__ void __launch_bounds__(BS) reduce7(const in_t* in, acc_t* out, int64_t n) {
  const acc_t v = shuffle_block_sum<BS>(grid_stride_sum<BS, in_t, acc_t>(in, n));
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ----------------------------------------------------------- tensor cores --
// A sum is a product with a ones matrix: D = A * ones + C gives, in every
// column of D, the row sums of A. Since B is all ones, which element of A
// sits where does not matter, so each lane's 16-byte load is its A fragment
// as is. Column 0 of the m16n8 accumulator lives in c0 (row lane/4) and c2
// (row lane/4 + 8) of the lanes with lane % 4 == 0.

__device__ __forceinline__ void mma_ones(float (&d)[4], const uint4& a, __half) {
  const unsigned one = 0x3C003C00u;  // two fp16 ones
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(one), "r"(one));
}

__device__ __forceinline__ void mma_ones(float (&d)[4], const uint4& a, __nv_bfloat16) {
  const unsigned one = 0x3F803F80u;  // two bf16 ones
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(one), "r"(one));
}

__device__ __forceinline__ unsigned to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

// float32 on tf32 tensor cores without tf32's error: x = hi + lo with both
// parts exact in tf32, and B (ones) exact too, so two products carry about
// 21 bits of each input.
__device__ __forceinline__ void mma_ones(float (&d)[4], const uint4& a, float) {
  const unsigned one = 0x3F800000u;
  const float x[4] = {__uint_as_float(a.x), __uint_as_float(a.y), __uint_as_float(a.z),
                      __uint_as_float(a.w)};
  unsigned hi[4], lo[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    hi[k] = to_tf32(x[k]);
    lo[k] = to_tf32(x[k] - __uint_as_float(hi[k]));
  }
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(hi[0]), "r"(hi[1]), "r"(hi[2]), "r"(hi[3]), "r"(one), "r"(one));
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(lo[0]), "r"(lo[1]), "r"(lo[2]), "r"(lo[3]), "r"(one), "r"(one));
}

template <typename in_t>
struct TensorCoreType {
  using type = in_t;
};
template <>
struct TensorCoreType<c10::Half> {
  using type = __half;
};
template <>
struct TensorCoreType<c10::BFloat16> {
  using type = __nv_bfloat16;
};

// Each warp owns tiles of 32 lanes x 16 bytes; two tiles in flight, each
// into its own accumulator.
template <int BS, typename in_t>
__global__ void __launch_bounds__(BS) tensorcore(const in_t* in, float* out, int64_t n) {
  constexpr int64_t kTile = 32 * (16 / sizeof(in_t));
  const unsigned lane = threadIdx.x % 32;
  const int64_t warp = (int64_t(blockIdx.x) * BS + threadIdx.x) / 32;
  const int64_t n_warps = int64_t(gridDim.x) * BS / 32;
  const int64_t n_tiles = n / kTile;
  const auto* tiles = reinterpret_cast<const uint4*>(in);
  float d0[4] = {0.f, 0.f, 0.f, 0.f}, d1[4] = {0.f, 0.f, 0.f, 0.f};
  const typename TensorCoreType<in_t>::type tag{};
  int64_t t = warp;
  for (; t + n_warps < n_tiles; t += 2 * n_warps) {
    const uint4 a0 = tiles[t * 32 + lane];
    const uint4 a1 = tiles[(t + n_warps) * 32 + lane];
    mma_ones(d0, a0, tag);
    mma_ones(d1, a1, tag);
  }
  if (t < n_tiles) mma_ones(d0, tiles[t * 32 + lane], tag);
  float v = lane % 4 == 0 ? (d0[0] + d0[2]) + (d1[0] + d1[2]) : 0.f;
  for (int64_t j = n_tiles * kTile + int64_t(blockIdx.x) * BS + threadIdx.x; j < n;
       j += int64_t(gridDim.x) * BS)
    v += static_cast<float>(in[j]);
  v = shuffle_block_sum<BS>(v);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// int32 on integer tensor cores. They take 8-bit inputs, so each int32 is
// read as its four bytes: v + 2^31 = b0 + 2^8 b1 + 2^16 b2 + 2^24 b3 with
// every b unsigned (flipping the sign bit adds the 2^31). The m16n8k32 u8 mma
// with B[k][n] = (k % 4 == n) puts in column n the sum of byte plane n of
// each A row, because every 32-bit A register starts at a column that is a
// multiple of 4, so column k of A holds byte k % 4 of some int32. Columns 4-7
// of B are zero. In the m16n8 accumulator, lanes with lane % 4 == 0 hold
// planes 0 and 1 (c0/c2 and c1/c3, rows g and g + 8), lanes with lane % 4 == 1
// planes 2 and 3.
__device__ __forceinline__ void mma_byte_planes(int (&d)[4], const uint4& a, unsigned b) {
  constexpr unsigned kSignFlip = 0x80000000u;
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a.x ^ kSignFlip), "r"(a.y ^ kSignFlip), "r"(a.z ^ kSignFlip), "r"(a.w ^ kSignFlip),
        "r"(b), "r"(b));
}

// This lane's share of the tile sums held in d, weighted by byte position,
// as an int64 (wrapping arithmetic: the exact total fits in int64).
__device__ __forceinline__ uint64_t byte_planes_value(const int (&d)[4], unsigned lane) {
  const unsigned pair = lane % 4;  // planes 2*pair and 2*pair + 1
  if (pair > 1) return 0;
  const uint64_t low = uint64_t(uint32_t(d[0])) + uint64_t(uint32_t(d[2]));
  const uint64_t high = uint64_t(uint32_t(d[1])) + uint64_t(uint32_t(d[3]));
  return (low << (16 * pair)) + (high << (16 * pair + 8));
}

template <int BS>
__global__ void __launch_bounds__(BS) tensorcore_int32(const int32_t* in, int64_t* out, int64_t n) {
  constexpr int64_t kTile = 32 * 4;  // int32s per mma: 16 rows x 32 bytes
  // A row sum grows by at most 8 * 255 per mma; flush the int32 accumulators
  // to 64 bits long before 2^31.
  constexpr int64_t kFlushEvery = int64_t(1) << 16;
  const unsigned lane = threadIdx.x % 32;
  const int64_t warp = (int64_t(blockIdx.x) * BS + threadIdx.x) / 32;
  const int64_t n_warps = int64_t(gridDim.x) * BS / 32;
  const int64_t n_tiles = n / kTile;
  const auto* tiles = reinterpret_cast<const uint4*>(in);
  const unsigned plane = lane / 4;  // this lane's column of B
  const unsigned b = plane < 4 ? 1u << (8 * plane) : 0u;
  uint64_t total = 0;
  int64_t my_tiles = 0;
  int64_t t = warp;
  while (t < n_tiles) {
    int d0[4] = {0, 0, 0, 0}, d1[4] = {0, 0, 0, 0};
    const int64_t chunk_end = t + kFlushEvery * n_warps;
    for (; t + n_warps < n_tiles && t + n_warps < chunk_end; t += 2 * n_warps) {
      const uint4 a0 = tiles[t * 32 + lane];
      const uint4 a1 = tiles[(t + n_warps) * 32 + lane];
      mma_byte_planes(d0, a0, b);
      mma_byte_planes(d1, a1, b);
      my_tiles += 2;
    }
    if (t < n_tiles && t < chunk_end) {
      mma_byte_planes(d0, tiles[t * 32 + lane], b);
      my_tiles += 1;
      t += n_warps;
    }
    total += byte_planes_value(d0, lane) + byte_planes_value(d1, lane);
  }
  // Undo the sign flip: every tile element was read as v + 2^31. Lane 0
  // takes the warp's correction.
  if (lane == 0) total -= uint64_t(my_tiles) * uint64_t(kTile) << 31;
  for (int64_t j = n_tiles * kTile + int64_t(blockIdx.x) * BS + threadIdx.x; j < n;
       j += int64_t(gridDim.x) * BS)
    total += uint64_t(int64_t(in[j]));
  const int64_t v = shuffle_block_sum<BS>(static_cast<int64_t>(total));
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ------------------------------------------------------------------ host --

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t resident_grid() {
  return int64_t(sm_count()) * (2048 / kBlock);
}

// One pass: `blocks` partials of acc_t from n values of in_t.
template <typename in_t, typename acc_t>
int64_t launch_pass(const std::string& name, const in_t* in, acc_t* out, int64_t n,
                    cudaStream_t stream, bool dry_run) {
  int64_t blocks;
  if (name == "reduce0" || name == "reduce1" || name == "reduce2") {
    blocks = ceil_div(n, kBlock);
  } else if (name == "reduce3" || name == "reduce4" || name == "reduce5") {
    blocks = ceil_div(n, 2 * kBlock);
  } else {
    const int64_t per_block = kBlock * (16 / int64_t(sizeof(in_t))) * 4;
    blocks = std::max<int64_t>(1, std::min(ceil_div(n, per_block), resident_grid()));
  }
  if (dry_run) return blocks;
  const dim3 grid(static_cast<unsigned>(blocks));
  if (name == "reduce0") reduce0<in_t, acc_t><<<grid, kBlock, 0, stream>>>(in, out, n);
  else if (name == "reduce1") reduce1<in_t, acc_t><<<grid, kBlock, 0, stream>>>(in, out, n);
  else if (name == "reduce2") reduce2<in_t, acc_t><<<grid, kBlock, 0, stream>>>(in, out, n);
  else if (name == "reduce3") reduce3<in_t, acc_t><<<grid, kBlock, 0, stream>>>(in, out, n);
  else if (name == "reduce4") reduce4<in_t, acc_t><<<grid, kBlock, 0, stream>>>(in, out, n);
  else if (name == "reduce5") reduce5<kBlock, in_t, acc_t><<<grid, kBlock, 0, stream>>>(in, out, n);
  else if (name == "reduce6") reduce6<kBlock, in_t, acc_t><<<grid, kBlock, 0, stream>>>(in, out, n);
  else if (name == "reduce7") reduce7<kBlock, in_t, acc_t><<<grid, kBlock, 0, stream>>>(in, out, n);
  else TORCH_INTERNAL_ASSERT(false, "no classic kernel ", name);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return blocks;
}

template <typename in_t>
int64_t launch_tensorcore(const in_t* in, float* out, int64_t n, cudaStream_t stream, bool dry_run) {
  const int64_t per_block = kBlock * (16 / int64_t(sizeof(in_t))) * 2;
  const int64_t blocks = std::max<int64_t>(1, std::min(ceil_div(n, per_block), resident_grid()));
  if (!dry_run) {
    tensorcore<kBlock, in_t><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(in, out, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return blocks;
}

int64_t launch_tensorcore_int32(const int32_t* in, int64_t* out, int64_t n, cudaStream_t stream,
                                bool dry_run) {
  const int64_t per_block = kBlock * 4 * 2;
  const int64_t blocks = std::max<int64_t>(1, std::min(ceil_div(n, per_block), resident_grid()));
  if (!dry_run) {
    tensorcore_int32<kBlock><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(in, out, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return blocks;
}

template <typename in_t, typename acc_t>
int64_t launch_any(const std::string& name, const void* in, void* out, int64_t n,
                   cudaStream_t stream, bool dry_run = false) {
  if constexpr (!std::is_integral_v<acc_t>) {
    if (name == "tensorcore")
      return launch_tensorcore(static_cast<const in_t*>(in), static_cast<float*>(out), n, stream,
                               dry_run);
  }
  if constexpr (std::is_same_v<in_t, int32_t>) {
    if (name == "tensorcore")
      return launch_tensorcore_int32(static_cast<const int32_t*>(in), static_cast<int64_t*>(out), n,
                                     stream, dry_run);
  }
  // int64 partials have no tensor-core path: tensorcore's later passes over
  // them use reduce7.
  const std::string pass_name = name == "tensorcore" ? "reduce7" : name;
  return launch_pass<in_t, acc_t>(pass_name, static_cast<const in_t*>(in), static_cast<acc_t*>(out),
                                  n, stream, dry_run);
}

at::Tensor classic_sum_cuda(const at::Tensor& input, c10::string_view kernel) {
  const std::string name(kernel);
  TORCH_CHECK(is_classic_kernel(name), "unknown classic kernel '", name, "'");
  TORCH_CHECK(name != "cpu", "classic kernel 'cpu' takes a CPU tensor; got one on ", input.device());
  const at::ScalarType t = input.scalar_type();
  const bool low_precision = t == at::kHalf || t == at::kBFloat16;
  const bool wide_kernel = name == "reduce6" || name == "reduce7" || name == "tensorcore";
  TORCH_CHECK(t == at::kFloat || t == at::kInt || (low_precision && wide_kernel),
              "classic kernel '", name, "' takes float32 or int32",
              wide_kernel ? ", float16 or bfloat16" : "", "; got ", t);
  const c10::cuda::CUDAGuard device_guard(input.device());
  RECORD_FUNCTION("gpureduce::classic::" + name, std::vector<c10::IValue>());
  const at::ScalarType out_dtype = t == at::kInt ? at::kLong : t;
  const at::ScalarType acc_dtype = t == at::kInt ? at::kLong : at::kFloat;

  at::Tensor x = input.contiguous();
  if (reinterpret_cast<uintptr_t>(x.const_data_ptr()) % 16 != 0) x = x.clone();
  int64_t n = x.numel();
  if (n == 0) return at::zeros({}, x.options().dtype(out_dtype));
  if (n == 1) return x.reshape({}).to(out_dtype);

  auto stream = c10::cuda::getCurrentCUDAStream();
  at::Tensor cur = x;
  bool first = true;
  while (n > 1) {
    const void* src = cur.const_data_ptr();
    int64_t blocks;
    // Ask the pass for its grid, allocate the partials, then launch it.
    auto run = [&](bool dry, void* dst) -> int64_t {
      if (!first) {
        return acc_dtype == at::kLong ? launch_any<int64_t, int64_t>(name, src, dst, n, stream, dry)
                                      : launch_any<float, float>(name, src, dst, n, stream, dry);
      }
      switch (t) {
        case at::kFloat: return launch_any<float, float>(name, src, dst, n, stream, dry);
        case at::kInt: return launch_any<int32_t, int64_t>(name, src, dst, n, stream, dry);
        case at::kHalf: return launch_any<c10::Half, float>(name, src, dst, n, stream, dry);
        default: return launch_any<c10::BFloat16, float>(name, src, dst, n, stream, dry);
      }
    };
    blocks = run(/*dry=*/true, nullptr);
    at::Tensor partials = at::empty({blocks}, x.options().dtype(acc_dtype));
    run(/*dry=*/false, partials.data_ptr());
    cur = partials;
    n = blocks;
    first = false;
  }
  return cur.reshape({}).to(out_dtype);
}

}  // namespace
}  // namespace classic

TORCH_LIBRARY_IMPL(gpureduce, CUDA, m) { m.impl("classic_sum", &classic::classic_sum_cuda); }

}  // namespace gpureduce
