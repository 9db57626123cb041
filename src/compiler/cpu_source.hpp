// Source rewriting the cpu backend needs before the host compiler sees a snippet.
#pragma once

#include <string>

namespace iris::compiler {

// `extern __shared__ T name[];` (dynamic shared memory, which C++ cannot declare) becomes
// `IRIS_CPU_DYNAMIC_SHARED(T, name)`; line numbers stay where they were.
std::string rewrite_dynamic_shared(const std::string& source);

}  // namespace iris::compiler
