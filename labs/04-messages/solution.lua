-- Lab 04, a reference solution (for teachers; docs/labs/README.md). Check it with
--   mpirun -np 2 iris-lua lab check 04 labs/04-messages/solution.lua
local ctx = iris.init {}

local mod = iris.compile [[
// Sends `count` chunks of `chunk` floats from data to rank `to`. Chunk j has the sequence number
// seq = first + j and travels through slot seq % slots of `to`'s mailbox:
//   slots_buf: slots * chunk floats on the receiver;
//   ready[s]:  on the receiver, the seq of the chunk slot s holds (the sender raises it);
//   done[s]:   on the sender, the seq of the last chunk the receiver took out of slot s (the receiver
//              raises it): slot s is free for seq once done[s] >= seq - slots.
// Flags are never reset: sequence numbers only grow, from call to call.
__global__ void send(const float* data, float* slots_buf, uint64_t* ready, uint64_t* done, long chunk, int count,
                     int slots, uint64_t first, int to, iris::Context ctx) {
  for (int j = 0; j < count; ++j) {
    const uint64_t seq = first + j;
    const int s = seq % slots;
    if (threadIdx.x == 0 && seq > (uint64_t)slots) ctx.wait_until(done + s, iris::Cmp::ge, seq - slots);
    __syncthreads();
    ctx.put_block(data + j * chunk, slots_buf + s * chunk, chunk, to);  // the whole block copies the chunk
    __syncthreads();
    if (threadIdx.x == 0) ctx.signal_set(ready + s, seq, to);  // the block's copy is ordered before it
  }
}

// Receives `count` chunks from rank `from` into out, in order.
__global__ void receive(float* out, const float* slots_buf, const uint64_t* ready, uint64_t* done, long chunk,
                        int count, int slots, uint64_t first, int from, iris::Context ctx) {
  for (int j = 0; j < count; ++j) {
    const uint64_t seq = first + j;
    const int s = seq % slots;
    if (threadIdx.x == 0) ctx.wait_until(ready + s, iris::Cmp::ge, seq);
    __syncthreads();
    for (long i = threadIdx.x; i < chunk; i += blockDim.x) out[j * chunk + i] = slots_buf[s * chunk + i];
    __syncthreads();
    if (threadIdx.x == 0) ctx.signal_set(done + s, seq, from);  // every thread has read the slot
  }
}
]]

local BLOCK = 256
local lab = {}

-- data: count * chunk floats; box = { slots =, ready =, done = } (every rank has one, the same shapes);
-- first: the sequence number of the first chunk. The receiver calls lab.receive at the same time.
function lab.send(data, box, to, first)
  local chunk, slots = box.slots:numel() / box.ready:numel(), box.ready:numel()
  mod.send:launch({ grid = 1, block = BLOCK }, data, box.slots, box.ready, box.done, chunk, data:numel() / chunk,
    slots, first, to, ctx)
end

function lab.receive(out, box, from, first)
  local chunk, slots = box.slots:numel() / box.ready:numel(), box.ready:numel()
  mod.receive:launch({ grid = 1, block = BLOCK }, out, box.slots, box.ready, box.done, chunk, out:numel() / chunk,
    slots, first, from, ctx)
end

return lab
