-- iris.plot.timeline: a trace file (iris.trace, docs/tracing.md) drawn as an SVG timeline, the way
-- Perfetto lays it out: a group of rows per rank (host, device kernels, one row per block that
-- recorded events), spans as bars coloured by category, instants as ticks, launch arrows from the
-- host's launch to the kernel on the device.
--   local svg = iris.plot.timeline(iris.json.decode(text), {title = "...", from_us = 0, to_us = 500})
local plot = require "iris.plot"

local M = {}

local COLOURS = {
  init = "#8c564b", memory = "#9467bd", compile = "#7f7f7f", launch = "#1f77b4", sync = "#d62728",
  collective = "#ff7f0e", kernel = "#2ca02c", device = "#17becf", user = "#e377c2", trace = "#bcbd22",
}

local need = plot.need

-- "1724.20 ms", "0.5 s": a tick's time with as many digits as the step between ticks needs.
local function time_text(us, step)
  local unit, scale = "us", 1
  if step >= 1e5 then
    unit, scale = "s", 1e6
  elseif step >= 100 then
    unit, scale = "ms", 1e3
  end
  local digits = math.max(0, math.ceil(-math.log10(step / scale) - 1e-9))
  return (("%%.%df %%s"):format(digits)):format(us / scale, unit)
end

