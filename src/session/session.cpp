#include "session/session.hpp"

#include <functional>

#include "comm/comm.hpp"
#include "comm/hang_report.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/units.hpp"
#include "heap/all_or_none.hpp"
#include "heap/layout.hpp"
#include "heap/symmetric_heap.hpp"
#include "iris/impl/abi.h"
#include "programs/registry.hpp"
#include "session/proxy.hpp"
#include "session/trace_session.hpp"
#include "runtime/gpu/device_sharing.hpp"

namespace iris::session {
namespace {

using runtime::Backend;

comm::Comm* g_comm = nullptr;
std::unique_ptr<Session> g_session;
programs::Registry* g_registry_in_use = nullptr;

std::string chosen_backend_name(const InitOptions& options) {
  if (!options.backend.empty()) return options.backend;
  if (auto from_env = env::get(env::Var::backend)) return *from_env;
  return "auto";
}

size_t chosen_heap_bytes(const InitOptions& options, const Backend& backend) {
  if (options.heap_bytes != 0) return options.heap_bytes;
  if (auto from_env = env::get(env::Var::heap_size)) {
    const size_t bytes = env::bytes(env::Var::heap_size, 0);
    if (bytes < heap::kMinimumHeapBytes) {
      throw Error(Errc::environment, format("IRIS_HEAP_SIZE=%s is too small: iris reserves the first %s of every heap, "
                                            "set at least %s (or unset it for the default)",
                                            from_env->c_str(), human_bytes(heap::kUserOffset).c_str(),
                                            human_bytes(heap::kMinimumHeapBytes).c_str()));
    }
    return bytes;
  }
  return runtime::default_heap_bytes(backend);
}

// What iris.init learns of every rank, in one exchange: the backend it ended on and the device it uses.
struct RankDevice {
  std::string backend;
  std::string identity;  // tells devices apart; "" for none (the cpu backend)
  std::string name;
  std::string advice;  // what sharing the device costs; "" when nothing
};

std::vector<RankDevice> exchange_devices(comm::Comm& comm, const Backend& backend) {
  const std::string identity = backend.device_identity();
  // The advice may span lines, so it comes last.
  const std::string mine = std::string(backend.name()) + '\n' + identity + '\n' + backend.device_name() + '\n' +
                           (identity.empty() ? "" : backend.shared_device_advice());
  std::vector<RankDevice> ranks;
  for (const std::string& text :
       comm.exchange(comm::Lane::job, comm::Route::to_all, 0, "iris.init(): devices", mine.data(), mine.size())) {
    const size_t first = text.find('\n'), second = text.find('\n', first + 1), third = text.find('\n', second + 1);
    ranks.push_back({text.substr(0, first), text.substr(first + 1, second - first - 1),
                     text.substr(second + 1, third - second - 1), text.substr(third + 1)});
  }
  return ranks;
}

// Every rank must have ended on the same backend: a job half on cuda and half on cpu could not share
// a heap. (auto picks per rank, so a node where only some ranks see a GPU ends here.)
void check_same_backend(const std::vector<RankDevice>& ranks, const Backend& backend) {
  std::string listing;
  bool differ = false;
  for (size_t r = 0; r < ranks.size(); ++r) {
    differ = differ || ranks[r].backend != backend.name();
    listing += format("%srank %zu: %s", r == 0 ? "" : ", ", r, ranks[r].backend.c_str());
  }
  if (differ) {
    throw Error(Errc::environment,
                "ranks ended on different backends (" + listing +
                    "): set IRIS_BACKEND or iris.init{backend=...} so that every rank uses the same one");
  }
}

// How many ranks use `rank`'s device: those of its host with its identity (bus ids tell a host's GPUs
// apart), or 1 without one (the cpu backend gives each rank its own threads).
int ranks_on_device(const std::vector<RankDevice>& ranks, const std::vector<int>& host_of, int rank) {
  const std::string& mine = ranks[static_cast<size_t>(rank)].identity;
  if (mine.empty()) return 1;
  int count = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    count += ranks[r].identity == mine && host_of[r] == host_of[static_cast<size_t>(rank)] ? 1 : 0;
  }
  return count;
}

// Every rank announces `value` (`op`, a collective); ranks that asked differently are an error naming
// rank 0's request and the first other one (`said` words them) and the setting to make alike.
void require_alike(comm::Comm& comm, const char* op, uint64_t value, const char* things,
                   const std::function<std::string(uint64_t)>& said, const char* setting) {
  const std::vector<comm::Announcement> all = comm.announce(op, value);
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r].arg != all[0].arg) {
      throw Error(Errc::environment, format("ranks asked different %s: rank 0 asked %s, rank %zu asked %s; set %s alike "
                                            "on every rank",
                                            things, said(all[0].arg).c_str(), r, said(all[r].arg).c_str(), setting));
    }
  }
}

