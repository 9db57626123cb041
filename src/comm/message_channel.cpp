#include "comm/message_channel.hpp"

#include <mpi.h>

#include <algorithm>
#include <list>

#include "comm/comm.hpp"
#include "comm/mpi_support.hpp"
#include "core/error.hpp"

namespace iris::comm {

struct MessageChannel::Mpi {
  MPI_Comm comm = MPI_COMM_NULL;
  struct Send {
    std::vector<char> data;  // empty for a borrowed buffer
    bool* busy = nullptr;    // a borrowed buffer's flag, cleared when MPI is done with it
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<Send> sends;  // in flight: their buffers stay put until MPI is done with them
};

namespace {
// MPI counts are int: bulk transfers go in pieces of at most 1 GiB.
constexpr size_t kPiece = size_t(1) << 30;
}  // namespace

MessageChannel::MessageChannel(Comm& comm) : m_(std::make_unique<Mpi>()) {
  check_mpi(MPI_Comm_dup(*static_cast<MPI_Comm*>(comm.world_handle()), &m_->comm), "MPI_Comm_dup");
}

MessageChannel::~MessageChannel() {
  for (auto& send : m_->sends) MPI_Wait(&send.request, MPI_STATUS_IGNORE);
  if (m_->comm != MPI_COMM_NULL) MPI_Comm_free(&m_->comm);
}

void MessageChannel::send(int target, int tag, std::vector<char> data) {
  Mpi::Send& send = m_->sends.emplace_back();
  send.data = std::move(data);
  check_mpi(MPI_Isend(send.data.data(), static_cast<int>(send.data.size()), MPI_BYTE, target, tag, m_->comm,
                      &send.request),
            "MPI_Isend");
}

void MessageChannel::send_borrowed(int target, int tag, const void* data, size_t bytes, bool* busy) {
  Mpi::Send& send = m_->sends.emplace_back();
  send.busy = busy;
  *busy = true;
  check_mpi(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, target, tag, m_->comm, &send.request), "MPI_Isend");
}

void MessageChannel::send(int target, int tag, const void* data, size_t bytes) {
  const char* from = static_cast<const char*>(data);
  send(target, tag, std::vector<char>(from, from + bytes));
}

bool MessageChannel::receive(int tag, int* source, void* data, size_t capacity, size_t* bytes) {
  int flag = 0;
  MPI_Status status;
  check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, m_->comm, &flag, &status), "MPI_Iprobe");
  if (!flag) return false;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  if (count < 0 || static_cast<size_t>(count) > capacity) {
    throw Error(Errc::internal, format("a message of %d bytes from rank %d is longer than the %zu bytes expected",
                                       count, status.MPI_SOURCE, capacity));
  }
  check_mpi(MPI_Recv(data, count, MPI_BYTE, status.MPI_SOURCE, tag, m_->comm, MPI_STATUS_IGNORE), "MPI_Recv");
  *source = status.MPI_SOURCE;
  *bytes = static_cast<size_t>(count);
  return true;
}

bool MessageChannel::receive(int tag, int* source, void* data, size_t bytes) {
  int flag = 0;
  MPI_Status status;
  check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, m_->comm, &flag, &status), "MPI_Iprobe");
  if (!flag) return false;
  check_mpi(MPI_Recv(data, static_cast<int>(bytes), MPI_BYTE, status.MPI_SOURCE, tag, m_->comm, MPI_STATUS_IGNORE),
            "MPI_Recv");
  *source = status.MPI_SOURCE;
  return true;
}

void MessageChannel::send_blocking(int peer, int tag, const void* data, size_t bytes) {
  const char* from = static_cast<const char*>(data);
  size_t done = 0;
  do {
    const int n = static_cast<int>(std::min(kPiece, bytes - done));
    check_mpi(MPI_Send(from + done, n, MPI_BYTE, peer, tag, m_->comm), "MPI_Send");
    done += static_cast<size_t>(n);
  } while (done < bytes);
}

void MessageChannel::receive_blocking(int peer, int tag, void* data, size_t bytes) {
  char* to = static_cast<char*>(data);
  size_t done = 0;
  do {
    const int n = static_cast<int>(std::min(kPiece, bytes - done));
    check_mpi(MPI_Recv(to + done, n, MPI_BYTE, peer, tag, m_->comm, MPI_STATUS_IGNORE), "MPI_Recv");
    done += static_cast<size_t>(n);
  } while (done < bytes);
}

bool MessageChannel::sending() const { return !m_->sends.empty(); }

void MessageChannel::progress() {
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m_->comm, &flag, MPI_STATUS_IGNORE);
  for (auto it = m_->sends.begin(); it != m_->sends.end();) {
    int done = 0;
    MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
    if (done && it->busy != nullptr) *it->busy = false;
    it = done ? m_->sends.erase(it) : std::next(it);
  }
}

}  // namespace iris::comm
