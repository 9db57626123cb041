-- iris.plot: pictures as self-contained SVG (one file, no scripts, no fonts to fetch; any browser
-- opens it), or PNG where a converter is installed. docs/tracing.md and docs/patterns.md show them.
--
--   iris.plot.heatmap{title=, panels = {{title=, rows=, columns=, value = function(r, c) ... end,
--                      text = function(r, c) ... end, row_label=, column_label=}, ...}}
--       rank-by-rank matrices: one panel per table, each with its own colour scale
--   iris.plot.lines{title=, x_label=, y_label=, x_scale = "log2" | "linear", x_text = function(x) ... end,
--                    series = {{name=, points = {{x, y}, ...}}, ...}}
--       size sweeps: one line per series
--   iris.plot.timeline(trace [, {title=}])   a trace file's events (iris.json.decode of the file)
--   iris.plot.save(file, svg)                 "*.png": converted by rsvg-convert or ImageMagick
-- Each returns the SVG text. Matrix cells are <rect class="cell"> (an empty cell also has class
-- "empty"), line points <circle class="point">, timeline events <rect class="span"> and <path class="instant">.
local errors = require "iris.errors"

local M = {}

local FONT = "font-family:DejaVu Sans,Verdana,Arial,sans-serif"

---------------------------------------------------------------------------------------------------
-- SVG text

local XML_ESCAPES = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&apos;" }

function M.escape(text)
  -- Characters XML 1.0 forbids (control characters) would make the file unreadable: drop them.
  return (tostring(text):gsub("[%z\1-\8\11\12\14-\31]", ""):gsub("[&<>\"']", XML_ESCAPES))
end
local escape = M.escape

local Svg = {}
Svg.__index = Svg

-- A picture of width x height pixels, text `font_px` high unless a style says otherwise (default 12);
-- iris.timeline draws with it too.
local function new_svg(width, height, font_px)
  return setmetatable({ width = width, height = height, font_px = font_px or 12, parts = {} }, Svg)
end
M.svg = new_svg

