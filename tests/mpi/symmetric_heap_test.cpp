// The symmetric heap on the cpu backend across real ranks: mappings, the heap bases table, equal
// offsets, zeroing, releases at different moments per rank, and the collective errors.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "heap/layout.hpp"
#include "heap/symmetric_heap.hpp"
#include "mpi_fixture.hpp"
#include "runtime/cpu/cpu_backend.hpp"
#include "runtime/cpu/cpu_memory.hpp"

using iris::Errc;
using iris::Error;
using iris::heap::SymmetricHeap;
using iris::testing::test_comm;

namespace {

constexpr size_t kHeapBytes = 4 << 20;

struct CpuHeap {
  CpuHeap() : backend(test_comm()), heap(backend, test_comm(), kHeapBytes) {}
  iris::runtime::CpuBackend backend;
  SymmetricHeap heap;
};

// The file /proc/self/maps names for the mapping that holds `address` ("" for an anonymous one).
std::string mapped_file_of(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR, &begin, &end) != 2 || at < begin || at >= end) continue;
    // address perms offset dev inode path: the path starts after the fifth field's spaces
    std::istringstream fields(line);
    std::string skipped;
    for (int i = 0; i < 5; ++i) fields >> skipped;
    std::string path;
    std::getline(fields >> std::ws, path);
    return path;
  }
  return "";
}

template <class T>
std::vector<T> gather(const T& mine) {
  std::vector<T> all(test_comm().size());
  test_comm().allgather(&mine, sizeof mine, all.data());
  return all;
}

template <class T>
bool same_everywhere(const T& mine) {
  for (const T& other : gather(mine)) {
    if (!(other == mine)) return false;
  }
  return true;
}

uint8_t* at(SymmetricHeap& heap, int rank, size_t offset) { return static_cast<uint8_t*>(heap.base_of(rank)) + offset; }

}  // namespace

TEST_CASE("every rank maps every peer's heap and the heap bases table says where", "[mpi][heap]") {
  CpuHeap h;
  auto& comm = test_comm();
  const uint64_t* table = h.heap.device_heap_bases();
  CHECK(static_cast<const void*>(table) == at(h.heap, comm.rank(), iris::heap::kHeapBasesOffset));
  for (int r = 0; r < comm.size(); ++r) CHECK(table[r] == reinterpret_cast<uint64_t>(h.heap.base_of(r)));
  // the runtime scratch starts zeroed
  const uint8_t* scratch = at(h.heap, comm.rank(), iris::heap::kRuntimeScratchOffset);
  size_t nonzero = 0;
  for (size_t i = 0; i < iris::heap::kRuntimeScratchBytes; ++i) nonzero += scratch[i] != 0;
  CHECK(nonzero == 0);
}

TEST_CASE("each rank writes a pattern into its heap and reads every peer's exactly", "[mpi][heap]") {
  CpuHeap h;
  auto& comm = test_comm();
  auto offset = h.heap.allocate("pattern", 4096 * sizeof(uint32_t), true, true);
  REQUIRE(offset);
  auto* mine = reinterpret_cast<uint32_t*>(at(h.heap, comm.rank(), *offset));
  for (uint32_t i = 0; i < 4096; ++i) mine[i] = static_cast<uint32_t>(comm.rank()) * 1000003u + i;
  comm.barrier("pattern written");
  for (int r = 0; r < comm.size(); ++r) {
    const auto* peer = reinterpret_cast<const uint32_t*>(at(h.heap, r, *offset));
    size_t wrong = 0;
    for (uint32_t i = 0; i < 4096; ++i) wrong += peer[i] != static_cast<uint32_t>(r) * 1000003u + i;
    INFO("rank " << comm.rank() << " reading rank " << r);
    CHECK(wrong == 0);
  }
  comm.barrier("pattern read");
}

TEST_CASE("a rank's remote writes land in the peer's heap at the same offset", "[mpi][heap]") {
  CpuHeap h;
  auto& comm = test_comm();
  auto offset = h.heap.allocate("remote", 64, true, true);
  REQUIRE(offset);
  int next = (comm.rank() + 1) % comm.size();
  *reinterpret_cast<int64_t*>(at(h.heap, next, *offset)) = 100 + comm.rank();
  comm.barrier("remote written");
  int previous = (comm.rank() + comm.size() - 1) % comm.size();
  CHECK(*reinterpret_cast<int64_t*>(at(h.heap, comm.rank(), *offset)) == 100 + previous);
  comm.barrier("remote read");
}

TEST_CASE("collective allocations give the same aligned offset on every rank", "[mpi][heap]") {
  CpuHeap h;
  for (size_t bytes : {size_t(1), size_t(1000), size_t(256), size_t(0), size_t(100000)}) {
    auto offset = h.heap.allocate("sizes", bytes, true, true);
    REQUIRE(offset);
    CHECK(*offset % iris::heap::kAlignment == 0);
    CHECK(*offset >= iris::heap::kUserOffset);
    CHECK(same_everywhere(*offset));
  }
}

