-- Reads the trace a failed job left (failed_job_trace.sh): valid JSON (iris.json, strictly), every rank
-- listed, each present rank's own events, and the last event saying how the job ended. Prints
--   ranks with events: 0, 1
--   ended: <how> (exit code N)
local json = require "iris.json"
local path, ranks = arg[1], tonumber(arg[2])
local file = io.open(path, "rb")
if not file then print("no trace at " .. path) os.exit(1) end
local text = file:read("*a")
file:close()
local ok, trace = pcall(json.decode, text)
if not ok then print("not JSON: " .. tostring(trace)) os.exit(1) end
local with_events, last = {}, nil
for _, e in ipairs(trace.traceEvents) do
  if e.ph ~= "M" then
    with_events[e.pid] = true
    if last == nil or e.ts >= last.ts then last = e end
  end
end
local list = {}
for r = 0, ranks - 1 do if with_events[r] then list[#list + 1] = tostring(r) end end
print(("metadata ranks: %d"):format(#trace.metadata.ranks))
print("ranks with events: " .. table.concat(list, ", "))
if last and last.name == "iris-lua: the job ended" then
  print(("ended: %s (exit code %d)"):format(last.args.how, last.args.exit_code))
else
  print("the last event is " .. (last and last.name or "none"))
end
