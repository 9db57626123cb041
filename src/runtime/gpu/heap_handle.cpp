#include "runtime/gpu/heap_handle.hpp"

#include <cstring>

#include "core/error.hpp"
#include "runtime/gpu/device_choice.hpp"

namespace iris::runtime::gpu {

namespace {

constexpr char kMagic[8] = {'i', 'r', 'i', 's', 'h', 'e', 'a', 'p'};

struct Wire {
  char magic[8];
  char backend[8];
  char pci_bus_id[32];
  uint64_t bytes;
  uint8_t ipc[64];
};

std::string bounded(const char* text, size_t capacity) { return std::string(text, strnlen(text, capacity)); }

}  // namespace

std::vector<uint8_t> encode_heap_handle(const HeapHandle& handle) {
  Wire wire{};
  std::memcpy(wire.magic, kMagic, sizeof kMagic);
  std::strncpy(wire.backend, handle.backend.c_str(), sizeof wire.backend - 1);
  std::strncpy(wire.pci_bus_id, handle.pci_bus_id.c_str(), sizeof wire.pci_bus_id - 1);
  wire.bytes = handle.bytes;
  std::memcpy(wire.ipc, handle.ipc.data(), sizeof wire.ipc);
  const auto* raw = reinterpret_cast<const uint8_t*>(&wire);
  return std::vector<uint8_t>(raw, raw + sizeof wire);
}

HeapHandle decode_heap_handle(const std::vector<uint8_t>& bytes, const char* expected_backend, int peer) {
  Wire wire{};
  if (bytes.size() != sizeof wire || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw Error(Errc::environment,
                format("rank %d's heap handle (%zu bytes) is not a GPU heap handle of iris-lua: do all ranks use "
                       "the %s backend (iris.init{backend=}, IRIS_BACKEND)?",
                       peer, bytes.size(), expected_backend));
  }
  std::memcpy(&wire, bytes.data(), sizeof wire);
  HeapHandle handle;
  handle.backend = bounded(wire.backend, sizeof wire.backend);
  if (handle.backend != expected_backend) {
    throw Error(Errc::environment,
                format("rank %d exported its heap from the %s backend and this rank uses %s: every rank must use "
                       "the same backend (iris.init{backend=}, IRIS_BACKEND)",
                       peer, handle.backend.c_str(), expected_backend));
  }
  handle.pci_bus_id = bounded(wire.pci_bus_id, sizeof wire.pci_bus_id);
  handle.bytes = wire.bytes;
  std::memcpy(handle.ipc.data(), wire.ipc, sizeof wire.ipc);
  return handle;
}

void check_peer_heap_size(const HeapHandle& handle, size_t expected_bytes, int peer) {
  if (handle.bytes != expected_bytes) {
    throw Error(Errc::internal, format("rank %d's heap is %s, this rank expected %s", peer,
                                       human_bytes(handle.bytes).c_str(), human_bytes(expected_bytes).c_str()));
  }
}

void throw_peer_gpu_not_visible(int peer, const std::string& pci_bus_id, const char* visibility_variable) {
  throw Error(Errc::environment,
              format("rank %d's heap is on the GPU at PCI bus %s, which this rank does not see (%s): every rank of a "
                     "node must see the GPUs of all the node's ranks",
                     peer, pci_bus_id.c_str(), describe_visibility(visibility_variable).c_str()));
}

void throw_no_peer_path(int device, const std::string& device_name, int peer_device, int peer, const char* probe_call) {
  throw Error(Errc::environment,
              format("GPU %d (this rank, %s) cannot reach GPU %d (rank %d's heap): the driver reports no peer-to-peer "
                     "path between them (%s = 0); run the ranks on GPUs linked by NVLink, xGMI or PCIe peer-to-peer, "
                     "or all on one GPU",
                     device, device_name.c_str(), peer_device, peer, probe_call));
}

}  // namespace iris::runtime::gpu
