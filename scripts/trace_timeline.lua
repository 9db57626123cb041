-- trace_timeline: draws a trace file (iris-lua --trace FILE, iris.trace) as an SVG timeline, for a look without Perfetto.
-- usage: iris-lua scripts/trace_timeline.lua TRACE.json OUT.svg [FROM_US TO_US] [--title TEXT]
-- Perfetto (ui.perfetto.dev) or chrome://tracing open the trace itself; this draws the same events
-- (a group of rows per rank: host, device kernels, one row per block that recorded events), optionally
-- only those between FROM_US and TO_US (microseconds, as the file counts them). OUT.png works where
-- rsvg-convert or ImageMagick is installed.
local json = require "iris.json"

local positional, title = {}, nil
local i = 1
while arg[i] do
  if arg[i] == "--title" then
    title, i = arg[i + 1], i + 2
  else
    positional[#positional + 1], i = arg[i], i + 1
  end
end
local input, output = positional[1], positional[2]
if not input or not output then
  io.stderr:write("usage: iris-lua scripts/trace_timeline.lua TRACE.json OUT.svg [FROM_US TO_US] [--title TEXT]\n")
  os.exit(2)
end
local file, why = io.open(input, "rb")
if not file then
  io.stderr:write("trace_timeline: ", why, "\n")
  os.exit(2)
end
local trace = json.decode(file:read("*a"))
file:close()
iris.plot.save(output, iris.plot.timeline(trace, {
  title = title or input, from_us = tonumber(positional[3]), to_us = tonumber(positional[4]),
}))
print(("trace_timeline: %s drawn into %s"):format(input, output))
