#include "session/trace_session.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "comm/comm.hpp"
#include "comm/hang_report.hpp"
#include "core/bytes.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/job_end.hpp"
#include "core/log.hpp"
#include "core/trace.hpp"
#include "heap/all_or_none.hpp"
#include "heap/symmetric_heap.hpp"
#include "iris/impl/abi.h"
#include "iris/version.hpp"
#include "programs/device_timeline.hpp"
#include "programs/registry.hpp"
#include "session/session.hpp"

namespace iris::session {
namespace {

constexpr size_t kRoundBytes = size_t(256) << 20;  // what one round of the gather carries, all ranks together

struct State {
  bool running = false;
  TraceOptions options;
  uint64_t tag = 0;  // the job's trace: names the part files of a failed job (rank 0's, broadcast)
  // The job ends (trace_finish_job): the last event stop records, after its own.
  bool job_ends = false;
  std::string job_end_how;
  int job_end_code = 0;
  comm::Comm::ClockOffset start_offset;
  int64_t start_ns = 0;
  abi::TraceBuffer* buffer = nullptr;  // allocated at the first trace with a heap, kept for the job
  uint32_t capacity = 0;
  bool device_started = false;
};

State& state() {
  static State s;
  return s;
}

uint32_t device_capacity(const TraceOptions& options) {
  return options.device_events != 0 ? options.device_events : kDefaultDeviceEvents;
}

size_t buffer_bytes(uint32_t capacity) {
  return sizeof(abi::TraceBuffer) + static_cast<size_t>(capacity) * sizeof(abi::TraceRecord);
}

// Rank 0 writes the file at the end: find out now, before the work, whether it can. Only a regular
// file is written (core/files.hpp): a device, fifo or directory the path names is refused, never
// replaced or opened (a fifo would block).
void check_writable(const std::string& file) {
  const std::string problem = files::check_replaceable(file);
  if (!problem.empty()) {
    throw Error(Errc::environment, format("iris.trace: cannot write the trace to %s: it %s", file.c_str(), problem.c_str()));
  }
}

// Pinning a device's clocks is a ping-pong between a host thread and a kernel: on ranks sharing cores
// (the cpu backend, or more ranks than cores) several pairs at once would take turns on them and
// measure each other's time slices. One rank at a time, every rank runs `step`.
template <class Step>
void one_rank_at_a_time(const char* what, Step&& step) {
  comm::Comm& c = comm();
  for (int r = 0; r < c.size(); ++r) {
    heap::all_or_none(c, what, [&] {
      if (r == c.rank()) step();
    });
  }
}

// Gives the device side to a trace: the buffer in the heap (allocated collectively, once), the
// registry's traced compiles and launch timing.
void start_device(Session& s) {
  State& st = state();
  const uint32_t asked = device_capacity(st.options);
  if (st.buffer == nullptr) {
    // Kernels compiled traced keep the buffer's address for the rest of the job: it is allocated once,
    // large enough for the default, and a trace asking for fewer events uses part of it.
    const uint32_t capacity = std::max(asked, kDefaultDeviceEvents);
    const auto offset = s.heap->allocate("iris.trace: device buffer", buffer_bytes(capacity), true, true);
    st.buffer = reinterpret_cast<abi::TraceBuffer*>(static_cast<char*>(s.heap->local_base()) + *offset);
    st.capacity = capacity;
  } else if (asked > st.capacity) {
    log::write(log::Level::warning, format("iris.trace.start: device_events %u: the device buffer holds %u events (its "
                                           "size was set by the job's first trace)", asked, st.capacity));
  }
  const uint32_t capacity = std::min(asked, st.capacity);
  programs::Registry& r = registry();
  r.set_trace_buffer(st.buffer);
  one_rank_at_a_time("iris.trace.start(): device clocks", [&] { r.timeline().start(st.buffer, capacity); });
  st.device_started = true;
}

std::string tid_of(const trace::Event& e) {
  switch (e.track) {
    case trace::Track::host: return "0";
    case trace::Track::device: return "1";
    case trace::Track::block: return std::to_string(1000 + e.block);
  }
  return "0";
}

// "12.345": microseconds with nanosecond digits, as the format counts time.
std::string microseconds(int64_t ns) {
  char text[40];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(ns) / 1000.0);
  return text;
}

std::string metadata_event(const char* name, int rank, const std::string& tid, const std::string& args) {
  std::string out = "{\"name\": \"" + std::string(name) + "\", \"ph\": \"M\", \"pid\": " + std::to_string(rank);
  if (!tid.empty()) out += ", \"tid\": " + tid;
  return out + ", \"args\": {" + args + "}}";
}

std::string event_json(const trace::Event& e, int rank, int64_t ts_ns) {
  std::string out = "{\"name\": " + trace::quote(e.name) + ", \"cat\": " + trace::quote(e.category) + ", \"ph\": \"" +
                    std::string(1, e.phase) + "\", \"pid\": " + std::to_string(rank) + ", \"tid\": " + tid_of(e) +
                    ", \"ts\": " + microseconds(ts_ns);
  if (e.phase == 'X') out += ", \"dur\": " + microseconds(e.dur_ns);
  if (e.phase == 'i') out += ", \"s\": \"t\"";
  if (e.phase == 's' || e.phase == 'f') {
    // Flow ids are global in the format: the rank in the high bits keeps every rank's apart.
    out += ", \"id\": " + std::to_string((static_cast<uint64_t>(rank) << 40) | e.flow);
    if (e.phase == 'f') out += ", \"bp\": \"e\"";
  }
  if (!e.args.empty()) out += ", \"args\": {" + e.args + "}";
  return out + "}";
}

// This rank's part of the file: its metadata object on the first line, then its events, each on a
// line of its own, on rank 0's clock counted from `zero_ns`.
std::string rank_part(int rank, const std::vector<trace::Event>& events, const std::vector<int64_t>& aligned,
                      int64_t zero_ns, const std::string& metadata) {
  std::string out = metadata + "\n";
  std::string backend = initialized() ? current().backend->name() : "no backend";
  std::string process = format("rank %d (%s)", rank, backend.c_str());
  out += metadata_event("process_name", rank, "", "\"name\": " + trace::quote(process));
  out += ",\n" + metadata_event("process_sort_index", rank, "", "\"sort_index\": " + std::to_string(rank));
  out += ",\n" + metadata_event("thread_name", rank, "0", "\"name\": \"host\"");
  out += ",\n" + metadata_event("thread_name", rank, "1", "\"name\": \"device: kernels\"");
  std::vector<int> blocks;
  for (const trace::Event& e : events) {
    if (e.track == trace::Track::block) blocks.push_back(e.block);
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  for (int b : blocks) {
    const std::string tid = std::to_string(1000 + b);
    out += ",\n" + metadata_event("thread_name", rank, tid, "\"name\": \"device: block " + std::to_string(b) + "\"");
    out += ",\n" + metadata_event("thread_sort_index", rank, tid, "\"sort_index\": " + tid);
  }
  std::vector<size_t> order(events.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return aligned[a] < aligned[b]; });
  for (size_t i : order) out += ",\n" + event_json(events[i], rank, aligned[i] - zero_ns);
  return out;
}

// Every rank's part on rank 0 (in rank order); the others receive nothing. Each round carries the next
// chunk of every rank's part, so no exchange comes near MPI's 2 GiB limit however long the parts are.
std::vector<std::string> gather_parts(comm::Comm& comm, const std::string& mine) {
  std::vector<uint64_t> sizes(comm.size());
  const uint64_t my_size = mine.size();
  comm.allgather(&my_size, sizeof my_size, sizes.data());
  const uint64_t longest = *std::max_element(sizes.begin(), sizes.end());
  const size_t chunk = std::max<size_t>(1, kRoundBytes / comm.size());
  std::vector<std::string> parts(comm.size());
  for (uint64_t at = 0; at < longest; at += chunk) {
    const size_t from = std::min(at, my_size);
    const size_t bytes = std::min<uint64_t>(chunk, my_size - from);
    const auto received = comm.exchange(comm::Lane::job, comm::Route::to_root, 0, "iris.trace.stop(): gathering",
                                        mine.data() + from, bytes);
    for (int r = 0; r < comm.size(); ++r) parts[r] += received[r];
  }
  return parts;
}

void write_file(const std::string& file, const std::vector<std::string>& parts) {
  std::string metadata, events;
  for (const std::string& part : parts) {
    const size_t newline = part.find('\n');
    metadata += (metadata.empty() ? "" : ",\n    ") + part.substr(0, newline);
    const std::string rest = part.substr(newline + 1);
    if (!rest.empty()) events += (events.empty() ? "" : ",\n") + rest;
  }
  const std::string text =
      "{\"displayTimeUnit\": \"ns\",\n \"metadata\": {\"generator\": \"iris-lua " IRIS_LUA_VERSION "\", \"world_size\": " +
      std::to_string(parts.size()) +
      ", \"clock\": \"microseconds on rank 0's steady clock from the trace's first event; each rank's host clock "
      "offset measured by ping-pong with rank 0, each device's clocks pinned to its host's (docs/tracing.md)\",\n"
      "  \"ranks\": [\n    " +
      metadata + "]},\n \"traceEvents\": [\n" + events + "\n]}\n";
  const std::string problem = files::replace_file(file, text.data(), text.size());
  if (!problem.empty()) {
    throw Error(Errc::environment, format("iris.trace: cannot write the trace to %s: it %s", file.c_str(), problem.c_str()));
  }
}

// The last event of a job's trace, on this rank's host track.
void record_job_end(const std::string& how, int exit_code) {
  trace::instant("iris-lua: the job ended", "job", trace::Args().add("how", how).add("exit_code", exit_code).text());
}

// ---- the parts of a job that ended abnormally -----------------------------------------------------------

struct Part {
  int rank = 0;
  std::string metadata;  // a JSON object
  std::vector<trace::Event> events;
  std::vector<int64_t> aligned;  // each event's time on rank 0's clock
};

std::string part_path(const std::string& target, uint64_t tag, int rank) {
  const size_t slash = target.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : target.substr(0, slash);
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  return format("%s/.%s.part-%016llx-%d", dir.c_str(), base.c_str(), static_cast<unsigned long long>(tag), rank);
}

constexpr char kPartMagic[8] = {'I', 'R', 'I', 'S', 'T', 'P', '0', '1'};

using bytes::put_string;
using bytes::put_u64;

std::vector<uint8_t> serialize_part(const Part& part) {
  std::vector<uint8_t> out(kPartMagic, kPartMagic + sizeof kPartMagic);
  put_u64(out, static_cast<uint64_t>(part.rank));
  put_string(out, part.metadata);
  put_u64(out, part.events.size());
  for (size_t i = 0; i < part.events.size(); ++i) {
    const trace::Event& e = part.events[i];
    put_u64(out, static_cast<uint64_t>(e.phase));
    put_u64(out, static_cast<uint64_t>(part.aligned[i]));
    put_u64(out, static_cast<uint64_t>(e.dur_ns));
    put_u64(out, static_cast<uint64_t>(e.track));
    put_u64(out, static_cast<uint64_t>(e.block));
    put_u64(out, e.flow);
    put_string(out, e.name);
    put_string(out, e.category);
    put_string(out, e.args);
  }
  return out;
}

// False for anything that is not a whole part (a rank died while writing it).
bool deserialize_part(const std::vector<uint8_t>& in, Part* part) {
  if (in.size() < sizeof kPartMagic || std::memcmp(in.data(), kPartMagic, sizeof kPartMagic) != 0) return false;
  bytes::Reader read{in, sizeof kPartMagic};
  auto u64 = [&](uint64_t* v) { return read.u64(v); };
  auto string = [&](std::string* v) { return read.string(v); };
  uint64_t rank = 0, count = 0;
  if (!u64(&rank) || !string(&part->metadata) || !u64(&count) || count > in.size()) return false;
  part->rank = static_cast<int>(rank);
  for (uint64_t i = 0; i < count; ++i) {
    trace::Event e;
    uint64_t phase = 0, ts = 0, dur = 0, track = 0, block = 0;
    std::string category;
    if (!u64(&phase) || !u64(&ts) || !u64(&dur) || !u64(&track) || !u64(&block) || !u64(&e.flow) ||
        !string(&e.name) || !string(&category) || !string(&e.args)) {
      return false;
    }
    e.phase = static_cast<char>(phase);
    e.dur_ns = static_cast<int64_t>(dur);
    e.track = static_cast<trace::Track>(track);
    e.block = static_cast<int>(block);
    e.category = trace::interned(category);
    part->events.push_back(std::move(e));
    part->aligned.push_back(static_cast<int64_t>(ts));
  }
  return read.left() == 0;
}

// The leader: the trace file from every part found, on one clock from the earliest event, and the last
// event saying how the job ended and which ranks are missing.
void merge_parts(const std::string& target, uint64_t tag, int world_size, int leader, const std::string& how,
                 int exit_code, const std::vector<int>& missing_on_node) {
  std::vector<Part> parts;
  for (int r = 0; r < world_size; ++r) {
    std::vector<uint8_t> bytes;
    std::string problem;
    files::ReadOptions options;
    options.max_bytes = size_t(4) << 30;
    options.follow_symlinks = false;
    const std::string path = part_path(target, tag, r);
    Part part;
    if (files::read_regular_file(path, options, &bytes, &problem) == files::Read::ok && deserialize_part(bytes, &part) &&
        part.rank == r) {
      parts.push_back(std::move(part));
    }
    unlink(path.c_str());
  }
  int64_t zero = INT64_MAX, last = INT64_MIN;
  for (const Part& p : parts) {
    for (size_t i = 0; i < p.aligned.size(); ++i) {
      zero = std::min(zero, p.aligned[i]);
      last = std::max(last, p.aligned[i] + p.events[i].dur_ns);
    }
  }
  if (zero == INT64_MAX) zero = last = 0;
  std::string missing;
  std::vector<bool> present(world_size, false);
  for (const Part& p : parts) present[p.rank] = true;
  for (int r = 0; r < world_size; ++r) {
    if (!present[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  }
  std::vector<std::string> texts;
  for (Part& p : parts) {
    if (p.rank == leader) {
      trace::Event end;
      end.phase = 'i';
      end.name = "iris-lua: the job ended";
      end.category = "job";
      end.args = trace::Args()
                     .add("how", how)
                     .add("exit_code", exit_code)
                     .add("written_by_rank", leader)
                     .add("ranks_missing", missing.empty() ? std::string("none") : missing)
                     .add("note", "written after the job failed: the host events each rank recorded; device "
                                  "events still in the devices' buffers are not here")
                     .text();
      p.events.push_back(end);
      p.aligned.push_back(last + 1000);
    }
    texts.push_back(rank_part(p.rank, p.events, p.aligned, zero, p.metadata));
  }
  for (int r = 0; r < world_size; ++r) {
    if (!present[r]) {
      const bool on_node = std::find(missing_on_node.begin(), missing_on_node.end(), r) != missing_on_node.end();
      texts.push_back(format("{\"rank\": %d, \"missing\": %s}\n", r,
                             trace::quote(on_node ? "its part did not come in time (stopped, or busy where its "
                                                    "watcher could not run)"
                                                  : "no part: the rank had ended, or runs on another node")
                                 .c_str()));
    }
  }
  try {
    write_file(target, texts);
  } catch (const Error& e) {
    std::fprintf(stderr, "iris-lua[rank %d]: %s\n", leader, e.what());
  }
}

}  // namespace

bool trace_running() { return state().running; }

void trace_start(const TraceOptions& options) {
  State& st = state();
  if (st.running) {
    throw Error(Errc::invalid_argument, "iris.trace.start: a trace is already on; stop it first (iris.trace.stop())");
  }
  comm::Comm& c = comm();
  c.announce("iris.trace.start()");
  uint64_t tag = 0;
  if (c.rank() == 0) tag = (static_cast<uint64_t>(getpid()) << 32) ^ static_cast<uint64_t>(trace::now_ns());
  c.broadcast(&tag, sizeof tag, 0);
  heap::all_or_none(c, "iris.trace.start(): trace file", [&] {
    if (c.rank() == 0 && !options.file.empty()) check_writable(options.file);
  });
  st.options = options;
  st.tag = tag;
  st.device_started = false;
  trace::begin(options.host_events != 0 ? options.host_events : kDefaultHostEvents);
  st.running = true;
  try {
    st.start_offset = c.measure_clock_offset(comm::Comm::ClockRounds{});
    st.start_ns = trace::now_ns();
    if (initialized()) start_device(current());
  } catch (...) {
    trace::end(nullptr);
    st.running = false;
    throw;
  }
  trace::instant("iris.trace.start", "trace");
  if (!st.options.file.empty()) job_end::set_writer(trace_write_after_failure);
}

size_t trace_heap_reserve() {
  if (!state().running) return 0;
  return buffer_bytes(std::max(device_capacity(state().options), kDefaultDeviceEvents)) + 256;  // + alignment
}

void trace_session_started() {
  State& st = state();
  if (st.running && !st.device_started) start_device(current());
}

void trace_synchronized() {
  State& st = state();
  if (st.running && st.device_started) registry().timeline().synchronized();
}

TraceSummary trace_stop(const std::string& file) {
  State& st = state();
  if (!st.running) {
    throw Error(Errc::invalid_argument,
                "iris.trace.stop: no trace is on (start one with iris.trace.start(FILE) or iris-lua --trace FILE)");
  }
  TraceSummary summary;
  summary.file = file.empty() ? st.options.file : file;
  if (summary.file.empty()) {
    throw Error(Errc::invalid_argument,
                "iris.trace.stop: name the file to write (iris.trace.stop(FILE)): iris.trace.start named none");
  }
  comm::Comm& c = comm();
  c.announce("iris.trace.stop()");
  heap::all_or_none(c, "iris.trace.stop(): trace file", [&] {
    if (c.rank() == 0 && summary.file != st.options.file) check_writable(summary.file);
  });
  programs::DeviceTimelineSummary device;
  if (st.device_started) {
    current().backend->synchronize();
    one_rank_at_a_time("iris.trace.stop(): device clocks", [&] { device = registry().timeline().stop(); });
  }
  trace::instant("iris.trace.stop", "trace");
  if (st.job_ends) record_job_end(st.job_end_how, st.job_end_code);
  const comm::Comm::ClockOffset end_offset = c.measure_clock_offset(comm::Comm::ClockRounds{});
  const int64_t end_ns = trace::now_ns();
  uint64_t dropped = 0;
  std::vector<trace::Event> events = trace::end(&dropped);
  st.running = false;
  job_end::set_writer(nullptr);

  // Rank 0's clock: the offset measured at the start and at the stop, interpolated, so host clocks
  // that drift apart over a long trace stay aligned.
  std::vector<int64_t> aligned(events.size());
  int64_t earliest = INT64_MAX;
  for (size_t i = 0; i < events.size(); ++i) {
    const int64_t t = events[i].ts_ns;
    const double f = end_ns > st.start_ns ? static_cast<double>(t - st.start_ns) / static_cast<double>(end_ns - st.start_ns) : 0;
    const double offset = st.start_offset.offset_ns + (end_offset.offset_ns - st.start_offset.offset_ns) * f;
    aligned[i] = t - std::llround(offset);
    earliest = std::min(earliest, aligned[i]);
  }
  std::vector<int64_t> earliest_of(c.size());
  c.allgather(&earliest, sizeof earliest, earliest_of.data());
  const int64_t zero_ns = *std::min_element(earliest_of.begin(), earliest_of.end());

  summary.host_events = events.size();
  summary.host_dropped = dropped;
  summary.launches = device.launches;
  summary.device_events = device.events;
  summary.device_overflow = device.overflow;
  summary.host_offset_ns = st.start_offset.offset_ns;
  summary.host_offset_error_ns = std::max(st.start_offset.error_ns, end_offset.error_ns);
  summary.launch_pin_error_ns = device.launch_pin_error_ns;
  summary.clock_pin_error_ns = device.clock_pin_error_ns;
  trace::Args meta;
  meta.add("rank", c.rank())
      .add("backend", initialized() ? std::string(current().backend->name()) : std::string("none"))
      .add("device", initialized() ? current().backend->device_name() : std::string("none"))
      .add("host_clock_offset_ns", static_cast<long long>(st.start_offset.offset_ns))
      .add("host_clock_offset_at_stop_ns", static_cast<long long>(end_offset.offset_ns))
      .add("host_clock_offset_error_ns", static_cast<long long>(summary.host_offset_error_ns))
      .add("device_launch_pin_error_ns", static_cast<long long>(device.launch_pin_error_ns))
      .add("device_clock_pin_error_ns", static_cast<long long>(device.clock_pin_error_ns))
      .add("device_clock_offset_ns", static_cast<long long>(device.clock_offset_ns))
      .add("device_clock_rate", device.clock_rate)
      .add("launches", static_cast<unsigned long long>(device.launches))
      .add("device_events", static_cast<unsigned long long>(device.events))
      .add("device_events_overflow", static_cast<unsigned long long>(device.overflow))
      .add("host_events", static_cast<unsigned long long>(events.size()))
      .add("host_events_dropped", static_cast<unsigned long long>(dropped));
  const std::string part = rank_part(c.rank(), events, aligned, zero_ns, "{" + meta.text() + "}");
  events.clear();
  std::vector<std::string> parts = gather_parts(c, part);
  heap::all_or_none(c, "iris.trace.stop(): writing", [&] {
    if (c.rank() == 0) write_file(summary.file, parts);
  });
  return summary;
}

namespace {
std::string g_noted_how;
int g_noted_exit_code = 0;
}  // namespace

void trace_note_job_end(const std::string& how, int exit_code) {
  g_noted_how = how;
  g_noted_exit_code = exit_code;
}

void trace_finish_job(const std::string& how, int exit_code) {
  if (!state().running) return;
  State& st = state();
  st.job_ends = true;
  if (how.empty() && !g_noted_how.empty()) {
    st.job_end_how = g_noted_how;
    st.job_end_code = g_noted_exit_code;
  } else {
    st.job_end_how = how.empty() ? std::string("every rank finished its script") : how;
    st.job_end_code = exit_code;
  }
  trace_stop("");
}

void trace_write_after_failure(const std::string& how, int exit_code) {
  State& st = state();
  if (!st.running || st.options.file.empty()) return;
  comm::Comm& c = comm();
  const bool leader = comm::hang::announce_job_end(how, exit_code);
  record_job_end(format("%s (seen by rank %d)", how.c_str(), c.rank()), exit_code);
  uint64_t dropped = 0;
  std::vector<trace::Event> events = trace::end(&dropped);
  st.running = false;
  std::string problem;
  const std::string target = files::replacement_target(st.options.file, &problem);
  if (target.empty()) {
    comm::hang::job_end_part_done();
    return;  // it was writable at the start; nothing to tell anybody now
  }
  // This rank's part: its events on rank 0's clock (the offset measured at the start: there is no stop).
  Part mine;
  mine.rank = c.rank();
  mine.events = std::move(events);
  for (const trace::Event& e : mine.events) mine.aligned.push_back(e.ts_ns - st.start_offset.offset_ns);
  trace::Args meta;
  meta.add("rank", c.rank())
      .add("backend", initialized() ? std::string(current().backend->name()) : std::string("none"))
      .add("host_clock_offset_ns", static_cast<long long>(st.start_offset.offset_ns))
      .add("host_events", static_cast<unsigned long long>(mine.events.size()))
      .add("host_events_dropped", static_cast<unsigned long long>(dropped))
      .add("ended", how)
      .add("device_events", "not collected: the job ended abnormally");
  mine.metadata = "{" + meta.text() + "}";
  const std::vector<uint8_t> bytes = serialize_part(mine);
  files::replace_file(part_path(target, st.tag, c.rank()), bytes.data(), bytes.size(), 0600, false);
  comm::hang::job_end_part_done();
  if (!leader) {
    comm::hang::wait_for_job_end_written(3);
    return;
  }
  const std::vector<int> missing = comm::hang::wait_for_job_end_parts(1);
  merge_parts(target, st.tag, c.size(), c.rank(), how, exit_code, missing);
  comm::hang::job_end_written();
}

}  // namespace iris::session
