// A step that may fail on some ranks only (a backend that does not start, /dev/shm full on one rank):
// every rank runs it, then every rank learns how it went on every other, and every rank fails
// together, its own message if it failed itself, else the first failing rank's. Without this the
// ranks that succeeded would wait forever in the next collective for the one that failed.
#pragma once

#include <string>

#include "comm/comm.hpp"
#include "core/error.hpp"

namespace iris::heap {

// Throws the failure on every rank when `step` failed anywhere. `what` names the step in the
// divergence header ("iris.init(): backend").
template <class Step>
void all_or_none(comm::Comm& comm, const std::string& what, Step&& step);

// Implementation details below.
namespace detail {
// Announces whether this rank failed; when any did, exchanges the failures and throws.
void agree(comm::Comm& comm, const std::string& what, const std::string& own_failure, Errc own_code);
}  // namespace detail

template <class Step>
void all_or_none(comm::Comm& comm, const std::string& what, Step&& step) {
  std::string failure;
  Errc code = Errc::internal;
  try {
    step();
  } catch (const Error& e) {
    failure = e.what();
    code = e.code();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  detail::agree(comm, what, failure, code);
}

}  // namespace iris::heap
