// Embeds the iris-lua host (include/iris/host.hpp) and runs a chunk that uses the symmetric heap on the
// cpu backend: what a program linked against the installed IrisLua::host can do.
#include <iris/host.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  iris::Host host(iris::HostOptions{&argc, &argv, "embed_iris"});
  iris::RunResult r = host.run_string(
      "local ctx = iris.init { backend = 'cpu', heap_size = '4MiB' }\n"
      "local t = ctx:ones(8)\n"
      "print(('embedded iris-lua %s: rank %d of %d, sum %d'):format(iris.version, ctx.rank, ctx.world_size, t:sum()))");
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", host.describe(r).c_str());
    host.abort_job(r.exit_code);
  }
  return host.finish();
}