function Svg:add(fmt, ...)
  self.parts[#self.parts + 1] = select("#", ...) > 0 and fmt:format(...) or fmt
end

function Svg:text(x, y, text, style)
  self:add('<text x="%.1f" y="%.1f"%s>%s</text>', x, y, style and (' ' .. style) or "", escape(text))
end

function Svg:document()
  return table.concat {
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" style="%s;font-size:%dpx">\n')
      :format(self.width, self.height, self.width, self.height, FONT, self.font_px),
    ('<rect width="%d" height="%d" fill="#ffffff"/>\n'):format(self.width, self.height),
    table.concat(self.parts, "\n"), "\n</svg>\n",
  }
end

---------------------------------------------------------------------------------------------------
-- Scales

-- Viridis, sampled: dark blue (low) to yellow (high); readable in grey too.
local STOPS = { { 0, 68, 1, 84 }, { 0.25, 59, 82, 139 }, { 0.5, 33, 145, 140 }, { 0.75, 94, 201, 98 },
  { 1, 253, 231, 37 } }

local function colour(f)
  f = math.max(0, math.min(1, f))
  for i = 2, #STOPS do
    local a, b = STOPS[i - 1], STOPS[i]
    if f <= b[1] then
      local t = (f - a[1]) / (b[1] - a[1])
      local r, g, bl = a[2] + (b[2] - a[2]) * t, a[3] + (b[3] - a[3]) * t, a[4] + (b[4] - a[4]) * t
      return ("#%02x%02x%02x"):format(r, g, bl), (0.299 * r + 0.587 * g + 0.114 * bl) / 255
    end
  end
end

-- Round steps for an axis from lo to hi: about `count` ticks at 1, 2 or 5 times a power of ten.
local function ticks(lo, hi, count)
  if hi <= lo then hi = lo + 1 end
  local raw = (hi - lo) / count
  local power = 10 ^ math.floor(math.log10(raw))
  local step = power
  for _, m in ipairs { 1, 2, 5, 10 } do
    if raw <= m * power then
      step = m * power
      break
    end
  end
  local out = {}
  for v = math.ceil(lo / step) * step, hi + step * 1e-9, step do out[#out + 1] = v end
  return out, step
end
M.ticks = ticks

local function number_text(v)
  if v == 0 then return "0" end
  if math.abs(v) >= 100 or v % 1 == 0 then return ("%.0f"):format(v) end
  if math.abs(v) >= 10 then return ("%.1f"):format(v) end
  return ("%.2f"):format(v)
end

---------------------------------------------------------------------------------------------------
-- Argument checks

-- `text` in lines of at most `width` characters, broken between words.
local function wrap(text, width)
  local lines, line = {}, ""
  for word in tostring(text):gmatch("%S+") do
    if line ~= "" and #line + 1 + #word > width then
      lines[#lines + 1] = line
      line = word
    else
      line = line == "" and word or (line .. " " .. word)
    end
  end
  if line ~= "" then lines[#lines + 1] = line end
  return lines
end

local function need(cond, fmt, ...)
  if not cond then errors.raise("invalid_argument", fmt, ...) end
end
M.need = need

local function check_function(what, name, f)
  need(type(f) == "function", "%s: %s must be a function, got a %s", what, name, type(f))
end

---------------------------------------------------------------------------------------------------
-- Heat maps

function M.heatmap(spec)
  local what = "iris.plot.heatmap"
  need(type(spec) == "table" and type(spec.panels) == "table" and #spec.panels > 0,
    "%s{title=, panels = {...}}: panels must be a non-empty list", what)
  local panels = spec.panels
  local n = 0
  for i, p in ipairs(panels) do
    need(type(p) == "table" and type(p.rows) == "number" and type(p.columns) == "number" and p.rows >= 1
      and p.columns >= 1, "%s: panel %d needs rows and columns (numbers >= 1)", what, i)
    check_function(what, ("panel %d's value"):format(i), p.value)
    n = math.max(n, p.rows, p.columns)
  end
  local cell_w = math.max(18, math.min(72, math.floor(480 / n)))
  local cell_h = math.max(14, math.min(40, math.floor(cell_w * 0.6)))
  local left = 78
  local panel_w = math.max(left + cell_w * n + 40, 250)
  local titles, most = {}, 0
  for i, p in ipairs(panels) do
    titles[i] = p.title and wrap(p.title, math.floor((panel_w - 24) / 7.5)) or {}
    most = math.max(most, #titles[i])
  end
  local top = 40 + 15 * most + (n > 0 and 12 or 0)
  local panel_h = top + cell_h * n + 64
  local per_row = math.min(#panels, 3)
  local title_w = spec.title and #spec.title * 9.5 + 30 or 0  -- bold 16 px: about 9.5 px a character
  local svg = new_svg(math.ceil(math.max(panel_w * per_row + 20, title_w)), 36 + panel_h * math.ceil(#panels / per_row))
  if spec.title then svg:text(12, 24, spec.title, 'style="font-size:16px;font-weight:bold"') end
  for i, p in ipairs(panels) do
    local x0 = 10 + ((i - 1) % per_row) * panel_w
    local y0 = 36 + math.floor((i - 1) / per_row) * panel_h
    local lo, hi = math.huge, -math.huge
    for r = 0, p.rows - 1 do
      for c = 0, p.columns - 1 do
        local v = p.value(r, c)
        if type(v) == "number" and v == v then lo, hi = math.min(lo, v), math.max(hi, v) end
      end
    end
    svg:add('<g class="panel">')
    for k, line in ipairs(titles[i]) do svg:text(x0, y0 + 14 * k, line, k == 1 and 'style="font-weight:bold"' or nil) end
    if p.column_label then svg:text(x0 + left, y0 + top - 26, p.column_label, 'fill="#555555"') end
    if p.row_label then
      svg:text(x0 + 12, y0 + top + cell_h * p.rows / 2, p.row_label,
        ('fill="#555555" text-anchor="middle" transform="rotate(-90 %.1f %.1f)"'):format(x0 + 12, y0 + top + cell_h * p.rows / 2))
    end
    for c = 0, p.columns - 1 do
      svg:text(x0 + left + (c + 0.5) * cell_w, y0 + top - 8, p.column_names and p.column_names(c) or ("rank " .. c),
        'text-anchor="middle"')
    end
    for r = 0, p.rows - 1 do
      local y = y0 + top + r * cell_h
      svg:text(x0 + left - 6, y + cell_h / 2 + 4, p.row_names and p.row_names(r) or ("rank " .. r), 'text-anchor="end"')
      for c = 0, p.columns - 1 do
        local x = x0 + left + c * cell_w
        local v = p.value(r, c)
        local label = p.text and p.text(r, c) or (type(v) == "number" and number_text(v)) or "-"
        if type(v) == "number" and v == v then
          local fill, light = colour(hi > lo and (v - lo) / (hi - lo) or 1)
          svg:add('<rect class="cell" x="%.1f" y="%.1f" width="%d" height="%d" fill="%s" stroke="#ffffff"><title>%s</title></rect>',
            x, y, cell_w, cell_h, fill, escape(("row %d, column %d: %s"):format(r, c, label)))
          if cell_w >= 36 then
            svg:text(x + cell_w / 2, y + cell_h / 2 + 4, label,
              ('text-anchor="middle" fill="%s"'):format(light > 0.5 and "#000000" or "#ffffff"))
          end
        else
          svg:add('<rect class="cell empty" x="%.1f" y="%.1f" width="%d" height="%d" fill="#eeeeee" stroke="#ffffff"/>',
            x, y, cell_w, cell_h)
          if cell_w >= 36 then svg:text(x + cell_w / 2, y + cell_h / 2 + 4, "-", 'text-anchor="middle" fill="#999999"') end
        end
      end
    end
    if lo <= hi then -- the colour bar: this panel's lowest to highest value
      local by = y0 + top + cell_h * p.rows + 14
      local bw = cell_w * p.columns
      for k = 0, 19 do
        svg:add('<rect x="%.1f" y="%.1f" width="%.2f" height="10" fill="%s"/>', x0 + left + bw * k / 20, by, bw / 20 + 0.3,
          (colour(k / 19)))
      end
      svg:text(x0 + left, by + 24, number_text(lo))
      svg:text(x0 + left + bw, by + 24, number_text(hi), 'text-anchor="end"')
      if p.unit then svg:text(x0 + left + bw / 2, by + 24, p.unit, 'text-anchor="middle" fill="#555555"') end
    end
    svg:add("</g>")
  end
  return svg:document()
end

---------------------------------------------------------------------------------------------------
-- Line plots

local PALETTE = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f" }

-- "1 KiB", "256 MiB": byte counts on a log2 axis.
function M.bytes_text(x)
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local u = 1
  while x >= 1024 and u < #units do
    x, u = x / 1024, u + 1
  end
  return (x % 1 == 0 and "%d %s" or "%.1f %s"):format(x, units[u])
end

function M.lines(spec)
  local what = "iris.plot.lines"
  need(type(spec) == "table" and type(spec.series) == "table" and #spec.series > 0,
    "%s{title=, series = {{name=, points = {{x, y}, ...}}, ...}}: series must be a non-empty list", what)
  local log2 = (spec.x_scale or "linear") == "log2"
  need(spec.x_scale == nil or spec.x_scale == "log2" or spec.x_scale == "linear",
    "%s: x_scale is \"log2\" or \"linear\", got %s", what, tostring(spec.x_scale))
  local xlo, xhi, yhi = math.huge, -math.huge, 0
  for i, s in ipairs(spec.series) do
    need(type(s) == "table" and type(s.points) == "table", "%s: series %d needs points", what, i)
    for j, pt in ipairs(s.points) do
      need(type(pt) == "table" and type(pt[1]) == "number" and type(pt[2]) == "number",
        "%s: series %d, point %d must be {x, y} numbers", what, i, j)
      need(not log2 or pt[1] > 0, "%s: series %d, point %d: x must be above 0 on a log2 axis", what, i, j)
      local x = log2 and math.log(pt[1]) / math.log(2) or pt[1]
      xlo, xhi, yhi = math.min(xlo, x), math.max(xhi, x), math.max(yhi, pt[2])
    end
  end
  need(xlo <= xhi, "%s: no points", what)
  if xhi == xlo then xlo, xhi = xlo - 1, xhi + 1 end
  local width, height = spec.width or 760, spec.height or 460
  local left, right, top, bottom = 70, 190, 44, 56
  -- The title is never cut at the picture's edge: one that does not fit beside the axis starts at the
  -- left edge, broken into lines (bold 15 px: about 9 px a character), and the chart moves down for them.
  local title_x, title_lines = left, spec.title and { spec.title } or {}
  if spec.title and #spec.title * 9 > width - left - 10 then
    title_x, title_lines = 12, wrap(spec.title, math.floor((width - 24) / 9))
    top, height = top + 18 * (#title_lines - 1), height + 18 * (#title_lines - 1)
  end
  local pw, ph = width - left - right, height - top - bottom
  local yticks, ystep = ticks(0, yhi > 0 and yhi * 1.05 or 1, 6)
  if yticks[#yticks] < yhi then yticks[#yticks + 1] = yticks[#yticks] + ystep end
  local ytop = yticks[#yticks]
  local function sx(x) return left + (x - xlo) / (xhi - xlo) * pw end
  local function sy(y) return top + ph - y / ytop * ph end
  local svg = new_svg(width, height)
  for k, line in ipairs(title_lines) do svg:text(title_x, 6 + 18 * k, line, 'style="font-size:15px;font-weight:bold"') end
  svg:add('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888888"/>', left, top, pw, ph)
  for _, y in ipairs(yticks) do
    if y <= ytop then
      svg:add('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e4e4e4"/>', left, sy(y), left + pw, sy(y))
      svg:text(left - 6, sy(y) + 4, number_text(y), 'text-anchor="end"')
    end
  end
  local x_text = spec.x_text or (log2 and function(x) return number_text(x) end) or number_text
  local xticks = {}
  if log2 then
    for e = math.ceil(xlo), math.floor(xhi) do xticks[#xticks + 1] = e end
    while #xticks > 12 do -- every other power of two until the labels fit
      local thinned = {}
      for k = 1, #xticks, 2 do thinned[#thinned + 1] = xticks[k] end
      xticks = thinned
    end
  else
    xticks = ticks(xlo, xhi, 8)
  end
  for _, x in ipairs(xticks) do
    svg:add('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e4e4e4"/>', sx(x), top, sx(x), top + ph)
    svg:text(sx(x), top + ph + 16, x_text(log2 and 2 ^ x or x), 'text-anchor="middle"')
  end
  if spec.x_label then svg:text(left + pw / 2, height - 12, spec.x_label, 'text-anchor="middle" fill="#555555"') end
  if spec.y_label then
    svg:text(16, top + ph / 2, spec.y_label,
      ('text-anchor="middle" fill="#555555" transform="rotate(-90 16 %.1f)"'):format(top + ph / 2))
  end
  for i, s in ipairs(spec.series) do
    local colour_i = PALETTE[(i - 1) % #PALETTE + 1]
    local coords = {}
    for j, pt in ipairs(s.points) do
      local x = log2 and math.log(pt[1]) / math.log(2) or pt[1]
      coords[j] = ("%.1f,%.1f"):format(sx(x), sy(pt[2]))
    end
    svg:add('<g class="series">')
    if #coords > 1 then
      svg:add('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>', table.concat(coords, " "), colour_i)
    end
    for j, pt in ipairs(s.points) do
      local x, y = coords[j]:match("([^,]+),(.+)")
      svg:add('<circle class="point" cx="%s" cy="%s" r="3.5" fill="%s"><title>%s</title></circle>', x, y, colour_i,
        escape(("%s: %s, %s"):format(s.name or ("series " .. i), x_text(pt[1]), number_text(pt[2]))))
    end
    local ly = top + 14 + (i - 1) * 20
    svg:add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>', left + pw + 14, ly - 4,
      left + pw + 38, ly - 4, colour_i)
    svg:text(left + pw + 44, ly, s.name or ("series " .. i))
    svg:add("</g>")
  end
  return svg:document()
end

---------------------------------------------------------------------------------------------------
-- Files

local function shell_quote(text) return "'" .. text:gsub("'", "'\\''") .. "'" end

local function command_exists(name)
  local ok = os.execute(("command -v %s >/dev/null 2>&1"):format(name))
  return ok == true or ok == 0
end

-- The command that converts the SVG file `svg_file` into the PNG `file` (rsvg-convert, else
-- ImageMagick's convert), or nil where neither is installed.
local function png_command(file, svg_file)
  if command_exists("rsvg-convert") then
    return ("rsvg-convert -o %s %s"):format(shell_quote(file), shell_quote(svg_file))
  end
  -- ImageMagick's convert, not another program of that name.
  local probe = io.popen("convert -version 2>/dev/null")
  local version = probe and probe:read("*a") or ""
  if probe then probe:close() end
  if version:find("ImageMagick", 1, true) then return ("convert %s %s"):format(shell_quote(svg_file), shell_quote(file)) end
  return nil
end

local NO_CONVERTER = "a PNG needs rsvg-convert (Debian: librsvg2-bin) or ImageMagick; write .svg instead"

-- Whether iris.plot.save can write `file`: true, or false and why (a .png without a converter). Scripts
-- ask before they measure (an option of type "plot" does), so a long run never ends without its picture.
function M.can_save(file)
  if type(file) ~= "string" or file == "" then return false, "a plot needs a file name" end
  if file:lower():match("%.png$") and not png_command(file, file .. ".svg") then return false, NO_CONVERTER end
  return true
end

-- Writes `svg` to `file`; a file ending in .png is converted (rsvg-convert, else ImageMagick), and is
-- an error naming what to install where neither is.
function M.save(file, svg)
  need(type(file) == "string" and file ~= "", "iris.plot.save(file, svg): file must be a file name")
  need(type(svg) == "string", "iris.plot.save(file, svg): svg must be the text iris.plot made")
  local png = file:lower():match("%.png$") ~= nil
  local target = png and (file .. ".svg") or file
  local out, why = io.open(target, "wb")
  if not out then errors.raise("environment", "cannot write the plot to %s", why) end
  out:write(svg)
  out:close()
  if not png then return file end
  local command = png_command(file, target)
  if not command then
    os.remove(target)
    errors.raise("environment", "cannot write %s: %s", file, NO_CONVERTER)
  end
  local ok = os.execute(command .. " >/dev/null 2>&1")
  os.remove(target)
  if not (ok == true or ok == 0) then errors.raise("environment", "converting the plot to %s failed: %s", file, command) end
  return file
end

-- iris.plot (iris.lua attaches it, with iris.timeline's render as iris.plot.timeline: that module
-- draws with this one's pieces, so this one does not require it).
M.public = { heatmap = M.heatmap, lines = M.lines, save = M.save, can_save = M.can_save, bytes_text = M.bytes_text }

return M