// The node size the job asked for (iris.init{node_size=}, else IRIS_NODE_SIZE, else 0: one node per
// host), the same on every rank, and the layout it gives.
NodeLayout node_layout(comm::Comm& comm, const InitOptions& options, const std::vector<int>& host_of) {
  int node_size = options.node_size;
  std::string source = format("iris.init{node_size = %d}", node_size);
  if (node_size == 0 && env::get(env::Var::node_size)) {
    node_size = static_cast<int>(env::whole_number(env::Var::node_size, 1, 1u << 20, 0, "a whole number of ranks"));
    source = format("IRIS_NODE_SIZE=%d", node_size);
  }
  require_alike(comm, "iris.init(): nodes", static_cast<uint64_t>(node_size), "node sizes",
                [](uint64_t n) { return n == 0 ? std::string("none (one node per host)") : std::to_string(n); },
                "IRIS_NODE_SIZE (or iris.init{node_size=})");
  return make_node_layout(host_of, node_size, source);
}

// The transport between nodes (IRIS_NODE_TRANSPORT, the same on every rank): one_sided where the MPI
// library reaches the heap's memory (host memory always; GPU memory when MPI is CUDA- or ROCm-aware),
// else messages, which reach any heap through its own rank's proxy. one_sided asked for on GPUs whose
// MPI cannot reach their memory is an error saying what to do.
NodeTransport chosen_node_transport(comm::Comm& comm, runtime::Backend& backend, int nodes) {
  std::optional<NodeTransport> asked;
  heap::all_or_none(comm, "iris.init(): IRIS_NODE_TRANSPORT", [&] { asked = session::node_transport_from_environment(); });
  require_alike(comm, "iris.init(): the transport between nodes", asked ? static_cast<uint64_t>(*asked) + 1 : 0,
                "transports between nodes",
                [](uint64_t c) {
                  return c == 0 ? std::string("auto") : std::string(node_transport_name(static_cast<NodeTransport>(c - 1)));
                },
                "IRIS_NODE_TRANSPORT");
  std::string refusal;
  if (backend.name() != std::string("cpu")) refusal = comm.device_memory_refusal(backend.name());
  if (!asked) return refusal.empty() ? NodeTransport::one_sided : NodeTransport::messages;
  if (*asked == NodeTransport::one_sided && !refusal.empty()) {
    heap::all_or_none(comm, "iris.init(): the transport and GPU memory", [&] {
      throw Error(Errc::environment, format("this job spans %d nodes and IRIS_NODE_TRANSPORT=one_sided, whose window "
                                            "must reach every rank's heap: %s; or IRIS_NODE_TRANSPORT=messages (or "
                                            "auto), which reaches GPU memory through each rank's own proxy",
                                            nodes, refusal.c_str()));
    });
  }
  return *asked;
}

// Several ranks on one device may need something started to run well (CUDA MPS): rank 0 says so once,
// unless the job asked for quiet (IRIS_SHARED_GPU_WARNING=0).
void warn_about_shared_devices(const comm::Comm& comm, const std::vector<RankDevice>& ranks, bool wanted) {
  if (comm.rank() != 0 || !wanted) return;
  std::vector<std::string> devices, names, advice;
  for (const RankDevice& rank : ranks) {
    devices.push_back(rank.identity);
    names.push_back(rank.name);
    advice.push_back(rank.advice);
  }
  const std::string warning = runtime::gpu::shared_device_warning(devices, names, advice);
  if (!warning.empty()) log::write(log::Level::warning, warning);
}

}  // namespace

Session::Session(comm::Comm& c) : comm(c) {}

Session::~Session() {
  programs.reset();
  proxy.reset();  // before the heap its transport's window lies over
  heap.reset();  // closes the peers' mappings and frees this rank's heap
  if (backend && mailbox.host != nullptr) backend->free_mapped_host(mailbox);
  backend.reset();
}

void attach_comm(comm::Comm* c) { g_comm = c; }

