-- The REPL's chunk rules: what is complete, what needs more lines, what is an error.
local repl = require "iris.repl"

local function check(text, expected)
  local kind, message = repl.classify(text)
  if kind ~= expected then
    error(("classify(%q) is %s (%s), expected %s"):format(text, kind, tostring(message), expected), 2)
  end
  return message
end

check("1 + 1", "expression")
check("x", "expression")
check("f(1), g(2)", "expression")
check("'a' .. 1 -- a comment", "expression")
check("x = 1", "statements")
check("local t = {}", "statements")
check("for i = 1, 2 do end", "statements")
check("return 1", "statements")

-- Incomplete: the parser reached the end of the text.
check("for i = 1, 2 do", "incomplete")
check("local function f()\n  return 1", "incomplete")
check("x = {", "incomplete")
check("f(1,", "incomplete")
check("{", "incomplete") -- an expression that goes on: "{\n1, 2}" prints the table
check("s = [[first line", "incomplete")
check("--[[ a long comment", "incomplete")
check("if x then\n  y()\nelse", "incomplete")

-- Errors: more lines cannot help.
local message = check("x = = 1", "error")
assert(message:find("stdin:1:", 1, true), message)
check("for i = 1, 2 do\nend end", "error")
check("1 +* 2", "error")

-- Completed after more lines.
check("for i = 1, 2 do\n  print(i)\nend", "statements")
check("{\n1,\n2}", "expression")

-- Rank prefixes: every line, a final newline, nothing for empty output.
assert(repl.prefix_lines("a\nb\n", "[1] ") == "[1] a\n[1] b\n")
assert(repl.prefix_lines("a\nb", "[1] ") == "[1] a\n[1] b\n")
assert(repl.prefix_lines("a\n\nb\n", "[0] ") == "[0] a\n[0] \n[0] b\n")
assert(repl.prefix_lines("", "[0] ") == "")
assert(repl.prefix_lines("a\n", "") == "a\n")
assert(repl.prefix_lines("100%\n", "[2] ") == "[2] 100%\n")
print("chunk rules: ok")
