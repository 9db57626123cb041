// Compiled modules and their kernels, for this rank.
#pragma once

namespace iris::kernels {

class Registry {
 public:
  Registry();
  ~Registry();
};

}  // namespace iris::kernels
