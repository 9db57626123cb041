-- Lab 03's reference solution with its flag raised relaxed: the checker must catch it under the cpu
-- backend's weak memory model (tests/labs/CMakeLists.txt), the bug lab 03 teaches.
local lab = dofile(arg[0]:gsub("[^/]*$", "") .. "../../labs/03-atomics/solution.lua")
local ctx = iris.init {}

local broken = iris.compile [[
__global__ void publish_relaxed(const int* data, int* inbox, int* flag, int n, int round, int to, iris::Context ctx) {
  for (int i = 0; i < n; ++i) ctx.store(inbox + i, data[i], to);
  ctx.atomic_xchg(flag, round, to, iris::relaxed);  // the bug: nothing orders the data before the flag
}
]]

function lab.publish(data, inbox, flag, round, to)
  broken.publish_relaxed:launch({ grid = 1, block = 1 }, data, inbox, flag, data:numel(), round, to, ctx)
end

return lab
