-- A strict XML 1.0 well-formedness check for the SVG files iris.plot writes (the tests count their
-- elements too). Not a full parser: no DTD, no namespaces checked; but it refuses what a browser's
-- XML parser refuses in such files: unbalanced or crossed tags, unquoted or repeated attributes,
-- bare '&' or '<', unknown entities, control characters, text outside the root, a second root.
--   local xml = require "xml"
--   local doc = xml.parse(text)        -- raises "xml: <what> at line N"
--   doc.root.name, xml.count(doc, "rect", "cell")  -- elements named rect whose class has "cell"
local M = {}

local function fail(text, at, what)
  local _, lines = text:sub(1, at):gsub("\n", "")
  error(("xml: %s at line %d"):format(what, lines + 1), 0)
end

local ENTITIES = { amp = true, lt = true, gt = true, quot = true, apos = true }

-- Checks character data and attribute values: entities known, no '<', no control characters.
local function check_chars(text, from, to, in_attribute)
  local chunk = text:sub(from, to)
  local bad = chunk:find("[%z\1-\8\11\12\14-\31]")
  if bad then fail(text, from + bad - 1, "a control character") end
  if in_attribute and chunk:find("<", 1, true) then fail(text, from, "'<' in an attribute value") end
  local at = 1
  while true do
    local amp = chunk:find("&", at, true)
    if not amp then return end
    local name = chunk:match("^&([#%w]+);", amp)
    if not name or not (ENTITIES[name] or name:match("^#%d+$") or name:match("^#x%x+$")) then
      fail(text, from + amp - 1, "a bare '&' or an unknown entity")
    end
    at = amp + 1
  end
end

local NAME = "[%a_:][%w_:%.%-]*"

function M.parse(text)
  local at = 1
  local doc = { elements = {} }
  local stack = {}
  local declaration = text:match("^<%?xml[^?]*%?>()")
  if declaration then at = declaration end
  while true do
    local lt = text:find("<", at, true)
    local stop = lt and lt - 1 or #text
    if #stack == 0 then
      if text:sub(at, stop):find("%S") then fail(text, at, "text outside the root element") end
    else
      check_chars(text, at, stop, false)
    end
    if not lt then break end
    if text:sub(lt, lt + 3) == "<!--" then
      local close = text:find("-->", lt + 4, true)
      if not close then fail(text, lt, "an unterminated comment") end
      at = close + 3
    elseif text:sub(lt, lt + 1) == "</" then
      local name, after = text:match("^</(" .. NAME .. ")%s*>()", lt)
      if not name then fail(text, lt, "a malformed end tag") end
      local open = table.remove(stack)
      if not open or open.name ~= name then
        fail(text, lt, ("</%s> closes <%s>"):format(name, open and open.name or "nothing"))
      end
      at = after
    else
      local name, rest = text:match("^<(" .. NAME .. ")()", lt)
      if not name then fail(text, lt, "a malformed start tag") end
      if #stack == 0 and doc.root then fail(text, lt, "a second root element") end
      local element = { name = name, attributes = {}, parent = stack[#stack] }
      local i = rest
      while true do
        local space_end = text:match("^%s*()", i)
        if text:sub(space_end, space_end) == ">" then
          i = space_end + 1
          stack[#stack + 1] = element
          break
        elseif text:sub(space_end, space_end + 1) == "/>" then
          i = space_end + 2
          break
        end
        if space_end == i then fail(text, i, "attributes must be separated by spaces") end
        local key, quote, after_quote = text:match("^(" .. NAME .. ")%s*=%s*([\"'])()", space_end)
        if not key then fail(text, space_end, "a malformed attribute in <" .. name .. ">") end
        local close = text:find(quote, after_quote, true)
        if not close then fail(text, after_quote, "an unterminated attribute value") end
        if element.attributes[key] then fail(text, space_end, "attribute " .. key .. " twice") end
        check_chars(text, after_quote, close - 1, true)
        element.attributes[key] = text:sub(after_quote, close - 1)
        i = close + 1
      end
      doc.root = doc.root or element
      doc.elements[#doc.elements + 1] = element
      at = i
    end
  end
  if #stack > 0 then fail(text, #text, "<" .. stack[#stack].name .. "> is never closed") end
  if not doc.root then fail(text, 1, "no root element") end
  return doc
end

-- How many elements named `name` have `class` among their classes (any, when class is nil).
function M.count(doc, name, class)
  local n = 0
  for _, e in ipairs(doc.elements) do
    if e.name == name then
      local classes = " " .. (e.attributes.class or "") .. " "
      if not class or classes:find(" " .. class .. " ", 1, true) then n = n + 1 end
    end
  end
  return n
end

return M
