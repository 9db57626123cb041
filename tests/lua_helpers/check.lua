-- Small assertions for the tests/lua scripts (plain scripts: an error fails the test). They live outside
-- tests/lua so that `iris-lua test tests/lua` does not run them as tests. Load with
--   package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
--   local check = require "check"
local M = {}

local function show(v)
  if type(v) == "string" then return ("%q"):format(v) end
  return tostring(v)
end

function M.equal(got, expected, what)
  if got ~= expected then
    error(("%s: got %s, expected %s"):format(what or "value", show(got), show(expected)), 2)
  end
end

function M.truthy(value, what)
  if not value then error((what or "condition") .. " is false", 2) end
end

function M.near(got, expected, tolerance, what)
  if not (math.abs(got - expected) <= tolerance) then
    error(("%s: got %.17g, expected %.17g within %g"):format(what or "value", got, expected, tolerance), 2)
  end
end

-- Element-wise equality of two Lua arrays.
function M.same_list(got, expected, what)
  if #got ~= #expected then
    error(("%s: %d values, expected %d"):format(what or "list", #got, #expected), 2)
  end
  for i = 1, #expected do
    local a, b = got[i], expected[i]
    if a ~= b and not (a ~= a and b ~= b) then
      error(("%s: at %d got %s, expected %s"):format(what or "list", i, show(a), show(b)), 2)
    end
  end
end

-- fn(...) must raise an error whose message contains `fragment` (plain text); returns the message.
function M.fails(fragment, fn, ...)
  local ok, message = pcall(fn, ...)
  if ok then error(("expected an error containing %q, but the call succeeded"):format(fragment), 2) end
  message = tostring(message)
  if not message:find(fragment, 1, true) then
    error(("expected an error containing %q, got: %s"):format(fragment, message), 2)
  end
  return message
end

-- The same value on every rank (through ctx:broadcast from rank 0).
function M.same_on_all_ranks(ctx, value, what)
  local from_root = ctx:broadcast(value, 0)
  if from_root ~= value then
    error(("%s: rank %d has %s, rank 0 has %s"):format(what or "value", ctx.rank, show(value), show(from_root)), 2)
  end
end

return M
