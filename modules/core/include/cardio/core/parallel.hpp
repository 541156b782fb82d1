#pragma once
/// @file parallel.hpp
/// The project's only OpenMP entry points (docs/architecture.md). Every loop writes disjoint outputs,
/// and every reduction is summed over fixed-size chunks in a fixed order, so results are
/// bit-identical whatever the thread count.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#ifdef CARDIO_HAVE_OPENMP
#include <omp.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif
#include <thread>

namespace cardio {

/// Number of threads parallel loops will use.
inline int thread_count() {
#ifdef CARDIO_HAVE_OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// CPUs this process may run on (its affinity mask, which Slurm and taskset set; else the
/// hardware's thread count): the most threads that run without sharing a core.
inline int available_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

/// Set the thread count for subsequent parallel loops (n >= 1).
inline void set_thread_count(int n) {
#ifdef CARDIO_HAVE_OPENMP
  omp_set_num_threads(std::max(1, n));
#else
  (void)n;
#endif
}

/// While in scope, OpenMP regions opened by libraries run on the calling thread. CHOLMOD (Debian's
/// build) opens regions of 4 threads inside its factorisation, whatever the thread count set
/// here; with passive waiting each wakes and parks a team, which made a factorisation 2.3x slower
/// (docs/performance.md). Its results do not depend on it (those loops copy and clear).
class SerialLibraryRegions {
 public:
  SerialLibraryRegions() {
#ifdef CARDIO_HAVE_OPENMP
    saved_ = omp_get_max_active_levels();
    omp_set_max_active_levels(0);
#endif
  }
  ~SerialLibraryRegions() {
#ifdef CARDIO_HAVE_OPENMP
    omp_set_max_active_levels(saved_);
#endif
  }
  SerialLibraryRegions(const SerialLibraryRegions&) = delete;
  SerialLibraryRegions& operator=(const SerialLibraryRegions&) = delete;

 private:
  int saved_ = 1;
};

/// Loops shorter than this run on the calling thread: waking the team costs more than it saves
/// (and, next to other busy processes, a parallel region per tiny loop is where time is lost).
inline constexpr std::int64_t kMinParallelLoop = 64;

namespace detail {
/// body(i) for i in [0, n), on the team when n >= min_parallel, else on the calling thread.
template <class Body>
void parallel_loop(std::int64_t n, std::int64_t min_parallel, Body&& body) {
#ifdef CARDIO_HAVE_OPENMP
  if (n >= min_parallel) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#else
  (void)min_parallel;
#endif
  for (std::int64_t i = 0; i < n; ++i) body(i);
}
}  // namespace detail

/// body(i) for i in [0, n). The body must only write data owned by index i.
template <class Body>
void parallel_for(std::int64_t n, Body&& body) {
  detail::parallel_loop(n, kMinParallelLoop, body);
}

/// body(b) for b in [0, n) where each b is a sizeable block of work (a chunk of elements): in
/// parallel from two blocks on, without parallel_for's small-loop cutoff (which ran the element
/// loops of meshes below about 10^6 elements, 64 chunks or fewer per colour, on one thread).
template <class Body>
void parallel_for_blocks(std::int64_t n, Body&& body) {
  detail::parallel_loop(n, 2, body);
}

/// Chunk size of deterministic reductions; fixed so the summation tree never changes.
inline constexpr std::int64_t kReduceChunk = 4096;

/// Sum of term(i) over [0, n) starting from `zero` (0.0, or a zero vector: a sum of 3-vectors adds
/// each coordinate as its own double sum would), bit-identical for any thread count: each fixed
/// chunk is summed sequentially, then the chunk sums are added in chunk order.
template <class T, class Term>
T deterministic_sum(std::int64_t n, const T& zero, Term&& term) {
  const std::int64_t n_chunks = (n + kReduceChunk - 1) / kReduceChunk;
  std::vector<T> partial(static_cast<std::size_t>(n_chunks), zero);
  parallel_for(n_chunks, [&](std::int64_t c) {
    const std::int64_t end = std::min(n, (c + 1) * kReduceChunk);
    T s = zero;
    for (std::int64_t i = c * kReduceChunk; i < end; ++i) s += term(i);
    partial[static_cast<std::size_t>(c)] = s;
  });
  T total = zero;
  for (const T& s : partial) total += s;
  return total;
}

template <class Term>
double deterministic_sum(std::int64_t n, Term&& term) {
  return deterministic_sum(n, 0.0, term);
}

/// Maximum of value(i) over [0, n) (max is order-independent, chunked for parallelism).
template <class Value>
double parallel_max(std::int64_t n, Value&& value) {
  const std::int64_t n_chunks = (n + kReduceChunk - 1) / kReduceChunk;
  std::vector<double> partial(static_cast<std::size_t>(n_chunks), -std::numeric_limits<double>::infinity());
  parallel_for(n_chunks, [&](std::int64_t c) {
    const std::int64_t end = std::min(n, (c + 1) * kReduceChunk);
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = c * kReduceChunk; i < end; ++i) m = std::max(m, value(i));
    partial[static_cast<std::size_t>(c)] = m;
  });
  double m = -std::numeric_limits<double>::infinity();
  for (double v : partial) m = std::max(m, v);
  return m;
}

/// Smallest i in [0, n) with pred(i) true, or -1. Deterministic for any thread count.
template <class Pred>
std::int64_t parallel_first(std::int64_t n, Pred&& pred) {
  const std::int64_t n_chunks = (n + kReduceChunk - 1) / kReduceChunk;
  std::vector<std::int64_t> partial(static_cast<std::size_t>(n_chunks), -1);
  parallel_for(n_chunks, [&](std::int64_t c) {
    const std::int64_t end = std::min(n, (c + 1) * kReduceChunk);
    for (std::int64_t i = c * kReduceChunk; i < end; ++i) {
      if (pred(i)) {
        partial[static_cast<std::size_t>(c)] = i;
        break;
      }
    }
  });
  for (std::int64_t i : partial)
    if (i >= 0) return i;
  return -1;
}

}  // namespace cardio
