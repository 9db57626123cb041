#include "heap/symmetric_heap.hpp"

#include <algorithm>
#include <cstring>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "heap/all_or_none.hpp"
#include "heap/layout.hpp"
#include "runtime/backend.hpp"

namespace iris::heap {

namespace {

// Every rank announced the same size (`arg`), or Error(divergence): "ranks asked different sizes in
// ctx:zeros(): rank 0 asked 4 KiB, rank 1 asked 8 KiB (<hint>)".
void require_same_size(const std::string& op, const std::vector<comm::Announcement>& all, const char* hint) {
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r].arg != all[0].arg) {
      throw Error(Errc::divergence, format("ranks asked different sizes in %s: rank 0 asked %s, rank %zu asked %s (%s)",
                                           op.c_str(), human_bytes(all[0].arg).c_str(), r,
                                           human_bytes(all[r].arg).c_str(), hint));
    }
  }
}

// FNV-1a: the same digest on every rank (one binary), enough to notice that two texts differ.
uint64_t digest_of(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Every rank announced the same size and the same tensor, or Error(divergence) naming rank 0's request
// and the first that differs: "ranks asked different tensors in ctx:zeros(): rank 0 asked float32
// {2, 3} (24 B), rank 1 asked int32 {2, 3} (24 B) (...)". Every rank sees the same announcements, so
// every rank takes part in the exchange of the texts, or none does.
void require_same_tensor(comm::Comm& comm, const std::string& op, const std::vector<comm::Announcement>& all,
                         const std::string& tensor) {
  size_t differs = 0;
  for (size_t r = 1; r < all.size() && differs == 0; ++r) {
    if (all[r].arg != all[0].arg || all[r].detail != all[0].detail) differs = r;
  }
  if (differs == 0) return;
  const auto texts = comm.allgatherv(tensor.data(), tensor.size());
  auto asked = [&](size_t r) {
    const std::string text(texts[r].begin(), texts[r].end());
    return text.empty() ? human_bytes(all[r].arg) : format("%s (%s)", text.c_str(), human_bytes(all[r].arg).c_str());
  };
  const bool described = !texts[0].empty() || !texts[differs].empty();
  throw Error(Errc::divergence, format("ranks asked different %s in %s: rank 0 asked %s, rank %zu asked %s (every rank "
                                       "must create the same tensors%s in the same order)",
                                       described ? "tensors" : "sizes", op.c_str(), asked(0).c_str(), differs,
                                       asked(differs).c_str(), described ? ", of the same dtypes and shapes," : ""));
}

}  // namespace

SymmetricHeap::SymmetricHeap(runtime::Backend& backend, comm::Comm& comm, size_t bytes, const std::vector<int>& node_of)
    : backend_(backend),
      comm_(comm),
      bytes_(bytes),
      own_rank_(comm.rank()),
      allocator_(kUserOffset, bytes, kAlignment, comm.size(), comm.rank()) {
  require_same_size("iris.init() (heap_size)", comm.announce("iris.init(): heap", bytes),
                    "every rank must use the same heap size");
  if (bytes < kMinimumHeapBytes) {
    throw Error(Errc::invalid_argument,
                format("heap_size %s is too small: iris reserves the first %s of every heap, ask for at least %s",
                       human_bytes(bytes).c_str(), human_bytes(kUserOffset).c_str(), human_bytes(kMinimumHeapBytes).c_str()));
  }
  if (static_cast<size_t>(comm.size()) * sizeof(uint64_t) > kHeapBasesBytes) {
    throw Error(Errc::environment, format("the symmetric heap serves at most %zu ranks, this job has %d",
                                          kHeapBasesBytes / sizeof(uint64_t), comm.size()));
  }

  void* own = nullptr;
  all_or_none(comm, "iris.init(): heap allocation", [&] { own = backend.allocate_heap(bytes); });
  try {
    bases_.assign(comm.size(), nullptr);
    bases_[own_rank_] = own;
    mapped_.assign(comm.size(), 1);
    for (int peer = 0; peer < comm.size() && !node_of.empty(); ++peer) {
      if (node_of[peer] != node_of[own_rank_]) {
        mapped_[peer] = 0;
        bases_[peer] = reinterpret_cast<void*>(static_cast<uintptr_t>(
            IRIS_REMOTE_TAG | (static_cast<uint64_t>(peer) << IRIS_REMOTE_RANK_SHIFT)));
      }
    }
    std::vector<uint8_t> handle = backend.export_heap();
    auto handles = comm.allgatherv(handle.data(), handle.size());
    int32_t device = backend.device();
    std::vector<int32_t> devices(comm.size());
    comm.allgather(&device, sizeof device, devices.data());
    all_or_none(comm, "iris.init(): opening every peer's heap", [&] {
      for (int peer = 0; peer < comm.size(); ++peer) {
        if (peer != own_rank_ && mapped_[peer]) {
          bases_[peer] = backend.import_peer_heap(peer, devices[peer], handles[peer], bytes);
        }
      }
    });
    // Every rank has mapped every peer (all_or_none above completed on all of them).
    backend.peers_opened();

    std::vector<uint64_t> table(comm.size());
    for (int r = 0; r < comm.size(); ++r) table[r] = reinterpret_cast<uint64_t>(bases_[r]);
    auto* base = static_cast<uint8_t*>(own);
    backend.copy_from_host(base + kHeapBasesOffset, table.data(), table.size() * sizeof(uint64_t));
    const uint8_t zero = 0;
    backend.fill(base + kRuntimeScratchOffset, &zero, 1, kRuntimeScratchBytes);
    device_heap_bases_ = reinterpret_cast<const uint64_t*>(base + kHeapBasesOffset);
    // No rank's kernels may read a peer's table or scratch before that peer wrote it.
    comm.barrier("iris.init(): heap ready");
  } catch (...) {
    backend.release_heaps();
    throw;
  }
}

