-- `iris-lua warm [--list] [NAME...]` (also `iris-lua --warm`): compiles iris's library kernels (the
-- collectives, the fused ops, the tensors' element-wise operations, the device barrier) into the kernel
-- cache ahead, so that a script's first ctx.ccl call does not pause for the compiler (docs/kernels.md,
-- "The kernel cache"). The kernels are the files the binary embeds (iris_builtin_names).
local ffi = require "ffi"
local errors = require "iris.errors"
local C = ffi.C

local M = {}

M.OPTIONS = { "--list", "--help" }

local USAGE = [[
usage: iris-lua warm [--list] [NAME...]
  NAME     a kernel file ("ccl/all_reduce") or a folder of them ("ccl", "ops"); default: every one
  --list   print the names and compile nothing
Compiles iris's own kernels for this machine's backend (and IRIS_CROSS_COMPILE's targets) into the
kernel cache (IRIS_CACHE_DIR), where every later job finds them. `iris-lua --warm` is the same.
]]

local function say(fmt, ...)
  if C.iris_rank() == 0 then
    io.stdout:write(fmt:format(...), "\n")
    io.stdout:flush()
  end
end

-- Every kernel file the binary embeds: "ccl/all_reduce", ..., in the binary's order.
function M.names()
  local names = {}
  for name in ffi.string(C.iris_builtin_names()):gmatch("[^\n]+") do names[#names + 1] = name end
  return names
end

-- The names `words` select (a name, or a folder's prefix); nil and the word that selects none.
local function select_names(words)
  local all = M.names()
  if #words == 0 then return all end
  local chosen, seen = {}, {}
  for _, word in ipairs(words) do
    local matched = false
    for _, name in ipairs(all) do
      if name == word or name:sub(1, #word + 1) == word .. "/" then
        matched = true
        if not seen[name] then
          seen[name] = true
          chosen[#chosen + 1] = name
        end
      end
    end
    if not matched then return nil, word end
  end
  return chosen
end

function M.main(...)
  local words, list = {}, false
  for _, word in ipairs { ... } do
    if word == "--help" or word == "-h" then
      if C.iris_rank() == 0 then io.stdout:write(USAGE) end
      return 0
    elseif word == "--list" then
      list = true
    elseif word:sub(1, 1) == "-" then
      if C.iris_rank() == 0 then io.stderr:write(("iris-lua warm: unknown option '%s'\n%s"):format(word, USAGE)) end
      return errors.exit_code_of("usage")
    else
      words[#words + 1] = word
    end
  end
  local names, unknown = select_names(words)
  if not names then
    if C.iris_rank() == 0 then
      io.stderr:write(("iris-lua warm: no library kernel is named '%s'; they are: %s\n"):format(unknown,
        table.concat(M.names(), ", ")))
    end
    return errors.exit_code_of("usage")
  end
  if list then
    for _, name in ipairs(names) do say("%s", name) end
    return 0
  end
  local ctx = iris.init {}
  say("iris-lua warm: compiling %d library kernel file%s for the %s backend (%s)", #names, #names == 1 and "" or "s",
    ctx.backend, ctx.device_name)
  local kernel = require "iris.kernel"
  local total = C.iris_wall_time()
  for _, name in ipairs(names) do
    local started = C.iris_wall_time()
    kernel.builtin(name)
    say("  %-28s %6.1f s", name, C.iris_wall_time() - started)
  end
  say("done in %.1f s: these kernels now load from the kernel cache", C.iris_wall_time() - total)
  return 0
end

return M
