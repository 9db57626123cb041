// Process-level C API: version, errors, ranks, logging, host collectives.
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "capi/guard.hpp"
#include "capi/iris_capi.h"
#include "comm/comm.hpp"
#include "core/env.hpp"
#include "core/log.hpp"
#include "core/trace.hpp"
#include "core/units.hpp"
#include "iris/version.hpp"
#include "session/session.hpp"

namespace iris::capi {
namespace {
thread_local std::string t_last_error;
thread_local std::string t_last_error_kind = "internal";
// The last error's facts when it was a collective mismatch (has_mismatch), else stale.
thread_local bool t_has_mismatch = false;
thread_local std::string t_mismatch_op, t_mismatch_peer_op;
thread_local int t_mismatch_peer = -1;
}  // namespace

void set_last_error(Errc code, const std::string& message) {
  t_last_error = message;
  t_last_error_kind = name_of(code);
  t_has_mismatch = false;
  if (code == Errc::device_fault) session::note_fault_reported();
}

void set_last_error(const Error& e) {
  set_last_error(e.code(), e.what());
  if (const auto* mismatch = dynamic_cast<const CollectiveMismatch*>(&e)) {
    t_has_mismatch = true;
    t_mismatch_op = mismatch->op();
    t_mismatch_peer = mismatch->peer();
    t_mismatch_peer_op = mismatch->peer_op();
  }
}

// The C API's exchange routes are comm::Route's, in the same order.
static_assert(static_cast<int>(comm::Lane::job) == IRIS_LANE_JOB && static_cast<int>(comm::Lane::session) == IRIS_LANE_SESSION &&
                  static_cast<int>(comm::Lane::session_watched) == IRIS_LANE_SESSION_WATCHED,
              "IRIS_LANE_* must match comm::Lane");
static_assert(static_cast<int>(comm::Route::to_all) == IRIS_ROUTE_TO_ALL &&
                  static_cast<int>(comm::Route::from_root) == IRIS_ROUTE_FROM_ROOT &&
                  static_cast<int>(comm::Route::to_root) == IRIS_ROUTE_TO_ROOT,
              "IRIS_ROUTE_* must match comm::Route");

}  // namespace iris::capi

using namespace iris;

extern "C" {

int iris_abi_version(void) { return IRIS_ABI_VERSION; }
const char* iris_version(void) { return IRIS_LUA_VERSION; }
const char* iris_last_error(void) { return capi::t_last_error.c_str(); }
const char* iris_last_error_kind(void) { return capi::t_last_error_kind.c_str(); }

int iris_last_divergence(const char** op, int* peer, const char** peer_op) {
  if (!capi::t_has_mismatch) return 0;
  *op = capi::t_mismatch_op.c_str();
  *peer = capi::t_mismatch_peer;
  *peer_op = capi::t_mismatch_peer_op.c_str();
  return 1;
}

int iris_exit_code(const char* kind) { return exit_code_of(errc_named(kind != nullptr ? kind : "")); }

int iris_env(const char* name, const char** value) {
  return capi::guarded([&] {
    static thread_local std::string text;
    size_t count = 0;
    const env::Info* all = env::all(&count);
    for (size_t i = 0; i < count; ++i) {
      if (std::strcmp(all[i].name, name) != 0) continue;
      const std::optional<std::string> found = env::get(all[i].var);
      if (found) text = *found;
      *value = found ? text.c_str() : nullptr;
      return;
    }
    throw Error(Errc::internal, format("iris_env: %s is not declared in src/core/env.def", name));
  });
}

int iris_rank(void) { return session::comm().rank(); }
int iris_world_size(void) { return session::comm().size(); }

int iris_log_enabled(int level) { return log::enabled(static_cast<log::Level>(level)) ? 1 : 0; }
void iris_log(int level, const char* message) { log::write(static_cast<log::Level>(level), message); }

int iris_parse_byte_size(const char* text, const char* what, uint64_t* out) {
  return capi::guarded([&] { *out = parse_byte_size(text, what); });
}

int iris_announce(const char* op, uint64_t arg, uint64_t* args_of_all_ranks) {
  return capi::guarded([&] {
    trace::Span span("announce", "collective");
    if (span) span.args().add("op", op).add("arg", static_cast<unsigned long long>(arg));
    auto all = session::comm().announce(op, arg);
    if (args_of_all_ranks != nullptr) {
      for (size_t r = 0; r < all.size(); ++r) args_of_all_ranks[r] = all[r].arg;
    }
  });
}

// "ctx:broadcast(root=0)" -> "broadcast": a trace names an exchange after the call that made it.
static std::string exchange_span_name(const char* op) {
  std::string name = op;
  name = name.substr(0, name.find('('));
  const size_t separator = name.find_last_of(":.");
  if (separator != std::string::npos) name = name.substr(separator + 1);
  return name.empty() ? "exchange" : name;
}

int iris_exchange_bytes(int lane, int route, int root, const char* op, const char* mine, size_t bytes,
                        const char** received, uint64_t* lengths) {
  static thread_local std::string joined;
  return capi::guarded([&] {
    trace::Span span(exchange_span_name(op), "collective");
    if (span) span.args().add("op", op).add("bytes", static_cast<unsigned long long>(bytes)).add("root", root);
    if (lane < IRIS_LANE_JOB || lane > IRIS_LANE_SESSION_WATCHED) throw Error(Errc::internal, format("no exchange lane %d", lane));
    if (route < IRIS_ROUTE_TO_ALL || route > IRIS_ROUTE_TO_ROOT) throw Error(Errc::internal, format("no exchange route %d", route));
    auto parts = session::comm().exchange(static_cast<comm::Lane>(lane), static_cast<comm::Route>(route), root, op,
                                          mine, bytes);
    joined.clear();
    for (size_t r = 0; r < parts.size(); ++r) {
      joined += parts[r];
      lengths[r] = parts[r].size();
    }
    *received = joined.data();
  });
}

void iris_comm_run_alone(const char* reason) { session::comm().run_alone(reason != nullptr ? reason : ""); }

int iris_comm_require_every_rank(const char* op) {
  return capi::guarded([&] { session::comm().require_every_rank(op); });
}

int iris_comm_renew(void) {
  return capi::guarded([&] { session::comm().renew(); });
}

double iris_wall_time(void) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // extern "C"
