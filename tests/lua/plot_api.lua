-- iris.plot (SVG heat maps, line plots, trace timelines), iris.progress and iris.json: what they draw,
-- print and read, and the errors they give.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local xml = require "xml"
local json = require "iris.json"

local function fails(fn, pattern)
  local ok, message = pcall(fn)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(message):find(pattern), ("'%s' does not match '%s'"):format(tostring(message), pattern))
end

iris.test("the XML check refuses what is not well-formed", function()
  fails(function() xml.parse("<svg><g></svg></g>") end, "</svg> closes <g>")
  fails(function() xml.parse('<svg a="1" a="2"/>') end, "attribute a twice")
  fails(function() xml.parse("<svg>a & b</svg>") end, "bare '&'")
  fails(function() xml.parse("<svg/><svg/>") end, "a second root")
  fails(function() xml.parse("<svg><rect>") end, "never closed")
  fails(function() xml.parse("<svg x=1/>") end, "malformed attribute")
  iris.assert_equal(xml.count(xml.parse('<svg><rect class="a cell"/><rect class="cells"/></svg>'), "rect", "cell"), 1)
end)

iris.test("a heat map has one cell per matrix entry, empty ones marked, and escapes its text", function()
  local values = { [0] = { [0] = 1.5, [1] = 2 }, [1] = { [0] = nil, [1] = 4 } }
  local svg = iris.plot.heatmap {
    title = "GB/s <rank & rank>",
    panels = {
      { title = "a matrix whose title is long enough to be broken over several lines of the panel", rows = 2,
        columns = 2, value = function(r, c) return values[r][c] end },
      { title = "three by three", rows = 3, columns = 3, value = function(r, c) return r * 3 + c end,
        text = function(r, c) return ("%dx"):format(r * 3 + c) end },
    },
  }
  local doc = xml.parse(svg)
  iris.assert_equal(doc.root.name, "svg")
  iris.assert_equal(xml.count(doc, "rect", "cell"), 4 + 9)
  iris.assert_equal(xml.count(doc, "rect", "empty"), 1)
  assert(svg:find("GB/s &lt;rank &amp; rank&gt;", 1, true), "the title is escaped")
  assert(svg:find(">8x</text>", 1, true), "cells show their text")
  fails(function() iris.plot.heatmap { panels = {} } end, "panels must be a non%-empty list")
  fails(function() iris.plot.heatmap { panels = { { rows = 2, columns = 2 } } } end, "panel 1's value must be a function")
end)

