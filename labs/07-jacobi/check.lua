-- Lab 07's checker (docs/labs/07-jacobi.md): a Jacobi iteration on a grid whose rows are split among the
-- ranks, stepped with the student's device-initiated halo exchange and with their host-driven one; every
-- rank's rows checked after every run against the same iteration done on the host; each step timed next
-- to host-driven copies done by the library (the reference) and the sweep alone.
local ffi = require "ffi"
local H = require "iris.lab.harness"

local DEVICE_HINT = "block 0 puts unew's row 1 into the rank above's row rows + 1 and row `rows` into the rank "
  .. "below's row 0 (ctx.put_block, every thread of the block), then, after __syncthreads(), thread 0 raises "
  .. "their flags to t (ctx.signal_set); the last block waits for this rank's own flags (ctx.wait_until(flags + k, "
  .. "iris::Cmp::ge, t)) so that the next step reads whole halos. A wait that gives up names the flag and its value"
local HOST_HINT = "after the sweep, copy this rank's first row (row 2, 1-based) into the rank above's last row and "
  .. "its last row into the rank below's first row, e.g. unew:narrow(1, rows + 2, 1):peer(rank - 1):copy(unew:narrow(1, "
  .. "2, 1)); then ctx:barrier(), so that no rank starts the next step before its halos are in"
local TOLERANCE = { rtol = 1e-4, atol = 1e-5 } -- float32 on the device, double on the host

local SWEEP = [[
__global__ void lab_sweep(const float* u, float* unew, int rows, int cols) {
  for (int i = 1 + blockIdx.x; i <= rows; i += gridDim.x)
    for (int j = 1 + threadIdx.x; j < cols - 1; j += blockDim.x)
      unew[i * cols + j] = 0.25f * (u[(i - 1) * cols + j] + u[(i + 1) * cols + j] + u[i * cols + j - 1] + u[i * cols + j + 1]);
}
]]

-- `steps` Jacobi steps of the whole grid on the host (double), its first and last rows and columns fixed.
local function host_jacobi(rows_in, cols, grid, steps)
  local a = ffi.new("double[?]", rows_in * cols)
  local b = ffi.new("double[?]", rows_in * cols)
  for k = 0, rows_in * cols - 1 do a[k], b[k] = grid[k + 1], grid[k + 1] end
  for _ = 1, steps do
    for i = 1, rows_in - 2 do
      for j = 1, cols - 2 do
        b[i * cols + j] = 0.25 * (a[(i - 1) * cols + j] + a[(i + 1) * cols + j] + a[i * cols + j - 1] + a[i * cols + j + 1])
      end
    end
    a, b = b, a
  end
  return a
end

