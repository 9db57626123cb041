-- iris.progress: progress lines for sweeps (the pattern and bench scripts use it).
--
--   local progress = iris.progress(total)            -- {after = seconds, label = "measuring"}
--   for ... do progress:step("%d reads %d", r, c) ... end
--   progress:finish()
--
-- Rank 0 prints; a sweep that ends within `after` seconds (default 2) prints nothing at all. After that,
-- each step shows "measuring 1 reads 0 (3/4, about 5 s left)": rewritten in place on a terminal, a line
-- each in a log or a pipe.
local ffi = require "ffi"
local errors = require "iris.errors"
local C = ffi.C

local M = {}

local Progress = {}
Progress.__index = Progress
M.Progress = Progress

-- Whether what rank 0 prints reaches a terminal: alone, its own standard output; under mpirun (where
-- that is a pipe to mpirun), whatever mpirun writes to.
local terminal
local function output_is_terminal()
  if terminal ~= nil then return terminal end
  for _, declaration in ipairs { "int isatty(int fd);", "int getppid(void);",
    "long readlink(const char* path, char* buf, size_t size);" } do
    pcall(ffi.cdef, declaration) -- (an error only says that another module declared it already)
  end
  if not os.getenv("OMPI_COMM_WORLD_SIZE") then
    terminal = C.isatty(1) == 1
  else
    local buffer = ffi.new("char[256]")
    local length = C.readlink(("/proc/%d/fd/1"):format(C.getppid()), buffer, 256)
    local target = length > 0 and ffi.string(buffer, length) or ""
    terminal = target:find("^/dev/pts/") ~= nil or target:find("^/dev/tty") ~= nil
  end
  return terminal
end

local function now() return C.iris_wall_time() end

function Progress:step(fmt, ...)
  self.done = self.done + 1
  if not self.printing then return end
  local elapsed = now() - self.started
  if elapsed < self.after then return end
  local text = select("#", ...) > 0 and fmt:format(...) or fmt
  local left = ""
  if self.done > 1 then -- the steps before this one took elapsed seconds
    local remaining = elapsed / (self.done - 1) * (self.total - self.done + 1)
    left = (", about %d s left"):format(math.ceil(remaining))
  end
  local line = ("%s %s (%d/%d%s)"):format(self.label, text, self.done, self.total, left)
  if self.terminal then
    io.stdout:write("\r", line, "\027[K")
    self.drawn = true
  else
    io.stdout:write(line, "\n")
  end
  io.stdout:flush()
end

-- Clears the line a terminal shows.
function Progress:finish()
  if self.drawn then
    io.stdout:write("\r\027[K")
    io.stdout:flush()
    self.drawn = false
  end
end

M.OPTIONS = { "after", "label" }

local function progress(total, options)
  if type(total) ~= "number" or total % 1 ~= 0 or total < 0 then
    errors.raise("invalid_argument", "iris.progress(total [, {after=, label=}]): total must be a whole number, got %s",
      tostring(total))
  end
  options = options or {}
  if type(options) ~= "table" then
    errors.raise("invalid_argument", "iris.progress: options must be a table {after = seconds, label = text}")
  end
  errors.check_keys(options, M.OPTIONS, "iris.progress")
  local after = options.after or 2
  if type(after) ~= "number" or after < 0 then
    errors.raise("invalid_argument", "iris.progress: after must be seconds >= 0, got %s", tostring(after))
  end
  if options.label ~= nil and type(options.label) ~= "string" then
    errors.raise("invalid_argument", "iris.progress: label must be a string, got a %s", type(options.label))
  end
  local printing = C.iris_rank() == 0
  return setmetatable({
    total = total, done = 0, after = after, label = options.label or "measuring", started = now(),
    printing = printing, terminal = printing and output_is_terminal(), drawn = false,
  }, Progress)
end

M.progress = progress -- iris.progress (iris.lua attaches it)

return M