-- The rows: every (pid, tid) with events, in rank order, host first, then the device, then blocks.
local function collect(trace, from_us, to_us)
  local names, rows, by_key, events = {}, {}, {}, {}
  for _, e in ipairs(trace.traceEvents) do
    if e.ph == "M" and e.name == "thread_name" then names[e.pid .. ":" .. e.tid] = e.args.name end
    if e.ph == "M" and e.name == "process_name" then names[e.pid .. ":"] = e.args.name end
  end
  local lo, hi = math.huge, -math.huge
  for _, e in ipairs(trace.traceEvents) do
    if e.ph == "X" or e.ph == "i" or e.ph == "s" or e.ph == "f" then
      local finish = e.ts + (e.dur or 0)
      if (not from_us or finish >= from_us) and (not to_us or e.ts <= to_us) then
        local key = e.pid .. ":" .. e.tid
        if not by_key[key] then
          by_key[key] = { pid = e.pid, tid = e.tid, name = names[key] or ("thread " .. e.tid) }
          rows[#rows + 1] = by_key[key]
        end
        events[#events + 1] = e
        if e.ph == "X" or e.ph == "i" then lo, hi = math.min(lo, e.ts), math.max(hi, finish) end
      end
    end
  end
  table.sort(rows, function(a, b)
    if a.pid ~= b.pid then return a.pid < b.pid end
    return a.tid < b.tid
  end)
  -- Spans inside spans (a compile inside a launch) go one level down, as Perfetto stacks them.
  table.sort(events, function(a, b)
    if a.ts ~= b.ts then return a.ts < b.ts end
    return (a.dur or 0) > (b.dur or 0)
  end)
  local open = {}
  for _, e in ipairs(events) do
    if e.ph == "X" then
      local key = e.pid .. ":" .. e.tid
      local stack = open[key] or {}
      open[key] = stack
      while #stack > 0 and stack[#stack] <= e.ts do stack[#stack] = nil end
      e.depth = #stack
      stack[#stack + 1] = e.ts + e.dur
      by_key[key].depth = math.max(by_key[key].depth or 0, e.depth)
    end
  end
  return rows, by_key, events, names, from_us or lo, to_us or hi
end

function M.render(trace, options)
  need(type(trace) == "table" and type(trace.traceEvents) == "table",
    "iris.plot.timeline(trace [, options]): trace must be a decoded trace file (iris.json.decode), with traceEvents")
  options = options or {}
  local rows, by_key, events, names, t0, t1 = collect(trace, options.from_us, options.to_us)
  need(#rows > 0, "iris.plot.timeline: the trace has no events in the range shown")
  if t1 <= t0 then t1 = t0 + 1 end
  local width = options.width or 1400
  local left, right, top = 210, 20, 52
  local pw = width - left - right
  local row_h, block_h, rank_gap = 24, 14, 22
  local y, previous_pid = top, nil
  for _, row in ipairs(rows) do
    if row.pid ~= previous_pid then
      y = y + rank_gap
      row.rank_title_y = y - 6
      previous_pid = row.pid
    end
    row.y = y
    row.h = row.tid >= 1000 and block_h or row_h
    row.level = row.h
    row.h = row.h * ((row.depth or 0) + 1)
    y = y + row.h + 2
  end
  local height = y + 56
  local svg = plot.svg(width, height, 11)
  local function add(...) svg:add(...) end
  local function sx(ts) return left + (ts - t0) / (t1 - t0) * pw end
  local esc = plot.escape
  if options.title then svg:text(12, 22, options.title, 'style="font-size:15px;font-weight:bold"') end
  -- Time axis, above and below.
  local times, step = plot.ticks(t0, t1, 10)
  for _, t in ipairs(times) do
    add('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eeeeee"/>', sx(t), top, sx(t), y)
    add('<text x="%.1f" y="%d" text-anchor="middle" fill="#555555">%s</text>', sx(t), top - 4, esc(time_text(t, step)))
    add('<text x="%.1f" y="%d" text-anchor="middle" fill="#555555">%s</text>', sx(t), y + 14, esc(time_text(t, step)))
  end
  for _, row in ipairs(rows) do
    if row.rank_title_y then
      add('<text x="8" y="%.1f" style="font-weight:bold">%s</text>', row.rank_title_y + 4,
        esc(names[row.pid .. ":"] or ("rank " .. row.pid)))
      add('<line x1="8" y1="%.1f" x2="%d" y2="%.1f" stroke="#bbbbbb"/>', row.rank_title_y + 8, width - right,
        row.rank_title_y + 8)
    end
    add('<rect x="%d" y="%.1f" width="%d" height="%d" fill="#f7f7f7"/>', left, row.y, pw, row.h)
    add('<text x="%d" y="%.1f" text-anchor="end">%s</text>', left - 8, row.y + row.h / 2 + 4, esc(row.name))
  end
  local flows = {}
  for _, e in ipairs(events) do
    local row = by_key[e.pid .. ":" .. e.tid]
    if e.ph == "X" then
      local x0 = math.max(left, sx(e.ts))
      local x1 = math.min(left + pw, sx(e.ts + e.dur))
      local w = math.max(1, x1 - x0)
      local fill = COLOURS[e.cat] or "#444444"
      local tip = ("%s (%s): %.3f us at %.3f us"):format(e.name, e.cat or "", e.dur, e.ts)
      if type(e.args) == "table" and e.args.line then tip = tip .. ", " .. e.args.line end
      local top_y = row.y + e.depth * row.level
      add('<rect class="span" x="%.2f" y="%.1f" width="%.2f" height="%d" fill="%s" stroke="#ffffff" stroke-width="0.5"><title>%s</title></rect>',
        x0, top_y + 1, w, row.level - 2, fill, esc(tip))
      if w > #e.name * 6.5 + 6 then
        add('<text x="%.1f" y="%.1f" fill="#ffffff" style="font-size:%dpx">%s</text>', x0 + 3, top_y + row.level / 2 + 4,
          row.level > 16 and 11 or 9, esc(e.name))
      end
    elseif e.ph == "i" then
      local x = sx(e.ts)
      add('<path class="instant" d="M%.1f %.1f l4 %d l-8 0 z" fill="%s"><title>%s</title></path>', x, row.y + 2, row.level - 4,
        COLOURS[e.cat] or "#444444", esc(e.name))
    else
      flows[e.id] = flows[e.id] or {}
      flows[e.id][e.ph] = { x = sx(e.ts), y = row.y + row.level / 2 }
    end
  end
  for _, f in pairs(flows) do
    if f.s and f.f then
      add('<line class="flow" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1f77b4" stroke-opacity="0.5"/>', f.s.x,
        f.s.y, f.f.x, f.f.y)
    end
  end
  -- Legend.
  local lx = left
  local categories = {}
  for name in pairs(COLOURS) do categories[#categories + 1] = name end
  table.sort(categories)
  for _, name in ipairs(categories) do
    add('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>', lx, height - 24, COLOURS[name])
    add('<text x="%d" y="%d">%s</text>', lx + 14, height - 15, name)
    lx = lx + 24 + #name * 7
  end
  return svg:document()
end

return M
