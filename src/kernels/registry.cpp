#include "kernels/registry.hpp"

namespace iris::kernels {
Registry::Registry() = default;
Registry::~Registry() = default;
}  // namespace iris::kernels
