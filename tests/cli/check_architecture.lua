-- Checks the rules of docs/architecture.md that the compiler does not: run by iris-lua (no iris.init),
--   iris-lua check_architecture.lua ROOT
-- 1. No require cycle among the Lua modules of src/lua: no module requires, while it loads, one that
--    requires it back while it loads (a require inside a function is lazy, and may).
-- 2. The Lua side reads no IRIS_* variable with os.getenv: src/core/env.def's reader does (iris.env).
-- 3. device/iris/impl/ is the device header's own: outside device/iris, only abi.h (the ABI the host
--    shares, from src/ and tests/) and the call protocol of the built-in collectives and ops
--    (ccl_call.hpp, ccl_ll.hpp, ccl_p2p.hpp, ops_call.hpp, from kernels/ and docs/experiments/) are included.
-- 4. No dead C API: every iris_* function a capi header declares for the Lua side (between the cdef
--    markers) is called from Lua (src/lua, scripts, labs, tests) or a test.
-- Prints "architecture rules: N checked" or each broken rule, and exits 1.
local root = assert(arg[1], "usage: iris-lua check_architecture.lua ROOT")

local failures = {}
local function fail(fmt, ...) failures[#failures + 1] = fmt:format(...) end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

-- Files under `folder` of ROOT whose name matches `pattern`, relative to ROOT, sorted.
local function files(folder, pattern)
  local found = {}
  local pipe = io.popen(("find '%s/%s' -type f 2>/dev/null"):format(root, folder))
  for path in pipe:lines() do
    local relative = path:sub(#root + 2)
    if relative:match(pattern) then found[#found + 1] = relative end
  end
  pipe:close()
  table.sort(found)
  return found
end

local function lua_code(text) return (text:gsub("%-%-%[(=*)%[.-%]%1%]", ""):gsub("%-%-[^\n]*", "")) end
local function c_code(text) return (text:gsub("/%*.-%*/", ""):gsub("//[^\n]*", "")) end

-- 1. require cycles ------------------------------------------------------------------------------------
-- The requires a module makes while it loads: the module names among its main chunk's constants (a
-- require inside a function is lazy, and may name a module that requires this one).
local jit_util = require "jit.util"
local graph, names, is_module = {}, {}, {}
local paths = files("src/lua", "%.lua$")
for _, path in ipairs(paths) do
  local name = path:gsub("^src/lua/", ""):gsub("%.lua$", ""):gsub("/", ".")
  names[#names + 1], is_module[name] = name, true
end
for i, path in ipairs(paths) do
  local name = names[i]
  graph[name] = {}
  local chunk = assert(loadfile(root .. "/" .. path))
  local k = -1
  while true do
    local constant = jit_util.funck(chunk, k)
    if constant == nil then break end
    if type(constant) == "string" and is_module[constant] and constant ~= name then
      graph[name][#graph[name] + 1] = constant
    end
    k = k - 1
  end
end
local state, stack = {}, {}
local function visit(name)
  state[name], stack[#stack + 1] = "open", name
  for _, dep in ipairs(graph[name] or {}) do
    if state[dep] == "open" then
      local i = #stack
      while stack[i] ~= dep do i = i - 1 end
      fail("require cycle: %s -> %s", table.concat(stack, " -> ", i), dep)
    elseif not state[dep] then
      visit(dep)
    end
  end
  stack[#stack], state[name] = nil, "done"
end
for _, name in ipairs(names) do
  if not state[name] then visit(name) end
end

-- 2. IRIS_* variables ------------------------------------------------------------------------------------
for _, path in ipairs(files("src/lua", "%.lua$")) do
  for variable in lua_code(read(root .. "/" .. path)):gmatch("os%.getenv%s*%(?%s*[\"'](IRIS_[%w_]*)") do
    fail("%s reads %s with os.getenv: read it with require(\"iris.env\") (src/core/env.def)", path, variable)
  end
end

-- 3. impl/ headers ---------------------------------------------------------------------------------------
local ALLOWED = {
  ["abi.h"] = { "^src/", "^tests/" },
  ["ccl_call.hpp"] = { "^kernels/", "^docs/experiments/" },
  ["ccl_ll.hpp"] = { "^kernels/", "^docs/experiments/" },
  ["ccl_p2p.hpp"] = { "^kernels/" },
  ["ops_call.hpp"] = { "^kernels/", "^docs/experiments/" },
}
for _, folder in ipairs { "src", "kernels", "tests", "labs", "scripts", "docs", "include" } do
  for _, path in ipairs(files(folder, "%.[%w]+$")) do
    -- (tests/cli/fixtures/architecture_broken breaks every rule on purpose, for the test that this fails)
    if not path:match("%.md$") and not path:match("^tests/cli/fixtures/architecture_broken/") then
      for header in read(root .. "/" .. path):gmatch("#%s*include%s*[<\"]iris/impl/([%w_.]+)[>\"]") do
        local ok = false
        for _, where in ipairs(ALLOWED[header] or {}) do ok = ok or path:match(where) ~= nil end
        if not ok then fail("%s includes iris/impl/%s, which is the device header's own", path, header) end
      end
    end
  end
end

-- 4. dead C API ------------------------------------------------------------------------------------------
local callers = {}
for _, folder in ipairs { "src/lua", "scripts", "labs", "tests" } do
  for _, path in ipairs(files(folder, "%.[%w]+$")) do callers[#callers + 1] = read(root .. "/" .. path) end
end
callers = table.concat(callers, "\n")
local functions = 0
for _, path in ipairs(files("src/capi", "%.h$")) do
  local text = c_code(read(root .. "/" .. path):match("cdef:begin %*/(.-)/%* cdef:end") or "")
  for name in text:gmatch("(iris_[%w_]+)%s*%(") do
    functions = functions + 1
    if not callers:find("%f[%w_]" .. name .. "%f[^%w_]") then
      fail("%s declares %s, which nothing calls: remove it, or call it", path, name)
    end
  end
end
if functions == 0 then fail("no C API functions found under %s/src/capi", root) end

if #failures > 0 then
  io.stderr:write(table.concat(failures, "\n") .. "\n")
  os.exit(1)
end
print(("architecture rules: %d modules, %d C functions checked"):format(#names, functions))
