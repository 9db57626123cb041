#include "runtime/cpu/cpu_executor.hpp"

#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/context/detail/fcontext.hpp>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "runtime/cpu/cpu_store_buffer.hpp"
#include "runtime/cpu/cpu_warps.hpp"

namespace iris::runtime::cpu {
namespace {

namespace bc = boost::context::detail;

constexpr size_t kFiberStackBytes = 256 * 1024;  // a GPU thread's stack is 1-8 KiB; printf wants a few
// Below each stack; kernels are built with -fstack-clash-protection, so an overflow touches it first.
constexpr size_t kGuardBytes = 64 * 1024;
constexpr size_t kSignalStackBytes = 64 * 1024;
constexpr unsigned kMaxBlockThreads = 1024;
// The weak memory model: how many stores a thread holds back at most, and over how long the stores a
// launch left unpublished become visible after its last block, a few at a time (a peer that saw a
// flag overtake them has that long to read stale data, as it would on a GPU for a shorter while).
constexpr size_t kMaxPendingStores = 64;
constexpr unsigned kLateVisibilityMinUs = 10000, kLateVisibilityMaxUs = 30000, kLateVisibilitySteps = 16;

std::atomic<uint64_t> g_memory_seed{0};      // IRIS_CPU_MEMORY_SEED with the rank mixed in (Executor)
std::atomic<uint64_t> g_workers_started{0};  // gives each OS thread's random choices their own stream

// Anonymous memory, committed only where touched.
void* reserve(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw Error(Errc::internal, format("cannot reserve %zu bytes: %s", bytes, std::strerror(errno)));
  return p;
}

struct Fiber {
  char* base = nullptr;  // the mapping; its lowest kGuardBytes are the guard
  bc::fcontext_t context = nullptr;
  unsigned thread = 0;  // index of the device thread it runs now
  Fiber() {
    base = static_cast<char*>(reserve(kGuardBytes + kFiberStackBytes));
    mprotect(base, kGuardBytes, PROT_NONE);  // an overflow faults instead of corrupting memory
  }
  ~Fiber() { munmap(base, kGuardBytes + kFiberStackBytes); }
  void* top() const { return base + kGuardBytes + kFiberStackBytes; }
  bool guards(const void* address) const {
    const char* a = static_cast<const char*>(address);
    return a >= base && a < base + kGuardBytes;
  }
};

// What a fiber tells the scheduler when it hands control back.
enum class Switch : intptr_t { finished = 1, parked = 2, yielded = 3 };

struct Launch {
  KernelEntry entry;
  void** args;
  LaunchConfig config;
  uint64_t blocks;
  std::atomic<uint64_t> next_block{0};
  std::atomic<bool> aborted{false};
  std::mutex fault_mutex;
  LaunchFault fault;  // the first fault of the launch

