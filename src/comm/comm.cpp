#include "comm/comm.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_Query_cuda_support / MPIX_Query_rocm_support
#endif
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "comm/hang_report.hpp"
#include "comm/launcher.hpp"
#include "comm/mpi_support.hpp"
#include "core/activity.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/job_end.hpp"
#include "core/log.hpp"
#include "core/trace.hpp"
#include "core/unnamed_memory.hpp"

namespace iris::comm {
namespace {

constexpr int kTagDone = 7001;
// The longest "how it finished" a rank tells the others (Comm::finish).
constexpr int kHowBytes = 256;
constexpr int kTagClock = 7002;
// How long a collective keeps trying after a peer said it finished: a root's broadcast can complete
// on the root before the data reaches the others, so "finished" alone does not prove a hang.
constexpr double kFinishedPeerGraceSeconds = 2.0;

struct Header {
  char op[48];
  uint64_t arg;
  uint64_t detail;
};
static_assert(sizeof(Header) == 64, "fixed-size header");

// The hang report's board (comm/hang_report.hpp): node-local rank 0 creates it as unnamed shared memory,
// the others open its descriptor. A rank that cannot open it reports alone (the others see no answer
// from it); nothing else depends on it.
void start_hang_reports(const hang::Settings& settings, MPI_Comm node, int rank, int size, int local_rank,
                        int local_size) {
  const size_t bytes = hang::board_bytes(local_size);
  int where[2] = {0, -1};  // pid, fd of local rank 0's board
  int fd = -1;
  std::string why;
  if (local_rank == 0) {
    fd = unnamed_memory::create(bytes, &why);
    where[0] = static_cast<int>(getpid());
    where[1] = fd;
  }
  MPI_Bcast(where, 2, MPI_INT, 0, node);
  if (local_rank != 0 && where[1] >= 0) fd = unnamed_memory::open_peer(where[0], where[1], &why);
  void* board = fd >= 0 ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  MPI_Barrier(node);  // every rank has it mapped (or gave up): the descriptor may go
  if (fd >= 0) close(fd);
  if (board == MAP_FAILED) {
    log::write(log::Level::warning, "hang reports will not show the other ranks: " + why);
    board = std::calloc(1, bytes);
  }
  hang::start(settings, board, rank, size, local_rank, local_size);
}

}  // namespace

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(Errc::environment, format("%s failed: %.*s", call, len, text));
}

struct Comm::Mpi {
  MPI_Comm world = MPI_COMM_NULL;    // collectives
  MPI_Comm control = MPI_COMM_NULL;  // "I finished" notices, kept apart from collective traffic
  MPI_Comm node = MPI_COMM_NULL;     // ranks of this node
  MPI_Comm session = MPI_COMM_NULL;  // Lane::session
};


std::unique_ptr<Comm> Comm::create(int* argc, char*** argv) {
  std::unique_ptr<Comm> comm(new Comm());
  comm->m_ = std::make_unique<Mpi>();
  const hang::Settings hang_settings = hang::settings_from_environment();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && !started_by_launcher()) {
    comm->peer_done_.assign(1, 0);
    hang::start(hang_settings, nullptr, 0, 1, 0, 1);
    return comm;
  }
  comm->mpi_ = true;
  if (!initialized) {
    int provided = 0;
    // MULTIPLE: the host proxy of a job over several nodes (session/proxy.hpp) drives one-sided
    // transfers from its own thread while the main thread runs the host collectives.
    check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    comm->owns_mpi_ = true;
    comm->thread_level_ = provided;
  } else {
    MPI_Query_thread(&comm->thread_level_);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Mpi& m = *comm->m_;
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &m.world), "MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &m.control), "MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &m.session), "MPI_Comm_dup");
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &m.node),
            "MPI_Comm_split_type");
  MPI_Comm_rank(m.world, &comm->rank_);
  MPI_Comm_size(m.world, &comm->size_);
  MPI_Comm_rank(m.node, &comm->local_rank_);
  MPI_Comm_size(m.node, &comm->local_size_);
  comm->host_leader_ = comm->rank_;
  MPI_Bcast(&comm->host_leader_, 1, MPI_INT, 0, m.node);
  comm->peer_done_.assign(comm->size_, 0);
  comm->peer_how_.assign(comm->size_, "");
  start_hang_reports(hang_settings, m.node, comm->rank_, comm->size_, comm->local_rank_, comm->local_size_);
  return comm;
}

