// What the CUDA engine's host code takes from torch's CUDA runtime: the
// current stream and device, torch's error for a failed CUDA call, and
// workspace from the caching allocator. Behind functions defined once in
// host_runtime.cpp, so that a kernel file (instances/) parses no c10/cuda
// header. A kernel file's headers alone took 8.8 s of nvcc on the 2-core
// machine, of which the caching allocator's header (with the stream's) was
// 3.4 s and cooperative groups' 1.0 (engine/common.cuh has the cluster
// intrinsics instead); without them the CUDA kernel files and host files
// compiled in 12-13% less time on the H200 machines, normalised by the
// unchanged CPU files (NOTES.md, session 56).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpureduce {
namespace cuda {

// torch's current stream and device (c10::cuda::getCurrentCUDAStream,
// c10::cuda::current_device).
cudaStream_t current_stream();
int current_device();

// Throws torch's error for `err` (as C10_CUDA_CHECK does: c10's
// AcceleratorError, with the file and line of the call).
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* file, const char* function, int line);

inline void check_cuda(cudaError_t err, const char* file, const char* function, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, file, function, line);
}

// Workspace of `bytes` on the current device, stream-ordered on the current
// stream by the caching allocator (so that graph capture takes it), given
// back when the handle goes.
struct WorkspaceFree {
  void operator()(void* p) const;
};
using Workspace = std::unique_ptr<void, WorkspaceFree>;
Workspace allocate_workspace(size_t bytes);

// Programmatic launches that pay (launch.h). A kernel launched as a
// programmatic dependent is scheduled while the kernel before it runs if
// that kernel lets it in early (griddepcontrol.launch_dependents), and
// overlaps its launch with that kernel's end; after a kernel that does not,
// it waits for that kernel's end as a plain launch would, but later: on the
// H200 a torch kernel and a 4 KB full sum took 0.4 us more a pair than with
// the sum launched plainly (NOTES.md, session 64).
// dependent_launch: whether to launch `kernel` on `stream` as a dependent,
// which is so where the work it would wait for is one kernel that lets its
// dependents in early. That is known only while a graph is being captured
// (the captured node before it: a kernel of ours marked so); in eager mode
// it is false, and on the legacy default stream nothing is asked.
// `lets_next_in_early`: this launch of `kernel` will, so that the launch
// after it, in the same capture, may be a dependent.
bool dependent_launch(cudaStream_t stream, const void* kernel, bool lets_next_in_early);
// Where `stream` captures: whether a launch of a grid of `blocks` blocks of
// `threads` threads of `kernel` lets the next kernel in early, which it
// does as one block an SM at most, or, with `resident_wave_lets_in`, as one
// wave of resident blocks (all on the SMs at once, by the occupancy
// calculator, cached per kernel and block size), less, with `columns_gap`,
// the grids of over kColumnsLateFromPercent and up to
// kColumnsLateToPercent of that wave; and whether to launch it as a
// dependent (dependent_launch). Outside a capture both are false, and
// nothing but the stream is looked at. The rule is launch_engine_kernel's
// (launch.h).
struct CaptureLaunch {
  bool as_dependent = false;
  bool lets_next_in_early = false;
};
CaptureLaunch capture_launch(cudaStream_t stream, const void* kernel, int64_t blocks, int threads,
                             bool resident_wave_lets_in, bool columns_gap);
// mark_early_trigger: `kernel` always lets its dependents in early (the
// finish kernel), whatever the launch.
void mark_early_trigger(const void* kernel);

}  // namespace cuda
}  // namespace gpureduce

#define GPUREDUCE_CUDA_CHECK(expr) ::gpureduce::cuda::check_cuda((expr), __FILE__, __func__, __LINE__)
// A launch's own error (a bad configuration), as C10_CUDA_KERNEL_LAUNCH_CHECK.
#define GPUREDUCE_LAUNCH_CHECK() GPUREDUCE_CUDA_CHECK(cudaGetLastError())
