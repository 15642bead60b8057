// Happens-before edges that ThreadSanitizer cannot see, stated by hand.
//
// Libraries that are not built with -fsanitize=thread hand work between threads with their own
// atomics and futexes (Qt's event queue and QMutex, TBB under cv::parallel_for_), invisible to TSan:
// it then reports the hand-over itself as a data race. tsanRelease(a) on one thread and a later
// tsanAcquire(a) on another state the edge the library really provides, so TSan goes on checking
// everything else (instead of a suppression that would silence the whole library's call stacks).
// Without -fsanitize=thread both are empty.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define GPULAB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GPULAB_TSAN 1
#endif
#endif

#ifdef GPULAB_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace gpulab {

/// What this thread wrote so far happens before a later tsanAcquire(address) on any thread.
inline void tsanRelease([[maybe_unused]] const void* address) noexcept {
#ifdef GPULAB_TSAN
  __tsan_release(const_cast<void*>(address));
#endif
}

/// From here on, this thread sees what other threads wrote before their tsanRelease(address).
inline void tsanAcquire([[maybe_unused]] const void* address) noexcept {
#ifdef GPULAB_TSAN
  __tsan_acquire(const_cast<void*>(address));
#endif
}

}  // namespace gpulab
