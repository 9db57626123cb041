// Kernels behind the C boundary: thin wrappers over kernels::Registry (src/kernels).
#include "capi/capi_kernels.h"

#include <memory>
#include <string>
#include <vector>

#include "capi/guard.hpp"
#include "capi/process.hpp"
#include "comm/comm.hpp"
#include "iris/impl/abi.h"
#include "kernels/registry.hpp"

using namespace iris;

static_assert(sizeof(iris_context_data) == sizeof(abi::ContextData) &&
                  offsetof(iris_context_data, rank) == offsetof(abi::ContextData, rank) &&
                  offsetof(iris_context_data, world_size) == offsetof(abi::ContextData, world_size),
              "iris_context_data must match abi::ContextData");

struct iris_timer {
  std::unique_ptr<runtime::Event> start;
  std::unique_ptr<runtime::Event> stop;
};

namespace {

kernels::Kernel& kernel_of(iris_kernel* k) { return *reinterpret_cast<kernels::Kernel*>(k); }
const kernels::Kernel& kernel_of(const iris_kernel* k) { return *reinterpret_cast<const kernels::Kernel*>(k); }

runtime::LaunchConfig config_of(const uint32_t* dims, uint64_t shared_bytes) {
  runtime::LaunchConfig c;
  c.grid = {dims[0], dims[1], dims[2]};
  c.block = {dims[3], dims[4], dims[5]};
  c.shared_bytes = shared_bytes;
  return c;
}

int kind_code(kernels::ParamKind kind) {
  switch (kind) {
    case kernels::ParamKind::pointer: return IRIS_PARAM_POINTER;
    case kernels::ParamKind::integer: return IRIS_PARAM_INTEGER;
    case kernels::ParamKind::floating: return IRIS_PARAM_FLOAT;
    case kernels::ParamKind::boolean: return IRIS_PARAM_BOOL;
    case kernels::ParamKind::context: return IRIS_PARAM_CONTEXT;
    case kernels::ParamKind::float16: return IRIS_PARAM_FLOAT16;
    case kernels::ParamKind::bfloat16: return IRIS_PARAM_BFLOAT16;
    case kernels::ParamKind::unsupported: break;
  }
  return -1;  // never handed out: Program::kernel refuses such kernels
}

}  // namespace

extern "C" {

int iris_compile(const char* source, size_t source_len, const char* origin, const char* description,
                 const char* file_name, const char* const* defines, int define_count, const char* const* options,
                 int option_count, iris_program** out) {
  return capi::guarded([&] {
    kernels::ProgramSource s;
    s.source.assign(source, source_len);
    s.origin = origin;
    s.description = description;
    s.file_name = file_name;
    for (int i = 0; i < define_count; ++i) s.defines.emplace_back(defines[2 * i], defines[2 * i + 1]);
    for (int i = 0; i < option_count; ++i) s.options.emplace_back(options[i]);
    *out = reinterpret_cast<iris_program*>(&kernels::current_registry().compile(std::move(s)));
  });
}

int iris_compile_builtin(const char* name, iris_program** out) {
  return capi::guarded(
      [&] { *out = reinterpret_cast<iris_program*>(&kernels::current_registry().builtin(name)); });
}

int iris_program_kernel(iris_program* program, const char* name, iris_kernel** out) {
  return capi::guarded([&] {
    *out = reinterpret_cast<iris_kernel*>(&reinterpret_cast<kernels::Program*>(program)->kernel(name));
  });
}

const char* iris_kernel_name(const iris_kernel* kernel) { return kernel_of(kernel).name.c_str(); }
const char* iris_kernel_label(const iris_kernel* kernel) { return kernel_of(kernel).label.c_str(); }
int iris_kernel_param_count(const iris_kernel* kernel) { return static_cast<int>(kernel_of(kernel).params.size()); }

void iris_kernel_param(const iris_kernel* kernel, int index, iris_param_info* out) {
  const kernels::KernelParam& p = kernel_of(kernel).params.at(static_cast<size_t>(index));
  out->name = p.name.c_str();
  out->type = p.type.spelled.c_str();
  out->kind = kind_code(p.type.kind);
  out->ctype = p.type.ctype.c_str();
  out->dtype = p.type.dtype.c_str();
  out->min = p.type.min;
  out->max = p.type.max;
}

int iris_kernel_launch(iris_kernel* kernel, const uint32_t* dims, uint64_t shared_bytes, void** args) {
  return capi::guarded([&] {
    kernels::Kernel& k = kernel_of(kernel);
    k.registry->launch(k, config_of(dims, shared_bytes), args);
  });
}

int iris_kernel_time_raw_launches(iris_kernel* kernel, const uint32_t* dims, uint64_t shared_bytes, void** args,
                                  int iterations, double* seconds) {
  return capi::guarded([&] {
    kernels::Kernel& k = kernel_of(kernel);
    *seconds = k.registry->backend().time_raw_launches(*k.module, k.function, config_of(dims, shared_bytes), args,
                                                       iterations);
  });
}

int iris_device_barrier(void) {
  return capi::guarded([&] {
    capi::comm().require_every_rank("ctx:device_barrier()");  // its kernel would wait for ranks that never come
    kernels::current_registry().device_barrier();
  });
}

int iris_timer_create(iris_timer** out) {
  return capi::guarded([&] {
    runtime::Backend& backend = kernels::current_registry().backend();
    auto timer = std::make_unique<iris_timer>();
    timer->start = backend.create_event();
    timer->stop = backend.create_event();
    *out = timer.release();
  });
}

void iris_timer_destroy(iris_timer* timer) { delete timer; }

int iris_timer_start(iris_timer* timer) {
  return capi::guarded([&] { timer->start->record(); });
}

int iris_timer_stop(iris_timer* timer, double* milliseconds) {
  return capi::guarded([&] {
    timer->stop->record();
    *milliseconds = timer->stop->elapsed_ms_since(*timer->start);
  });
}

}  // extern "C"
