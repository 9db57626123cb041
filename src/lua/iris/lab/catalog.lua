-- The labs compiled into the binary: each lab's checker and skeleton (labs/NN-name/) and its text
-- (docs/labs/NN-name.md), embedded as text (cmake/IrisEmbedText.cmake) so `iris-lua lab` works from an
-- installed binary anywhere. The reference solutions are not embedded: they are for teachers.
local files = require "iris.lab.files"

local M = {}

-- Every lab, by number: { number = 5, id = "05", slug = "05-one-shot" }.
function M.all()
  local labs = {}
  for path in pairs(files) do
    local slug = path:match("^labs/(%d%d%-[%w%-]+)/check%.lua$")
    if slug then labs[#labs + 1] = { number = tonumber(slug:sub(1, 2)), id = slug:sub(1, 2), slug = slug } end
  end
  table.sort(labs, function(a, b) return a.number < b.number end)
  return labs
end

-- The lab a word names ("5", "05", "05-one-shot" or "one-shot"), or nil.
function M.find(word)
  for _, lab in ipairs(M.all()) do
    if tonumber(word) == lab.number or word == lab.slug or word == lab.slug:sub(4) then return lab end
  end
  return nil
end

-- The lab's skeleton, as the student starts from it.
function M.skeleton(lab) return files["labs/" .. lab.slug .. "/skeleton.lua"] end

-- The lab's text (docs/labs/NN-name.md).
function M.text(lab) return files["docs/labs/" .. lab.slug .. ".md"] end

-- The lab's definition: what its check.lua returns (iris.lab.harness.define). Its chunk is named as
-- iris's own, so errors blame the student's lines rather than the checker's.
function M.definition(lab)
  local chunk = assert(loadstring(files["labs/" .. lab.slug .. "/check.lua"], "=iris/labs/" .. lab.slug .. "/check.lua"))
  local definition = chunk()
  definition.id, definition.slug = lab.id, lab.slug
  return definition
end

return M