TEST_CASE("a new block reads zero even where an earlier tensor left data", "[mpi][heap]") {
  CpuHeap h;
  auto& comm = test_comm();
  auto first = h.heap.allocate("dirty", 8192, true, true);
  std::memset(at(h.heap, comm.rank(), *first), 0xab, 8192);
  h.heap.release(*first);
  auto second = h.heap.allocate("clean", 8192, true, true);
  REQUIRE(second == first);
  const uint8_t* p = at(h.heap, comm.rank(), *second);
  size_t nonzero = 0;
  for (size_t i = 0; i < 8192; ++i) nonzero += p[i] != 0;
  CHECK(nonzero == 0);
}

TEST_CASE("a block released at different moments per rank comes back only when every rank released it", "[mpi][heap]") {
  CpuHeap h;
  auto& comm = test_comm();
  auto a = *h.heap.allocate("a", 10000, true, true);
  // Rank r releases `a` right after the (r+1)-th of the next allocations: at each of them some rank
  // still holds it.
  for (int step = 0; step < comm.size(); ++step) {
    auto b = h.heap.allocate("b", 10000, true, true);
    REQUIRE(b);
    CHECK(*b != a);
    CHECK(same_everywhere(*b));
    if (step == comm.rank()) h.heap.release(a);
  }
  // Every rank has released `a` and the last allocation exchanged it: same size goes back to `a`.
  auto again = h.heap.allocate("again", 10000, true, true);
  CHECK(again == a);
  CHECK(same_everywhere(h.heap.stats().free_bytes));
  CHECK(same_everywhere(h.heap.stats().largest_free));
  CHECK(h.heap.awaiting_other_ranks() == 0);
}

TEST_CASE("ranks asking different sizes in one step all get an error naming both sizes", "[mpi][heap]") {
  CpuHeap h;
  auto& comm = test_comm();
  if (comm.size() < 2) return;
  size_t bytes = comm.rank() == 1 ? 8192 : 4096;
  try {
    h.heap.allocate("ctx:zeros()", bytes, true, true);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::divergence);
    CHECK_THAT(e.what(), Catch::Contains("ranks asked different sizes in ctx:zeros(): rank 0 asked 4 KiB, rank 1 asked 8 KiB"));
  }
  // the heap is still usable and symmetric afterwards
  auto next = h.heap.allocate("after", 4096, true, true);
  CHECK(same_everywhere(*next));
}

TEST_CASE("out of heap is the same answer on every rank, and an error naming the numbers at the last attempt", "[mpi][heap]") {
  CpuHeap h;
  auto big = h.heap.allocate("big", 3 << 20, true, true);
  REQUIRE(big);
  CHECK_FALSE(h.heap.allocate("too big", 2 << 20, true, false).has_value());
  try {
    h.heap.allocate("too big", 2 << 20, true, true);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::heap_exhausted);
    CHECK_THAT(e.what(), Catch::StartsWith("heap exhausted: asked 2 MiB, 960 KiB free (largest 960 KiB) of 4 MiB"));
  }
}

TEST_CASE("the cpu heap has no name in /dev/shm at any time, so a killed job cannot leave one", "[mpi][heap][cpu]") {
  CpuHeap h;
  auto& comm = test_comm();
  // What backs every rank's heap mapping has no name: a memfd, or a file in /dev/shm already unlinked
  // (as /proc/self/maps says); heaps used to be named /iris-<job>-r<rank> until the job removed them.
  for (int r = 0; r < comm.size(); ++r) {
    const std::string backing = mapped_file_of(h.heap.base_of(r));
    INFO("rank " << r << "'s heap is a mapping of " << backing);
    CHECK((backing.rfind("/memfd:", 0) == 0 || backing.find(" (deleted)") != std::string::npos));
  }
  // Every rank reaches every peer's heap all the same: a byte written by rank r shows in every mapping.
  auto offset = h.heap.allocate("seen", 256, true, true);
  static_cast<char*>(h.heap.local_base())[*offset] = static_cast<char>(1 + comm.rank());
  comm.barrier("written");
  for (int r = 0; r < comm.size(); ++r) CHECK(static_cast<char*>(h.heap.base_of(r))[*offset] == static_cast<char>(1 + r));
  comm.barrier("read");
}

TEST_CASE("many releases queued at once travel in one exchange on every rank", "[mpi][heap]") {
  CpuHeap h;
  auto& comm = test_comm();
  std::vector<size_t> blocks;
  for (int i = 0; i < 40; ++i) blocks.push_back(*h.heap.allocate("many", 1024, false, true));
  // rank 0 releases all 40 (more than fit inline), the others only the first 3 for now
  size_t now = comm.rank() == 0 ? blocks.size() : 3;
  for (size_t i = 0; i < now; ++i) h.heap.release(blocks[i]);
  auto probe = h.heap.allocate("probe", 256, false, true);
  CHECK(same_everywhere(h.heap.stats().allocated_blocks));
  CHECK(h.heap.stats().allocated_blocks == blocks.size() - 3 + 1);
  for (size_t i = now; i < blocks.size(); ++i) h.heap.release(blocks[i]);
  h.heap.release(*probe);
  auto last = h.heap.allocate("last", 256, false, true);
  CHECK(h.heap.stats().allocated_blocks == 1);
  CHECK(h.heap.stats().free_blocks == 1);  // everything coalesced: `last` took the start of one free block
  CHECK(*last == iris::heap::kUserOffset);
  CHECK(same_everywhere(*last));
  CHECK(h.heap.awaiting_other_ranks() == 0);
}
