#pragma once
/// @file memory.hpp
/// Memory guard for large images: fail early with a clear message instead of being OOM-killed.
#include <cstdint>
#include <string>

namespace cardio::imaging {

/// Bytes this process can still allocate: MemAvailable from /proc/meminfo, capped by the
/// container's limit (cgroup v2 memory.max - memory.current of this cgroup and its ancestors,
/// or cgroup v1 memory.limit_in_bytes - memory.usage_in_bytes) and by the address space left
/// under RLIMIT_AS (`ulimit -v`, which makes allocations fail with std::bad_alloc) when smaller.
std::uint64_t available_memory_bytes();

/// e.g. "1.5 GB", "12 MB" (decimal units; GB from 0.1 GB up, however large).
std::string format_bytes(std::uint64_t bytes);

/// Throws cardio::Error "<what> needs about X GB but only Y GB are available" if needed_bytes
/// exceeds available_memory_bytes().
void check_fits_in_memory(std::uint64_t needed_bytes, const std::string& what);

}  // namespace cardio::imaging
