// Runs a C API function body, turning any exception into the -1 + last-error convention of iris_capi.h.
#pragma once

#include <exception>
#include <string>

#include "core/error.hpp"

namespace iris::capi {

void set_last_error(Errc code, const std::string& message);
// The same for an Error, with a collective mismatch's facts (iris_last_divergence).
void set_last_error(const Error& e);

template <class Body>
int guarded(Body&& body) {
  try {
    body();
    return 0;
  } catch (const Error& e) {
    set_last_error(e);
  } catch (const std::bad_alloc&) {
    set_last_error(Errc::internal, "out of host memory");
  } catch (const std::exception& e) {
    set_last_error(Errc::internal, e.what());
  }
  return -1;
}

}  // namespace iris::capi
