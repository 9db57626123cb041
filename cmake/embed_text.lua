-- Build helper: writes a Lua module that returns a text file's contents, in a long bracket of a level
-- the text does not contain.
-- usage: luajit embed_text.lua <input> <output.lua>
local input, output = ...
local text = assert(io.open(input, "rb")):read("*a")
local level = 0
while text:find("]" .. ("="):rep(level) .. "]", 1, true) do level = level + 1 end
local equals = ("="):rep(level)
-- Lua drops the newline right after an opening long bracket, so the string is the text exactly.
local out = assert(io.open(output, "wb"))
out:write("-- Generated from ", input:match("[^/]*$"), " by cmake/embed_text.lua.\nreturn [", equals, "[\n", text, "]",
  equals, "]\n")
out:close()
