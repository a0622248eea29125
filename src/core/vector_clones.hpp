// ACCEL_CPU_VECTOR_CLONES: a CPU loop compiled three times, for AVX-512, AVX2 with FMA and the x86-64 baseline, the
// copy chosen when the program loads (GCC's and Clang's function multi-versioning); its loops vectorize at each
// copy's width, and std::fma becomes one instruction where the CPU has FMA. Not under ThreadSanitizer: the copy is
// chosen by a resolver that runs while the loader relocates, before TSan's runtime exists, and TSan's instrumentation
// of it crashes the program at start.
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ACCEL_NO_VECTOR_CLONES
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define ACCEL_NO_VECTOR_CLONES
#endif
#if defined(__x86_64__) && !defined(ACCEL_NO_VECTOR_CLONES)
#define ACCEL_CPU_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ACCEL_CPU_VECTOR_CLONES
#endif