Comm::~Comm() = default;

bool Comm::threads_may_call_mpi() const { return !mpi_ || thread_level_ == MPI_THREAD_MULTIPLE; }

std::string Comm::thread_level_name() const {
  switch (thread_level_) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

std::string Comm::device_memory_refusal(const std::string& backend) const {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string library(version, static_cast<size_t>(length));
  if (const size_t end = library.find_first_of(",\n"); end != std::string::npos) library.resize(end);
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  if (backend == "cuda" && MPIX_Query_cuda_support() == 1) return "";
#endif
#if defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
  if (backend == "hip" && MPIX_Query_rocm_support() == 1) return "";
#endif
  const char* vendor = backend == "hip" ? "ROCm" : "CUDA";
  return format("this rank's MPI library (%s) was not built %s-aware, so its one-sided transport cannot reach the "
                "heap in GPU memory: use an Open MPI built with UCX and %s (ompi_info --parsable --all | grep "
                "mpi_built_with_cuda_support says; docs/multinode.md), or run every rank of the job on one node",
                library.c_str(), vendor, vendor);
}

void* Comm::world_handle() const { return mpi_ ? static_cast<void*>(&m_->world) : nullptr; }

void Comm::poll_control() {
  if (!mpi_) return;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagDone, m_->control, &flag, &status);
    if (!flag) return;
    char how[kHowBytes] = {0};
    MPI_Recv(how, kHowBytes, MPI_CHAR, status.MPI_SOURCE, kTagDone, m_->control, MPI_STATUS_IGNORE);
    how[kHowBytes - 1] = '\0';
    if (!peer_done_[status.MPI_SOURCE]) {
      peer_done_[status.MPI_SOURCE] = 1;
      peer_how_[status.MPI_SOURCE] = how;
      ++peers_done_;
    }
  }
}

void Comm::wait(void* request_ptr, const std::string& what) {
  auto* request = static_cast<MPI_Request*>(request_ptr);
  hang::Wait waiting("waiting in " + what);
  Backoff backoff;
  std::chrono::steady_clock::time_point finished_peer_seen{};
  bool saw_finished_peer = false;
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    poll_control();
    if (peers_done_ > 0) {
      auto now = std::chrono::steady_clock::now();
      if (!saw_finished_peer) {
        saw_finished_peer = true;
        finished_peer_seen = now;
      } else if (std::chrono::duration<double>(now - finished_peer_seen).count() > kFinishedPeerGraceSeconds) {
        // "rank 1 already finished the script", "ranks 1, 2 already finished the script; rank 3 called
        // os.exit(0) at s.lua:5": ranks that ended alike are named together.
        std::vector<std::pair<std::string, std::string>> groups;  // how, ranks
        for (int r = 0; r < size_; ++r) {
          if (!peer_done_[r]) continue;
          const std::string how = peer_how_[r].empty() ? "already finished the script" : peer_how_[r];
          auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == how; });
          if (group == groups.end()) group = groups.insert(groups.end(), {how, ""});
          group->second += (group->second.empty() ? "" : ", ") + std::to_string(r);
        }
        std::string finished;
        for (const auto& [how, ranks] : groups) {
          finished += format("%srank%s %s %s", finished.empty() ? "" : "; ", ranks.find(',') != std::string::npos ? "s" : "",
                             ranks.c_str(), how.c_str());
        }
        throw Error(Errc::peer_finished,
                    format("%s can never complete: %s (every rank must make the same collective calls in the same "
                           "order)",
                           what.c_str(), finished.c_str()));
      }
    }
    interrupt::check(what.c_str());
    waiting.poll();
    backoff.pause();
  }
}

