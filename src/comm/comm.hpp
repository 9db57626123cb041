// Ranks and host-side collectives.
//
// Started by mpirun (or another MPI launcher) the ranks are MPI processes; started alone, iris-lua is one
// rank and never touches MPI. Every collective here is non-blocking underneath and waited on in a loop
// that also watches for:
//   - divergence: each collective first exchanges a small header naming the operation, so a rank in
//     ctx:barrier() while another is in ctx:zeros() gets an error naming both instead of a hang;
//   - finished peers: a rank that ends its script tells the others; a collective that a finished rank
//     never joined can never complete and becomes an error;
//   - Ctrl-C (core/interrupt.hpp).
// A failing rank calls abort(), which ends every rank of the job (MPI_Abort).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace iris::comm {

// Which messages a byte exchange (Comm::exchange) travels with.
enum class Lane {
  // One of the job's collectives: announced, so a rank in another collective gets a mismatch naming
  // both; its wait ends with an error when a peer has finished or Ctrl-C comes.
  job,
  // The REPL's commands and results, on a communicator of their own that a collective Ctrl-C cut short
  // never disturbs (renew() leaves it alone); its waits end only when the bytes are there, sleeping up
  // to 10 ms between looks (ranks wait minutes for the next line).
  session,
  // The session's communicator, its waits watched as the job's are (hang::Wait: a report after
  // IRIS_HANG_REPORT, Error(hang) after IRIS_HANG_TIMEOUT): the results of a REPL command read from a
  // pipe, where nobody can press Ctrl-C when a rank never finishes the command.
  session_watched,
};

// Where the bytes of an exchange go.
enum class Route {
  to_all,     // every rank receives every rank's bytes
  from_root,  // every rank receives root's bytes (the others' are not sent)
  to_root,    // root receives every rank's bytes, the others nothing
};

// What one rank announced when entering a collective.
struct Announcement {
  std::string op;   // e.g. "ctx:zeros()"
  uint64_t arg;     // operation-specific (a size, a root, ...)
  uint64_t detail;  // operation-specific too: a digest of what a size alone does not say (dtype and shape)
};

class Comm {
 public:
  // MPI when a launcher started this process, else a single rank without MPI.
  static std::unique_ptr<Comm> create(int* argc, char*** argv);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Position among the ranks of this node (MPI shared-memory split); selects the device.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  bool is_mpi() const { return mpi_; }
  // The world rank of local rank 0 of this rank's host (MPI_COMM_TYPE_SHARED): ranks with the same
  // leader share a host. Its own rank without MPI.
  int host_leader() const { return host_leader_; }
  // Whether a second thread may call MPI beside the main thread (MPI_THREAD_MULTIPLE, asked at init),
  // and the level MPI gave, for messages.
  bool threads_may_call_mpi() const;
  std::string thread_level_name() const;
  // "" when the MPI library's one-sided transport reaches `backend`'s device memory ("cuda", "hip": it says
  // it was built CUDA- or ROCm-aware), else why not and what to do.
  std::string device_memory_refusal(const std::string& backend) const;
  // The job's collective communicator as an MPI_Comm* (null without MPI), for the one-sided transport
  // (comm/rma_window.hpp), which duplicates it.
  void* world_handle() const;

  // Every rank announces `op` with `arg`; returns what each rank announced (index = rank).
  // Throws Errc::divergence when ranks announce different operations. Completes only once every rank
  // has arrived, so it is also a barrier.
  std::vector<Announcement> announce(const std::string& op, uint64_t arg = 0, uint64_t detail = 0);
  void barrier(const std::string& op = "ctx:barrier()") { announce(op, 0); }

  // Plain collectives without a header: call them right after announce() for the same operation.
  void broadcast(void* data, size_t bytes, int root);
  void allgather(const void* mine, size_t bytes, void* all);  // `all` holds size() * bytes
  // Each rank contributes any number of bytes; returns every rank's bytes.
  std::vector<std::vector<uint8_t>> allgatherv(const void* mine, size_t bytes);

  // The one byte exchange the Lua side's own protocols use (iris_exchange_bytes): collective on
  // `lane`, every rank with the same route and root. Each rank passes its bytes and gets what `route`
  // brings it, by sending rank (empty where nothing came). `op` names it in a mismatch (Lane::job).
  std::vector<std::string> exchange(Lane lane, Route route, int root, const std::string& op, const void* mine,
                                    size_t bytes);

  // While `reason` is not empty, this rank runs code that the others do not (the REPL's `:on R`): every
  // collective of the job (announce(), the job lane's exchanges) is refused at once with
  // Error(invalid_argument) "<op> is collective ...: <reason>" instead of waiting for ranks that will
  // never join. The session lane (the REPL's own messages) is not. "" ends it.
  void run_alone(const std::string& reason) { alone_reason_ = reason; }
  // Throws that error when this rank runs alone (and the job has other ranks); announce() calls it, and
  // so do operations that wait for every rank without a host collective (the device barrier).
  void require_every_rank(const std::string& op) const;

  // Collective, on every rank at the same point: after Ctrl-C stopped some ranks inside a collective
  // that others had not joined (or had left), the ranks' collectives are out of step. Continues on
  // fresh communicators; the abandoned operations stay on the old ones, which are never used again
  // (they are not freed: freeing a communicator with an operation that never completes is not safe).
  void renew();

  // Collective: how far this rank's steady clock is from rank 0's, measured as NTP does: ping-pongs
  // with rank 0, keeping the one with the shortest round trip. Its two legs take about as long, so the
  // true offset lies within error_ns (half that round trip) of offset_ns. Rank 0: {0, 0}.
  struct ClockOffset {
    int64_t offset_ns = 0;  // this rank's clock minus rank 0's
    int64_t error_ns = 0;
  };
  // At least `min` rounds; more until one pins the offset within `good_ns`, up to `max` rounds or
  // `budget_ns` of trying.
  struct ClockRounds {
    int min = 8;
    int max = 2000;
    int64_t good_ns = 20'000;
    int64_t budget_ns = 500'000'000;
  };
  ClockOffset measure_clock_offset(const ClockRounds& rounds);

  // Ends the whole job with `exit_code`: under MPI every rank ends (MPI_Abort); alone, the process exits.
  [[noreturn]] void abort(int exit_code);

  // Normal end of this rank's work: tells the others and waits until every rank has finished. A rank
  // still waiting in a collective that this rank never joined gets Errc::peer_finished, which says how
  // this rank ended: `how` ("called os.exit(0) at s.lua:5"), or "finished the script" when empty.
  void finish(const std::string& how = "");
  // Releases MPI (after finish(), once nothing needs the other ranks any more).
  void finalize();

 private:
  Comm() = default;
  void wait(void* request, const std::string& what);
  // A wait on the session lane: until the request completes, nothing else ends it. A hang report says
  // this rank is waiting for `what`.
  void wait_quietly(void* request, const std::string& what, bool watched = false);
  void poll_control();

  bool mpi_ = false;
  bool owns_mpi_ = false;
  bool finished_ = false;
  bool finalized_ = false;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int host_leader_ = 0;
  int thread_level_ = 0;
  std::string alone_reason_;
  std::vector<char> peer_done_;  // peer_done_[r]: rank r said it finished
  std::vector<std::string> peer_how_;  // how it finished, as it said (finish's `how`)
  int peers_done_ = 0;
  struct Mpi;
  std::unique_ptr<Mpi> m_;
};

}  // namespace iris::comm