-- Issue 27: a title longer than the picture is wide was cut at its right edge.
iris.test("a long title is broken into lines inside the picture, never cut", function()
  local title = "ctx.ccl.all_reduce against NCCL, 8 ranks, bfloat16 (cuda backend), with a title long enough "
    .. "to run past the right edge of the picture"
  local svg = iris.plot.lines { title = title, series = { { name = "a", points = { { 1, 1 }, { 2, 2 } } } } }
  local width = tonumber(svg:match('<svg[^>]* width="(%d+)"'))
  local words, lines = {}, 0
  for x, text in svg:gmatch('<text x="([%d.]+)" y="[%d.]+" style="font%-size:15px;font%-weight:bold">([^<]*)</text>') do
    lines = lines + 1
    assert(tonumber(x) + 9 * #text <= width, ("title line '%s' at x %s runs past the width %d"):format(text, x, width))
    for word in text:gmatch("%S+") do words[#words + 1] = word end
  end
  assert(lines >= 2, "the title is broken into lines")
  assert(table.concat(words, " ") == title, "the lines hold the whole title")
end)

iris.test("a line plot has a point per measurement and a line per series", function()
  local svg = iris.plot.lines {
    title = "sweep", x_label = "bytes", y_label = "GB/s", x_scale = "log2", x_text = iris.plot.bytes_text,
    series = {
      { name = "put", points = { { 4096, 1 }, { 65536, 10 }, { 1048576, 30 } } },
      { name = "copy engine", points = { { 4096, 2 }, { 65536, 20 }, { 1048576, 40 } } },
    },
  }
  local doc = xml.parse(svg)
  iris.assert_equal(xml.count(doc, "circle", "point"), 6)
  iris.assert_equal(xml.count(doc, "polyline"), 2)
  assert(svg:find(">1 MiB</text>", 1, true), "the x axis names sizes")
  iris.assert_equal(iris.plot.bytes_text(1536), "1.5 KiB")
  fails(function() iris.plot.lines { x_scale = "log2", series = { { points = { { 0, 1 } } } } } end,
    "x must be above 0 on a log2 axis")
  fails(function() iris.plot.lines { series = { { points = { { 1 } } } } } end, "must be {x, y} numbers")
  fails(function() iris.plot.lines { x_scale = "log10", series = { { points = { { 1, 1 } } } } } end, "x_scale is")
end)

iris.test("a timeline draws every span and instant of a trace, nested spans one level down", function()
  local trace = json.decode([[{"traceEvents": [
    {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "rank 0 (cpu)"}},
    {"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "host"}},
    {"name": "launch", "cat": "launch", "ph": "X", "pid": 0, "tid": 0, "ts": 10, "dur": 20, "args": {"line": "x.lua:3"}},
    {"name": "compile", "cat": "compile", "ph": "X", "pid": 0, "tid": 0, "ts": 12, "dur": 5},
    {"name": "k", "cat": "kernel", "ph": "X", "pid": 0, "tid": 1, "ts": 25, "dur": 30},
    {"name": "mark", "cat": "user", "ph": "i", "pid": 0, "tid": 0, "ts": 40, "s": "t"},
    {"name": "launch", "cat": "launch", "ph": "s", "pid": 0, "tid": 0, "ts": 11, "id": 1},
    {"name": "launch", "cat": "launch", "ph": "f", "pid": 0, "tid": 1, "ts": 25, "id": 1, "bp": "e"},
    {"name": "get", "cat": "device", "ph": "X", "pid": 1, "tid": 1000, "ts": 30, "dur": 2}
  ]}]])
  local doc = xml.parse(iris.plot.timeline(trace, { title = "t" }))
  iris.assert_equal(xml.count(doc, "rect", "span"), 4)
  iris.assert_equal(xml.count(doc, "path", "instant"), 1)
  iris.assert_equal(xml.count(doc, "line", "flow"), 1)
  local y = {}
  for _, e in ipairs(doc.elements) do
    if e.attributes.class == "span" then y[#y + 1] = tonumber(e.attributes.y) end
  end
  assert(y[2] > y[1], "the compile inside the launch is drawn below it")
  -- A window shows what overlaps it.
  iris.assert_equal(xml.count(xml.parse(iris.plot.timeline(trace, { from_us = 26, to_us = 35 })), "rect", "span"), 3)
  fails(function() iris.plot.timeline({}) end, "decoded trace file")
end)

iris.test("save writes SVG, and PNG only through a converter that is there", function()
  local path = os.tmpname() .. "-" .. iris.rank() .. ".svg"
  iris.plot.save(path, iris.plot.heatmap { panels = { { rows = 1, columns = 1, value = function() return 1 end } } })
  local file = assert(io.open(path, "rb"))
  xml.parse(file:read("*a"))
  file:close()
  os.remove(path)
  local png = os.tmpname() .. "-" .. iris.rank() .. ".png"
  local ok, message = pcall(iris.plot.save, png, '<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2"/>')
  if ok then
    local made = assert(io.open(png, "rb"))
    iris.assert_equal(made:read(4), "\137PNG")
    made:close()
    os.remove(png)
  else
    assert(message:find("a PNG needs rsvg%-convert"), message)
  end
  os.remove(png .. ".svg")
end)

iris.test("progress stays quiet for a short sweep and prints rank 0's steps after its delay", function()
  local written = {}
  local real = io.stdout
  io.stdout = { write = function(_, ...) for _, s in ipairs { ... } do written[#written + 1] = s end end, flush = function() end }
  local ok, failure = pcall(function()
    local quiet = iris.progress(3)
    for i = 1, 3 do quiet:step("step %d", i) end
    quiet:finish()
    iris.assert_equal(#written, 0)
    local loud = iris.progress(2, { after = 0, label = "sweeping" })
    loud:step("a %s", "pair")
    loud:step("another")
    loud:finish()
  end)
  io.stdout = real
  assert(ok, failure)
  local text = table.concat(written)
  if iris.rank() == 0 then
    assert(text:find("sweeping a pair (1/2)", 1, true), text)
    assert(text:find("sweeping another %(2/2, about %d+ s left%)"), text)
  else
    iris.assert_equal(text, "")
  end
  fails(function() iris.progress(-1) end, "total must be a whole number")
  fails(function() iris.progress(1, { after = "soon" }) end, "after must be seconds")
end)

iris.test("json decodes strictly and encodes what it decodes", function()
  local value = json.decode(' {"a": [1, 2.5e3, -0.5, true, false, null, "\\u00e9\\ud83d\\ude00\\n"], "b": {}, "c": []} ')
  iris.assert_equal(value.a[2], 2500)
  iris.assert_equal(value.a[6], json.null)
  iris.assert_equal(value.a[7], "\195\169\240\159\152\128\n")
  assert(json.is_array(value.c) and not json.is_array(value.b), "arrays and objects stay apart")
  iris.assert_equal(json.encode(json.decode('{"x": [1, "two", {"y": null}]}')), '{"x": [1, "two", {"y": null}]}')
  for _, bad in ipairs { "[1,]", "{\"a\" 1}", "01", "[1] 2", "\"\\ud800\"", "{'a': 1}", "nul", "1.", "-", "[\"a\nb\"]" } do
    fails(function() json.decode(bad) end, "^json: ")
  end
  fails(function() json.encode({ [true] = 1 }) end, "keys must be strings")
end)