void Comm::wait_quietly(void* request_ptr, const std::string& what, bool watched) {
  auto* request = static_cast<MPI_Request*>(request_ptr);
  // What the hang report of another rank says; a watched wait also asks for one and gives up.
  std::unique_ptr<activity::Scope> quiet;
  std::unique_ptr<hang::Wait> wait;
  if (watched) {
    wait = std::make_unique<hang::Wait>("waiting for " + what);
  } else {
    quiet = std::make_unique<activity::Scope>("waiting for " + what);
  }
  Backoff backoff(std::chrono::milliseconds(10));
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (wait) wait->poll();
    backoff.pause();
  }
}

void Comm::require_every_rank(const std::string& op) const {
  if (alone_reason_.empty() || size_ == 1) return;
  throw Error(Errc::invalid_argument,
              format("%s is collective (every rank must call it, or it waits for ranks that never come), but %s; "
                     "run it on every rank",
                     op.c_str(), alone_reason_.c_str()));
}

std::vector<Announcement> Comm::announce(const std::string& op, uint64_t arg, uint64_t detail) {
  require_every_rank(op);
  Header mine{};
  std::snprintf(mine.op, sizeof mine.op, "%s", op.c_str());
  mine.arg = arg;
  mine.detail = detail;
  std::vector<Header> headers(size_);
  if (mpi_) {
    MPI_Request request;
    check_mpi(MPI_Iallgather(&mine, sizeof mine, MPI_BYTE, headers.data(), sizeof mine, MPI_BYTE, m_->world, &request),
              "MPI_Iallgather");
    wait(&request, op);
  } else {
    headers[0] = mine;
  }
  std::vector<Announcement> all(size_);
  for (int r = 0; r < size_; ++r) {
    all[r].op = std::string(headers[r].op, strnlen(headers[r].op, sizeof headers[r].op));
    all[r].arg = headers[r].arg;
    all[r].detail = headers[r].detail;
  }
  for (int r = 0; r < size_; ++r) {
    if (all[r].op != all[rank_].op) {
      throw CollectiveMismatch(format("collective mismatch: this rank is in %s but rank %d is in %s "
                                      "(every rank must make the same collective calls in the same order)",
                                      all[rank_].op.c_str(), r, all[r].op.c_str()),
                               all[rank_].op, r, all[r].op);
    }
  }
  return all;
}

void Comm::broadcast(void* data, size_t bytes, int root) {
  if (!mpi_ || bytes == 0) return;
  if (bytes > static_cast<size_t>(INT32_MAX)) throw Error(Errc::invalid_argument, "broadcast of more than 2 GiB");
  MPI_Request request;
  check_mpi(MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, m_->world, &request), "MPI_Ibcast");
  wait(&request, "broadcast");
}

void Comm::allgather(const void* mine, size_t bytes, void* all) {
  if (!mpi_) {
    std::memcpy(all, mine, bytes);
    return;
  }
  MPI_Request request;
  check_mpi(MPI_Iallgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes), MPI_BYTE, m_->world,
                           &request),
            "MPI_Iallgather");
  wait(&request, "allgather");
}

