// Device-side reports and bounded waits: what every device wait (wait_until, the device barrier, the
// collectives' arrivals, a remote access waiting for the host proxy) does when it runs out of time.
//
// A wait that gives up writes what it waited for into the job's mailbox (host memory the device can
// write: it stays readable after the fault) and traps. The backend watches the mailbox and reports, at
// the next synchronization, "wait_until at ring.lua:14 on rank 1 gave up after 10.0 s: address 0x7f3a00001000 held 0,
// waited for a value >= 1 (iris::Cmp::ge)" (runtime/fault_report.hpp, the same text on every backend).
#ifndef IRIS_IMPL_REPORT_HPP
#define IRIS_IMPL_REPORT_HPP

namespace iris {
namespace detail {

template <class T>
IRIS_DEVICE bool satisfies(T seen, Cmp cmp, T value) {
  switch (cmp) {
    case Cmp::eq: return seen == value;
    case Cmp::ne: return seen != value;
    case Cmp::lt: return seen < value;
    case Cmp::le: return seen <= value;
    case Cmp::gt: return seen > value;
    default: return seen >= value;
  }
}

// The mailbox's report is written by the first thread that claims it; the others must not trap while
// it writes: on a GPU a trap in any thread ends the whole grid, the writer's half-written report with it
// (a ctx.ccl report read "ctx.ccl.all_reduce" and no more when several threads gave up at once).
// failed: 0 free, 1 claimed, 2 written.
IRIS_DEVICE bool claim_mailbox(abi::DeviceMailbox* box) {
  return box != nullptr && cas(&box->failed, 0u, 1u, acq_rel, sys) == 0u;
}

[[noreturn]] IRIS_DEVICE void trap_after_report(abi::DeviceMailbox* box, bool claimed, const char* what) {
  if (claimed) {
    atomic_store(&box->failed, 2u, release, sys);
  } else if (box != nullptr) {
    // Bounded: a writer that never finishes (it cannot, short of a fault of its own) holds nobody.
    const unsigned long long start = clock_ns();
    while (atomic_load(&box->failed, acquire, sys) != 2u && clock_ns() - start < 1000000000ull) pause();
  }
  trap(what);
}

// Appends text to a mailbox field (the message, `what`), cut at its end. Out of line: reports are rare
// and their text is long.
struct Text {
  char* out;
  int used, capacity;
  __device__ __noinline__ void put(const char* s) {
    while (*s != '\0' && used < capacity - 1) out[used++] = *s++;
    out[used] = '\0';
  }
  __device__ __noinline__ void put(uint64_t v) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0 && used < capacity - 1) out[used++] = digits[--n];
    out[used] = '\0';
  }
  __device__ __noinline__ void put(int v) {
    if (v < 0) {
      put("-");
      put(static_cast<uint64_t>(-static_cast<int64_t>(v)));
    } else {
      put(static_cast<uint64_t>(v));
    }
  }
};

// Every device-side report: the first thread to claim the job's mailbox writes this rank and lets
// `fill(box)` write the rest; every thread then traps with `reason` once the report is complete.
template <class Fill>
[[noreturn]] IRIS_DEVICE void report_and_trap(const char* reason, Fill fill) {
  const abi::ModuleState& state = __iris_module_state;
  abi::DeviceMailbox* box = state.mailbox;
  const bool claimed = claim_mailbox(box);
  if (claimed) {
    box->rank = state.rank;
    fill(*box);
  }
  trap_after_report(box, claimed, reason);
}

// A device-side error with its own words (iris::gemm's block-shape check): on a GPU a trap carries no
// text, so the message goes through the mailbox as the whole report; the cpu backend reports the trap's
// reason itself.
[[noreturn]] IRIS_DEVICE void fail(const char* message) {
#if defined(IRIS_PLATFORM_CUDA) || defined(IRIS_PLATFORM_HIP)
  report_and_trap(message, [&](abi::DeviceMailbox& box) {
    Text{box.message, 0, static_cast<int>(sizeof box.message)}.put(message);
  });
#else
  trap(message);
#endif
}

// Writes `what`, then " at FILE:LINE" (the file's last path component) when `file` is given.
IRIS_DEVICE void name_call(Text& out, const char* what, const char* file, int line) {
  out.put(what);
  if (file != nullptr && line > 0) {
    const char* base = file;
    for (const char* c = file; *c != '\0'; ++c) {
      if (*c == '/') base = c + 1;
    }
    out.put(" at ");
    out.put(base);
    out.put(":");
    out.put(line);
  }
}

// Reports a wait that ran out of budget (first failing thread of the job wins), then traps. `file` and
// `line`: the call that waited (wait_until's caller), or none.
[[noreturn]] IRIS_DEVICE void give_up_waiting(const char* what, const void* address, long long last,
                                              long long expected, Cmp cmp, unsigned long long waited_ns,
                                              const char* file = nullptr, int line = 0) {
  report_and_trap(what, [&](abi::DeviceMailbox& box) {
    box.address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(address));
    box.last_value = last;
    box.expected = expected;
    box.comparison = static_cast<uint32_t>(cmp);
    box.waited_seconds = static_cast<double>(waited_ns) * 1e-9;
    Text text{box.what, 0, static_cast<int>(sizeof box.what)};
    name_call(text, what, file, line);
  });
}

// The bounded spin of every device-side wait (wait_until, the device barrier, the call protocol's
// arrivals, the spinlock of ccl): poll() until it returns true, reading the clock every 64 polls; past
// the module's wait timeout (IRIS_WAIT_TIMEOUT, 10 s where the host never described the module),
// give_up(waited_ns), which reports and traps.
template <class Poll, class GiveUp>
IRIS_DEVICE void bounded_spin(Poll poll, GiveUp give_up) {
  long long budget = __iris_module_state.wait_timeout_ns;
  if (budget <= 0) budget = 10000000000ll;
  const unsigned long long start = clock_ns();
  for (unsigned int spin = 1;; ++spin) {
    if (poll()) return;
    if ((spin & 63u) == 0u) {
      const unsigned long long waited = clock_ns() - start;
      if (waited > static_cast<unsigned long long>(budget)) give_up(waited);
    }
    pause();
  }
}

// The wait behind wait_until (and iris's own device barrier, which names itself in `what`).
template <class T>
IRIS_DEVICE T wait_for(const T* p, Cmp cmp, T value, Semantic sem, Scope scope, const char* what,
                       const char* file = nullptr, int line = 0) {
  T seen = T();
  bounded_spin(
      [&] {
        seen = atomic_load(p, sem, scope);
        return satisfies(seen, cmp, value);
      },
      [&](unsigned long long waited) {
        give_up_waiting(what, p, static_cast<long long>(seen), static_cast<long long>(value), cmp, waited, file, line);
      });
  return seen;
}

}  // namespace detail
}  // namespace iris

#endif  // IRIS_IMPL_REPORT_HPP
