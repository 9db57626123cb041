-- Checks an SVG file a script drew with --plot: well-formed XML (tests/lua_helpers/xml.lua) with
-- the expected number of elements of one kind.
--   iris-lua check_svg.lua FILE ELEMENT CLASS COUNT      (CLASS "-": any)
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local xml = require "xml"
local path, element, class, count = arg[1], arg[2], arg[3], tonumber(arg[4])
local file = assert(io.open(path, "rb"))
local doc = xml.parse(file:read("*a"))
file:close()
assert(doc.root.name == "svg", "the root element is <" .. doc.root.name .. ">, not <svg>")
local found = xml.count(doc, element, class ~= "-" and class or nil)
if found ~= count then
  io.stderr:write(("check_svg: %s has %d <%s class=%s>, expected %d\n"):format(path, found, element, class, count))
  os.exit(1)
end
print(("check_svg: %s is well-formed with %d <%s class=%s>"):format(path, found, element, class))