std::vector<std::vector<uint8_t>> Comm::allgatherv(const void* mine, size_t bytes) {
  std::vector<std::vector<uint8_t>> out(size_);
  if (!mpi_) {
    out[0].assign(static_cast<const uint8_t*>(mine), static_cast<const uint8_t*>(mine) + bytes);
    return out;
  }
  std::vector<uint64_t> sizes(size_);
  uint64_t my_size = bytes;
  allgather(&my_size, sizeof my_size, sizes.data());
  std::vector<int> counts(size_), displs(size_);
  uint64_t total = 0;
  for (int r = 0; r < size_; ++r) {
    counts[r] = static_cast<int>(sizes[r]);
    displs[r] = static_cast<int>(total);
    total += sizes[r];
  }
  std::vector<uint8_t> all(total + 1);
  MPI_Request request;
  check_mpi(MPI_Iallgatherv(mine, static_cast<int>(bytes), MPI_BYTE, all.data(), counts.data(), displs.data(),
                            MPI_BYTE, m_->world, &request),
            "MPI_Iallgatherv");
  wait(&request, "allgatherv");
  for (int r = 0; r < size_; ++r) out[r].assign(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
  return out;
}

std::vector<std::string> Comm::exchange(Lane lane, Route route, int root, const std::string& op, const void* mine,
                                       size_t bytes) {
  if (root < 0 || root >= size_) throw Error(Errc::invalid_argument, format("%s: no rank %d to exchange with", op.c_str(), root));
  std::vector<std::string> received(size_);
  if (!mpi_) {
    received[0].assign(static_cast<const char*>(mine), bytes);
    return received;
  }
  // Every rank's byte count: the job lane's announcement carries it; the session lane gathers it.
  std::vector<uint64_t> lengths(size_);
  MPI_Comm communicator = lane == Lane::job ? m_->world : m_->session;
  auto await = [&](MPI_Request* request) {
    if (lane == Lane::job) {
      wait(request, op);
    } else {
      wait_quietly(request, op, lane == Lane::session_watched);
    }
  };
  if (lane == Lane::job) {
    auto all = announce(op, bytes);
    for (int r = 0; r < size_; ++r) lengths[r] = all[r].arg;
  } else {
    uint64_t my_length = bytes;
    MPI_Request request;
    check_mpi(MPI_Iallgather(&my_length, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T, communicator, &request),
              "MPI_Iallgather");
    await(&request);
  }
  std::vector<int> counts(size_), displs(size_);
  uint64_t total = 0;
  for (int r = 0; r < size_; ++r) {
    const bool arrives = route == Route::to_all || (route == Route::from_root ? r == root : rank_ == root);
    counts[r] = arrives ? static_cast<int>(lengths[r]) : 0;
    displs[r] = static_cast<int>(total);
    total += counts[r];
  }
  if (total > static_cast<uint64_t>(INT32_MAX)) throw Error(Errc::invalid_argument, op + ": more than 2 GiB to exchange");
  std::vector<char> all(total + 1);
  MPI_Request request;
  const int my_count = static_cast<int>(bytes);
  if (route == Route::to_all) {
    check_mpi(MPI_Iallgatherv(mine, my_count, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE,
                              communicator, &request),
              "MPI_Iallgatherv");
  } else if (route == Route::from_root) {
    if (rank_ == root) std::memcpy(all.data(), mine, bytes);
    check_mpi(MPI_Ibcast(all.data(), counts[root], MPI_BYTE, root, communicator, &request), "MPI_Ibcast");
  } else {
    check_mpi(MPI_Igatherv(mine, my_count, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, root,
                           communicator, &request),
              "MPI_Igatherv");
  }
  await(&request);
  for (int r = 0; r < size_; ++r) received[r].assign(all.data() + displs[r], counts[r]);
  return received;
}

void Comm::renew() {
  if (!mpi_) return;
  // MPI_COMM_WORLD itself carries no iris traffic, so duplicating it is never out of step.
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &m_->world), "MPI_Comm_dup");
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &m_->node),
            "MPI_Comm_split_type");
}

