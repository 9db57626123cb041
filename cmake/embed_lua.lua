-- Build helper: compiles one Lua module to LuaJIT bytecode (debug info kept) under the chunk name
-- "=iris/tensor.lua", and writes it as a C header. The "=" chunk name lets the iris module tell its
-- own stack frames from the user's ("@script.lua") when it blames the user's line for an error.
-- usage: luajit embed_lua.lua <source.lua> <chunk name> <C identifier> <output.h>
local source_path, chunk_name, identifier, output_path = ...
local source = assert(io.open(source_path, "rb")):read("*a")
local chunk, err = loadstring(source, "=" .. chunk_name)
if not chunk then
  io.stderr:write(err, "\n")
  os.exit(1)
end
local bytecode = string.dump(chunk)
local out = { ("#define %s_SIZE %d\nstatic const unsigned char %s[] = {\n"):format(identifier, #bytecode, identifier) }
for i = 1, #bytecode, 24 do
  local row = {}
  for j = i, math.min(i + 23, #bytecode) do row[#row + 1] = tostring(bytecode:byte(j)) end
  out[#out + 1] = table.concat(row, ",") .. ",\n"
end
out[#out + 1] = "};\n"
assert(io.open(output_path, "wb")):write(table.concat(out))
