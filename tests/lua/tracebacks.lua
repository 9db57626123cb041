-- iris.errors.traceback: the frames a user reads under an error (scripts, the REPL and the runner all
-- print it): iris's frames and the C functions around them go, the user's own C calls stay, a usage
-- error has none, and an error iris did not mean to raise keeps every frame (issue 13).
local errors = require "iris.errors"

-- The traceback an error handler sees for fn's error.
local function traceback_of(fn)
  local _, traceback = xpcall(fn, function(message)
    local text = errors.traceback(message, 2) -- (not a tail call, which would take this frame away)
    return text
  end)
  return traceback
end

-- A function that looks like part of iris (its chunk is named as the embedded modules are).
local inside_iris = assert(loadstring([[
local errors = require "iris.errors"
return {
  raise = function() errors.raise("invalid_argument", "bad value") end,
  bug = function() local missing; return missing.field end,
  call = function(fn) fn() end,
}]], "=iris/pretend.lua"))()

iris.test("iris's frames are left out of a deliberate error", function()
  local function user() inside_iris.raise() end
  local traceback = traceback_of(function() user() end)
  assert(not traceback:find("iris/", 1, true), traceback)
  assert(not traceback:find("in function 'error'", 1, true), traceback)
  assert(traceback:find("^stack traceback:\n\t[^\n]*tracebacks.lua:%d+: in function 'user'"), traceback)
end)

iris.test("the user's frames around iris's stay, and the user's own C calls", function()
  local traceback = traceback_of(function()
    inside_iris.call(function() pcall(string.rep); error("user error") end)
  end)
  assert(traceback:find("^stack traceback:\n\t%[C%]: in function 'error'\n\t[^\n]*tracebacks.lua:%d+:"), traceback)
  assert(not traceback:find("iris/pretend.lua", 1, true), traceback)
end)

iris.test("an error iris did not raise on purpose keeps iris's frames", function()
  local traceback = traceback_of(function() inside_iris.bug() end)
  assert(traceback:find("iris/pretend.lua:4:", 1, true), traceback)
end)

iris.test("a usage error has no traceback", function()
  local traceback = traceback_of(function() errors.raise("usage", "bad option") end)
  assert(traceback == "", traceback)
end)
