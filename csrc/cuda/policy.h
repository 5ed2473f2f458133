// The host policy of the CUDA engine: how each pass is sized. Every constant
// was chosen by a sweep on the H200; the figure that chose it stands beside
// it (benchmarks/NOTES.md has the runs).
#pragma once

#include <cstdint>

namespace gpureduce {
namespace cuda {

struct HostPolicy {
  // A full sum smaller than this many unrolled loops per thread of one block
  // stays in one block, with no workspace: 4 made 2^16 elements 1.3x slower
  // than 8.
  static constexpr int64_t kOneBlockLoops = 8;
  // A rows pass gives each lane of an output about this many vector loads
  // before more lanes share the output.
  static constexpr int64_t kRowChunksPerLane = 4;
  // Rows passes with fewer outputs than the resident warps take a block (or
  // several) per output rather than a warp or less; so do those with up to
  // this many times as many, if each row gives every thread of a block at
  // least one unrolled loop. With 2, [8192,8192] float32 over dim 1 went from
  // 1.23x to 1.27x of torch.sum and the [:, ::2] slice from 0.96x to 1.02x.
  // With 2.5 (10560 outputs on the H200), rows of 8 to 104 KB and 9000 to
  // 9771 outputs read 4-8% faster by a block an output than through the
  // pitch rows kernel ([9771, 52167] float16 1.00x -> 1.08x, [9000, 4100]
  // int64 1.11x -> 1.18x, 6 of 6 dtypes); from 12000 outputs the pitch
  // rows kernel read as fast or faster (0.93-1.02; NOTES.md, session 68).
  static constexpr double kSplitRowsOutFactor = 2.5;
  // At most this many blocks per SM in a split rows pass (fewer if the
  // kernel's registers allow fewer).
  static constexpr int64_t kSplitRowsBlocksPerSm = 4;
  // Threads of a block that reads one output alone (a rows pass of at
  // least 1.5 outputs per SM that no split divides). A/B on the H200 over
  // 153 rows passes of 1 MB or more (random seeds 0-3 and made [n, W] logits,
  // NOTES.md, session 13), 256 against 512: below 0.97x of torch.sum 26 ->
  // 4, geomean 1.52x -> 1.60x ([3673, 32064] bfloat16 79.2 -> 64.1 us,
  // torch.sum 67.4; [231, 50304] float32 18.3 -> 14.9, torch.sum 17.1).
  // Fewer outputs keep 512: at one per SM, 256 lost 10-50% ([134, 32000]
  // float32 7.1 -> 8.7 us).
  static constexpr int64_t kRowBlockThreads = 256;
  // Blocks of an inner- or short-rows pass per resident block slot (the rest loop).
  static constexpr int64_t kInnerRowsBlocksPerSlot = 8;
  // Latency-bound rows passes (fewer blocks of 512 than SMs) shrink their
  // blocks down to this many threads so that every SM has one. Probed with
  // the short and inner rows kernels on 136 small random cases (H200): 128
  // and 64 measured the same, 512 0.3-0.5 us slower on rows cases.
  static constexpr int64_t kMinLatencyThreads = 128;
  // Rows passes of one dense row per output (the pitch rows kernel) with at
  // least this many outputs per SM take a warp per output rather than a
  // block, unless each row gives every thread of a block a whole unrolled
  // loop. A/B on the H200 over 630 rows cases (NOTES.md, session 11): with
  // 16, cases below 0.97x of torch.sum 30 -> 21 and the set's slowest 0.50x
  // -> 0.76x ([4092, 4099] float32 over dim 1 31.1 -> 19.7 us, torch.sum
  // 23.0); with 4, rows of 600 outputs lost up to 44% ([600, 6000] float32
  // 8.0 -> 14.4 us).
  static constexpr int64_t kPitchOutputsPerSm = 16;
  // Outputs of one dense row each take a warp per output from this many
  // outputs per SM, where a block of kRowBlockThreads (the split rows
  // kernel's, launch_split_rows) would give each thread less than a whole
  // unrolled loop. A/B on H100s (132 SMs) in one process against
  // kPitchOutputsPerSm (NOTES.md, session 110), over the 20 passes that
  // differ of a fresh random draw of 8 to 16 outputs an SM and [tokens,
  // hidden] rows: 1.039x faster in geometric mean, 10 faster by over 3%, 8
  // slower; bfloat16 [1858, 8065] over dim 1 0.99x -> 1.38x of torch.sum,
  // float64 [1820, 1133] 0.87x -> 1.10x; slower: float32 [1525, 3932] 1.50x
  // -> 1.31x, int32 [1348, 2568] 3.73x -> 2.89x. Without the bound on the
  // row (any row short of kThreads * kUnroll vectors) the same draw lost:
  // 0.994x over 50 passes, float32 [1426, 5120] 1.67x -> 1.35x. With 6
  // outputs an SM, five passes of 6 to 8 lost 8-35%.
  static constexpr int64_t kOneRowOutputsPerSm = 8;
  // Chunks per lane in the short rows kernel. 2 against 1 on the H200:
  // [4194304,16] float32 over dim 1 6.25x against 6.01x of torch.sum,
  // [524288,128] 1.87x / 1.59x; 4 was no better than 2. bfloat16 and int16
  // vectors take 1: with 2 they spill at 64 registers.
  static constexpr int64_t kShortRowsPerLane = 2;
  // A columns thread of 4-byte elements or of loads of 4 bytes or less
  // walks about this many rows before more threads share a column (and a
  // latency-bound pass grouping outer indices goes beyond kMaxRowThreads
  // only while each walks this many); at most kMaxRowThreads share one.
  static constexpr int64_t kRowsPerColumnThread = 16;
  static constexpr int64_t kMaxRowThreads = 16;
  // The same for 8- and 16-byte loads of 1-, 2-, 8- and 16-byte elements:
  // fewer, longer row threads leave more threads along the columns and a
  // shallower tree over the row partials. On the H200 (NOTES.md, session
  // 107), 24 columns passes of 170-342 MB at 281 rows, 64 against 16:
  // float64 [3, 281, 29728] over dim 1 0.843x -> 0.996x of torch.sum, int64
  // [281, 151936] over dim 0 0.912x -> 0.997x, bfloat16 [2, 281, 151936]
  // 0.895x -> 1.042x; but float32 [281, 151936] 1.000x -> 0.970x, hence 16
  // for 4-byte elements. On an H100 (session 108), 140 random columns passes
  // of 7 dtypes, 16-512 MB, 64 for every load: at 256 rows or more every
  // dtype group at least as fast in geometric mean (bfloat16
  // [5, 344, 85952] over dim 1 0.956x -> 1.029x, float64 [5, 278, 20796]
  // 0.985x -> 1.059x, int8 [822, 185504] over dim 0 14.1x -> 15.7x), the
  // worst single loss 2.5% (float64 [13, 763, 4061] 0.992x -> 0.967x). Not
  // loads of 4 bytes or less, whose long-walk plans (kLongWalkThreadsPerSm)
  // were tuned with 16: at 64, three of test_cuda.py's changed plan (float16
  // [149, 72, 34, 171][:, ::2] over dim 2, session 70's 0.80x -> 1.07x,
  // lost its 8 loads in flight).
  static constexpr int64_t kRowsPerWideColumnThread = 64;
  // The rows a columns thread of T loaded V at a time walks before more row
  // threads share its column (launch_columns' by_wanted).
  template <typename T, int V>
  static constexpr int64_t rows_per_column_thread() {
    return sizeof(T) == 4 || V * sizeof(T) <= 4 ? kRowsPerColumnThread : kRowsPerWideColumnThread;
  }
  // A folded columns grid of narrow loads keeps only the row threads that
  // give every SM this many threads of the long-walk kernel (launch_columns).
  // A/B on the H200 (NOTES.md, session 70), 1024 against 768: over the 152
  // passes either changes, 5 slower than the old plan by over 5% against 12
  // (at 768, blocks of 26 to 30 threads, each thread walking 139 to 294 rows
  // alone: [18508, 204, 14] bfloat16 over dim 1 1.27x -> 1.06x of
  // torch.sum, where 1024 kept two row threads and made it 1.36x).
  static constexpr int64_t kLongWalkThreadsPerSm = 1024;
  // Up to this many where a block takes several outer indices and they fill
  // less than a wave (each row thread at most one unrolled loop of rows; in
  // passes of 1 MB or more, only while each walks kRowsPerColumnThread
  // rows). A/B on the H200 (NOTES.md, session 13), 64 against 16: over 741
  // random passes under 1 MB 47 faster by over 5%, 9 slower (at most 8%),
  // below 0.97x of torch.sum 37 -> 33 ([4, 2104, 12] bfloat16 over dim 1 to
  // float32 6.25 -> 3.92 us); over 367 columns passes of 1 MB or more, with
  // the rows-per-thread bound, 31 faster, 5 slower ([148, 512, 8, 8]
  // bfloat16 over dim 1 11.7 -> 6.7 us, torch.sum 17.5; [1883, 4004, 16]
  // float16 83.8 -> 61.8, torch.sum 80.1). Without that bound those passes
  // lost up to 34% ([348, 197, 64] bfloat16 6.6 -> 10.1 us).
  static constexpr int64_t kMaxLatencyRowThreads = 64;
  // A columns pass of 1 MB or more with at least this many vectors of
  // columns per SM keeps only the row threads its rows want (each walking
  // rows_per_column_thread rows), and where a block takes several outer
  // indices, blocks of kColumnGroupedThreads. Torch's kernel gives such
  // passes a thread per vector walking every row; ncu on the H200 (NOTES.md,
  // session 14): [31206, 20, 12] float32 over dim 1 ran 7.5 M warp
  // instructions in 1486 blocks of 504 threads, 8 row threads a column and a
  // three-level tree, against torch's 1.4 M. A/B over 367 columns passes of
  // 1 MB or more, 256 and 256 against before: 29 faster by over 5%, 4
  // slower (a repeat of the same code: 6 and 5), below 0.97x of torch.sum
  // 59 -> 49 ([31206, 20, 12] 13.8 -> 11.1 us, torch.sum 10.7; [1497, 7,
  // 512] float16 over dim 1 8.7 -> 5.8, torch.sum 8.8). 128 vectors per SM
  // gained some passes of a few hundred rows and lost [23, 16, 4096] float32
  // summed as float64 4.9 -> 6.8 us; blocks of 128 gained as much as 256.
  static constexpr int64_t kColumnVectorsPerSm = 256;
  static constexpr int64_t kColumnGroupedThreads = 256;
  // At least this many 16-byte vectors of adjacent columns per block row.
  static constexpr int64_t kColumnMinBx = 32;
  // A latency-bound columns pass packs several outer indices into a block
  // only where they have fewer vectors of columns than this. 16 against
  // packing up to 512 threads' worth, on the H200 over 754 random passes
  // under 1 MB: below 0.97x of torch.sum 48 -> 36 ([3, 1024, 4, 4]
  // channels_last float32 over (2, 3), before in six blocks of 512 in
  // clusters of two: 3.63 -> 2.21 us, torch.sum 2.73); 32 gave 41.
  static constexpr int64_t kGroupOutersBelowVectors = 16;
  // A split columns pass gives each thread at least this many unrolled
  // loops: with 1, [64,512,512] over dim 0 fell from 0.96x to 0.62x of
  // torch.sum. A small input (at most kSmallColumnInputBytes) whose unsplit
  // pass fills at most a quarter wave of blocks is bound by latency and
  // takes kMinColumnLoopsSmall: [1024,1024] over dim 0 0.89x -> 1.00x.
  static constexpr int64_t kMinColumnLoops = 4;
  static constexpr int64_t kMinColumnLoopsSmall = 1;
  static constexpr int64_t kSmallColumnInputBytes = int64_t(32) << 20;
  // Passes under this many bytes whose grid is one wave of several
  // resident blocks an SM let the next kernel in early (launch.h).
  static constexpr int64_t kEarlyWaveMaxBytes = int64_t(8) << 20;
  // Except a columns grid of over kColumnsLateFromPercent and up to
  // kColumnsLateToPercent of its resident wave, whose next grid's blocks
  // cannot all be let in beside it. A/B on the H200 (NOTES.md, session 71),
  // 121 columns passes under 8 MB captured back to back (made [N, R, C] of
  // short walks and random seeds 0-4), the 22 grids in that band without the
  // early trigger: time 0.965x in geometric mean, 10 faster by over 5%, 4
  // slower by 5-10%, below 0.97x of torch.sum 8 -> 0 ([19506, 8, 7] float16
  // over dim 1 0.90x -> 1.02x, [24328, 11, 7] bfloat16 0.95x -> 1.03x,
  // [55085, 5, 3] float32 0.93x -> 1.02x; slower: [55, 2048, 4, 4]
  // channels_last float32 over (2, 3) 1.19x -> 1.08x). Grids of 70% to a
  // whole wave keep it: without it, [37883, 4, 7] bfloat16 went from 0.97x
  // to 0.87x. The same band for every kernel lost as often as it gained.
  static constexpr int64_t kColumnsLateFromPercent = 50;
  static constexpr int64_t kColumnsLateToPercent = 70;
  // Rows per thread up to which a small columns pass's split is cut to one
  // cluster (four unrolled loops).
  static constexpr int64_t kSmallSplitRows = 16;
  // A columns pass with fewer tiles than this many waves of resident blocks
  // (counted at EnginePolicy::kBlocksPerSm per SM, though float32 and int32
  // columns hold three) is split along its rows to reach it. 1 against 2, A/B
  // on the H200 over 367 columns passes of 1 MB or more (random seeds 0-3 and
  // made [B, T, C] over T, NOTES.md, session 13): 62 faster by over 5%, 11
  // slower; below 0.97x of torch.sum 73 -> 59 ([67, 64, 56, 56]
  // channels_last bfloat16 over (2, 3) 21.7 -> 13.0 us, torch.sum 19.6;
  // [8, 1024, 768] float32 over dim 1 14.9 -> 11.2, torch.sum 13.7).
  // Slower: a few splits of very long columns in few tiles ([16, 33984,
  // 247] bfloat16 over (0, 1) 113 -> 162 us, torch.sum 124). Earlier, 2
  // against 4: [256,1024,256] over dim 1 0.96x -> 1.03x.
  static constexpr int64_t kColumnTargetWaves = 1;
  // A split columns pass reads at least this many bytes of input per column
  // and split for each accumulator it writes.
  static constexpr int64_t kSplitBytesPerPartial = 8;
  // Rows that no vector fits (their width, or their start) are read as a
  // vector body per row when it holds at least this many vectors; shorter
  // ones go to the stream rows (launch_stream_rows).
  static constexpr int64_t kRaggedRowMinChunks = 16;
  // Ragged columns (ragged_columns_shift) need at least this many whole
  // vectors per outer index, and at most this many rows.
  static constexpr int64_t kRaggedColumnMinVectors = 16;
  static constexpr int64_t kRaggedColumnMaxRows = 2;
  // Stream rows take tiles of 16 KB (StreamRowsWidePolicy) for rows of at
  // least this many bytes in passes of at least kStreamRowsWideMinBytes.
  static constexpr int64_t kStreamRowsWideMinRowBytes = 32;
  static constexpr int64_t kStreamRowsWideMinBytes = int64_t(16) << 20;
  // Dense whole planes of narrow columns (launch_dense) go through the
  // stream-rows kernel from this many rows (4- and 8-byte elements) and
  // from kStreamPlanesMinRowsNarrow (1- and 2-byte ones), the tiles below.
  static constexpr int64_t kStreamPlanesMinRows = 4;
  static constexpr int64_t kStreamPlanesMinRowsNarrow = 7;
  // Dense planes that the columns kernel would read take the stream-rows
  // kernel's tiles instead (stream_planes_beat_columns in reduce_cuda.cuh)
  // where their rows are of at most kStreamPlanesAnySizeMaxRowBytes (1-byte
  // elements: any width; 2-byte ones in passes under 4 MB), or, for 4- and
  // 8-byte elements in passes under 4 MB, narrower than
  // kStreamPlanesMaxRowBytes; those
  // the stream-columns kernel would read, with rows narrower than
  // kStreamPlanesOverColumnsMaxRowBytes (A/B on the H200, NOTES.md, session 30).
  static constexpr int64_t kStreamPlanesMaxRowBytes = 128;
  static constexpr int64_t kStreamPlanesAnySizeMaxRowBytes = 16;
  static constexpr int64_t kStreamPlanesOverColumnsMaxRowBytes = 64;
  // Stream-rows tiles whose outputs take one lane each, along one output
  // dim with nothing to project, are summed with a tile's per-output
  // decisions taken once (StreamRowsArgs::direct_rounds) where each output
  // sums at most this many elements. A/B on the H200 over 204 passes, the
  // same bits (NOTES.md, session 72): rows and planes of 2 to 32 elements an
  // output 0.90-0.98x of the time before in geometric mean by size class
  // ([11498327, 3] bfloat16 over dim 1 43.5 -> 35.2 us), from 33 elements
  // 1.008-1.015x ([124033, 33] uint8 1.14x).
  static constexpr int64_t kStreamDirectMaxElements = 32;
  // Slabs of stream rows (an outer reduced dim over streams of rows) need
  // at least this many row tiles per SM, of at least this many bytes each:
  // a block walks a tile of every slab, so fewer or smaller tiles leave too
  // few bytes in flight.
  static constexpr int64_t kStreamSlabsMinTilesPerSm = 2;
  static constexpr int64_t kStreamSlabsMinTileBytes = 2048;
  // Segments of stream rows (runs of planes that follow densely, at gaps
  // along an outer kept dim) of at least this many bytes each: a shorter
  // run is a tile of its own whose few bytes leave the block's pipeline
  // mostly empty. A/B on the H200 over 81 passes of 0.7 to 64 MB with runs
  // of 60 bytes to 330 KB (NOTES.md, session 50), torch.sum's time over
  // ours in geometric mean: 1.18x with no segments, 1.35x from 32 KB, 1.64x
  // from 2 KB, 1.50x from 512 bytes (runs under 2 KB lost: [28197, 52,
  // 9][:, 10:48] float32 0.72x -> 0.46x).
  static constexpr int64_t kStreamSegmentMinBytes = int64_t(2) << 10;
  // A pass reading fewer bytes than this is bound by latency: its kernels
  // are sized to give every SM a block in as few memory rounds and
  // instructions as they can, not to keep loads in flight. 1 MB against 4 MB on 1010 random cases of up to 16 MB (H200,
  // NOTES.md): 157 against 159 of them below 0.97x of torch.sum (181 with
  // neither).
  static constexpr int64_t kLatencyBoundBytes = int64_t(1) << 20;
  // A pass reading fewer bytes than this takes few blocks (often one): there
  // the tiles' serial walk through shared memory and a split's combine across
  // blocks (a cluster's two barriers and its remote reads) cost more than
  // their loads, and the columns kernel reads it unsplit where each row
  // thread walks at most kTinyColumnWalkRows rows.
  static constexpr int64_t kTinyPassBytes = int64_t(256) << 10;
  static constexpr int64_t kTinyColumnWalkRows = 24;
  // Columns of 1- and 2-byte elements in dense planes take vectors of 8 or
  // 4 bytes only with at least this many vectors across their outputs
  // (n_out * n_cols / v): 11910 of [3970, 11235, 6] bfloat16 lost to the
  // tiles, 62955 of [12591, 360, 10] float16 gained 1.7x (H200).
  static constexpr int64_t kNarrowVectorMinLanes = int64_t(1) << 14;
  // ... or with rows of at least this many vectors, in passes of at least
  // kNarrowVectorWideRowMinBytes (narrow_column_vectors_pay).
  static constexpr int64_t kNarrowVectorWideRowVectors = 8;
  static constexpr int64_t kNarrowVectorWideRowMinBytes = int64_t(4) << 20;
  // Dense tiles (engine/dense.cuh): at most this many blocks per SM in the
  // grid (the rest loop), and planes larger than a tile (a block each) only
  // where there are at least kDenseMinPlanesPerSm planes per SM.
  static constexpr int64_t kDenseBlocksPerSm = 8;
  static constexpr int64_t kDenseMinPlanesPerSm = 4;
  // Dense planes of narrow columns go to the stream-columns kernel from
  // this many bytes a plane (in passes of at least kLatencyBoundBytes): on
  // the H200, 4 of 217 passes of 1 MB or more were slower than before by
  // over 5% with 32 KB, 17-19 with 4 KB. 2-byte elements from 512 bytes
  // (planes too small for a block share one): against 32 KB, 144 made and
  // 25 random 16-bit passes below 0.97x of torch.sum 82 -> 48; 2 KB 55
  // (NOTES.md, session 12). 4- and 8-byte columns of smaller planes read
  // faster through the columns kernel (0.95-0.98 in the same A/B).
  static constexpr int64_t kStreamColumnsMinPlaneBytes = int64_t(32) << 10;
  static constexpr int64_t kStreamColumnsMinPlaneBytes16 = 512;
  // Dense planes of at least kStreamColumnsFirstMinPlaneBytes with rows
  // under kStreamColumnsFirstMaxRowBytes take the stream-columns kernel
  // before the vector columns kernels, whatever vector their columns fit
  // (a few planes of many narrow rows, [B, N, C] over N, leave the columns
  // kernel only a few vectors of columns to spread over the GPU). A/B on
  // the H200 over 74 such passes of 1 MB to 512 MB (NOTES.md, session 31):
  // 33 faster by over 3%, 1 slower, below 0.97x of torch.sum 3 -> 0 ([7,
  // 961362, 2] float32 over dim 1 0.70x -> 1.41x, [8, 2000000, 2] float64
  // 1.00x -> 1.33x, [2, 128, 112, 112] channels_last bfloat16 over (0, 2,
  // 3) 2.32x -> 3.76x). Smaller planes lost (up to 0.66x of before: [5,
  // 3985, 16] float32, 249 KB planes), and so did rows of 1 KB ([5, 2048,
  // 256] float32 1.43x -> 1.34x).
  static constexpr int64_t kStreamColumnsFirstMinPlaneBytes = int64_t(512) << 10;
  static constexpr int64_t kStreamColumnsFirstMaxRowBytes = 1024;
  // Planes of 128 KB or more in passes of at least 8 planes an SM take it
  // first too. A/B on the H200 (NOTES.md, session 85), in one process,
  // over 350 passes (seeds 0-2's kept-innermost passes of 1 MB or more, and
  // 122 more of [B, R, C] over R): a threshold of 128 KB for every pass
  // changed the kernel of 33; the 8 of 1284 planes or more all faster, by
  // 16-58% ([3524, 6392, 10] float32 over dim 1 0.93x -> 1.37x of
  // torch.sum, [1902, 12250, 8] float32 1.03x -> 1.56x, [2224, 14721, 8]
  // bfloat16 1.05x -> 1.67x); of the 25 under 800 planes, 14 slower by over
  // 3% and 8 faster ([16, 3502, 14] float32 1.86x -> 1.20x, [368, 24186, 2]
  // float32 1.31x -> 1.93x). 64 KB lost on many planes too ([12993, 5773,
  // 6] bfloat16 1.27x -> 1.16x, [13051, 128, 256] float16 into float64
  // 10.9x -> 9.5x).
  static constexpr int64_t kStreamColumnsFirstManyMinPlaneBytes = int64_t(128) << 10;
  static constexpr int64_t kStreamColumnsFirstManyPlanesPerSm = 8;
  // Scattered planes (dense planes that do not follow each other: [A, B,
  // R, C][:, ::2] over R) take the stream-columns kernel, where dense ones
  // would, only in passes of this many bytes or more, of 2- and 4-byte
  // elements, in planes of StreamColumnsPolicy::kScatteredMinVecsPerPeriodThread
  // vectors per thread of a period; the rest keep the columns kernel. A/B
  // on the H200 over 160 made passes of 7-8 and 63-64 MB (NOTES.md, session
  // 61): 64 MB 16-bit planes of 300 rows read 1.20-1.70x as fast as before
  // (speedups over torch.sum: [25, 52, 300, 171][:, ::2] float16 0.93x ->
  // 1.42x, [49, 51, 300, 45][:, 1:] bfloat16 0.76x -> 1.30x), float32
  // 1.03-1.19x ([35, 70, 300, 45][:, ::2] 0.92x -> 1.09x); 8 MB passes
  // gained as often as they lost ([9, 18, 300, 171][:, ::2] bfloat16 0.90x
  // -> 0.81x, [6, 12, 300, 171][:, ::2] float32 0.98x -> 0.73x), planes of
  // 4 vectors a period thread lost or held ([148, 296, 34, 45][:, ::2]
  // float16 0.84x -> 0.78x), and so did float64 (0.82-1.03x of before).
  static constexpr int64_t kStreamColumnsScatteredMinBytes = int64_t(32) << 20;
  // Few dense planes of 8-byte elements that the stream-columns kernel
  // would split along their rows, in passes of at most
  // kSplitPlanes8MaxBytes, with at least kSplitPlanes8MinOutputs outputs and
  // at most kSplitPlanes8MaxRows rows a plane, take the columns kernel: its
  // loads are 8 bytes a lane already, and it finishes its split in a
  // cluster, not through the stream's second launch (whose kernel took
  // about 2 us in traces of such passes of 5-7 us). A/B on the H200
  // (NOTES.md, session 69): in the sample the rule was drawn from, all 12
  // such passes faster by 13-75% ([18, 322, 207] float64 over dim 1 0.59x
  // -> 1.03x of torch.sum, [22, 377, 113] int64 0.68x -> 1.09x); of 5
  // fresh ones, 4 faster by 9-56% ([39, 298, 167] int64 0.68x -> 1.06x),
  // the one slower a 59 MB pass ([25, 2074, 143] int64 1.19x -> 0.93x),
  // hence the bound on bytes.
  static constexpr int64_t kSplitPlanes8MinOutputs = 512;
  static constexpr int64_t kSplitPlanes8MaxRows = 4096;
  static constexpr int64_t kSplitPlanes8MaxBytes = int64_t(32) << 20;
  // A split stream-columns pass of at most this many input bytes (and
  // kMaxClusterSplit blocks a plane) finishes inside a cluster
  // (launch_stream_columns).
  static constexpr int64_t kStreamColumnsClusterMaxBytes = int64_t(16) << 20;
  // A grid of at most this many waves of resident blocks is folded into one
  // (fold_into_one_wave in reduce_cuda.cuh), rows passes down to
  // kFoldMinGroup lanes per output.
  static constexpr int64_t kFoldMaxWaves = 4;
  static constexpr int64_t kFoldMinGroup = 4;
  // A pitch rows fold to fewer than kFoldNarrowGroup lanes per output only
  // where a lane's walk is then at most kFoldNarrowMaxRounds rounds of
  // kUnroll loads; a longer walk folds down to kFoldNarrowGroup lanes, though
  // that grid is not one wave (launch_pitch_rows).
  static constexpr int64_t kFoldNarrowGroup = 16;
  static constexpr int64_t kFoldNarrowMaxRounds = 4;
  // Split rows passes of a block per output fold down to blocks of this many
  // threads.
  static constexpr int64_t kFoldMinBlockThreads = 128;
  // A columns pass whose output runs along another dim than its columns
  // (a permuted input whose kept dims are transposed against memory) writes
  // each column's outputs far apart, a sector per element. With at most
  // kStageTransposedMaxRows rows per output and at least
  // kStageTransposedMinBytes of output, it writes them in its own order to
  // a scratch buffer, then copies that into the output (ATen's copy). A/B on
  // the H200 over 12 made permutations (NOTES.md, session 26): [109, 3,
  // 8080, 7] int64 permuted (2, 3, 0, 1) over dim 3 0.62x -> 1.18x of
  // torch.sum, [2048, 2, 2048] float32 (2, 0, 1) over dim 2 0.91x -> 1.35x,
  // [128, 8, 8192] bfloat16 3.41x -> 4.48x; with 16 rows or more the direct
  // writes were faster ([64, 16, 4096] float32 4.06x against 3.76x), and so
  // were they on the CPU, where the planner never stages. Only passes of at
  // least kStageTransposedMinCols columns: with few columns a block takes
  // many outer indices, whose neighbours along the output's unit-stride dim
  // then write side by side ([43384, 70, 2, 2] bfloat16 permuted (2, 0, 3, 1)
  // over dim 0, two columns: 2.71x -> 1.91x staged), while 224 columns
  // gained ([32, 3, 224, 224] float32 permuted (3, 2, 0, 1) over dim 3:
  // 1.28x direct, 1.68x staged). Between 2 and 224 columns it was not
  // measured; 64 is a guess between them.
  static constexpr int64_t kStageTransposedMaxRows = 8;
  static constexpr int64_t kStageTransposedMinCols = 64;
  static constexpr int64_t kStageTransposedMinBytes = int64_t(1) << 20;
  // Threads of a finish block that combines several outputs' partials
  // (splits of up to 32 ways).
  static constexpr int64_t kFinishGroupedThreads = 256;
};

}  // namespace cuda
}  // namespace gpureduce
