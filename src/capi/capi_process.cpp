// Process-level C API: version, errors, ranks, logging, host collectives.
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "capi/guard.hpp"
#include "capi/iris_capi.h"
#include "capi/process.hpp"
#include "comm/comm.hpp"
#include "core/log.hpp"
#include "core/units.hpp"
#include "iris/version.hpp"

namespace iris::capi {
namespace {
thread_local std::string t_last_error;
thread_local std::string t_last_error_kind = "internal";
comm::Comm* g_comm = nullptr;
}  // namespace

void set_last_error(Errc code, const std::string& message) {
  t_last_error = message;
  t_last_error_kind = name_of(code);
}

void attach_comm(comm::Comm* c) { g_comm = c; }

comm::Comm& comm() {
  if (g_comm == nullptr) throw Error(Errc::internal, "no iris host in this process");
  return *g_comm;
}

}  // namespace iris::capi

using namespace iris;

extern "C" {

int iris_abi_version(void) { return IRIS_ABI_VERSION; }
const char* iris_version(void) { return IRIS_LUA_VERSION; }
const char* iris_last_error(void) { return capi::t_last_error.c_str(); }
const char* iris_last_error_kind(void) { return capi::t_last_error_kind.c_str(); }

void iris_set_last_error(const char* kind, const char* message) {
  capi::t_last_error = message;
  capi::t_last_error_kind = kind;
}

int iris_rank(void) { return capi::comm().rank(); }
int iris_world_size(void) { return capi::comm().size(); }
int iris_local_rank(void) { return capi::comm().local_rank(); }
int iris_local_size(void) { return capi::comm().local_size(); }

int iris_log_enabled(int level) { return log::enabled(static_cast<log::Level>(level)) ? 1 : 0; }
void iris_log(int level, const char* message) { log::write(static_cast<log::Level>(level), message); }

int iris_parse_byte_size(const char* text, const char* what, uint64_t* out) {
  return capi::guarded([&] { *out = parse_byte_size(text, what); });
}

int iris_announce(const char* op, uint64_t arg, uint64_t* args_of_all_ranks) {
  return capi::guarded([&] {
    auto all = capi::comm().announce(op, arg);
    if (args_of_all_ranks != nullptr) {
      for (size_t r = 0; r < all.size(); ++r) args_of_all_ranks[r] = all[r].arg;
    }
  });
}

int iris_broadcast_bytes(void* data, size_t bytes, int root) {
  return capi::guarded([&] { capi::comm().broadcast(data, bytes, root); });
}

void iris_comm_run_alone(const char* reason) { capi::comm().run_alone(reason != nullptr ? reason : ""); }

int iris_comm_renew(void) {
  return capi::guarded([&] { capi::comm().renew(); });
}

double iris_wall_time(void) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // extern "C"
