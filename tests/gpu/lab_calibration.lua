-- The table of tests/gpu/calibrate_labs.sh: for every timing of every lab report given (iris-lua lab
-- check --json), the reference solution's ratio to the reference (median and quartiles of the rounds),
-- the threshold in force and the grade, and a suggested threshold: the smallest multiple of 0.05 at
-- least 1.15 times the upper quartile, so that a solution as good as the reference gets full marks on a
-- machine as noisy as this one (and no looser than the measurement needs).
local json = require "iris.json"

local rows = { { "lab", "ranks", "timing", "ratio [q1 - q3]", "threshold", "grade", "suggested" } }
for _, path in ipairs(arg) do
  local file = io.open(path, "rb")
  local text = file and file:read("*a") or ""
  if file then file:close() end
  local ok, report = pcall(json.decode, text)
  if not ok or type(report) ~= "table" then
    rows[#rows + 1] = { path:match("calibration_(%d+)_") or path, "-", "no report (see the log)", "-", "-", "-", "-" }
  else
    for _, t in ipairs(report.timings or {}) do
      local grade = t.graded == false and "not graded" or (t.full_marks == true and "full marks" or "slower")
      local suggested = math.ceil(t.ratio_q3 * 1.15 * 20 - 1e-9) / 20
      rows[#rows + 1] = { report.lab, tostring(report.ranks), t.what, ("%.2f [%.2f - %.2f]"):format(t.ratio, t.ratio_q1,
        t.ratio_q3), ("%g"):format(t.threshold), grade, ("%.2f"):format(suggested) }
    end
  end
end
local widths = {}
for _, row in ipairs(rows) do
  for k, cell in ipairs(row) do widths[k] = math.max(widths[k] or 0, #cell) end
end
for _, row in ipairs(rows) do
  local cells = {}
  for k, cell in ipairs(row) do cells[k] = ("%-" .. widths[k] .. "s"):format(cell) end
  print(table.concat(cells, "  "))
end
