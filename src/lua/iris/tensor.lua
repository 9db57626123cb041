-- iris.tensor: tensors on the symmetric heap (docs/memory.md, "Tensor representation"), as the rest of
-- iris uses them. A tensor's methods come from three files, attached here in one block:
--   iris.tensor_core  the representation, element access and indexing, views and free (its own methods)
--   iris.tensor_data  operations on whole tensors on the host: fill, copy, clone, to_table, reductions
--   iris.tensor_math  element-wise arithmetic on the device, through a built-in kernel
-- The two last build on iris.tensor_core, never on this module, so no module requires one that
-- requires it back.
local core = require "iris.tensor_core"
local data = require "iris.tensor_data"
local math_ops = require "iris.tensor_math"

local Tensor = core.Tensor
for _, name in ipairs { "fill", "copy", "clone", "to_table", "sum", "mean", "min", "max", "item", "equal",
  "allclose" } do
  Tensor[name] = data[name]
end
Tensor.copy_ = data.copy -- torch's spelling of the same
for _, name in ipairs { "add_", "sub_", "mul_", "div_" } do Tensor[name] = math_ops[name] end

return core