  void record_fault(const std::string& what, const std::string& where, bool interrupted = false) {
    std::lock_guard<std::mutex> lock(fault_mutex);
    if (!fault) fault = {what, where, interrupted};
    aborted.store(true);
  }
  void record_interrupt() { record_fault("interrupted", "", true); }
};

// One block in flight on an OS thread.
struct BlockRun {
  Launch* launch = nullptr;
  abi::CpuThreadState* states = nullptr;
  abi::CpuDim3 block_idx{};
  unsigned total = 0;
  unsigned next_unstarted = 0;
  unsigned live = 0;  // threads not yet returned (started or not)
  std::deque<Fiber*> ready;
  std::vector<Fiber*> at_barrier;
  Fiber* current = nullptr;
  bc::fcontext_t scheduler = nullptr;  // where the running fiber returns to
  unsigned spins = 0;                  // yields since the block last made progress
};

// Everything an OS thread needs to run blocks; one per thread, for the thread's lifetime (a module's
// thread-local pointer to the dynamic shared buffer stays valid).
struct Worker {
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<Fiber*> free_fibers;
  void* dynamic_shared = nullptr;
  std::vector<abi::CpuThreadState> states = std::vector<abi::CpuThreadState>(kMaxBlockThreads);
  BlockWarps warps{kMaxBlockThreads};
  std::vector<void*> resumed;  // fibers a warp collective completed, on their way to `ready`
  std::string warp_error;      // a misused collective, kept here: the trap's jump skips destructors
  // The weak memory model, set up when a module built for it first calls in (cpu_store_buffer.hpp).
  bool weak = false;
  std::vector<StoreBuffer> store_buffers;  // per device thread of the running block
  StoreBuffer retired;                     // stores of threads that returned, not visible yet
  Random random{0};
  BlockRun* run = nullptr;
  sigjmp_buf recovery;
  volatile sig_atomic_t in_kernel = 0;
  // What the fault handler (or a trap) saw, read after the jump back: the block's frames are gone then.
  volatile sig_atomic_t fault_signal = 0;
  void* volatile fault_address = nullptr;
  bool fault_located = false;
  bool fault_in_stack_guard = false;
  abi::CpuDim3 fault_block{}, fault_thread{};
  std::string trap_reason;
  bool interrupted = false;  // the jump back was for Ctrl-C, not a fault
  void* signal_stack = nullptr;

  Worker() {
    dynamic_shared = reserve(kMaxDynamicSharedBytes);
    // Faults are handled on a stack of their own: the faulting one may be a fiber's overflowed stack.
    stack_t current;
    if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
      signal_stack = reserve(kSignalStackBytes);
      stack_t alternate{};
      alternate.ss_sp = signal_stack;
      alternate.ss_size = kSignalStackBytes;
      sigaltstack(&alternate, nullptr);
    }
  }
  ~Worker() {
    if (signal_stack != nullptr) {
      stack_t disable{};
      disable.ss_flags = SS_DISABLE;
      sigaltstack(&disable, nullptr);
      munmap(signal_stack, kSignalStackBytes);
    }
    munmap(dynamic_shared, kMaxDynamicSharedBytes);
  }

  Fiber* acquire_fiber() {
    if (free_fibers.empty()) {
      fibers.push_back(std::make_unique<Fiber>());
      return fibers.back().get();
    }
    Fiber* f = free_fibers.back();
    free_fibers.pop_back();
    return f;
  }
  // Called where the fault happened (async-signal-safe: plain reads and writes).
  void note_fault_location();
  // After a fault the block's fibers are abandoned mid-stack; their stacks are simply reused.
  void reclaim_all_fibers() {
    free_fibers.clear();
    for (auto& f : fibers) free_fibers.push_back(f.get());
  }
  // Makes the fibers a warp collective completed runnable; a misuse of the collective is a trap.
  void resume_warp_lanes();

  StoreBuffer& own_store_buffer();  // the running device thread's
  // The launch is over on this thread: every store still held back becomes visible, late (`late`:
  // the kernel ended normally) and in random order.
  void publish_stores(bool late);
};

thread_local Worker* t_worker = nullptr;

void Worker::note_fault_location() {
  fault_located = run != nullptr && run->current != nullptr;
  if (!fault_located) return;
  fault_block = run->block_idx;
  fault_thread = run->states[run->current->thread].thread_idx;
  fault_in_stack_guard = run->current->guards(fault_address);
}

Worker& this_worker() {
  // Lives as long as its thread: pool threads delete it when they end, the launching thread never.
  if (t_worker == nullptr) t_worker = new Worker();
  return *t_worker;
}

// ---- faults -------------------------------------------------------------------------------------------

struct sigaction g_previous[NSIG];

void on_fault(int signal, siginfo_t* info, void* context) {
  Worker* w = t_worker;
  if (w != nullptr && w->in_kernel) {
    w->fault_signal = signal;
    w->fault_address = info->si_addr;
    w->note_fault_location();
    siglongjmp(w->recovery, 1);
  }
  // Not a kernel's fault: whoever handled it before, or the default action (the faulting instruction
  // runs again and ends the process with a core, as without iris).
  const struct sigaction& previous = g_previous[signal];
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
  } else {
    struct sigaction reset {};
    reset.sa_handler = SIG_DFL;
    sigaction(signal, &reset, nullptr);
  }
}

