#include "gpu_session.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "core/error.hpp"
#ifdef IRIS_HAVE_CUDA
#include "runtime/cuda/cuda_backend.hpp"
#endif
#ifdef IRIS_HAVE_HIP
#include "runtime/hip/hip_backend.hpp"
#endif

namespace iris::gpu_test {

namespace {

comm::Comm* g_comm = nullptr;
std::unique_ptr<runtime::Backend> g_backend;
std::unique_ptr<Heaps> g_heaps;
std::unique_ptr<runtime::Module> g_module;

std::string requested_backend() {
  const char* name = std::getenv("IRIS_BACKEND");
  return name && *name ? name : "cpu";
}

}  // namespace

void start(comm::Comm& comm) { g_comm = &comm; }

void end() {
  g_module.reset();
  if (g_heaps) {
    barrier("end: every rank is done with the peers' heaps");
    g_backend->release_heaps();
    g_heaps.reset();
  }
  g_backend.reset();
}

comm::Comm& ranks() { return *g_comm; }

std::string backend_name() { return requested_backend(); }

runtime::Backend& backend() {
  if (!g_backend) g_backend = runtime::create_backend(requested_backend(), ranks());
  return *g_backend;
}

int device_count() {
#ifdef IRIS_HAVE_CUDA
  if (backend_name() == "cuda") return runtime::cuda_device_count();
#endif
#ifdef IRIS_HAVE_HIP
  if (backend_name() == "hip") return runtime::hip_device_count();
#endif
  throw Error(Errc::environment, "backend " + backend_name() + " is not a GPU backend of this build");
}

runtime::Module& test_module() {
  if (!g_module) g_module = backend().load_module(test_kernels_ptx());
  return *g_module;
}

char* Heaps::mine() const { return bases[ranks().rank()]; }

const Heaps& heaps() {
  if (g_heaps) return *g_heaps;
  runtime::Backend& gpu = backend();
  comm::Comm& ranks = gpu_test::ranks();
  const auto started = std::chrono::steady_clock::now();
  auto heaps = std::make_unique<Heaps>();
  heaps->bytes = kHeapBytes;
  heaps->bases.assign(ranks.size(), nullptr);
  heaps->bases[ranks.rank()] = static_cast<char*>(gpu.allocate_heap(kHeapBytes));

  const std::vector<uint8_t> handle = gpu.export_heap();
  ranks.announce("heaps: exchange handles");
  const std::vector<std::vector<uint8_t>> handles = ranks.allgatherv(handle.data(), handle.size());
  const int my_device = gpu.device();
  std::vector<int> devices(ranks.size());
  ranks.announce("heaps: exchange devices");
  ranks.allgather(&my_device, sizeof my_device, devices.data());
  for (int peer = 0; peer < ranks.size(); ++peer) {
    if (peer == ranks.rank()) continue;
    heaps->bases[peer] = static_cast<char*>(gpu.import_peer_heap(peer, devices[peer], handles[peer], kHeapBytes));
  }
  gpu.peers_opened();
  barrier("heaps: every rank opened every peer");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  std::printf("[gpu test] rank %d: heap setup (allocate and zero %zu MiB, export, open %d peers, barrier) took %.1f ms\n",
              ranks.rank(), kHeapBytes >> 20, ranks.size() - 1, ms);
  g_heaps = std::move(heaps);
  return *g_heaps;
}

void barrier(const std::string& step) { ranks().barrier(step); }

std::string Mismatches::describe() const {
  if (count == 0) return "every element matches";
  return format("%zu elements differ; the first at index %zu: got 0x%08x, expected 0x%08x", count, first, got,
                expected);
}

Mismatches compare(const std::vector<uint32_t>& host, const std::vector<uint32_t>& expected) {
  Mismatches result;
  const size_t n = std::min(host.size(), expected.size());
  for (size_t i = 0; i < n; ++i) {
    if (host[i] == expected[i]) continue;
    if (result.count++ == 0) {
      result.first = i;
      result.got = host[i];
      result.expected = expected[i];
    }
  }
  result.count += std::max(host.size(), expected.size()) - n;
  return result;
}

int probe(const std::string& requirement) {
  const std::string name = requested_backend();
  if (name != "cuda" && name != "hip") {
    std::printf("skipped: IRIS_BACKEND=%s; the GPU tests run with IRIS_TEST_BACKEND=cuda or hip\n", name.c_str());
    return 77;
  }
  if (requirement == "ptx" && name != "cuda") {
    std::printf("skipped: these tests load hand-written PTX, which only the cuda backend runs; the Lua suite covers "
                "kernels on %s\n",
                name.c_str());
    return 77;
  }
  int argc = 0;
  char** argv = nullptr;
  std::unique_ptr<comm::Comm> single = comm::Comm::create(&argc, &argv);
  g_comm = single.get();
  int devices = 0;
  try {
    devices = device_count();
  } catch (const Error& e) {
    std::printf("skipped: the %s backend is unavailable here: %s\n", name.c_str(), e.what());
    return 77;
  }
  if (devices == 0) {
    std::printf("skipped: the %s backend sees no GPU here\n", name.c_str());
    return 77;
  }
  // A driver and a device: from here on, a backend that does not start is a failure, not a skip.
  try {
    runtime::Backend& gpu = backend();
    std::printf("probe: %s backend, %d GPU(s) visible; GPU %d is %s (%s %s)\n", name.c_str(), devices, gpu.device(),
                gpu.device_name().c_str(), gpu.code_target().compiler.c_str(), gpu.code_target().arch.c_str());
    g_backend.reset();
    return 0;
  } catch (const Error& e) {
    std::printf("FAILED: the %s backend does not start although %d GPU(s) are visible: %s\n", name.c_str(), devices,
                e.what());
    return 1;
  }
}

}  // namespace iris::gpu_test
