// Kernels behind the C boundary: thin wrappers over programs::Registry (src/programs).
#include "capi/capi_kernels.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "capi/guard.hpp"
#include "comm/comm.hpp"
#include "core/files.hpp"
#include "compiler/device_sources.hpp"
#include "core/trace.hpp"
#include "iris/impl/abi.h"
#include "programs/registry.hpp"
#include "session/session.hpp"

using namespace iris;

struct iris_timer {
  std::unique_ptr<runtime::Event> start;
  std::unique_ptr<runtime::Event> stop;
};

namespace {

programs::Kernel& kernel_of(iris_kernel* k) { return *reinterpret_cast<programs::Kernel*>(k); }
const programs::Kernel& kernel_of(const iris_kernel* k) { return *reinterpret_cast<const programs::Kernel*>(k); }

runtime::LaunchConfig config_of(const uint32_t* dims, uint64_t shared_bytes) {
  runtime::LaunchConfig c;
  c.grid = {dims[0], dims[1], dims[2]};
  c.block = {dims[3], dims[4], dims[5]};
  c.shared_bytes = shared_bytes;
  return c;
}

int kind_code(programs::ParamKind kind) {
  switch (kind) {
    case programs::ParamKind::pointer: return IRIS_PARAM_POINTER;
    case programs::ParamKind::integer: return IRIS_PARAM_INTEGER;
    case programs::ParamKind::floating: return IRIS_PARAM_FLOAT;
    case programs::ParamKind::boolean: return IRIS_PARAM_BOOL;
    case programs::ParamKind::context: return IRIS_PARAM_CONTEXT;
    case programs::ParamKind::float16: return IRIS_PARAM_FLOAT16;
    case programs::ParamKind::bfloat16: return IRIS_PARAM_BFLOAT16;
    case programs::ParamKind::tensor_map: return IRIS_PARAM_TENSOR_MAP;
    case programs::ParamKind::unsupported: break;
  }
  return -1;  // never handed out: Program::kernel refuses such kernels
}

// The stream iris_stream_select and iris_stream_wait name: 0 (the main one) or 1 (the second).
int stream_index(int which) {
  if (which != 0 && which != 1) throw Error(Errc::invalid_argument, format("stream %d: 0 (main) or 1 (second)", which));
  return which;
}

}  // namespace

extern "C" {

int iris_compile(const char* source, size_t source_len, const char* origin, const char* description,
                 const char* file_name, const char* const* defines, int define_count, const char* const* options,
                 int option_count, iris_program** out) {
  return capi::guarded([&] {
    programs::ProgramSource s;
    s.source.assign(source, source_len);
    s.origin = origin;
    s.description = description;
    s.file_name = file_name;
    for (int i = 0; i < define_count; ++i) s.defines.emplace_back(defines[2 * i], defines[2 * i + 1]);
    for (int i = 0; i < option_count; ++i) s.options.emplace_back(options[i]);
    *out = reinterpret_cast<iris_program*>(&session::registry().compile(std::move(s)));
  });
}

int iris_read_source_file(const char* path, const char** text, size_t* size) {
  return capi::guarded([&] {
    static thread_local std::vector<uint8_t> bytes;
    std::string problem;
    files::ReadOptions options;
    options.max_bytes = size_t(64) << 20;
    switch (files::read_regular_file(path, options, &bytes, &problem)) {
      case files::Read::missing:
        throw Error(Errc::invalid_argument, format("cannot open %s: no such file", path));
      case files::Read::refused:
        throw Error(Errc::invalid_argument, format("cannot read %s: it %s", path, problem.c_str()));
      case files::Read::ok: break;
    }
    *text = reinterpret_cast<const char*>(bytes.data());
    *size = bytes.size();
  });
}

int iris_compile_builtin(const char* name, iris_program** out) {
  return capi::guarded(
      [&] { *out = reinterpret_cast<iris_program*>(&session::registry().builtin(name)); });
}

const char* iris_builtin_names(void) {
  static const std::string names = [] {
    std::string text;
    for (const compiler::EmbeddedSource* s = compiler::kEmbeddedDeviceSources; s->name != nullptr; ++s) {
      std::string name = s->name;
      if (!s->is_kernel || name.rfind("kernels/", 0) != 0 || name.size() < 13) continue;
      text += name.substr(8, name.size() - 12) + "\n";  // kernels/NAME.hip -> NAME
    }
    return text;
  }();
  return names.c_str();
}

int iris_collective_report(const char** text, int* peer, uint64_t* my_call, uint64_t* their_call) {
  static std::string message;
  if (!session::initialized()) return 0;
  const runtime::MappedHostBuffer& buffer = session::current().mailbox;
  if (buffer.host == nullptr || buffer.bytes < sizeof(abi::DeviceMailbox)) return 0;
  const auto& box = *static_cast<const abi::DeviceMailbox*>(buffer.host);
  // The name report() gives its reports (device/iris/impl/ccl_call.hpp).
  if (box.failed != 2 || std::strncmp(box.what, "ctx.ccl or ctx.ops", sizeof box.what) != 0) return 0;
  message.assign(box.message, strnlen(box.message, sizeof box.message));
  *text = message.c_str();
  *peer = static_cast<int>(box.address);
  *my_call = static_cast<uint64_t>(box.last_value);
  *their_call = static_cast<uint64_t>(box.expected);
  return 1;
}

const char* iris_program_signatures(iris_program* program) {
  static thread_local std::string text;
  text = reinterpret_cast<programs::Program*>(program)->signatures_text();
  return text.c_str();
}

int iris_program_kernel(iris_program* program, const char* name, iris_kernel** out) {
  return capi::guarded([&] {
    *out = reinterpret_cast<iris_kernel*>(&reinterpret_cast<programs::Program*>(program)->kernel(name));
  });
}

const char* iris_kernel_name(const iris_kernel* kernel) { return kernel_of(kernel).name.c_str(); }
const char* iris_kernel_label(const iris_kernel* kernel) { return kernel_of(kernel).label.c_str(); }
int iris_kernel_param_count(const iris_kernel* kernel) { return static_cast<int>(kernel_of(kernel).params.size()); }

void iris_kernel_param(const iris_kernel* kernel, int index, iris_param_info* out) {
  const programs::KernelParam& p = kernel_of(kernel).params.at(static_cast<size_t>(index));
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
    programs::Kernel& k = kernel_of(kernel);
    k.registry->launch(k, config_of(dims, shared_bytes), args);
  });
}