return H.define {
  number = 7,
  title = "a Jacobi halo exchange: device-initiated puts versus host-driven copies",
  ranks = { min = 1, try = { 2, 4 } },
  calls = { "step_device", "step_host" },
  run = function(check, lab)
    local ctx = check.ctx
    local W, me = ctx.world_size, ctx.rank
    local t = 0 -- step_device's step number: grows across every call

    -- A grid of rows x cols per rank (plus two halo rows), random, the halos made to match the
    -- neighbours' rows; and what this rank's rows hold after `steps` steps, computed on the host.
    local function problem(rows, cols, steps, tag)
      local init = ctx:rand({ rows + 2, cols }, "float32", check:seed(tag))
      if me > 0 then init:narrow(1, 1, 1):copy(init:narrow(1, rows + 1, 1):peer(me - 1)) end
      if me < W - 1 then init:narrow(1, rows + 2, 1):copy(init:narrow(1, 2, 1):peer(me + 1)) end
      ctx:barrier()
      local grid = {}
      local function append(t_, first, count)
        for _, v in ipairs(t_:narrow(1, first, count):to_table()) do grid[#grid + 1] = v end
      end
      append(init:peer(0), 1, 1)
      for r = 0, W - 1 do append(init:peer(r), 2, rows) end
      append(init:peer(W - 1), rows + 2, 1)
      local result = host_jacobi(W * rows + 2, cols, grid, steps)
      local mine = {}
      for k = 0, rows * cols - 1 do mine[k + 1] = result[(me * rows + 1) * cols + k] end
      local expected = ctx:empty({ rows, cols })
      expected:copy(mine)
      return { init = init, expected = expected, rows = rows, cols = cols, steps = steps,
               u = ctx:zeros({ rows + 2, cols }), unew = ctx:zeros({ rows + 2, cols }) }
    end

    local function reset(p)
      p.u:copy(p.init)
      p.unew:copy(p.init)
    end
    -- `steps` calls of step(u, unew), swapping the two; returns the one holding the last step.
    local function iterate(p, step)
      local u, unew = p.u, p.unew
      for _ = 1, p.steps do
        step(u, unew)
        u, unew = unew, u
      end
      return u
    end
    local function device_step(u, unew)
      t = t + 1
      lab.step_device(u, unew, t)
    end
    local function verify(p, latest, what)
      check:expect(latest:narrow(1, 2, p.rows), p.expected, what, TOLERANCE)
    end

    local methods = { { "step_device", device_step, DEVICE_HINT }, { "step_host", lab.step_host, HOST_HINT } }
    for _, size in ipairs { { 1, 8, 3 }, { 5, 33, 10 } } do
      local p = problem(size[1], size[2], size[3], ("grid %d x %d"):format(size[1], size[2]))
      for _, m in ipairs(methods) do
        check:step(("%s: %d steps of %s x %d columns per rank"):format(m[1], p.steps, H.count(p.rows, "row"), p.cols),
          function()
          reset(p)
          ctx:barrier()
          local latest = iterate(p, m[2])
          ctx:barrier()
          verify(p, latest, ("your rows after %d calls of lab.%s"):format(p.steps, m[1]))
        end, m[3])
      end
    end

    local size = check:size({ 16, 130, 20 }, { 256, 2048, 20 })
    local p = problem(size[1], size[2], size[3], "timed")
    local sweep = iris.compile(SWEEP).lab_sweep
    local latest -- the rows the last run left
    local function subject(name, call, checked)
      return { name = name, call = function() latest = iterate(p, call) end, verify = checked, per = 1 / p.steps }
    end
    local function library_step(u, unew)
      sweep:launch({ grid = math.min(p.rows, 1024), block = 128 }, u, unew, p.rows, p.cols)
      if me > 0 then unew:narrow(1, p.rows + 2, 1):peer(me - 1):copy(unew:narrow(1, 2, 1)) end
      if me < W - 1 then unew:narrow(1, 1, 1):peer(me + 1):copy(unew:narrow(1, p.rows + 1, 1)) end
      ctx:barrier()
    end
    local LIBRARY, SWEEP = "host-driven copies (t:peer(r):copy and ctx:barrier)",
      "the sweep alone (no halo exchange; a lower bound)"
    local ms
    -- Yours (both methods) and the references, timed the same way, interleaved; one run is p.steps steps
    -- from the same start (a run cannot follow the last one at once: it starts from reset rows).
    check:step(("step_device, step_host and the references: %d interleaved timed rounds of %d steps, every run of "
      .. "yours and the library's checked"):format(check.runs, p.steps), function()
      ms = check:time_together({
        subject("step_device", methods[1][2], true),
        subject("step_host", methods[2][2], true),
        subject(LIBRARY, library_step, true),
        subject(SWEEP, function(u, unew)
          sweep:launch({ grid = math.min(p.rows, 1024), block = 128 }, u, unew, p.rows, p.cols)
        end, false),
      }, {
        reset = function() reset(p) end,
        verify = function(label) verify(p, latest, "the rows after " .. label) end,
      })
    end, ("step_device: %s. step_host: %s"):format(DEVICE_HINT, HOST_HINT))
    check:compare { what = ("per step, %d rows x %d columns per rank"):format(p.rows, p.cols), yours = ms.step_device,
                    yours_name = "your step_device", reference = { name = LIBRARY, result = ms[LIBRARY] },
                    threshold = 1.0, others = {
                      { name = "your step_host", result = ms.step_host },
                      { name = SWEEP, result = ms[SWEEP] },
                    } }
  end,
}
