-- Checks docs/architecture.md's "What a change touches": each list names every file a change of its
-- kind touches today. Run by iris-lua (no iris.init): iris-lua check_where_to_add.lua ROOT [DOC].
--
-- A list is a "### title (example: NAME)" heading and a table whose first column holds the files in
-- backticks ("NAME" in a path stands for the new thing's name; a path ending in / is a folder). For each:
--   * every file exists, with the example's name for NAME;
--   * no other code file (src/, device/, kernels/, cmake/, include/, scripts/, labs/, CMakeLists.txt;
--     comments left out) names the example: the words the example is searched by (below) appear only
--     in the files of the list. A device primitive's users (scripts/, labs/) are not searched: they
--     call it, nothing there changes when one is added.
local root = assert(arg[1], "usage: iris-lua check_where_to_add.lua ROOT [DOC]")
local doc_path = arg[2] or (root .. "/docs/architecture.md")

local CODE_ROOTS = { "src", "device", "kernels", "cmake", "include", "scripts", "labs", "CMakeLists.txt" }
-- What each example is searched by in the code (its name as a word unless said here), and where.
local SEARCH = {
  hip = { words = { "IRIS_HAVE_HIP", "IRIS_WITH_HIP", "hip_backend", "HipBackend", "runtime/hip", "make_hip_backend" } },
  lab = { words = { "iris.cmd.lab", "cmd/lab" } },
  atomic_xchg = { roots = { "src", "device", "kernels", "cmake", "include", "CMakeLists.txt" } },
}

local failures = {}
local function fail(fmt, ...) failures[#failures + 1] = fmt:format(...) end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("*a")
  f:close()
  return text
end

local function exists(path)
  local ok = os.rename(path, path) -- true for files and folders alike
  return ok ~= nil
end

-- The lists of the section, in order: { title, example, files = { paths... } }.
local function lists_of(doc)
  local section = doc:match("\n## What a change touches\n(.-)\n## ") or doc:match("\n## What a change touches\n(.*)$")
  if not section then
    fail("%s has no section \"## What a change touches\"", doc_path)
    return {}
  end
  local lists, current = {}, nil
  for line in section:gmatch("[^\n]*") do
    local title, example = line:match("^### (.-) %(example: `?([%w_]+)`?%)%s*$")
    if title then
      current = { title = title, example = example, files = {} }
      lists[#lists + 1] = current
    elseif line:match("^###") then
      fail("%s: heading without an example: %s", doc_path, line)
    elseif current and line:match("^|") and not line:match("^|%s*%-%-") then
      local first = line:match("^|([^|]*)|")
      for path in first:gmatch("`([^`]+)`") do current.files[#current.files + 1] = path end
    end
  end
  return lists
end

-- The code with comments left out (well enough to search names in it).
local function code_of(path, text)
  if path:match("%.lua$") then
    text = text:gsub("%-%-%[(=*)%[.-%]%1%]", ""):gsub("%-%-[^\n]*", "")
  elseif path:match("%.cmake$") or path:match("CMakeLists%.txt$") then
    text = text:gsub("#[^\n]*", "")
  else
    text = text:gsub("/%*.-%*/", ""):gsub("//[^\n]*", "")
  end
  return text
end

local function names(text, word)
  if word:match("^[%a_][%w_]*$") then return text:find("%f[%w_]" .. word .. "%f[^%w_]") ~= nil end
  return text:find(word, 1, true) ~= nil
end

local function code_files_under(roots)
  local code_files = {}
  for _, top in ipairs(roots) do
    local pipe = io.popen(("find '%s/%s' -type f 2>/dev/null"):format(root, top))
    for path in pipe:lines() do
      local relative = path:sub(#root + 2)
      if relative:match("%.[%w]+$") or relative:match("CMakeLists%.txt$") then
        code_files[#code_files + 1] = relative
      end
    end
    pipe:close()
  end
  table.sort(code_files)
  return code_files
end

local function listed(files, path)
  for _, f in ipairs(files) do
    if f == path or (f:sub(-1) == "/" and path:sub(1, #f) == f) then return true end
  end
  return false
end

local doc = read(doc_path)
if not doc then
  io.stderr:write("cannot read " .. doc_path .. "\n")
  os.exit(2)
end
local lists = lists_of(doc)
for _, list in ipairs(lists) do
  local files = {}
  for i, path in ipairs(list.files) do
    files[i] = path:gsub("NAME", list.example)
    if not exists(root .. "/" .. files[i]) then
      fail("%s: \"%s\" lists %s, which does not exist (%s for %s)", doc_path, list.title, path, files[i], list.example)
    end
  end
  if #files == 0 then fail("%s: \"%s\" lists no files", doc_path, list.title) end
  local search = SEARCH[list.example] or {}
  local words = search.words or { list.example }
  for _, path in ipairs(code_files_under(search.roots or CODE_ROOTS)) do
    if not listed(files, path) then
      local code = code_of(path, read(root .. "/" .. path) or "")
      for _, word in ipairs(words) do
        if names(code, word) then
          fail("%s: \"%s\" does not list %s, whose code names %s", doc_path, list.title, path, word)
          break
        end
      end
    end
  end
end

if #failures > 0 then
  io.stderr:write(table.concat(failures, "\n") .. "\n")
  os.exit(1)
end
print(("where-to-add lists: %d checked"):format(#lists))