comm::Comm& comm() {
  if (g_comm == nullptr) throw Error(Errc::internal, "no iris host in this process");
  return *g_comm;
}

Session& init(const InitOptions& options) {
  if (g_session) return *g_session;
  comm::Comm& comm = session::comm();
  comm.announce("iris.init()", 0);
  auto session = std::make_unique<Session>(comm);
  // Which host each rank runs on; every rank computes the same layout from it, so an error stops every
  // rank together.
  std::vector<int> host_of(comm.size(), 0);
  const int leader = comm.host_leader();
  comm.allgather(&leader, sizeof leader, host_of.data());
  session->nodes = node_layout(comm, options, host_of);
  std::string name = chosen_backend_name(options);
  heap::all_or_none(comm, "iris.init(): backend", [&] { session->backend = runtime::create_backend(name, comm); });
  Backend& backend = *session->backend;
  bool shared_device_warning_wanted = true;
  heap::all_or_none(comm, "iris.init(): IRIS_SHARED_GPU_WARNING",
                    [&] { shared_device_warning_wanted = runtime::gpu::shared_device_warning_wanted(); });
  const std::vector<RankDevice> ranks = exchange_devices(comm, backend);
  check_same_backend(ranks, backend);
  warn_about_shared_devices(comm, ranks, shared_device_warning_wanted);
  session->ranks_on_device = ranks_on_device(ranks, host_of, comm.rank());

  size_t heap_bytes = 0;
  heap::all_or_none(comm, "iris.init(): heap size", [&] { heap_bytes = chosen_heap_bytes(options, backend); });
  // A running trace keeps its device buffer in the heap, on top of what the script asked for.
  const bool several_nodes = session->nodes.nodes() > 1;
  session->heap = std::make_unique<heap::SymmetricHeap>(backend, comm, heap_bytes + trace_heap_reserve(),
                                                        several_nodes ? session->nodes.node_of : std::vector<int>{});
  if (several_nodes) {
    const NodeTransport transport = chosen_node_transport(comm, backend, session->nodes.nodes());
    session->proxy = std::make_unique<Proxy>(comm, backend, session->heap->local_base(), session->heap->size(),
                                             transport);
    if (transport == NodeTransport::messages) backend.drain_before_copies(true);
    log::write(log::Level::info, format("iris.init: %d nodes, between them %s", session->nodes.nodes(),
                                        session->proxy->transport().c_str()));
  }
  session->mailbox = backend.allocate_mapped_host(sizeof(abi::DeviceMailbox));
  backend.watch_mailbox(session->mailbox);  // a device fault then reports a failed wait
  comm::hang::set_kernels_in_flight([&backend] { return backend.kernels_in_flight(); });
  log::write(log::Level::info, format("iris.init: backend %s on %s (device %d), heap %s per rank", backend.name(),
                                      backend.device_name().c_str(), backend.device(), human_bytes(heap_bytes).c_str()));
  g_session = std::move(session);
  trace_session_started();
  return *g_session;
}

Session& current() {
  if (!g_session) throw Error(Errc::invalid_argument, "call iris.init() first");
  return *g_session;
}

bool initialized() { return g_session != nullptr; }

namespace {
bool g_fault_reported = false;
}  // namespace

void synchronize_if_initialized() {
  if (g_session) g_session->backend->synchronize();
}

void note_fault_reported() { g_fault_reported = true; }
bool fault_reported() { return g_fault_reported; }

void shutdown() {
  comm::hang::set_kernels_in_flight(nullptr);
  g_session.reset();
}

programs::Registry& registry() {
  if (g_registry_in_use != nullptr) return *g_registry_in_use;
  Session& s = current();
  if (!s.programs) {
    programs::DeviceContext d;
    d.backend = s.backend.get();
    d.rank = s.comm.rank();
    d.world_size = s.comm.size();
    d.heap_bases = s.heap->device_heap_bases();
    d.heap_base = s.heap->base_of(d.rank);
    d.mailbox = s.mailbox;
    d.proxy = s.proxy ? s.proxy->device_ring() : nullptr;
    s.programs = std::make_unique<programs::Registry>(d, programs::RegistryOptions::from_environment());
  }
  return *s.programs;
}

runtime::Backend& backend() {
  if (g_registry_in_use != nullptr) return g_registry_in_use->backend();
  return *current().backend;
}

void use_registry(programs::Registry* registry) { g_registry_in_use = registry; }

}  // namespace iris::session