// Puts on_fault in front of whatever handles these signals now (MPI's and test frameworks' handlers
// install themselves too; whoever came first keeps getting the faults that are not a kernel's).
void install_fault_handlers() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    struct sigaction current {};
    sigaction(signal, nullptr, &current);
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_fault) continue;
    struct sigaction action {};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, &g_previous[signal]);
  }
}

std::string dim_text(const abi::CpuDim3& d) { return format("(%u,%u,%u)", d.x, d.y, d.z); }

std::string describe_signal(Worker& w) {
  const int signal = w.fault_signal;
  const void* address = w.fault_address;
  if (signal == SIGSEGV && w.fault_in_stack_guard) {
    return format("stack overflow of a device thread (its stack is %zu KiB: large local arrays belong in "
                  "__shared__ or global memory)",
                  kFiberStackBytes / 1024);
  }
  switch (signal) {
    case SIGSEGV: return format("illegal address %p (SIGSEGV)", address);
    case SIGBUS: return format("misaligned or unmapped address %p (SIGBUS)", address);
    case SIGFPE: return "arithmetic fault, e.g. an integer division by zero (SIGFPE)";
    case SIGILL: return "illegal instruction (SIGILL): a trap in the kernel";
    case SIGABRT: return "abort (SIGABRT) inside the kernel, e.g. an exception that no catch took";
    default: return format("signal %d", signal);
  }
}

// ---- fibers and the block scheduler --------------------------------------------------------------------

void switch_to_scheduler(Switch why) {
  BlockRun* run = t_worker->run;
  const bc::transfer_t back = bc::jump_fcontext(run->scheduler, reinterpret_cast<void*>(why));
  t_worker->run->scheduler = back.fctx;  // resumed: remember where to return next time
}

[[noreturn]] void runtime_trap(const char* reason);

void Worker::resume_warp_lanes() {
  if (!warp_error.empty()) runtime_trap(warp_error.c_str());
  for (void* f : resumed) run->ready.push_back(static_cast<Fiber*>(f));
  resumed.clear();
}

// A fiber runs threads that have not started yet, one after another, until none is left.
void fiber_main(bc::transfer_t from) {
  Worker& w = *t_worker;
  BlockRun* run = w.run;
  run->scheduler = from.fctx;
  Fiber* self = run->current;
  while (run->next_unstarted < run->total) {
    self->thread = run->next_unstarted++;
    run->launch->entry(run->launch->args, &run->states[self->thread]);
    --run->live;
    run->spins = 0;
    w.warps.exited(self->thread);
    if (w.weak && !w.store_buffers[self->thread].empty()) w.store_buffers[self->thread].move_into(w.retired);
    if (w.warps.any_waiting()) {  // its warp's collectives may have waited only for it
      w.warps.settle_after_exit(self->thread, w.resumed, &w.warp_error);
      w.resume_warp_lanes();
    }
  }
  switch_to_scheduler(Switch::finished);
  __builtin_unreachable();  // a finished fiber is never resumed; its stack gets a fresh context
}

void resume(Worker& w, BlockRun& run, Fiber* fiber) {
  run.current = fiber;
  const bc::transfer_t back = bc::jump_fcontext(fiber->context, nullptr);
  fiber->context = back.fctx;
  if (static_cast<Switch>(reinterpret_cast<intptr_t>(back.data)) == Switch::finished) w.free_fibers.push_back(fiber);
}

