#include "runtime/cpu/cpu_execution.hpp"

#include "core/error.hpp"

namespace iris::runtime {

CpuExecution::CpuExecution(const comm::Comm& c) : comm(c) {}
CpuExecution::~CpuExecution() = default;

void CpuExecution::synchronize() {}
std::unique_ptr<Module> CpuExecution::load_module(const std::vector<uint8_t>&) {
  throw Error(Errc::unsupported, "cpu kernels not available yet");
}
void CpuExecution::launch(Module&, void*, const LaunchConfig&, void**, const std::string&) {
  throw Error(Errc::unsupported, "cpu kernels not available yet");
}
std::unique_ptr<Event> CpuExecution::create_event() { throw Error(Errc::unsupported, "cpu kernels not available yet"); }
double CpuExecution::time_raw_launches(Module&, void*, const LaunchConfig&, void**, int) {
  throw Error(Errc::unsupported, "cpu kernels not available yet");
}

}  // namespace iris::runtime