int iris_kernel_time_raw_launches(iris_kernel* kernel, const uint32_t* dims, uint64_t shared_bytes, void** args,
                                  int iterations, double* seconds, double* host_seconds) {
  return capi::guarded([&] {
    programs::Kernel& k = kernel_of(kernel);
    const runtime::Backend::RawLaunchTimes times =
        k.registry->backend().time_raw_launches(*k.module, k.function,
                                                k.registry->launch_config(k, config_of(dims, shared_bytes)), args,
                                                iterations);
    *seconds = times.device;
    *host_seconds = times.host;
  });
}

int iris_tensor_map_encode(const void* ptr, int dtype, uint64_t rows, uint64_t cols, uint64_t row_stride,
                           uint32_t box_rows, uint32_t box_cols, void* out) {
  return capi::guarded([&] {
    runtime::TensorMapSpec spec;
    spec.base = ptr;
    spec.dtype = dtype;
    spec.rows = rows;
    spec.cols = cols;
    spec.row_stride = row_stride;
    spec.box_rows = box_rows;
    spec.box_cols = box_cols;
    abi::TensorMapData map;
    session::backend().encode_tensor_map(spec, &map);
    std::memcpy(out, &map, sizeof map);
  });
}

int iris_launch_limits(uint32_t* max_grid, uint32_t* max_block, uint32_t* max_threads_per_block) {
  return capi::guarded([&] {
    const runtime::LaunchLimits limits = session::backend().launch_limits();
    for (int i = 0; i < 3; ++i) {
      max_grid[i] = limits.max_grid[i];
      max_block[i] = limits.max_block[i];
    }
    *max_threads_per_block = limits.max_threads_per_block;
  });
}

int iris_device_multiprocessors(uint32_t* count) {
  return capi::guarded([&] { *count = session::backend().launch_limits().multiprocessors; });
}

int iris_device_sharing(uint32_t* ranks) {
  return capi::guarded([&] { *ranks = static_cast<uint32_t>(session::current().ranks_on_device); });
}

int iris_stream_select(int which) {
  return capi::guarded([&] { session::current().backend->select_stream(stream_index(which)); });
}

int iris_stream_wait(int waiter) {
  return capi::guarded([&] { session::current().backend->stream_wait(stream_index(waiter)); });
}

int iris_device_barrier(void) {
  return capi::guarded([&] {
    session::comm().require_every_rank("ctx:device_barrier()");  // its kernel would wait for ranks that never come
    trace::Span span("device_barrier", "sync");
    session::registry().device_barrier();
  });
}

int iris_capture_begin(void) {
  return capi::guarded([&] { session::registry().begin_capture(); });
}

int iris_capture_end(const char* label, iris_graph** out, uint64_t* kernels) {
  return capi::guarded([&] {
    runtime::Graph& graph = session::registry().end_capture(label);
    *kernels = graph.kernels();
    *out = reinterpret_cast<iris_graph*>(&graph);
  });
}

void iris_capture_abort(void) {
  (void)capi::guarded([&] { session::registry().abort_capture(); });  // nothing to report: it drops what it had
}

int iris_graph_replay(iris_graph* graph, int64_t times) {
  return capi::guarded([&] { session::registry().replay(*reinterpret_cast<runtime::Graph*>(graph), times); });
}

int iris_graph_free(iris_graph* graph) {
  return capi::guarded([&] { session::registry().free_graph(*reinterpret_cast<runtime::Graph*>(graph)); });
}

int iris_timer_create(iris_timer** out) {
  return capi::guarded([&] {
    runtime::Backend& backend = session::backend();
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
