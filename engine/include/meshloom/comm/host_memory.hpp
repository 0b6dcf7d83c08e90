// Host memory that collectives read and write: page-aligned, as device allocators (cudaMalloc: 256 bytes or more)
// and pinned staging buffers give it, so that a collective's cost depends on its size and group, not on where the
// heap happened to put its buffers.
//
// Why it matters: copies whose destination lies a few bytes past the source modulo the page size (4 KiB) hit the
// processor's 4K-aliasing stall. On this project's 2-core VM, an MPI_Allgather of 256 KiB on 2 ranks takes 44-48 us
// when (recv - send) mod 4096 is 0 or 64 or more, and 350 us when it is 8 to 24 bytes (docs/benchmarks.md, "Where
// the heap puts a buffer"). A buffer from std::vector is 16-byte aligned at an offset the allocation history decides,
// so the same collective, in plans with different steps before it, measured 1.1-1.35x apart. With every buffer
// page-aligned the offsets between them are fixed by the sizes alone.
//
// Contract: HostAllocator<T> allocates with ::operator new(bytes, std::align_val_t{kHostAlignment}); every pointer
// it returns is a multiple of kHostAlignment. Allocators compare equal (any one frees what another allocated).
//
// Example: HostVector<double> v(32768); reinterpret_cast<std::uintptr_t>(v.data()) % 4096 == 0.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace meshloom::comm {

inline constexpr std::size_t kHostAlignment = 4096;

template <class T>
struct HostAllocator {
  using value_type = T;

  HostAllocator() noexcept = default;
  template <class U>
  HostAllocator(const HostAllocator<U>& /*other*/) noexcept {}  // NOLINT(google-explicit-constructor): rebinding

  [[nodiscard]] T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kHostAlignment}));
  }
  void deallocate(T* p, std::size_t /*n*/) noexcept { ::operator delete(p, std::align_val_t{kHostAlignment}); }

  template <class U>
  friend bool operator==(const HostAllocator& /*a*/, const HostAllocator<U>& /*b*/) noexcept {
    return true;
  }
};

template <class T>
using HostVector = std::vector<T, HostAllocator<T>>;

}  // namespace meshloom::comm
