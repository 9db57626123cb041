// Source rewriting the cpu backend needs before the host compiler sees a snippet.
#pragma once

#include <string>
#include <vector>

namespace iris::compiler {

// `extern __shared__ T name[];` (dynamic shared memory, which C++ cannot declare) becomes
// `IRIS_CPU_DYNAMIC_SHARED(T, name)`; line numbers stay where they were.
std::string rewrite_dynamic_shared(const std::string& source);

// The flags IRIS_CPU_MEMORY_MODEL asks for: none for tso (the default), -DIRIS_CPU_WEAK_MEMORY=1 for
// weak, which builds the device API's plain accesses, atomics and fences over the executor's store
// buffers (order_cpu.hpp). Throws Error(environment) for another value.
std::vector<std::string> cpu_memory_model_flags();

}  // namespace iris::compiler
