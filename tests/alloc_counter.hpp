#pragma once
// A process-wide heap allocation counter for the no-allocation tests.
// Include it in exactly one translation unit of a test program: it replaces
// malloc and its relatives (forwarding to glibc's __libc_* entry points) in
// a normal build, and installs the sanitizer allocator hooks under
// AddressSanitizer, which owns malloc. Eigen allocates through malloc, so
// this sees what operator new alone would miss.
//
//   g_allocations = 0; g_armed = true; f(); g_armed = false;  // count f's allocations

#include <atomic>
#include <cstddef>

namespace {
std::atomic<bool> g_armed{false};
std::atomic<long> g_allocations{0};
inline void count_allocation() {
  if (g_armed.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

#if defined(__SANITIZE_ADDRESS__)
#define PLUME_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLUME_ASAN 1
#endif
#endif

#ifdef PLUME_ASAN
// From the sanitizer runtime (sanitizer/allocator_interface.h, which GCC
// does not install).
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                                         void (*free_hook)(const volatile void*));
namespace {
void on_malloc(const volatile void*, std::size_t) { count_allocation(); }
void on_free(const volatile void*) {}
const int g_hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}  // namespace
#else
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t n) {
  count_allocation();
  return __libc_malloc(n);
}
void* calloc(std::size_t a, std::size_t b) {
  count_allocation();
  return __libc_calloc(a, b);
}
void* realloc(void* p, std::size_t n) {
  count_allocation();
  return __libc_realloc(p, n);
}
void* memalign(std::size_t alignment, std::size_t n) {
  count_allocation();
  return __libc_memalign(alignment, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) {
  count_allocation();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  count_allocation();
  *out = __libc_memalign(alignment, n);
  return *out ? 0 : 12;  // ENOMEM
}
void free(void* p) { __libc_free(p); }
}
#endif
