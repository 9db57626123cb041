-- docs/lua-api.md covers the whole Lua API (issue 13): every public name of the real objects (the iris
-- module and its tables, a context, ctx.ccl, ctx.ops, a tensor, a compiled module, a kernel, a progress) has an
-- entry, and every option of every table of options is named in its entry. The names are read from
-- the objects themselves, so a name added later fails here until the page describes it. help() finds
-- entries from functions, objects and names. (The reference is the page compiled into iris-lua.)
local reference = require "iris.help"
local ctx = iris.init {}

local function public(name) return type(name) == "string" and name:sub(1, 1) ~= "_" end

-- Every public key of `t` (raw, and through a table __index chain when `methods`), as "prefix..key".
local function names(t, prefix, out)
  out = out or {}
  for key in pairs(t) do
    if public(key) then out[#out + 1] = prefix .. key end
  end
  return out
end

local function missing(list)
  local absent = {}
  for _, key in ipairs(list) do
    local alternative = key:gsub("%.([%w_]+)$", ":%1") -- a function field may be documented as a method
    if not reference.entry(key) and not reference.entry(alternative) then absent[#absent + 1] = key end
  end
  table.sort(absent)
  return absent
end

local function covered(what, list)
  local absent = missing(list)
  assert(#absent == 0, ("docs/lua-api.md has no entry for %d public name%s of %s: %s"):format(#absent,
    #absent == 1 and "" or "s", what, table.concat(absent, ", ")))
end

iris.test("every name of the iris module and its tables has an entry", function()
  covered("iris", names(iris, "iris."))
  for _, sub in ipairs { "trace", "plot", "options" } do covered("iris." .. sub, names(iris[sub], "iris." .. sub .. ".")) end
  local p = iris.progress(1)
  covered("a progress", names(getmetatable(p).__index, "p:"))
end)

iris.test("every field and method of the context, and every collective, has an entry", function()
  -- The fields live behind the context's metatable (read-only), the methods one level further.
  local fields = names(ctx, "ctx.")
  local store = getmetatable(ctx).__index
  if type(store) == "table" and store ~= require("iris.context").Context then
    for key, value in pairs(store) do
      if public(key) and type(value) ~= "function" then fields[#fields + 1] = "ctx." .. key end
    end
  end
  assert(#fields >= 6, "the context's fields were not found: " .. table.concat(fields, ", "))
  covered("ctx", fields)
  local methods = {}
  for key in pairs(require("iris.context").Context) do
    if public(key) and key:sub(1, 2) ~= "__" then methods[#methods + 1] = "ctx:" .. key end
  end
  covered("the context's methods", methods)
  covered("ctx.ccl", names(ctx.ccl, "ctx.ccl."))
  covered("ctx.ops", names(ctx.ops, "ctx.ops."))
end)

iris.test("every field and method of a tensor has an entry", function()
  local t = ctx:zeros(2)
  local fields = {}
  for key in pairs(getmetatable(t)) do
    if public(key) and key:sub(1, 2) ~= "__" then fields[#fields + 1] = "t." .. key end
  end
  covered("a tensor's fields", fields)
  covered("a tensor's methods", names(require("iris.tensor").Tensor, "t:"))
end)

iris.test("every field and method of a compiled module and of a kernel has an entry", function()
  local kernel = require "iris.kernel"
  local mod = iris.compile("__global__ void reference_probe(int* p) {}")
  covered("a module", names(mod, "mod."))
  covered("a module's methods", names(kernel.Module, "mod:"))
  assert(reference.entry("mod.NAME"), "no entry for mod.NAME")
  covered("a kernel", names(mod.reference_probe, "k."))
  covered("a kernel's methods", names(kernel.Kernel, "k:"))
end)

iris.test("every field and method of a graph has an entry", function()
  local g = ctx:capture(function() end)
  covered("a graph", names(g, "g."))
  covered("a graph's methods", names(require("iris.graph").Graph, "g:"))
  g:free()
end)

iris.test("a name without an entry is found missing", function()
  local Tensor = require("iris.tensor").Tensor
  Tensor.undocumented_probe = function() end
  local absent = missing(names(Tensor, "t:"))
  Tensor.undocumented_probe = nil
  iris.assert_equal(absent, { "t:undocumented_probe" })
end)

-- Every option of a table of options is named (in backquotes) in the entry that takes it.
iris.test("every option of every table of options is in its entry", function()
  local function options_in(key, list, prefix)
    local entry = reference.entry(key)
    assert(entry, "no entry " .. key)
    local absent = {}
    for _, option in ipairs(list) do
      local name = (prefix or "") .. (type(option) == "table" and option[1] or option)
      if not entry.text:find("`" .. name .. "`", 1, true) and not entry.text:find("`" .. name .. " ", 1, true) then
        absent[#absent + 1] = name
      end
    end
    assert(#absent == 0, ("the entry %s does not name %s"):format(key, table.concat(absent, ", ")))
  end
  options_in("iris.init", require("iris.context").INIT_OPTIONS)
  options_in("iris.compile", require("iris.kernel").COMPILE_OPTIONS)
  options_in("iris.bench", require("iris.kernel").BENCH_OPTIONS)
  options_in("k:launch", require("iris.kernel").LAUNCH_KEYS)
  options_in("iris.assert_allclose", require("iris.assertions").ALLCLOSE_OPTION_NAMES)
  options_in("ctx:manual_seed", require("iris.creation").MANUAL_SEED_OPTIONS)
  options_in("iris.manual_seed", require("iris.creation").MANUAL_SEED_OPTIONS)
  options_in("ctx:rand", require("iris.creation").SEED_OPTIONS)
  options_in("ctx.ccl", require("iris.ccl").OPTIONS)
  options_in("iris.trace.start", require("iris.trace").START_OPTIONS)
  options_in("iris.progress", require("iris.progress").OPTIONS)
  options_in("iris.options", iris.options._spec_keys)
  options_in("iris.options", iris.options._option_keys)
  options_in("iris.options", iris.options.common, "--")
  options_in("iris-lua test", require("iris.testing").OPTIONS)
  options_in("iris-lua lab", require("iris.cmd.lab").OPTIONS)
end)

iris.test("help finds entries from functions, objects and names", function()
  local t = ctx:zeros(2)
  local mod = iris.compile("__global__ void reference_probe(int* p) {}")
  local cases = {
    { iris.init, "iris.init" }, { ctx.zeros, "ctx:zeros" }, { t.sum, "t:sum" }, { t.add_, "t:add_" },
    { ctx.ccl.all_reduce, "ctx.ccl.all_reduce" }, { iris.trace.start, "iris.trace.start" },
    { iris.options.write, "iris.options.write" }, { mod.kernel, "mod:kernel" },
    { ctx, "ctx" }, { t, "t" }, { mod, "mod" }, { mod.reference_probe, "k" }, { iris, "iris" },
    { ctx.capture, "ctx:capture" }, { require("iris.graph").Graph.replay, "g:replay" },
    { "t:reshape", "t:reshape" }, { "zeros_like", "ctx:zeros_like" }, { "launch", "k:launch" },
  }
  for _, case in ipairs(cases) do
    iris.assert_equal(reference.lookup(case[1]), case[2], "help(" .. tostring(case[1]) .. ")")
  end
  local text = reference.render("ctx:zeros")
  assert(text:find("^ctx:zeros%(shape %[, dtype%]%)\n"), text)
  assert(text:find("\n    local t = ctx:zeros", 1, true), text) -- the example, indented, without its fence
  local key, near = reference.lookup("nothing at all")
  assert(key == nil and #near == 0)
end)
