#include "comm/rma_window.hpp"

#include <mpi.h>

#include <algorithm>
#include <vector>

#include "comm/comm.hpp"
#include "comm/mpi_support.hpp"
#include "core/error.hpp"

namespace iris::comm {

struct RmaWindow::Mpi {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
  bool locked = false;
  std::vector<char> pending;  // by rank: operations issued to it since the last flush_all()
  std::vector<int> pending_ranks;  // those ranks, each once
};

namespace {

MPI_Datatype datatype(RmaWindow::Type type) {
  switch (type) {
    case RmaWindow::Type::u8: return MPI_UINT8_T;
    case RmaWindow::Type::u16: return MPI_UINT16_T;
    case RmaWindow::Type::u32: return MPI_UINT32_T;
    case RmaWindow::Type::u64: return MPI_UINT64_T;
    case RmaWindow::Type::i32: return MPI_INT32_T;
    case RmaWindow::Type::i64: return MPI_INT64_T;
    case RmaWindow::Type::f32: return MPI_FLOAT;
    default: return MPI_DOUBLE;
  }
}

MPI_Op operation(RmaWindow::Op op) {
  switch (op) {
    case RmaWindow::Op::sum: return MPI_SUM;
    case RmaWindow::Op::replace: return MPI_REPLACE;
    case RmaWindow::Op::band: return MPI_BAND;
    case RmaWindow::Op::bor: return MPI_BOR;
    case RmaWindow::Op::bxor: return MPI_BXOR;
    case RmaWindow::Op::min: return MPI_MIN;
    case RmaWindow::Op::max: return MPI_MAX;
    default: return MPI_NO_OP;
  }
}

// MPI counts are int: transfers go in pieces of at most 1 GiB.
constexpr size_t kPiece = size_t(1) << 30;

}  // namespace

std::unique_ptr<RmaWindow> RmaWindow::create(Comm& comm, void* base, size_t bytes) {
  std::unique_ptr<RmaWindow> w(new RmaWindow());
  w->m_ = std::make_unique<Mpi>();
  check_mpi(MPI_Comm_dup(*static_cast<MPI_Comm*>(comm.world_handle()), &w->m_->comm), "MPI_Comm_dup");
  MPI_Info info;
  MPI_Info_create(&info);
  // No MPI_Win_fence / post-start-complete-wait epochs: passive target only.
  MPI_Info_set(info, "no_locks", "false");
  const int rc = MPI_Win_create(base, static_cast<MPI_Aint>(bytes), 1, info, w->m_->comm, &w->m_->win);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw Error(Errc::environment,
                format("the inter-node transport could not start: MPI_Win_create over the symmetric heap failed (%.*s); "
                       "the MPI library needs a one-sided component that works with threads: with Open MPI, "
                       "OMPI_MCA_osc=ucx (with UCX) or OMPI_MCA_osc=rdma (docs/multinode.md)",
                       len, text));
  }
  MPI_Win_set_errhandler(w->m_->win, MPI_ERRORS_RETURN);
  int ranks = 0;
  MPI_Comm_size(w->m_->comm, &ranks);
  w->m_->pending.assign(static_cast<size_t>(ranks), 0);
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, w->m_->win), "MPI_Win_lock_all");
  w->m_->locked = true;
  MPI_Info used;
  if (MPI_Win_get_info(w->m_->win, &used) == MPI_SUCCESS) {
    char value[MPI_MAX_INFO_VAL + 1] = {0};
    int flag = 0;
    MPI_Info_get(used, "mpi_component", MPI_MAX_INFO_VAL, value, &flag);
    if (flag) w->component_ = std::string("osc ") + value;
    MPI_Info_free(&used);
  }
  return w;
}

RmaWindow::~RmaWindow() {
  if (!m_) return;
  if (m_->locked) MPI_Win_unlock_all(m_->win);
  if (m_->win != MPI_WIN_NULL) MPI_Win_free(&m_->win);
  if (m_->comm != MPI_COMM_NULL) MPI_Comm_free(&m_->comm);
}

void RmaWindow::issued(int target) {
  if (m_->pending[static_cast<size_t>(target)]) return;
  m_->pending[static_cast<size_t>(target)] = 1;
  m_->pending_ranks.push_back(target);
}

void RmaWindow::put(const void* origin, size_t bytes, int target, uint64_t offset) {
  issued(target);
  const char* from = static_cast<const char*>(origin);
  for (size_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min(kPiece, bytes - done));
    check_mpi(MPI_Put(from + done, n, MPI_BYTE, target, static_cast<MPI_Aint>(offset + done), n, MPI_BYTE, m_->win),
              "MPI_Put");
    done += static_cast<size_t>(n);
  }
}

void RmaWindow::get(void* origin, size_t bytes, int target, uint64_t offset) {
  issued(target);
  char* to = static_cast<char*>(origin);
  for (size_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min(kPiece, bytes - done));
    check_mpi(MPI_Get(to + done, n, MPI_BYTE, target, static_cast<MPI_Aint>(offset + done), n, MPI_BYTE, m_->win),
              "MPI_Get");
    done += static_cast<size_t>(n);
  }
}

void RmaWindow::accumulate(const void* origin, int count, Type type, Op op, int target, uint64_t offset) {
  issued(target);
  check_mpi(MPI_Accumulate(origin, count, datatype(type), target, static_cast<MPI_Aint>(offset), count, datatype(type),
                           operation(op), m_->win),
            "MPI_Accumulate");
}

void RmaWindow::fetch_and_op(const void* value, void* result, Type type, Op op, int target, uint64_t offset) {
  issued(target);
  check_mpi(MPI_Fetch_and_op(value, result, datatype(type), target, static_cast<MPI_Aint>(offset), operation(op), m_->win),
            "MPI_Fetch_and_op");
}

void RmaWindow::compare_and_swap(const void* value, const void* compare, void* result, Type type, int target,
                                 uint64_t offset) {
  issued(target);
  check_mpi(MPI_Compare_and_swap(value, compare, result, datatype(type), target, static_cast<MPI_Aint>(offset), m_->win),
            "MPI_Compare_and_swap");
}

// Each target's own flush (rma_window.hpp says why not MPI_Win_flush_all). A target stays pending
// until its flush succeeded, so a failed flush is retried by the next one.
void RmaWindow::flush_all() {
  while (!m_->pending_ranks.empty()) {
    const int target = m_->pending_ranks.back();
    check_mpi(MPI_Win_flush(target, m_->win), "MPI_Win_flush");
    m_->pending[static_cast<size_t>(target)] = 0;
    m_->pending_ranks.pop_back();
  }
}

void RmaWindow::progress() {
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m_->comm, &flag, MPI_STATUS_IGNORE);
}

}  // namespace iris::comm
