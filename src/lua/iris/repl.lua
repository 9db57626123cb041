-- The interactive REPL across all ranks (issue 6).
local errors = require "iris.errors"
local M = {}
function M.run() errors.not_yet("the REPL") end
return M
