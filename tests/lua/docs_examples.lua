-- The examples of the reference pages compile as they are: every ```cpp block of docs/device-api.md
-- and docs/lua-api.md (blocks marked `schematic` list declarations, not code) is compiled for every
-- target (the cpu backend, and NVRTC and hiprtc where the suite cross-compiles), and every ```lua
-- block of docs/lua-api.md runs at every rank count of the suite (blocks marked `norun` are not run),
-- each alone: in a global table of its own, as if copied into a file of its own (issue 27: examples
-- that used `t` or `k` from an earlier block failed when copied).
local docs = arg[0]:gsub("[^/]*$", "") .. "../../docs/"
local ctx = iris.init {}

-- The fenced blocks of a page: { info = "cpp", text = ..., line = first line of the code }.
local function blocks(page)
  local file = assert(io.open(docs .. page, "rb"))
  local found, current, number = {}, nil, 0
  for line in file:lines() do
    number = number + 1
    if current then
      if line:match("^```%s*$") then
        found[#found + 1] = current
        current = nil
      else
        current.lines[#current.lines + 1] = line
      end
    else
      local info = line:match("^```(.*)$")
      if info then current = { info = info, lines = {}, line = number + 1 } end
    end
  end
  file:close()
  assert(current == nil, page .. ": a ``` block is not closed")
  for _, block in ipairs(found) do block.text = table.concat(block.lines, "\n") end
  return found
end

local function words(info)
  local set = {}
  for word in info:gmatch("%S+") do set[word] = true end
  return set
end

-- Every ```cpp block compiles alone, with compiler messages at the page's own lines.
local function compiles(page)
  local count = 0
  for _, block in ipairs(blocks(page)) do
    local info = words(block.info)
    if info.cpp and not info.schematic then
      iris.compile(('#line %d "docs/%s"\n%s'):format(block.line, page, block.text))
      count = count + 1
    end
  end
  return count
end

-- Every ```lua block runs alone, in order: each in a fresh global table (reads fall back to the
-- process's globals, as a new script's would), so a block that uses a name an earlier one defined
-- fails; errors name the page's lines. iris.init() in a block returns the process's context.
local function runs(page)
  local count = 0
  for _, block in ipairs(blocks(page)) do
    local info = words(block.info)
    if info.lua and not info.norun then
      local name = page:sub(1, 3) == "../" and page:sub(4) or ("docs/" .. page)
      local chunk = assert(loadstring(("\n"):rep(block.line - 1) .. block.text, "@" .. name))
      local env = setmetatable({}, { __index = _G })
      env._G = env
      setfenv(chunk, env)
      chunk()
      count = count + 1
      collectgarbage() -- on every rank at the same point: the block's tensors go back together
    end
  end
  return count
end

iris.test("every cpp block of docs/device-api.md compiles", function()
  assert(compiles("device-api.md") >= 3, "the page lost its examples")
end)

iris.test("the README's first script runs", function()
  assert(runs("../README.md") == 1, "the README lost its example")
end)

iris.test("every lua block of docs/lua-api.md runs, the ring all-reduce included", function()
  compiles("lua-api.md")
  assert(runs("lua-api.md") >= 100, "the page lost its examples")
end)
