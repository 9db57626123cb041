-- `iris-lua test [options] [files or dirs...]`: runs test files on every rank and reports each case
-- once (the runner is iris.testing; docs/lua-testing.md).
local M = {}

-- The words after `test`; returns the exit code.
function M.main(...) return require("iris.testing").main(...) end

return M
