// How the GPU backends behave where their vendor runtime or device is missing: a clear environment
// error, and `auto` falling back to the cpu backend. These run on any machine; the parts that need
// the runtime to be absent (or present without a device) check that first and say so when they skip.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <memory>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "runtime/backend.hpp"
#include "core/dynamic_library.hpp"
#ifdef IRIS_HAVE_CUDA
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/cuda/cuda_driver.hpp"
#endif
#ifdef IRIS_HAVE_HIP
#include "runtime/hip/hip_backend.hpp"
#include "runtime/hip/hip_runtime.hpp"
#endif

using namespace iris;
using namespace iris::runtime;
using Catch::Matchers::Contains;

namespace {

comm::Comm& single_rank() {
  static std::unique_ptr<comm::Comm> comm = [] {
    int argc = 0;
    char** argv = nullptr;
    return comm::Comm::create(&argc, &argv);
  }();
  return *comm;
}

bool loadable(const char* library) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle) dlclose(handle);
  return handle != nullptr;
}

}  // namespace

TEST_CASE("a library that cannot be opened is an environment error naming each try and what to do", "[unit][gpu]") {
  try {
    DynamicLibrary::open({"libiris-absent-1.so", "libiris-absent-2.so"}, "the test library", "install it");
    FAIL("opened a library that does not exist");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::environment);
    CHECK_THAT(e.what(), Contains("cannot load the test library: tried libiris-absent-1.so ("));
    CHECK_THAT(e.what(), Contains("), libiris-absent-2.so ("));
    CHECK_THAT(e.what(), Contains("; install it"));
  }
  DynamicLibrary libc = DynamicLibrary::open({"libiris-absent.so", "libc.so.6"}, "libc", "");
  CHECK(libc.name() == "libc.so.6");
  CHECK(libc.symbol("strlen") != nullptr);
  CHECK(libc.symbol("iris_no_such_symbol") == nullptr);
}

#ifdef IRIS_HAVE_CUDA
TEST_CASE("without libcuda the cuda backend says that no NVIDIA driver could be loaded", "[unit][gpu][cuda]") {
  try {
    cuda::load_driver("libiris-no-such-cuda.so.1");
    FAIL("loaded a driver that does not exist");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::environment);
    CHECK_THAT(e.what(), Contains("cannot load the NVIDIA driver library: tried libiris-no-such-cuda.so.1 ("));
    CHECK_THAT(e.what(), Contains("is an NVIDIA driver installed? Without one, run on another backend"));
  }
  if (loadable("libcuda.so.1")) {
    WARN("skipped the check of make_cuda_backend without a driver: libcuda.so.1 loads on this machine");
    return;
  }
  try {
    make_cuda_backend(single_rank());
    FAIL("the cuda backend started without libcuda.so.1");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::environment);
    CHECK_THAT(e.what(), Contains("tried libcuda.so.1 ("));
  }
}

TEST_CASE("a driver library that lacks a function the headers declare is named with that function",
          "[unit][gpu][cuda]") {
  try {
    cuda::load_driver("libc.so.6");
    FAIL("libc passed for the CUDA driver");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::environment);
    CHECK_THAT(e.what(), Contains("libc.so.6 (driver for CUDA unknown) has no cuInit, which iris-lua (built with the "
                                  "CUDA "));
    CHECK_THAT(e.what(), Contains("update the NVIDIA driver"));
  }
}

TEST_CASE("the cuda backend treats faulting kernels as sticky device faults and nothing else", "[unit][gpu][cuda]") {
  for (CUresult fault : {CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_ASSERT,
                         CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_ILLEGAL_INSTRUCTION}) {
    CHECK(cuda::is_device_fault(fault));
  }
  for (CUresult error : {CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_NOT_READY,
                         CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_NOT_FOUND}) {
    CHECK_FALSE(cuda::is_device_fault(error));
  }
  CHECK(cuda::error_text(nullptr, CUDA_ERROR_ILLEGAL_ADDRESS) == "CUresult 700");
  CHECK(cuda::version_text(13000) == "13.0");
  CHECK(cuda::version_text(12080) == "12.8");
}
#endif

#ifdef IRIS_HAVE_HIP
TEST_CASE("without libamdhip64 the hip backend says that no HIP runtime could be loaded", "[unit][gpu][hip]") {
  try {
    hip::load_runtime({"libiris-no-such-hip.so"});
    FAIL("loaded a HIP runtime that does not exist");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::environment);
    CHECK_THAT(e.what(), Contains("cannot load the HIP runtime: tried libiris-no-such-hip.so ("));
  }
  CHECK(hip::is_device_fault(hipErrorIllegalAddress));
  CHECK(hip::is_device_fault(hipErrorLaunchFailure));
  CHECK_FALSE(hip::is_device_fault(hipErrorInvalidValue));
  CHECK_FALSE(hip::is_device_fault(hipErrorNotReady));
  CHECK(hip::version_text(50221153) == "5.2");
}

TEST_CASE("the hip backend without an AMD GPU says so", "[unit][gpu][hip]") {
  int devices = 0;
  try {
    devices = hip_device_count();
  } catch (const Error& e) {
    // No HIP runtime at all: the message says which library was missing.
    CHECK(e.code() == Errc::environment);
    CHECK_THAT(e.what(), Contains("HIP"));
    WARN("the HIP runtime does not load here, so only its absence was checked: " << e.what());
    return;
  }
  if (devices > 0) {
    WARN("skipped: this machine has " << devices << " AMD GPU(s); the device tests (tests/gpu/device) cover it");
    return;
  }
  try {
    make_hip_backend(single_rank());
    FAIL("the hip backend started without a GPU");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::environment);
    CHECK_THAT(e.what(), Contains("no AMD GPU visible to this process (HIP_VISIBLE_DEVICES"));
  }
}
#endif

TEST_CASE("auto falls back to the cpu backend where no GPU backend can run", "[unit][gpu]") {
  for (const char* name : {"cuda", "hip"}) {
    try {
      create_backend(name, single_rank());
      WARN("skipped: the " << name << " backend runs on this machine, so auto would not fall back");
      return;
    } catch (const Error& e) {
      CHECK(e.code() == Errc::environment);
    }
  }
  std::unique_ptr<Backend> backend = create_backend("auto", single_rank());
  CHECK(std::string(backend->name()) == "cpu");
}