Comm::ClockOffset Comm::measure_clock_offset(const ClockRounds& rounds) {
  announce("iris.trace: clock offsets", static_cast<uint64_t>(rounds.max));
  ClockOffset best;
  if (!mpi_ || size_ == 1) return best;
  // Spins without sleeping: a sleep inside a round would be counted as link latency. Bounded all the
  // same, and Ctrl-C stops it.
  const auto exchange = [&](bool send, void* data, int bytes, int peer) {
    MPI_Request request;
    check_mpi(send ? MPI_Isend(data, bytes, MPI_BYTE, peer, kTagClock, m_->world, &request)
                   : MPI_Irecv(data, bytes, MPI_BYTE, peer, kTagClock, m_->world, &request),
              send ? "MPI_Isend" : "MPI_Irecv");
    const int64_t started = trace::now_ns();
    for (int done = 0;;) {
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      interrupt::check("measuring the ranks' clock offsets");
      const int64_t waited = trace::now_ns() - started;
      if (waited > rounds.good_ns) std::this_thread::yield();  // this round is lost: let the peer's core go
      if (waited > 30'000'000'000) {
        throw Error(Errc::environment, format("measuring the ranks' clock offsets: rank %d did not answer in 30 s", peer));
      }
    }
  };
  // A ping carries whether another follows; the pong, rank 0's receive and send times.
  int64_t ping[2] = {0, 0};
  int64_t stamps[2] = {0, 0};
  if (rank_ == 0) {
    for (int peer = 1; peer < size_; ++peer) {
      int go = 1;
      exchange(true, &go, sizeof go, peer);  // one peer at a time: the others wait their turn
      do {
        exchange(false, ping, sizeof ping, peer);
        stamps[0] = trace::now_ns();
        stamps[1] = trace::now_ns();
        exchange(true, stamps, sizeof stamps, peer);
      } while (ping[1] != 0);
    }
    return best;
  }
  int go = 0;
  MPI_Request request;
  check_mpi(MPI_Irecv(&go, sizeof go, MPI_BYTE, 0, kTagClock, m_->world, &request), "MPI_Irecv");
  wait(&request, "measuring the ranks' clock offsets");
  // Rounds until one was quick (on a busy machine a rank may lose its core in the middle of one),
  // within a budget.
  const int64_t started = trace::now_ns();
  best.error_ns = INT64_MAX;
  for (int k = 1;; ++k) {
    const bool last = k >= rounds.max ||
                      (k >= rounds.min && (best.error_ns <= rounds.good_ns || trace::now_ns() - started > rounds.budget_ns));
    ping[0] = trace::now_ns();
    ping[1] = last ? 0 : 1;
    exchange(true, ping, sizeof ping, 0);
    exchange(false, stamps, sizeof stamps, 0);
    const int64_t received = trace::now_ns();
    const int64_t round_trip = (received - ping[0]) - (stamps[1] - stamps[0]);
    if ((round_trip + 1) / 2 < best.error_ns) {
      best.offset_ns = ((ping[0] - stamps[0]) + (received - stamps[1])) / 2;
      best.error_ns = (round_trip + 1) / 2;
    }
    if (last) break;
  }
  return best;
}

void Comm::abort(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  // What must still be written (the trace), unless the way out that called this already did it.
  job_end::failed(format("rank %d ended the job (exit code %d)", rank_, exit_code), exit_code);
  if (mpi_ && size_ > 1) {
    // Give the launcher's output forwarding a moment to carry this rank's message out first.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    // Under Open MPI's launcher a rank that exits with a non-zero code ends the job, and says so once.
    // MPI_Abort would too, but its notice travels to the launcher as a message that Open MPI 4 often
    // fails to unpack when ranks are ending ("ORTE_ERROR_LOG: Data unpack would read past end of
    // buffer", even with one rank aborting): noise after the rank's own message.
    if (launched_by_open_mpi()) std::_Exit(exit_code);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
  }
  std::_Exit(exit_code);
}

void Comm::finish(const std::string& how) {
  if (finished_) return;
  finished_ = true;
  hang::mark_finished();
  if (!mpi_) return;
  std::vector<MPI_Request> sends;
  char text[kHowBytes] = {0};
  std::snprintf(text, sizeof text, "%s", how.c_str());
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    sends.emplace_back();
    check_mpi(MPI_Isend(text, static_cast<int>(std::strlen(text) + 1), MPI_CHAR, r, kTagDone, m_->control,
                        &sends.back()),
              "MPI_Isend");
  }
  Backoff backoff;
  hang::Wait waiting("waiting for the other ranks to finish (this rank has finished its script)");
  while (peers_done_ < size_ - 1) {
    poll_control();
    waiting.poll();
    backoff.pause();
  }
  MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
}

void Comm::finalize() {
  if (!mpi_ || finalized_) return;
  finalized_ = true;
  MPI_Comm_free(&m_->node);
  MPI_Comm_free(&m_->session);
  MPI_Comm_free(&m_->control);
  MPI_Comm_free(&m_->world);
  if (owns_mpi_) MPI_Finalize();
}

}  // namespace iris::comm
