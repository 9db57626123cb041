-- The command line's -j and -O, as luajit performs them (luajit.c: dojitcmd, dojitopt): iris-lua takes
-- them in order with -e and -l.
--   -jon, -joff, -jflush        jit.on(), jit.off(), jit.flush()
--   -jNAME[=arg,arg...]         require("jit.NAME").start(arg, ...): -jv, -jdump=file, -jp
--   -O[arg,arg...]              jit.opt.start(arg, ...): -O3, -O0, -Ohotloop=10, -O+fold,-dce
local jit = require "jit"
local errors = require "iris.errors"

local M = {}

-- "a,b" -> "a", "b" (nothing for "").
local function arguments(text)
  local list = {}
  for item in (text or ""):gmatch("[^,]+") do list[#list + 1] = item end
  return unpack(list)
end

local function usage(fmt, ...)
  errors.raise("usage", fmt, ...)
end

-- -jCMD
function M.jit_command(text)
  local name, rest = text:match("^([^=]*)=?(.*)$")
  local fn = jit[name]
  if type(fn) == "function" and name ~= "attach" and name ~= "status" then return fn(arguments(rest)) end
  local ok, module = pcall(require, "jit." .. name)
  if not ok or type(module) ~= "table" or type(module.start) ~= "function" then
    usage("-j%s: unknown LuaJIT command or jit.* modules not installed (-jon, -joff, -jflush; -jv and -jdump "
      .. "need LuaJIT's jit/*.lua: compiled into iris-lua when its build finds them (Debian: libluajit-5.1-common), "
      .. "else on package.path)", text)
  end
  -- The JIT's own diagnostics see every trace flush, and -jp needs the profiler: the host's idle one
  -- (which locates compiled loops for hang reports and Ctrl-C, docs/reliability.md) goes first, so its
  -- stop's flush happens before they watch.
  package.loaded["iris.host"].stop_sampler()
  module.start(arguments(rest))
end

-- -O[ARGS]
function M.optimize(text)
  local ok, message = pcall(jit.opt.start, arguments(text))
  if not ok then usage("-O%s: %s", text, tostring(message):gsub("^[^:]*:%d+: ", "")) end
end

return M
