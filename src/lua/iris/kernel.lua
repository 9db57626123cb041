-- iris.compile and launches (issue 4 brings the device header and run-time compilation).
local errors = require "iris.errors"
local M = {}
function M.install(iris)
  function iris.compile() errors.not_yet("iris.compile") end
  function iris.compile_file() errors.not_yet("iris.compile_file") end
  function iris.bench() errors.not_yet("iris.bench") end
end
return M
