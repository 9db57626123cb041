// Two-sided messages between the ranks' host proxies (session/proxy.hpp), on a communicator of their
// own: the requests and answers of the `messages` transport between nodes (docs/multinode.md), the
// atomics a target's proxy applies, and the transport's reference figures (a ping-pong, a bulk send).
//
// Every call may come from another thread than the main one (the proxy's); MPI must then run at
// MPI_THREAD_MULTIPLE (Comm::threads_may_call_mpi). The caller serializes calls on one channel.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace iris::comm {

class Comm;

class MessageChannel {
 public:
  // Collective over every rank of `comm` (MPI_Comm_dup).
  explicit MessageChannel(Comm& comm);
  // Collective too: waits for the sends still in flight, then frees the communicator.
  ~MessageChannel();
  MessageChannel(const MessageChannel&) = delete;
  MessageChannel& operator=(const MessageChannel&) = delete;

  // Sends `data` to `target` under `tag` and returns at once; the channel keeps the buffer until MPI is
  // done with it.
  void send(int target, int tag, std::vector<char> data);
  void send(int target, int tag, const void* data, size_t bytes);
  // Sends `bytes` at `data`, which the caller keeps unchanged until progress() clears *busy (set here).
  void send_borrowed(int target, int tag, const void* data, size_t bytes, bool* busy);
  // Takes a waiting message of `tag` from any rank, if there is one, into `data` (`capacity` bytes;
  // a longer message is an error): *bytes = its length.
  bool receive(int tag, int* source, void* data, size_t capacity, size_t* bytes);
  // The same for a message of exactly `bytes` bytes, into `data`.
  bool receive(int tag, int* source, void* data, size_t bytes);
  // Blocking send and receive of `bytes` between this rank and `peer` (a bulk transfer: the
  // transport's own figure for a block copy).
  void send_blocking(int peer, int tag, const void* data, size_t bytes);
  void receive_blocking(int peer, int tag, void* data, size_t bytes);
  // Completes finished sends and lets MPI progress (also one-sided operations that target this rank,
  // where a component emulates them with messages).
  void progress();
  // Sends MPI is not done with yet (as of the last progress()).
  bool sending() const;

 private:
  struct Mpi;
  std::unique_ptr<Mpi> m_;
};

}  // namespace iris::comm