void run_block(Worker& w, Launch& launch, uint64_t index) {
  const LaunchConfig& c = launch.config;
  BlockRun run;
  run.launch = &launch;
  run.states = w.states.data();
  run.block_idx = {static_cast<uint32_t>(index % c.grid.x), static_cast<uint32_t>((index / c.grid.x) % c.grid.y),
                   static_cast<uint32_t>(index / (static_cast<uint64_t>(c.grid.x) * c.grid.y))};
  run.total = c.block.x * c.block.y * c.block.z;
  run.live = run.total;
  for (unsigned t = 0; t < run.total; ++t) {
    abi::CpuThreadState& s = run.states[t];
    s.thread_idx = {t % c.block.x, (t / c.block.x) % c.block.y, t / (c.block.x * c.block.y)};
    s.block_idx = run.block_idx;
    s.block_dim = {c.block.x, c.block.y, c.block.z};
    s.grid_dim = {c.grid.x, c.grid.y, c.grid.z};
    s.dynamic_shared = w.dynamic_shared;
  }
  w.run = &run;
  w.warps.reset(run.total);
  w.warp_error.clear();
  w.resumed.clear();
  for (;;) {
    if (run.next_unstarted < run.total) {
      Fiber* f = w.acquire_fiber();
      f->context = bc::make_fcontext(f->top(), kFiberStackBytes, fiber_main);
      resume(w, run, f);
    } else if (!run.ready.empty()) {
      Fiber* f = run.ready.front();
      run.ready.pop_front();
      resume(w, run, f);
    } else if (w.warps.any_waiting()) {
      // Every thread left waits somewhere: HIP's mask-less collectives go on with the lanes they have;
      // anything else can never complete.
      if (w.warps.settle_stalled(w.resumed)) {
        w.resume_warp_lanes();
        continue;
      }
      unsigned thread = 0;
      void* waiter = nullptr;
      w.warp_error = w.warps.describe_deadlock(&thread, &waiter);
      if (waiter != nullptr) run.current = static_cast<Fiber*>(waiter);  // the fault names that thread
      runtime_trap(w.warp_error.c_str());
    } else if (!run.at_barrier.empty()) {
      // Everyone still running has arrived (threads that returned do not count, as on GPUs): go on, in order.
      run.ready.assign(run.at_barrier.begin(), run.at_barrier.end());
      run.at_barrier.clear();
      run.spins = 0;
    } else {
      break;  // every thread returned
    }
  }
  w.run = nullptr;
}

// Takes blocks until none is left or the launch faulted.
void participate(Launch& launch) {
  Worker& w = this_worker();
  if (sigsetjmp(w.recovery, 1) != 0) {
    // Back from a fault (signal or trap) somewhere inside a block.
    Worker& fw = *t_worker;
    fw.in_kernel = 0;
    fw.run = nullptr;  // its frame was abandoned by the jump
    const std::string where = fw.fault_located
                                  ? " in block " + dim_text(fw.fault_block) + " thread " + dim_text(fw.fault_thread)
                                  : "";
    if (fw.interrupted) {
      launch.record_interrupt();
    } else {
      launch.record_fault(fw.fault_signal != 0 ? describe_signal(fw) : fw.trap_reason, where);
    }
    fw.interrupted = false;
    fw.fault_signal = 0;
    fw.fault_in_stack_guard = false;
    fw.reclaim_all_fibers();
    fw.publish_stores(false);
    return;
  }
  w.in_kernel = 1;
  while (!launch.aborted.load(std::memory_order_relaxed)) {
    if (interrupt::pending()) {  // Ctrl-C: no more blocks (the launching thread reports it)
      launch.record_interrupt();
      break;
    }
    const uint64_t index = launch.next_block.fetch_add(1);
    if (index >= launch.blocks) break;
    run_block(w, launch, index);
  }
  w.in_kernel = 0;
  w.publish_stores(true);
}

// ---- the weak memory model ------------------------------------------------------------------------------

StoreBuffer& Worker::own_store_buffer() {
  if (!weak) {
    store_buffers.resize(kMaxBlockThreads);
    random = Random(g_memory_seed.load() ^ (0x9e3779b97f4a7c15ull * (g_workers_started.fetch_add(1) + 1)));
    weak = true;
  }
  return store_buffers[run->current->thread];
}

