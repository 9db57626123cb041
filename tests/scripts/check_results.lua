-- Checks what --csv and --json wrote (results_test.sh): the CSV's header has every column named, each
-- of its lines as many fields as the header, `rows` lines in all; the JSON parses strictly and has the
-- script's name, its options and `rows` rows, each with the columns.
--   iris-lua check_results.lua FILE.csv FILE.json ROWS COLUMN,COLUMN,...
local json = require "iris.json"
local csv_path, json_path, rows, columns = arg[1], arg[2], tonumber(arg[3]), arg[4]

local function read(path)
  local file = assert(io.open(path, "rb"), "no file " .. path)
  local text = file:read("*a")
  file:close()
  return text
end

-- A CSV line's fields (quoted fields may hold commas and doubled quotes).
local function fields(line)
  local out, i = {}, 1
  while i <= #line + 1 do
    if line:sub(i, i) == '"' then
      local value, j = "", i + 1
      while true do
        local q = assert(line:find('"', j, true), "unterminated quote in " .. line)
        value = value .. line:sub(j, q - 1)
        if line:sub(q + 1, q + 1) == '"' then
          value, j = value .. '"', q + 2
        else
          i = q + 2
          break
        end
      end
      out[#out + 1] = value
    else
      local comma = line:find(",", i, true) or (#line + 1)
      out[#out + 1] = line:sub(i, comma - 1)
      i = comma + 1
    end
  end
  return out
end

local lines = {}
for line in read(csv_path):gmatch("[^\n]+") do lines[#lines + 1] = line end
local header = fields(lines[1])
local index = {}
for k, name in ipairs(header) do index[name] = k end
for name in columns:gmatch("[^,]+") do assert(index[name], "the CSV has no column " .. name .. ": " .. lines[1]) end
assert(#lines - 1 == rows, ("the CSV has %d rows, expected %d"):format(#lines - 1, rows))
for n = 2, #lines do
  assert(#fields(lines[n]) == #header, "line " .. n .. " has another number of fields: " .. lines[n])
end

local document = json.decode(read(json_path))
assert(type(document.script) == "string" and document.script ~= "", "the JSON names no script")
assert(type(document.options) == "table", "the JSON has no options")
assert(json.is_array(document.rows) and #document.rows == rows,
  ("the JSON has %d rows, expected %d"):format(#document.rows or -1, rows))
for _, row in ipairs(document.rows) do
  for name in columns:gmatch("[^,]+") do assert(row[name] ~= nil, "a JSON row lacks " .. name) end
end
print(("check_results: %s and %s hold %d rows with %s"):format(csv_path:match("[^/]*$"), json_path:match("[^/]*$"),
  rows, columns))
