// Hang diagnosis: when ranks wait for each other (a host collective, the end of the job, the device)
// and some never arrive, say where every rank is, then end the job if the waiting goes on.
//
//   - A rank that has waited IRIS_HANG_REPORT seconds (default 20) in one wait asks every rank of the
//     node, once per job, where it is, and prints the answers: each rank's Lua traceback (its own
//     frames), what it waits for and since when, the kernels in flight on its device.
//   - Then everybody keeps waiting: a rank may be busy on purpose. A rank that has waited
//     IRIS_HANG_TIMEOUT seconds (default 300; 0: never) gives up with Error(hang), and every rank of the
//     node says the job ends; a rank that is still running 10 s later ends itself.
//
// The question and the answers travel through a board in shared memory of the node's ranks (an unnamed
// file, core/unnamed_memory.hpp), not MPI: a rank busy in Lua or in a kernel cannot take part in a
// collective (and MPI is FUNNELED: no other thread may). Who answers:
//   - a waiting rank answers from its wait loop (Wait::poll), with the Lua traceback when the wait was
//     entered through the host's call_waiting (set_lua_sources below), and its device's kernels;
//   - for any other rank a watcher thread answers: it has the Lua state run a hook (as Ctrl-C does) that
//     answers with the traceback and continues; code that never runs hooks (a loop compiled by the JIT,
//     a C function) gets what the watcher knows instead (core/activity.hpp: in a kernel, compiling).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/activity.hpp"

namespace iris::comm::hang {

struct Settings {
  double report_after = 20;   // IRIS_HANG_REPORT; 0: never
  double give_up_after = 300; // IRIS_HANG_TIMEOUT; 0: never
};
// From the environment; Error(environment) for a value that is no number of seconds.
Settings settings_from_environment();

// Bytes of the board for `local_size` ranks.
size_t board_bytes(int local_size);
// Starts reporting on `board` (zeroed, shared by the node's ranks; null: this process's own memory,
// when there is no MPI) and the watcher thread. Comm::create calls it; later calls change nothing.
void start(const Settings& settings, void* board, int rank, int size, int local_rank, int local_size);

// What upper layers tell the reports. Any may be empty (not known yet, or gone).
//   lua_traceback: this rank's Lua traceback, its own frames only, when the main thread may look at the
//     Lua state now ("" when it may not: inside code the JIT compiled). Main thread.
//   request_lua_answer: asks the Lua state to call answer_from_lua() at its next interpreted
//     instruction. Any thread.
//   sample_compiled_lua: when the request above gets no answer (the Lua code runs in a trace the JIT
//     compiled, which never runs hooks), makes LuaJIT's profiler sample now: its callback answers
//     from the trace's exit. Any thread; may be empty.
//   kernels_in_flight: the kernels in flight on this rank's device ("" when none). Main thread.
void set_lua_sources(std::function<std::string()> lua_traceback, std::function<void()> request_lua_answer,
                     std::function<void()> sample_compiled_lua = nullptr);
void set_kernels_in_flight(std::function<std::string()> kernels_in_flight);

// From the Lua hook the watcher asked for (main thread, Lua stopped at an instruction): answers an
// open question with `traceback` (this rank's frames).
void answer_from_lua(const std::string& traceback);

// Output of reports and job-end notices (default standard error): the REPL hands over the terminal's
// while it captures a chunk's output. -1 goes back to standard error.
void set_report_fd(int fd);

// ---- the job's abnormal end (core/job_end.hpp): what must still be written, by every rank of the node
// A rank whose job ends abnormally announces it to the node's ranks (whose watchers then run their own
// job_end::failed with the same words): the first to announce leads (true) and its `how` and
// `exit_code` stay the job's. Each rank does its part (its share of the trace) and marks it done; the
// leader waits for the parts (wait_for_job_end_parts: the node ranks still missing when every rank
// marked, died, or `seconds` passed) and says when all is written; the others wait for that
// (wait_for_job_end_written), so that their own end (MPI_Abort) does not cut the leader's work short.
bool announce_job_end(const std::string& how, int exit_code);
int job_end_leader();  // the leading rank, -1 before an announcement
void job_end_part_done();
std::vector<int> wait_for_job_end_parts(double seconds);
void job_end_written();
void wait_for_job_end_written(double seconds);
// This rank finished its script (Comm::finish): its process ending is no failure.
void mark_finished();

// A bounded wait on this rank's device gave up (`what`: its report, "ctx.ccl.all_reduce on rank 1: rank
// 3 did not call it within 10 s ..."): every rank of the node says where it is now, as in a hang report
// (once per job; nothing when one was already printed or IRIS_HANG_REPORT is 0), so that a rank that
// never came is named with its line even when the device gave up before IRIS_HANG_REPORT. Returns once
// the report is printed (by this rank or the one that asked), at most a few seconds later.
void report_now(const std::string& what);

// One wait of the main thread for other ranks or the device: `doing` says what it does, as reports
// word it ("waiting in ctx:barrier()", "waiting for the GPU"). poll() belongs in its loop; it throws
// Error(hang) once the wait has lasted IRIS_HANG_TIMEOUT. A wait that may not ask (a compiler at work:
// a long compile is no sign of a hang by itself) still answers reports and gives up. Layers below comm
// get these through activity::WatchedWait (start() installs the factory).
class Wait {
 public:
  explicit Wait(std::string doing, bool may_ask = true);
  ~Wait();
  Wait(const Wait&) = delete;
  Wait& operator=(const Wait&) = delete;
  void poll();

 private:
  std::string doing_;
  activity::Scope activity_;
  double started_;
  bool may_ask_;
  bool outer_;  // not inside another Wait (that one answers questions)
};

}  // namespace iris::comm::hang