void Worker::publish_stores(bool late) {
  if (!weak) return;
  for (StoreBuffer& b : store_buffers) b.move_into(retired);  // after a fault some threads never returned
  if (retired.empty()) return;
  if (late) {
    const uint64_t span = kLateVisibilityMinUs + random.below(kLateVisibilityMaxUs - kLateVisibilityMinUs);
    const size_t steps = std::min<size_t>(kLateVisibilitySteps, retired.size());
    const size_t per_step = (retired.size() + steps - 1) / steps;
    while (!retired.empty()) {
      usleep(static_cast<useconds_t>(span / steps));
      for (size_t i = 0; i < per_step; ++i) retired.commit_one(random);
    }
  }
  retired.commit_all(random);
}

void runtime_weak_copy(void* dst, const void* src, uint64_t bytes, uint32_t buffered) {
  Worker& w = *t_worker;
  StoreBuffer& own = w.own_store_buffer();
  if (!buffered) {
    own.commit_overlapping(dst, bytes);  // an older buffered store there must not land after this one
    own.read(dst, src, bytes);
    return;
  }
  own.store(dst, src, bytes);
  if (w.random.below(8) == 0) own.commit_one(w.random);  // now and then one reaches memory early
  while (own.size() > kMaxPendingStores) own.commit_one(w.random);
}

void runtime_weak_commit(const void* p, uint64_t bytes) { t_worker->own_store_buffer().commit_overlapping(p, bytes); }

void runtime_weak_release() {
  Worker& w = *t_worker;
  w.own_store_buffer().commit_all(w.random);
}

// At __syncthreads and warp collectives the arriving thread's stores become visible (a release after
// the barrier then publishes the whole block's, as on GPUs); at barriers also those of threads that
// returned, which no later release of theirs can publish.
void publish_at_barrier(Worker& w, bool block_wide) {
  if (!w.weak) return;
  w.own_store_buffer().commit_all(w.random);
  if (block_wide) w.retired.commit_all(w.random);
}

// A spinning thread's stores, and those left by threads that returned, trickle out: a peer waiting for
// one of them gets it eventually, as on a GPU.
void trickle_stores(Worker& w) {
  if (!w.weak || w.random.below(4) != 0) return;
  StoreBuffer& own = w.own_store_buffer();
  if (!own.empty() && (w.retired.empty() || w.random.below(2) == 0)) {
    own.commit_one(w.random);
  } else {
    w.retired.commit_one(w.random);
  }
}

// ---- the table modules call into (abi::CpuRuntime) -------------------------------------------------------

abi::CpuThreadState* runtime_current() {
  BlockRun* run = t_worker->run;
  return &run->states[run->current->thread];
}

// Where a device thread waits (spins, barriers, warp collectives), a Ctrl-C ends the launch: the
// block's fibers are abandoned as after a fault, and the launch reports the interrupt instead.
void stop_if_interrupted() {
  if (!interrupt::pending()) return;
  Worker* w = t_worker;
  w->interrupted = true;
  siglongjmp(w->recovery, 3);
}

void runtime_syncthreads() {
  stop_if_interrupted();
  publish_at_barrier(*t_worker, true);
  BlockRun* run = t_worker->run;
  run->at_barrier.push_back(run->current);
  switch_to_scheduler(Switch::parked);
}

[[noreturn]] void runtime_trap(const char* reason) {
  Worker* w = t_worker;
  w->trap_reason = reason != nullptr ? reason : "trap";
  w->fault_address = nullptr;
  w->note_fault_location();
  siglongjmp(w->recovery, 2);
}

