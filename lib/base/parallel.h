#pragma once
// Runs fn(i) for every i in [0, n) on up to `threads` threads, the caller's among them, and returns
// once all have run; each thread takes the next index in order. For a few independent calls that
// mostly wait (API writes), not for CPU work. fn must be safe to call from several threads at once
// and must not throw.
#include <cstddef>
#include <functional>

namespace sriovdra {

void forEachConcurrently(size_t n, size_t threads, const std::function<void(size_t)>& fn);

}  // namespace sriovdra