// A destructor must not throw: the process ends anyway, and the driver frees what a failed release left.
// (An exit from inside a signal handler, mid-compile, once turned such a failure into an abort.)
SymmetricHeap::~SymmetricHeap() {
  try {
    backend_.release_heaps();
  } catch (const std::exception& e) {
    log::write(log::Level::warning, e.what());
  }
}

// Most exchanges carry a few offsets per rank at most: one fixed-size allgather holds them. Only when
// some rank queued more does a second, variable-size exchange carry the rest.
namespace {
constexpr size_t kInlineReleases = 7;
struct InlineReleases {
  uint64_t count;
  uint64_t offsets[kInlineReleases];
};
static_assert(sizeof(InlineReleases) == 64, "one cache line per rank");
}  // namespace

void SymmetricHeap::exchange_releases() {
  std::vector<uint64_t> mine = allocator_.take_pending();
  // This rank's kernels still in flight may write a block it released, in any rank's copy. They finish
  // before any rank learns of the release (and zeroes or hands out the block again). The allocation's
  // zeroing waits for them anyway; waiting here, before the exchange, is what orders them before the
  // other ranks' zeroing too.
  if (!mine.empty()) backend_.synchronize();
  InlineReleases inline_mine{};
  inline_mine.count = mine.size();
  std::memcpy(inline_mine.offsets, mine.data(), std::min(mine.size(), kInlineReleases) * sizeof(uint64_t));
  std::vector<InlineReleases> all(comm_.size());
  comm_.allgather(&inline_mine, sizeof inline_mine, all.data());

  std::vector<std::vector<uint64_t>> released(comm_.size());
  bool overflow = false;
  for (int r = 0; r < comm_.size(); ++r) {
    size_t inline_count = std::min<uint64_t>(all[r].count, kInlineReleases);
    released[r].assign(all[r].offsets, all[r].offsets + inline_count);
    overflow = overflow || all[r].count > kInlineReleases;
  }
  if (overflow) {  // every rank sees the same counts, so every rank takes this branch together
    size_t rest = mine.size() > kInlineReleases ? mine.size() - kInlineReleases : 0;
    auto lists = comm_.allgatherv(mine.data() + (mine.size() - rest), rest * sizeof(uint64_t));
    for (int r = 0; r < comm_.size(); ++r) {
      const auto* first = reinterpret_cast<const uint64_t*>(lists[r].data());
      released[r].insert(released[r].end(), first, first + lists[r].size() / sizeof(uint64_t));
    }
  }
  allocator_.apply_releases(released);
}

std::optional<size_t> SymmetricHeap::allocate(const std::string& op, size_t bytes, bool zero, bool last_attempt,
                                              const std::string& tensor) {
  require_same_tensor(comm_, op, comm_.announce(op, bytes, digest_of(tensor)), tensor);
  exchange_releases();
  std::optional<size_t> offset = allocator_.allocate(bytes);
  if (!offset) {
    if (last_attempt) throw Error(Errc::heap_exhausted, exhausted_message(bytes));
    return std::nullopt;
  }
  if (zero) {
    const uint8_t zero_byte = 0;
    if (bytes > 0) backend_.fill(static_cast<uint8_t*>(local_base()) + *offset, &zero_byte, 1, bytes);
    // The memory rules (docs/memory.md): every rank is past the zeroing before any rank gets the tensor, so
    // no rank's early write into a peer's copy is wiped by that peer's late zeroing. (Without zeroing
    // the caller writes the contents and then waits for every rank itself.)
    if (comm_.size() > 1) comm_.barrier(op);
  }
  return offset;
}

void SymmetricHeap::release(size_t offset) { allocator_.release_local(offset); }

std::string SymmetricHeap::exhausted_message(size_t asked) const {
  AllocatorStats s = allocator_.stats();
  std::string text = format("heap exhausted: asked %s, %s free (largest %s) of %s", human_bytes(asked).c_str(),
                            human_bytes(s.free_bytes).c_str(), human_bytes(s.largest_free).c_str(),
                            human_bytes(bytes_).c_str());
  if (allocator_.awaiting_other_ranks() > 0) {
    text += format("; %zu block%s released on some ranks only (a block is reused once every rank released it)",
                   allocator_.awaiting_other_ranks(), allocator_.awaiting_other_ranks() == 1 ? " is" : "s are");
  }
  text += "; free tensors you no longer need (t:free()) or ask for a larger heap (iris.init{heap_size=...} or IRIS_HEAP_SIZE)";
  return text;
}

}  // namespace iris::heap
