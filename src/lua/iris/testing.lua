-- iris.test, iris.skip and the `iris-lua test` runner (issue 5).
local errors = require "iris.errors"
local M = {}
function M.install(iris)
  function iris.test() errors.not_yet("iris.test") end
  function iris.skip() errors.not_yet("iris.skip") end
end
function M.main() errors.not_yet("iris-lua test") end
return M
