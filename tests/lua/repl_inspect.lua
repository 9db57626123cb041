-- What the REPL offers at Tab and shows of tables (iris.inspect, issue 13): completions of globals,
-- fields and methods, tensors' methods included; tables printed as their contents.
local inspect = require "iris.inspect"
local ctx = iris.init {}

local function completions(word, env) return table.concat(inspect.completions(word, env), " ") end

iris.test("globals, keywords, fields and methods complete", function()
  local env = setmetatable({ ctx = ctx, t = ctx:zeros(2), values = { alpha = 1, beta = 2, _hidden = 3 } },
    { __index = _G })
  iris.assert_equal(completions("pri", env), "print")
  iris.assert_equal(completions("ret", env), "return")
  iris.assert_equal(completions("iris.assert_", env), "iris.assert_allclose iris.assert_equal")
  iris.assert_equal(completions("ctx:zero", env), "ctx:zeros ctx:zeros_like")
  iris.assert_equal(completions("ctx.wor", env), "ctx.world_size")
  iris.assert_equal(completions("t:resh", env), "t:reshape")
  iris.assert_equal(completions("t:add", env), "t:add_")
  iris.assert_equal(completions("t.dty", env), "t.dtype")
  iris.assert_equal(completions("values.", env), "values.alpha values.beta")
  iris.assert_equal(completions("values._", env), "values._hidden")
  iris.assert_equal(completions("values:", env), "") -- after ':' only functions
  iris.assert_equal(completions("nothing.here", env), "")
end)

iris.test("tables print as their contents, modules included", function()
  iris.assert_equal(inspect.show({ 1, 2, "three" }), '{ 1, 2, "three" }')
  iris.assert_equal(inspect.show({}), "{}")
  iris.assert_equal(inspect.show({ b = true, a = { 1 }, f = print }), "{ a = {...1}, b = true, f = <function> }")
  local listing = inspect.show(iris)
  assert(listing:find("init = <function>", 1, true), listing)
  assert(listing:find('version = "', 1, true), listing)
  for line in listing:gmatch("[^\n]+") do assert(#line <= 100, "a line longer than 100: " .. line) end
  iris.assert_equal(inspect.shows_contents(iris), true)
  iris.assert_equal(inspect.shows_contents(ctx), false) -- it has its own tostring
  iris.assert_equal(inspect.shows_contents(ctx:zeros(1)), false)
end)