void runtime_yield() {
  stop_if_interrupted();
  BlockRun* run = t_worker->run;
  if (run->launch->aborted.load(std::memory_order_relaxed)) {
    runtime_trap("stopped: another block of this launch faulted");
  }
  trickle_stores(*t_worker);
  // Let the other threads of the block run; when they too only spin (or none can run), let the other
  // processes of the node run: the value waited for may come from another rank.
  ++run->spins;
  if (run->spins % 64 == 0) {
    if (run->spins > (1u << 16)) {
      usleep(50);
    } else {
      sched_yield();
    }
  }
  if (run->ready.empty() && run->next_unstarted >= run->total) return;
  run->ready.push_back(run->current);
  switch_to_scheduler(Switch::yielded);
}

uint64_t runtime_warp(const abi::CpuWarpOp* op) {
  stop_if_interrupted();
  Worker& w = *t_worker;
  publish_at_barrier(w, false);
  BlockRun* run = w.run;
  const unsigned thread = run->current->thread;
  const bool done = w.warps.arrive(thread, *op, run->current, w.resumed, &w.warp_error);
  w.resume_warp_lanes();
  if (!done) switch_to_scheduler(Switch::parked);
  return w.warps.result(thread);
}

const abi::CpuRuntime kRuntime = {IRIS_DEVICE_ABI_VERSION, runtime_current, runtime_syncthreads, runtime_yield,
                                  runtime_trap, runtime_warp, runtime_weak_copy, runtime_weak_commit,
                                  runtime_weak_release};

}  // namespace

// ---- the pool -------------------------------------------------------------------------------------------

struct Executor::Pool {
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable done;
  Launch* launch = nullptr;
  uint64_t generation = 0;
  int busy = 0;
  bool stopping = false;

  explicit Pool(int helpers) {
    for (int i = 0; i < helpers; ++i) threads.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread& t : threads) t.join();
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      Launch* current;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping) break;
        seen = generation;
        current = launch;
      }
      participate(*current);
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (--busy == 0) done.notify_all();
      }
    }
    delete t_worker;
    t_worker = nullptr;
  }

  void run(Launch& l) {
    const bool helpers = !threads.empty() && l.blocks > 1;
    if (helpers) {
      std::lock_guard<std::mutex> lock(mutex);
      launch = &l;
      busy = static_cast<int>(threads.size());
      ++generation;
    }
    if (helpers) wake.notify_all();
    participate(l);
    if (helpers) {
      std::unique_lock<std::mutex> lock(mutex);
      done.wait(lock, [&] { return busy == 0; });
      launch = nullptr;
    }
  }
};

Executor::Executor(int threads, uint64_t memory_seed) : pool_(std::make_unique<Pool>(threads > 1 ? threads - 1 : 0)) {
  g_memory_seed.store(memory_seed);
  install_fault_handlers();
}

Executor::~Executor() = default;


LaunchFault Executor::run(KernelEntry entry, void** args, const LaunchConfig& config) {
  const Dim3& g = config.grid;
  const Dim3& b = config.block;
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0) {
    throw Error(Errc::launch, format("empty grid (%u,%u,%u) or block (%u,%u,%u)", g.x, g.y, g.z, b.x, b.y, b.z));
  }
  const uint64_t threads = static_cast<uint64_t>(b.x) * b.y * b.z;
  if (threads > kMaxBlockThreads) {
    throw Error(Errc::launch, format("a block of %llu threads: at most %u", static_cast<unsigned long long>(threads),
                                     kMaxBlockThreads));
  }
  if (config.shared_bytes > kMaxDynamicSharedBytes) {
    throw Error(Errc::launch, format("%zu bytes of dynamic shared memory: the cpu backend offers at most %zu",
                                     config.shared_bytes, kMaxDynamicSharedBytes));
  }
  Launch launch;
  launch.entry = entry;
  launch.args = args;
  launch.config = config;
  launch.blocks = static_cast<uint64_t>(g.x) * g.y * g.z;
  pool_->run(launch);
  return launch.fault;
}

const abi::CpuRuntime* Executor::runtime_table() { return &kRuntime; }

}  // namespace iris::runtime::cpu
